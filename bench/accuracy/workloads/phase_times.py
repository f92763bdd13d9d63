"""gpt_ref.py's step cut into phases, on a real GPU or under phantora-cluster alike.

    torchrun --standalone --nproc_per_node N bench/accuracy/workloads/phase_times.py --mode ddp

The model, the data and the step are gpt_ref.py's (imported from it, so they cannot
drift); only the timing differs: CUDA events after the forward (the loss), after
backward, after the optimizer and after zero_grad, and the host's clock at the same
points.  Each rank prints one PHASES line with the median of every phase over the timed
steps: GPU time per phase (event to event), and how far the host's issue of each phase
ran ahead of the GPU (host clock at the event's record minus the step's start, against
the GPU's).  Comparing a real and a simulated run phase by phase says where a step's
difference lies: the forward has no communication, DDP's backward overlaps its
all-reduces, the optimizer waits for the last of them.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_hold  # noqa: E402
from gpt_ref import GPT  # noqa: E402

PHASES = ("forward", "backward", "optimizer", "zero_grad")


def _recorded():
    e = torch.cuda.Event(enable_timing=True)
    e.record()
    return e


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ddp", "fsdp", "single"], default="ddp")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--layer-events", action="store_true",
                   help="also a CUDA event as each block's backward ends (a full backward hook), "
                        "printing the backward cut at the blocks and how far the GPU was behind "
                        "the host at each block's end")
    p.add_argument("--grad-events", action="store_true",
                   help="the same cut made lighter: a CUDA event as the gradient of each block's "
                        "output is ready (a tensor hook, which adds no autograd node), so each "
                        "segment is one block's backward starting from the last block's")
    p.add_argument("--gpu-ahead-ms", type=float, default=0.0,
                   help="hold the GPU this long (torch.cuda._sleep) at each step's start, so that "
                        "the host has issued most of the step before the GPU runs it: the phases "
                        "then time the GPU's own work, with the host's pace taken out")
    p.add_argument("--trace", metavar="PREFIX",
                   help="torch.profiler (GPU activity only) over the last three timed steps, "
                        "written to PREFIX.rankN.json")
    a = p.parse_args()

    distributed = a.mode != "single"
    if distributed:
        dist.init_process_group("nccl")
        rank = dist.get_rank()
    else:
        rank = 0
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    torch.manual_seed(0)
    model = GPT(a.vocab, a.dim, a.heads, a.layers, a.seq).cuda()
    if a.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local])
    elif a.mode == "fsdp":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for blk in model.blocks:
            fully_shard(blk, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    y = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")

    blocks = model.module.blocks if a.mode == "ddp" else model.blocks
    layer_events = []  # this step's events, one as each block's backward ends (last block first)
    if a.layer_events:
        for blk in blocks:
            blk.register_full_backward_hook(
                lambda *_: layer_events.append((_recorded(), time.perf_counter())))
    if a.grad_events:
        def _grad_hook(_grad):
            layer_events.append((_recorded(), time.perf_counter()))

        def _watch_output(_module, _inputs, output):
            if torch.is_tensor(output) and output.requires_grad:
                output.register_hook(_grad_hook)

        for blk in blocks:
            blk.register_forward_hook(_watch_output)
    sleep_cycles = gpu_hold.sleep_cycles(a.gpu_ahead_ms) if a.gpu_ahead_ms > 0 else 0
    segments = []  # per step: backward cut at the blocks' ends
    leads = []  # per step: how far the GPU was behind the host at each block's end (ms)
    gpu = {k: [] for k in ("step",) + PHASES}
    lead = {k: [] for k in PHASES}
    profiler = None
    for step in range(a.warmup + a.steps):
        if a.trace and step == a.warmup + a.steps - 3:
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
            profiler.start()
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(len(PHASES) + 1)]
        host = []
        if sleep_cycles:
            torch.cuda._sleep(sleep_cycles)
        t0 = time.perf_counter()
        events[0].record()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(a.mode != "fsdp")):
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, a.vocab).float(), y.view(-1))
        events[1].record()
        host.append(time.perf_counter() - t0)
        layer_events.clear()
        loss.backward()
        events[2].record()
        host.append(time.perf_counter() - t0)
        opt.step()
        events[3].record()
        host.append(time.perf_counter() - t0)
        opt.zero_grad(set_to_none=True)
        events[4].record()
        host.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        if step < a.warmup:
            continue
        if layer_events:
            cuts = [events[1]] + [e for e, _ in layer_events] + [events[2]]
            segments.append([cuts[i].elapsed_time(cuts[i + 1]) for i in range(len(cuts) - 1)])
            # Near 0: the GPU reached the block's end as soon as the host issued it (the
            # host, not the GPU, set the pace there).
            leads.append([events[0].elapsed_time(e) - (t - t0) * 1e3 for e, t in layer_events])
        gpu["step"].append(events[0].elapsed_time(events[-1]))
        for i, name in enumerate(PHASES):
            gpu[name].append(events[i].elapsed_time(events[i + 1]))
            # Positive: the GPU reached this point after the host had issued it.
            lead[name].append(events[0].elapsed_time(events[i + 1]) - host[i] * 1e3)
    if profiler is not None:
        profiler.stop()
        profiler.export_chrome_trace(f"{a.trace}.rank{rank}.json")
    out = {"rank": rank, "mode": a.mode, "steps": a.steps, "gpu_ahead_ms": a.gpu_ahead_ms}
    out.update({f"{k}_ms": round(statistics.median(v), 4) for k, v in gpu.items()})
    out.update({f"{k}_gpu_behind_host_ms": round(statistics.median(v), 4) for k, v in lead.items()})
    if segments:
        # [loss and head .. last block's end, each block's backward, first block's end .. end]
        out["backward_segments_ms"] = [round(statistics.median(col), 4) for col in zip(*segments)]
        out["block_gpu_behind_host_ms"] = [round(statistics.median(col), 4) for col in zip(*leads)]
        out["block_gpu_behind_host_min_ms"] = [round(min(col), 4) for col in zip(*leads)]
    print("PHASES " + json.dumps(out), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
