"""Where a training step's GPU time goes, from a Chrome trace: torch.profiler's (written by
workloads/profile_steps.py on a real GPU) or phantora-cluster's --trace of the same script.

    python3 bench/accuracy/step_trace.py TRACE [--rank R] [--baseline TRACE2 [--baseline-rank R]]

Steps are cut at the end of each step's fused AdamW kernels (every script of the gpt_ref suite
ends its step with one).  Per step it prints: the GPU span (first op after the previous
step's optimizer to this step's optimizer end), the time compute ops (every kernel, copy
and memset but NCCL's) keep the GPU busy, the time NCCL kernels run, how much of that
overlaps compute, the GPU's idle time, and the sum of compute durations.  With
--baseline (the single-GPU trace of the same model) compute kernels are matched by
name and order within the step, and the ratio of their durations is printed for the
kernels that overlapped a collective and for those that did not: the in-situ slowdown
of compute beside communication.
"""

import argparse
import collections
import json
import statistics

ADAM = "FusedAdamMathFunctor"


def load(path, rank):
    """[(name, track, start_us, end_us)] of one rank's GPU ops, sorted by start."""
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    ops = []
    if any(e.get("cat") == "kernel" for e in events):  # torch.profiler
        for e in events:
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                ops.append((e["name"], e.get("args", {}).get("stream", 0), e["ts"], e["ts"] + e["dur"]))
    else:  # phantora-cluster --trace: pid = rank, one thread per track ("cpu", "stream N")
        tracks = {}
        for e in events:
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                tracks[(e["pid"], e["tid"])] = e["args"]["name"]
        for e in events:
            if e.get("ph") == "X" and e.get("pid") == rank:
                track = tracks.get((e["pid"], e["tid"]), "")
                if track.startswith("stream"):
                    ops.append((e["name"], track, e["ts"], e["ts"] + e["dur"]))
    ops.sort(key=lambda o: o[2])
    return ops


def is_comm(name):
    return "nccl" in name.lower() or name.startswith(("all_reduce", "allreduce", "AllReduce", "reduce_scatter", "all_gather"))


def union(intervals):
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    """Total length of the intersection of two interval lists."""
    a, b = merged(a), merged(b)
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            total += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def steps(ops):
    """Ops grouped by step: each group ends with the last of a run of fused AdamW kernels
    (the optimizer launches one per chunk of its tensor list)."""
    out, cur = [], []
    for i, op in enumerate(ops):
        cur.append(op)
        if ADAM in op[0] and (i + 1 == len(ops) or ADAM not in ops[i + 1][0]):
            out.append(cur)
            cur = []
    return out


def touches(op, comm):
    return any(op[2] < e and s < op[3] for s, e in comm)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--baseline")
    p.add_argument("--baseline-rank", type=int, default=0)
    p.add_argument("--skip", type=int, default=0, help="steps to leave out at the start")
    a = p.parse_args()
    groups = steps(load(a.trace, a.rank))[a.skip:]
    if len(groups) > 1:
        groups = groups[1:]  # the first group starts mid-step (the trace's first op)
    base = None
    if a.baseline:
        bgroups = steps(load(a.baseline, a.baseline_rank))
        bgroups = bgroups[1:] if len(bgroups) > 1 else bgroups
        base = collections.defaultdict(list)  # (name, k-th of that name in the step) -> durations
        for g in bgroups:
            seen = collections.Counter()
            for op in g:
                if not is_comm(op[0]):
                    base[(op[0], seen[op[0]])].append(op[3] - op[2])
                    seen[op[0]] += 1
    print(f"{'step':>4} {'span ms':>8} {'compute':>8} {'comm':>8} {'overlap':>8} {'idle':>8} {'sum cmp':>8}"
          + (f" {'x beside':>8} {'x apart':>8} {'beside ms':>9}" if base else ""))
    for i, g in enumerate(groups):
        comp = [(o[2], o[3]) for o in g if not is_comm(o[0])]
        comm = [(o[2], o[3]) for o in g if is_comm(o[0])]
        start = g[0][2]
        span = g[-1][3] - start
        busy = union(comp + comm)
        line = (f"{i:4d} {span / 1e3:8.3f} {union(comp) / 1e3:8.3f} {union(comm) / 1e3:8.3f} "
                f"{overlap(comp, comm) / 1e3:8.3f} {(span - busy) / 1e3:8.3f} "
                f"{sum(e - s for s, e in comp) / 1e3:8.3f}")
        if base:
            seen = collections.Counter()
            beside, apart = [0.0, 0.0], [0.0, 0.0]  # [this trace, baseline] durations
            for op in g:
                if is_comm(op[0]):
                    continue
                key = (op[0], seen[op[0]])
                seen[op[0]] += 1
                if key not in base:
                    continue
                ref = statistics.median(base[key])
                acc = beside if touches(op, comm) else apart
                acc[0] += op[3] - op[2]
                acc[1] += ref
            line += (f" {beside[0] / max(beside[1], 1e-9):8.3f} {apart[0] / max(apart[1], 1e-9):8.3f}"
                     f" {beside[1] / 1e3:9.3f}")
        print(line)


if __name__ == "__main__":
    main()
