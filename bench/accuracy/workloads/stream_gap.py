"""How long one stream of a real GPU stays idle between two ops when the second is already
queued: the GPU's own dispatch gap, which the simulation charges after every op
(`[gpu] stream_gap`, gpu_model/device_timeline.h).

The stream is held with `torch.cuda._sleep` while the host queues N ops, so no gap below
can be the host's; torch.profiler (GPU activity only) gives each op's start and end.  The
cells: ops of one kind (an elementwise kernel, a device-to-device copy, a cuBLAS GEMM) and
a mix; kernels alternating with 128-byte host-to-device or device-to-device copies or with
4 MiB device-to-device copies, as FSDP2 interleaves them; and kernels again beside 1 to 6
other streams that each wait (an op queued behind an event the measured stream records at
its end, as FSDP2 keeps its all-gather and reduce-scatter streams) or beside 1 or 3 busy
streams (one long single-thread kernel each): whether the front end's attention to other
streams lengthens the measured stream's gaps.  A cuBLAS call on Hopper is a 4-byte memset
and a kernel; both are folded into one op, as the profile stores it, and the gap inside
it is printed apart.

    python3 bench/accuracy/workloads/stream_gap.py [--ops 400] [--json OUT]

Prints one line per pair of op kinds: the gaps' count, median, mean, p10 and p90 (µs).
"""

import argparse
import json
import statistics

import torch

import gpu_hold


def sequences(n, hold_cycles):
    """(name, issue) pairs: each issue() queues n ops of one kind on the current stream (and,
    for the cells with other streams, their work)."""
    x = torch.randn(1 << 20, device="cuda")
    z = torch.randn(1 << 10, device="cuda")
    y = torch.empty_like(x)
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)

    def add():
        for _ in range(n):
            x.add_(1.0)

    def copy():
        for _ in range(n):
            y.copy_(x)  # same dtype, contiguous: cudaMemcpyAsync device to device

    def gemm():
        for _ in range(n):
            torch.mm(a, b)

    def mixed():
        for _ in range(n // 3):
            x.add_(1.0)
            torch.mm(a, b)
            y.copy_(x)

    pinned = torch.arange(16, dtype=torch.int64).pin_memory()
    small = torch.empty(16, dtype=torch.int64, device="cuda")
    small_src = torch.arange(16, dtype=torch.int64, device="cuda")

    def kernel_and_htod():
        # FSDP2 sends split sizes to the GPU this way between its kernels
        for _ in range(n // 2):
            x.add_(1.0)
            small.copy_(pinned, non_blocking=True)

    def kernel_and_small_dtod():
        for _ in range(n // 2):
            x.add_(1.0)
            small.copy_(small_src)

    def kernel_and_dtod():
        for _ in range(n // 2):
            x.add_(1.0)
            y.copy_(x)

    def beside_waiting(k):
        # k other streams each hold an op behind an event that the measured stream records
        # after its n ops: their queues wait, blocked, the whole time (FSDP2 keeps its
        # all-gather and reduce-scatter streams so).
        def issue():
            done = torch.cuda.Event()
            add()
            done.record()
            for s in others[:k]:
                s.wait_event(done)
                with torch.cuda.stream(s):
                    z.add_(1.0)

        return issue

    def beside_busy(k):
        # k other streams each run one long single-thread kernel beside the measured ops.
        def issue():
            for s in others[:k]:
                with torch.cuda.stream(s):
                    torch.cuda._sleep(2 * hold_cycles)
            add()

        return issue

    others = [torch.cuda.Stream() for _ in range(6)]
    return [("kernel", add), ("copy", copy), ("gemm", gemm), ("mixed", mixed),
            ("kernel + 128 B host-to-device", kernel_and_htod),
            ("kernel + 128 B device-to-device", kernel_and_small_dtod),
            ("kernel + 4 MiB device-to-device", kernel_and_dtod)] + [
        (f"kernel, {k} stream{'s' if k > 1 else ''} waiting", beside_waiting(k)) for k in range(1, 7)
    ] + [(f"kernel, {k} stream{'s' if k > 1 else ''} busy", beside_busy(k)) for k in (1, 3)]


def kind_of(event):
    name = event["name"]
    if event.get("cat") == "gpu_memcpy":
        return "HtoD" if "HtoD" in name else "copy"
    if event.get("cat") == "gpu_memset":
        return "memset"
    if "sleep" in name or "spin" in name:
        return "hold"
    return "gemm" if name.startswith(("nvjet", "sm90_xmma", "ampere", "cutlass")) or "gemm" in name else "kernel"


def folded(events):
    """[(kind, start, end)] with each cuBLAS memset folded into the kernel after it; the
    gaps inside those calls as a second list."""
    ops, inner = [], []
    i = 0
    while i < len(events):
        e = events[i]
        k = kind_of(e)
        nxt = events[i + 1] if i + 1 < len(events) else None
        if k == "memset" and nxt is not None and kind_of(nxt) == "gemm":
            inner.append(nxt["ts"] - (e["ts"] + e["dur"]))
            ops.append(("gemm", e["ts"], nxt["ts"] + nxt["dur"]))
            i += 2
            continue
        ops.append((k, e["ts"], e["ts"] + e["dur"]))
        i += 1
    return ops, inner


def stats(values):
    v = sorted(values)
    return {
        "n": len(v),
        "median_us": statistics.median(v),
        "mean_us": statistics.mean(v),
        "p10_us": v[len(v) // 10],
        "p90_us": v[(9 * len(v)) // 10],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=400)
    ap.add_argument("--hold-ms", type=float, default=50.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    cycles = gpu_hold.sleep_cycles(args.hold_ms)
    result = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cells": {}}
    for name, issue in sequences(args.ops, cycles):
        issue()  # warm-up: cuBLAS handles, workspaces, the copy path
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            torch.cuda._sleep(cycles)
            issue()
            torch.cuda.synchronize()
        trace = "/tmp/stream_gap_" + "".join(c if c.isalnum() else "_" for c in name) + ".json"
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            data = json.load(f)
        events = [e for e in data["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        # the measured stream: the one with the most ops (the others hold one or two)
        streams = [e.get("args", {}).get("stream") for e in events]
        measured = max(set(streams), key=streams.count)
        events = [e for e, st in zip(events, streams) if st == measured]
        events.sort(key=lambda e: e["ts"])
        ops, inner = folded(events)
        pairs = {}
        for p, q in zip(ops, ops[1:]):
            if "hold" in (p[0], q[0]):
                continue
            pairs.setdefault(f"{p[0]}->{q[0]}", []).append(q[1] - p[2])
        cell = {pair: stats(g) for pair, g in pairs.items()}
        cell["all"] = stats([g for gs in pairs.values() for g in gs])
        if inner:
            cell["inside gemm (memset->kernel)"] = stats(inner)
        durations = {}
        for k, s, e in ops:
            durations.setdefault(k, []).append(e - s)
        cell["durations"] = {k: stats(v) for k, v in durations.items() if k != "hold"}
        result["cells"][name] = cell
        for pair, s in cell.items():
            if pair == "durations":
                continue
            print(f"STREAM_GAP {result['gpu']} {name:26s} {pair:30s} n={s['n']:4d} median {s['median_us']:.2f}"
                  f" mean {s['mean_us']:.2f} p10 {s['p10_us']:.2f} p90 {s['p90_us']:.2f} us")
        for k, s in cell["durations"].items():
            print(f"STREAM_GAP {result['gpu']} {name:26s} duration of {k:18s} median {s['median_us']:.2f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
