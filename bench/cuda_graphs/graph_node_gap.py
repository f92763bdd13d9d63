"""The idle time between two nodes of a replayed CUDA graph, measured directly: the
kernels' own start and end times from CUPTI (torch.profiler), not inferred from a slope.

    python3 bench/cuda_graphs/graph_node_gap.py [--nodes 100] [--reps 20] [--width 1]

N in-place adds to a WIDTH-element tensor are captured in one torch.cuda.CUDAGraph and
replayed REPS times behind a spin kernel that holds the GPU until every replay is queued,
under torch.profiler with CUDA activity; then the same N kernels are launched eagerly
behind a spin.  For each, the kernels' median duration and the median gap from one
kernel's end to the next one's start (within a replay: the first node of each replay is
left out, its gap holds the launch's own cost), in microseconds.  The simulator's
[gpu] graph_node_gap is the graph's median gap; its stream_gap the eager one
(scenarios/README.md).  Prints one `RESULT {json}` line.
"""
import argparse
import json
import statistics

import torch
from torch.profiler import ProfilerActivity, profile


def kernels(prof, name_part):
    """(start_us, end_us) of the profiled GPU kernels whose name holds name_part, by start."""
    out = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and name_part in e.name:
            out.append((e.time_range.start, e.time_range.end))
    return sorted(out)


def summary(spans, per_group):
    durations = [b - a for a, b in spans]
    gaps = [spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1) if (i + 1) % per_group != 0]
    return {"kernels": len(spans), "duration_us": statistics.median(durations),
            "gap_us": statistics.median(gaps) if gaps else None,
            "gap_us_p10": statistics.quantiles(gaps, n=10)[0] if len(gaps) >= 10 else None,
            "gap_us_p90": statistics.quantiles(gaps, n=10)[-1] if len(gaps) >= 10 else None}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=100)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--width", type=int, default=1, help="elements of the tensor each kernel adds to")
    a = p.parse_args()
    x = torch.zeros(a.width, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1)  # warm-up: the kernel loaded, the allocator settled
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(a.nodes):
            x.add_(1)
    hold_cycles = int(2e6 * max(1, a.reps * a.nodes // 1000))  # about 1 ms per 1000 kernels
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as graph_prof:
        torch.cuda._sleep(hold_cycles)
        for _ in range(a.reps):
            graph.replay()
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as eager_prof:
        torch.cuda._sleep(hold_cycles)
        for _ in range(a.reps):
            for _ in range(a.nodes):
                x.add_(1)
        torch.cuda.synchronize()
    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "nodes": a.nodes,
              "reps": a.reps, "width": a.width,
              "graph": summary(kernels(graph_prof, "add"), a.nodes),
              "eager": summary(kernels(eager_prof, "add"), a.nodes)}
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
