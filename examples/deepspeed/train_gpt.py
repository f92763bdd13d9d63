"""GPT training with DeepSpeed: deepspeed.initialize, a JSON config, synthetic tokens.

Written the way DeepSpeed's own examples are (deepspeed.init_distributed,
deepspeed.initialize with the model, a client optimizer and a JSON config, then
engine.backward / engine.step), so it runs as is on real GPUs:

    deepspeed --num_gpus 2 examples/deepspeed/train_gpt.py --deepspeed_config examples/deepspeed/zero2.json

and unchanged under the simulator:

    phantora-cluster --scenario scenarios/h200x8-nvlink-profiled.toml --nproc 2 -- \\
        build/venv/bin/python examples/deepspeed/train_gpt.py --deepspeed_config examples/deepspeed/zero3.json

The configs (zero1.json, zero2.json, zero3.json) differ only in the ZeRO stage: bf16,
gradient clipping, DeepSpeed's wall-clock breakdown and throughput log on.  The
optimizer is torch's AdamW handed to DeepSpeed as its client optimizer, so no DeepSpeed
op (FusedAdam, CPU Adam) needs compiling.  Every number printed comes from the
program's and DeepSpeed's own timers; under the simulator they describe the simulated
cluster.
"""

import argparse
import importlib.util
import os
import time

import deepspeed
import torch
import torch.distributed as dist
import torch.nn.functional as F
from deepspeed.utils.logging import set_log_level_from_string

# Dense bf16 tensor-core peak per GPU (datasheet, SXM), for MFU.
PEAK_BF16_TFLOPS = {"H100": 989.4, "H200": 989.4, "A100": 312.0, "B200": 2250.0}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=1024, help="model dimension")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024, help="sequence length")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1, help="steps left out of the averages")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--optimizer", choices=["client", "config"], default="client",
                   help="client: torch's AdamW handed to deepspeed.initialize; config: the "
                        "config's own optimizer (\"Adam\" is DeepSpeed's FusedAdam, a JIT-"
                        "compiled op: refused under the simulator, see README.md)")
    p.add_argument("--local_rank", type=int, default=-1, help="set by the deepspeed launcher")
    p = deepspeed.add_config_arguments(p)
    return p.parse_args(argv)


def load_torch_example():
    """examples/torch/train_gpt.py, whose GPT this example trains (loaded by path: both
    scripts are called train_gpt.py)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch", "train_gpt.py")
    spec = importlib.util.spec_from_file_location("torch_train_gpt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GPTWithLoss(load_torch_example().GPT):
    """The torch example's GPT, returning the loss as DeepSpeed's engine expects."""

    def forward(self, idx, targets):
        logits = super().forward(idx)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def flops_per_token(args, params):
    """6N for the weights plus causal attention's scores and values (forward + backward)."""
    return 6 * params + 6 * args.layers * args.seq * args.width


def main():
    args = parse_args()
    if not args.deepspeed_config:
        raise SystemExit("train_gpt.py: --deepspeed_config CONFIG.json is required "
                         "(examples/deepspeed/zero1.json, zero2.json, zero3.json)")
    deepspeed.init_distributed(dist_backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    torch.manual_seed(1234)

    model = GPTWithLoss(args)
    params = sum(p.numel() for p in model.parameters())
    if args.optimizer == "client":
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
        engine, optimizer, _, _ = deepspeed.initialize(
            model=model, optimizer=optimizer, config=args.deepspeed_config)
    else:
        engine, optimizer, _, _ = deepspeed.initialize(
            model=model, model_parameters=model.parameters(), config=args.deepspeed_config)
    if rank == 0:
        # DeepSpeed's throughput log (steps_per_print) is at INFO; its logger says WARNING
        # and up unless told otherwise.  Set after initialize: the config dump stays quiet.
        set_log_level_from_string("info")
    micro = engine.train_micro_batch_size_per_gpu()
    accum = engine.gradient_accumulation_steps()
    device = engine.device
    if rank == 0:
        print(f"model: {args.layers} layers, width {args.width}, {params / 1e6:.1f} M parameters; "
              f"ZeRO stage {engine.zero_optimization_stage()}, bf16 {engine.bfloat16_enabled()}, "
              f"micro-batch {micro} x {accum} accumulation on {world} ranks", flush=True)

    name = torch.cuda.get_device_name(device)
    peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), 0.0)
    tokens_per_step = micro * accum * world * args.seq
    times = []
    for step in range(args.steps):
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(accum):
            idx = torch.randint(0, args.vocab, (micro, args.seq), device=device)
            targets = torch.randint(0, args.vocab, (micro, args.seq), device=device)
            loss = engine(idx, targets)
            engine.backward(loss)
            engine.step()
        torch.cuda.synchronize(device)
        dt = time.perf_counter() - t0
        times.append(dt)
        if rank == 0:
            tps = tokens_per_step / dt
            mfu = tps * flops_per_token(args, params) / (world * peak * 1e12) if peak else 0.0
            print(f"step {step}: {dt * 1e3:.1f} ms, {tps:,.0f} tokens/s, MFU {mfu * 100:.1f} %, "
                  f"loss {loss.item():.3f}, peak memory "
                  f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB", flush=True)

    steady = times[args.warmup:] or times
    mean = sum(steady) / len(steady)
    if rank == 0:
        print(f"mean step over steps {args.warmup}-{args.steps - 1}: {mean * 1e3:.1f} ms, "
              f"{tokens_per_step / mean:,.0f} tokens/s", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
