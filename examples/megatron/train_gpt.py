"""GPT pre-training with Megatron-core: synthetic tokens, no downloads.

Written the way Megatron-core's own examples are (parallel_state, GPTModel with the
local layer spec, Megatron DDP with the distributed optimizer,
get_forward_backward_func, bf16), so it runs as is on real GPUs:

    torchrun --nproc-per-node 4 examples/megatron/train_gpt.py --tp 2 --sequence-parallel

and unchanged under the simulator:

    phantora-cluster --scenario scenarios/h200x8-nvlink-profiled.toml --nproc 4 -- \\
        build/venv/bin/python examples/megatron/train_gpt.py --tp 2 --sequence-parallel

Data parallelism is what is left of the world after TP x CP x PP.  Every number it
prints comes from its own timers (time.perf_counter around a synchronised step) and
torch's allocator statistics; under the simulator they describe the simulated cluster.
"""

import argparse
import math
import os
import sys
import time
from functools import partial

import torch
import torch.distributed as dist

from megatron.core import parallel_state
from megatron.core.distributed import (
    DistributedDataParallel,
    DistributedDataParallelConfig,
    finalize_model_grads,
)
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.models.gpt.gpt_model import GPTModel
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
from megatron.core.pipeline_parallel.schedules import get_forward_backward_func
from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
from megatron.core.transformer.module import Float16Module
from megatron.core.transformer.moe import moe_utils
from megatron.core.transformer.transformer_block import (
    TransformerBlockSubmodules,
    get_num_layers_to_build,
)
from megatron.core.transformer.transformer_config import TransformerConfig

# megatron-core 0.16.1 without Transformer Engine: moe_utils names te_general_gemm only when
# TE imports, yet the router's gating GEMM tests it (NameError); None selects its torch path.
if not hasattr(moe_utils, "te_general_gemm"):
    moe_utils.te_general_gemm = None

# Dense bf16 tensor-core peak per GPU (datasheet, SXM), for MFU.
PEAK_BF16_TFLOPS = {"H100": 989.4, "H200": 989.4, "A100": 312.0, "B200": 2250.0}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--ffn", type=int, default=0, help="MLP width (default 4 x hidden)")
    p.add_argument("--seq", type=int, default=1024, help="sequence length")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--micro-batch", type=int, default=2, help="sequences per micro-batch")
    p.add_argument("--global-batch", type=int, default=0,
                   help="sequences per step over all data-parallel ranks "
                        "(default micro-batch x DP x microbatches)")
    p.add_argument("--microbatches", type=int, default=0,
                   help="micro-batches per step per data-parallel rank (default 4 x PP if PP > 1, "
                        "else 1); --global-batch overrides it")
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel size")
    p.add_argument("--pp", type=int, default=1, help="pipeline-parallel size")
    p.add_argument("--vpp", type=int, default=0,
                   help="virtual pipeline stages per rank (interleaved 1F1B; 0: off)")
    p.add_argument("--cp", type=int, default=1, help="context-parallel size")
    p.add_argument("--sequence-parallel", action="store_true",
                   help="sequence parallelism inside the TP group")
    p.add_argument("--experts", type=int, default=0, help="MoE experts per layer (0: dense)")
    p.add_argument("--topk", type=int, default=2, help="experts per token")
    p.add_argument("--ep", type=int, default=1, help="expert-parallel size")
    p.add_argument("--dispatcher", choices=["alltoall", "allgather"], default="alltoall",
                   help="MoE token dispatcher")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1, help="steps left out of the averages")
    p.add_argument("--peak-tflops", type=float, default=0.0,
                   help="per-GPU bf16 peak for MFU (default: from the device name)")
    return p.parse_args(argv)


def initialize(args):
    """init_process_group from the launcher's environment (torchrun or phantora-cluster),
    then Megatron's model-parallel groups."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=args.tp,
        pipeline_model_parallel_size=args.pp,
        virtual_pipeline_model_parallel_size=args.vpp or None,
        context_parallel_size=args.cp,
        expert_model_parallel_size=args.ep,
    )
    model_parallel_cuda_manual_seed(1234)


def transformer_config(args):
    moe = {}
    if args.experts:
        moe = dict(
            num_moe_experts=args.experts,
            moe_router_topk=args.topk,
            moe_token_dispatcher_type=args.dispatcher,
            moe_router_load_balancing_type="aux_loss",
            moe_aux_loss_coeff=1e-2,
            moe_grouped_gemm=False,
            # Megatron's MoE models are bias-free (Megatron-LM's MoE recipes pass
            # --disable-bias-linear; its grouped-GEMM experts assert it).  With biases, an
            # expert's fc2 at TP = EP = 1 adds its bias in place to the output of
            # reduce_from_tensor_model_parallel_region, which hands back its input as-is on
            # one rank: autograd refuses the in-place change of that view
            # (mlp.py, "Output 0 of _ReduceFromModelParallelRegionBackward is a view").
            add_bias_linear=False,
        )
    return TransformerConfig(
        num_layers=args.layers,
        hidden_size=args.hidden,
        num_attention_heads=args.heads,
        ffn_hidden_size=args.ffn or 4 * args.hidden,
        tensor_model_parallel_size=args.tp,
        pipeline_model_parallel_size=args.pp,
        virtual_pipeline_model_parallel_size=args.vpp or None,
        context_parallel_size=args.cp,
        expert_model_parallel_size=args.ep,
        sequence_parallel=args.sequence_parallel,
        pipeline_dtype=torch.bfloat16,
        params_dtype=torch.bfloat16,
        bf16=True,
        use_cpu_initialization=False,
        # Megatron-core's defaults, spelled out: the fused paths need Transformer Engine,
        # Apex or torch.compile (Triton), none of which this example relies on.
        bias_activation_fusion=False,
        masked_softmax_fusion=False,
        persist_layer_norm=False,
        gradient_accumulation_fusion=False,
        bias_dropout_fusion=False,
        apply_rope_fusion=False,
        **moe,
    )


class SequenceParallelLayerNorm(torch.nn.LayerNorm):
    """torch's LayerNorm with its parameters marked as sequence-parallel, so that
    finalize_model_grads all-reduces their gradients over the TP group.  That is what
    Apex's FusedLayerNorm does in the local spec; without Apex, megatron-core 0.16.1 picks
    WrappedTorchNorm, which refuses sequence parallelism."""

    def __init__(self, config, hidden_size, eps=1e-5, **unused):
        super().__init__(hidden_size, eps=eps)
        for p in self.parameters():
            setattr(p, "sequence_parallel", config.sequence_parallel)


class ContextParallelAttention(torch.nn.Module):
    """Causal attention over a sequence split among the context-parallel ranks, for the
    local spec: megatron-core 0.16.1's DotProductAttention asserts context_parallel_size
    == 1 (context parallelism is Transformer Engine's there).  This is TE's "all_gather"
    scheme: each rank all-gathers the keys and values of the CP group (their gradients
    reduce-scatter back), then attends its own queries, which hold sequence chunks r and
    2CP-1-r (the load-balanced split of slice_for_context_parallel), to every key at or
    before them."""

    def __init__(self, config, layer_number, attn_mask_type, attention_type,
                 attention_dropout=None, softmax_scale=None, cp_comm_type=None,
                 pg_collection=None):
        super().__init__()
        self.dropout = config.attention_dropout if attention_dropout is None else attention_dropout
        self.softmax_scale = softmax_scale
        self.group = parallel_state.get_context_parallel_group()
        self.cp = parallel_state.get_context_parallel_world_size()
        self.cp_rank = parallel_state.get_context_parallel_rank()
        self._masks = {}

    def positions(self, rank, chunk, device):
        first = torch.arange(rank * chunk, (rank + 1) * chunk, device=device)
        second = torch.arange((2 * self.cp - 1 - rank) * chunk, (2 * self.cp - rank) * chunk,
                              device=device)
        return torch.cat([first, second])

    def mask(self, local_len, device):
        """True where a query may attend a key (built once per length)."""
        if local_len not in self._masks:
            chunk = local_len // 2
            q = self.positions(self.cp_rank, chunk, device)
            k = torch.cat([self.positions(r, chunk, device) for r in range(self.cp)])
            self._masks[local_len] = k.unsqueeze(0) <= q.unsqueeze(1)
        return self._masks[local_len]

    def forward(self, query, key, value, attention_mask, attn_mask_type=None,
                attention_bias=None, packed_seq_params=None):
        from megatron.core.tensor_parallel.mappings import gather_from_sequence_parallel_region

        # [s/cp, b, n, d] -> all ranks' [s, b, n, d] in rank order
        key = gather_from_sequence_parallel_region(key, group=self.group)
        value = gather_from_sequence_parallel_region(value, group=self.group)
        q, k, v = (t.permute(1, 2, 0, 3) for t in (query, key, value))  # [b, n, s, d]
        out = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=self.mask(query.shape[0], query.device),
            dropout_p=self.dropout if self.training else 0.0, scale=self.softmax_scale)
        s, b, n, d = query.shape
        return out.permute(2, 0, 1, 3).reshape(s, b, n * d)


def block_spec(args, config, vp):
    """The local layer spec; with sequence parallelism its norms (and the final one)
    replaced by SequenceParallelLayerNorm, with context parallelism its attention by
    ContextParallelAttention."""
    layer_spec = get_gpt_layer_local_spec(num_experts=args.experts or None)
    if args.cp > 1:
        layer_spec.submodules.self_attention.submodules.core_attention = ContextParallelAttention
    if not args.sequence_parallel:
        return layer_spec
    layer_spec.submodules.input_layernorm = SequenceParallelLayerNorm
    layer_spec.submodules.pre_mlp_layernorm = SequenceParallelLayerNorm
    return TransformerBlockSubmodules(
        layer_specs=[layer_spec] * get_num_layers_to_build(config, vp_stage=vp),
        layer_norm=SequenceParallelLayerNorm,
    )


def build_model(args, config):
    """One GPTModel per virtual pipeline stage, wrapped for bf16 and Megatron DDP."""
    chunks = []
    for vp_stage in range(args.vpp or 1):
        vp = vp_stage if args.vpp else None
        model = GPTModel(
            config=config,
            transformer_layer_spec=block_spec(args, config, vp),
            vocab_size=args.vocab,
            max_sequence_length=args.seq,
            pre_process=parallel_state.is_pipeline_first_stage(ignore_virtual=False, vp_stage=vp),
            post_process=parallel_state.is_pipeline_last_stage(ignore_virtual=False, vp_stage=vp),
            position_embedding_type="rope",
            vp_stage=vp,
        )
        model.cuda(torch.cuda.current_device())
        chunks.append(Float16Module(config, model))
    ddp_config = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True,
        overlap_grad_reduce=True,
        use_distributed_optimizer=True,
    )
    return [
        DistributedDataParallel(
            config=config,
            ddp_config=ddp_config,
            module=chunk,
            # Only the first chunk's buckets all-reduce at once; later ones overlap.
            disable_bucketing=i > 0,
        )
        for i, chunk in enumerate(chunks)
    ]


def synthetic_batches(args, device):
    """Random token ids, as a data loader would hand them over (same every step)."""
    generator = torch.Generator(device="cpu").manual_seed(1234 + parallel_state.get_data_parallel_rank())
    tokens = torch.randint(0, args.vocab, (args.micro_batch, args.seq + 1), generator=generator)
    batch = {
        "tokens": tokens[:, :-1].contiguous().to(device),
        "labels": tokens[:, 1:].contiguous().to(device),
        "loss_mask": torch.ones(args.micro_batch, args.seq, device=device),
        "position_ids": torch.arange(args.seq, device=device).unsqueeze(0).expand(args.micro_batch, -1),
    }
    cp = parallel_state.get_context_parallel_world_size()
    if cp > 1:
        batch = slice_for_context_parallel(batch, cp, parallel_state.get_context_parallel_rank())
    while True:
        yield batch


def slice_for_context_parallel(batch, cp, cp_rank):
    """Megatron's load-balanced split: the sequence in 2 x CP chunks, rank r keeps chunks
    r and 2CP-1-r (as megatron.training.utils.get_batch_on_this_cp_rank does)."""
    out = {}
    for key, value in batch.items():
        chunks = value.view(value.shape[0], 2 * cp, -1)
        index = torch.tensor([cp_rank, 2 * cp - 1 - cp_rank], device=value.device)
        out[key] = chunks.index_select(1, index).reshape(value.shape[0], -1)
    return out


def loss_func(loss_mask, output_tensor):
    losses = output_tensor.float().view(-1)
    mask = loss_mask.view(-1).float()
    loss = torch.sum(losses * mask)
    num_tokens = mask.sum().clone().detach().to(torch.int)
    reporting = torch.cat([loss.clone().detach().view(1), num_tokens.view(1)])
    return loss, num_tokens, {"lm loss": reporting}


def forward_step(data_iterator, model):
    batch = next(data_iterator)
    output_tensor = model(batch["tokens"], batch["position_ids"], None, labels=batch["labels"])
    return output_tensor, partial(loss_func, batch["loss_mask"])


def count_expert_rows(model):
    """Token-expert pairs this rank's experts computed on, summed over MoE layers: the row
    count of the experts' input after dispatch (a shape, so known on the host)."""
    from megatron.core.transformer.moe.experts import SequentialMLP

    rows = [0]

    def hook(module, inputs):
        rows[0] += inputs[0].shape[0]

    for chunk in model:
        for module in chunk.modules():
            if isinstance(module, SequentialMLP):
                module.register_forward_pre_hook(hook)
    return rows


def flops_per_step(args, global_batch):
    """Model FLOPs of one step (forward + backward, no recomputation), Megatron-LM's
    formula: 6 x the GEMM parameters each token passes through, plus attention."""
    h, s, L = args.hidden, args.seq, args.layers
    ffn = args.ffn or 4 * h
    experts_per_token = args.topk if args.experts else 1
    per_token_per_layer = 4 * h * h + 2 * h * ffn * experts_per_token  # qkv+proj, MLP
    attention = 2 * h * s  # QK^T and AV, per token per layer (x2 for multiply-add below)
    per_token = L * (2 * per_token_per_layer + 2 * attention) + 2 * h * args.vocab
    return 3 * per_token * s * global_batch


def peak_tflops(args):
    if args.peak_tflops:
        return args.peak_tflops
    name = torch.cuda.get_device_properties(torch.cuda.current_device()).name
    for key, value in PEAK_BF16_TFLOPS.items():
        if key in name:
            return value
    return float("nan")


def main(argv=None):
    args = parse_args(argv)
    initialize(args)
    rank, world = dist.get_rank(), dist.get_world_size()
    dp = parallel_state.get_data_parallel_world_size()
    microbatches = args.microbatches or (4 * args.pp if args.pp > 1 else 1)
    if args.global_batch:
        if args.global_batch % (args.micro_batch * dp):
            sys.exit(f"--global-batch {args.global_batch} is not a multiple of "
                     f"micro-batch {args.micro_batch} x DP {dp}")
        microbatches = args.global_batch // (args.micro_batch * dp)
    global_batch = args.micro_batch * dp * microbatches

    config = transformer_config(args)
    model = build_model(args, config)
    config.no_sync_func = [chunk.no_sync for chunk in model]
    config.finalize_model_grads_func = finalize_model_grads
    if len(model) == 1:
        config.no_sync_func = config.no_sync_func[0]
    optimizer = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=3e-4, weight_decay=0.1, bf16=True,
                        use_distributed_optimizer=True, clip_grad=1.0),
        model,
    )
    device = torch.device("cuda", torch.cuda.current_device())
    data = [synthetic_batches(args, device) for _ in model]
    forward_backward = get_forward_backward_func()

    expert_rows = count_expert_rows(model)
    params = sum(p.numel() for chunk in model for p in chunk.parameters())
    tokens_per_step = global_batch * args.seq
    flops = flops_per_step(args, global_batch)
    peak = peak_tflops(args)
    if rank == 0:
        print(f"model: {args.layers} layers, hidden {args.hidden}, {args.heads} heads, seq {args.seq}, "
              f"vocab {args.vocab}" + (f", {args.experts} experts top-{args.topk}" if args.experts else "")
              + f"; {params / 1e6:.1f} M parameters on rank 0", flush=True)
        print(f"layout: TP={args.tp} PP={args.pp}" + (f" VPP={args.vpp}" if args.vpp else "")
              + f" CP={args.cp} EP={args.ep} DP={dp}" + (" SP" if args.sequence_parallel else "")
              + f" on {world} ranks ({torch.cuda.get_device_properties(device).name}); "
              f"global batch {global_batch} = micro-batch {args.micro_batch} x DP {dp} x "
              f"{microbatches} microbatches", flush=True)

    times = []
    for step in range(args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for chunk in model:
            chunk.zero_grad_buffer()
        optimizer.zero_grad()
        losses = forward_backward(
            forward_step_func=forward_step,
            data_iterator=data if len(model) > 1 else data[0],
            model=model if len(model) > 1 else model[0],
            num_microbatches=microbatches,
            seq_length=args.seq // args.cp,
            micro_batch_size=args.micro_batch,
            decoder_seq_length=args.seq // args.cp,
            forward_only=False,
        )
        update_ok, grad_norm, _ = optimizer.step()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if rank == 0:
            print(f"step {step}: {elapsed * 1e3:.3f} ms, {tokens_per_step / elapsed:,.0f} tokens/s, "
                  f"MFU {100 * flops / elapsed / world / (peak * 1e12):.1f} %", flush=True)

    measured = times[args.warmup:] or times
    mean = sum(measured) / len(measured)
    # The median too: on a real host one step now and then takes several times the others
    # (the H200 run of 2026-11-26: step 19 took 216 ms, steps 5-18 28-34 ms, which put the
    # mean at 43.0 ms against a median of 30.4), and a comparison should not hang on it.
    median = sorted(measured)[len(measured) // 2] if len(measured) % 2 else \
        sum(sorted(measured)[len(measured) // 2 - 1:len(measured) // 2 + 1]) / 2
    allocated = torch.cuda.max_memory_allocated(device)
    reserved = torch.cuda.max_memory_reserved(device)
    print(f"rank {rank}: mean step {mean * 1e3:.3f} ms, {tokens_per_step / mean:,.0f} tokens/s, "
          f"MFU {100 * flops / mean / world / (peak * 1e12):.1f} %, "
          f"peak memory allocated {allocated} bytes ({allocated / 2**20:.1f} MiB), "
          f"reserved {reserved} bytes ({reserved / 2**20:.1f} MiB); "
          f"median step {median * 1e3:.3f} ms", flush=True)
    if args.experts:
        print(f"rank {rank}: expert rows per step {expert_rows[0] // args.steps} "
              f"(token-expert pairs its experts computed on)", flush=True)
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()
    assert math.isfinite(mean) and mean > 0


if __name__ == "__main__":
    main()
