"""A self-contained GPT training script: random tokens, no downloads.

Runs as it would on real GPUs (python train_gpt.py, or torchrun for several ranks),
and unchanged under the simulator:

    phantora-cluster --scenario scenarios/h200x4-nvlink.toml --nproc 4 -- \
        build/venv/bin/python examples/torch/train_gpt.py --mode ddp

Every number it prints comes from the program's own timers and torch's allocator
statistics, so under the simulator they describe the simulated cluster.  Device-to-
host reads (loss.item()) return whatever the device holds; under the simulator
device memory is never materialised and they read 0.0.
"""

import argparse
import contextlib
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=512, help="model dimension")
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--seq", type=int, default=512, help="sequence length")
    p.add_argument("--batch", type=int, default=8, help="micro-batch per rank")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1, help="steps left out of the averages")
    p.add_argument("--mode", choices=["single", "ddp", "fsdp"], default="single")
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16",
                   help="autocast dtype of the forward and backward (parameters stay fp32)")
    p.add_argument("--attention", choices=["flash", "efficient", "cudnn", "math", "auto"],
                   default="flash",
                   help="SDPA backend; 'auto' lets torch choose (cuDNN's fused attention on "
                        "Hopper)")
    p.add_argument("--fail-at-step", type=int, default=-1,
                   help="raise an exception at this step (to test failure reporting)")
    p.add_argument("--fail-rank", type=int, default=0, help="the rank that raises")
    return p.parse_args(argv)


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width, bias=False)
        self.out = nn.Linear(4 * width, width, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok = nn.Embedding(args.vocab, args.width)
        self.pos = nn.Embedding(args.seq, args.width)
        self.blocks = nn.ModuleList(Block(args.width, args.heads) for _ in range(args.layers))
        self.ln = nn.LayerNorm(args.width)
        self.head = nn.Linear(args.width, args.vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def attention_backend(name):
    if name == "auto":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION,
                        "efficient": SDPBackend.EFFICIENT_ATTENTION,
                        "cudnn": SDPBackend.CUDNN_ATTENTION,
                        "math": SDPBackend.MATH}[name])


def distributed_setup(mode):
    """init_process_group("nccl") from the launcher's environment (torchrun or
    phantora-cluster set RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)."""
    if mode == "single":
        return 0, 1, 0
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    return dist.get_rank(), dist.get_world_size(), local_rank


def wrap(model, mode, local_rank):
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=[local_rank])
    if mode == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
    return model


def main(argv=None):
    args = parse_args(argv)
    if args.width % args.heads:
        sys.exit("--width must be a multiple of --heads")
    rank, world, local_rank = distributed_setup(args.mode)
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    torch.manual_seed(1234 + rank)

    model = wrap(GPT(args).to(device), args.mode, local_rank)
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    amp = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    tokens_per_step = args.batch * args.seq * world
    if rank == 0:
        props = torch.cuda.get_device_properties(device)
        print(f"model: {args.layers} layers, width {args.width}, {args.heads} heads, "
              f"seq {args.seq}, batch {args.batch}/rank, {params / 1e6:.1f} M parameters/rank, "
              f"mode {args.mode}, {world} ranks on {props.name}", flush=True)

    times = []
    for step in range(args.steps):
        if step == args.fail_at_step and rank == args.fail_rank:
            raise RuntimeError(f"deliberate failure at step {step} (--fail-at-step)")
        idx = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=amp, enabled=amp != torch.float32), attention_backend(args.attention):
            logits = model(idx[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, args.vocab), idx[:, 1:].reshape(-1))
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss_value = loss.item()  # a device-to-host read, as real scripts log it
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if rank == 0:
            print(f"step {step}: {elapsed * 1e3:.3f} ms, {tokens_per_step / elapsed:,.0f} tokens/s, "
                  f"loss {loss_value:.4f}", flush=True)

    measured = times[args.warmup:] or times
    mean = sum(measured) / len(measured)
    peak_allocated = torch.cuda.max_memory_allocated(device)
    peak_reserved = torch.cuda.max_memory_reserved(device)
    print(f"rank {rank}: mean step {mean * 1e3:.3f} ms, {tokens_per_step / mean:,.0f} tokens/s, "
          f"peak memory allocated {peak_allocated} bytes ({peak_allocated / 2**20:.1f} MiB), "
          f"reserved {peak_reserved} bytes ({peak_reserved / 2**20:.1f} MiB)", flush=True)
    if args.mode != "single":
        import torch.distributed as dist

        dist.destroy_process_group()
    assert math.isfinite(mean)


if __name__ == "__main__":
    main()
