"""What a CUDA graph's launch costs on a real GPU, against the same kernels launched one by
one: the numbers the simulator's graph replay is charged with.

    python3 bench/cuda_graphs/graph_launch_cost.py [--nodes 1 10 100 1000] [--reps 200]

For each N, N tiny kernels (an in-place add to a one-element tensor, about as short as a
kernel gets) are
  * captured in one torch.cuda.CUDAGraph and replayed REPS times back to back, behind a
    spin kernel that holds the GPU until every replay is queued: the GPU time from the
    spin's end to the last replay's end, per replay (`graph_gpu_us`), is the graph's own
    per-launch cost plus N nodes (a line fitted over N gives both);
  * launched eagerly the same way, queued behind a spin (`eager_gpu_us`: N kernels back to
    back with no host in the way, the GPU's own cost of a queued kernel);
  * timed on the host: the CPU time of one `graph.replay()` call (`replay_host_us`) and of
    one eager launch (`launch_host_us`), each the median over REPS calls with the GPU busy.
Prints one `RESULT {json}` line; a CSV of the rows with --csv FILE.
"""
import argparse
import json
import statistics
import time

import torch


def spin(ms):
    # torch.cuda._sleep spins for a number of GPU clock cycles: long enough to queue behind
    torch.cuda._sleep(int(ms * 1e-3 * clock_hz))


def gpu_span(fn, reps, hold_ms):
    """GPU time from the end of a spin to the end of reps calls of fn queued behind it."""
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    spin(hold_ms)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / reps  # us per call


def host_us(fn, reps, hold_ms):
    torch.cuda.synchronize()
    spin(hold_ms)  # the GPU busy, so no call waits on it
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return statistics.median(ts) / 1e3


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - slope * mx, slope


def main():
    global clock_hz
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, nargs="+", default=[1, 10, 100, 1000])
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--csv", default="")
    a = p.parse_args()
    props = torch.cuda.get_device_properties(0)
    # the spin's cycles per second, measured (the SM clock the driver runs it at)
    torch.cuda._sleep(1000000)
    c0, c1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    c0.record()
    torch.cuda._sleep(10000000)
    c1.record()
    torch.cuda.synchronize()
    clock_hz = 1e7 / (c0.elapsed_time(c1) * 1e-3)
    x = torch.zeros(1, device="cuda")
    rows = []
    for n in a.nodes:
        def eager():
            for _ in range(n):
                x.add_(1)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            eager()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            eager()
        g.replay()
        torch.cuda.synchronize()
        reps = max(5, a.reps // max(1, n // 10))
        launch_us = host_us(lambda: x.add_(1), a.reps, 2 + a.reps * 0.05)
        # the spin outlasts the host's queuing of every call (twice its measured time)
        hold_ms = 2 + 2 * reps * n * launch_us * 1e-3
        row = dict(nodes=n, reps=reps,
                   graph_gpu_us=gpu_span(g.replay, reps, hold_ms),
                   eager_gpu_us=gpu_span(eager, reps, hold_ms),
                   replay_host_us=host_us(g.replay, reps, hold_ms),
                   launch_host_us=launch_us)
        rows.append(row)
        print(json.dumps(row), flush=True)
    g0, gslope = fit([r["nodes"] for r in rows], [r["graph_gpu_us"] for r in rows])
    e0, eslope = fit([r["nodes"] for r in rows], [r["eager_gpu_us"] for r in rows])
    res = dict(gpu=props.name, torch=torch.__version__, cuda=torch.version.cuda,
               clock_hz=clock_hz, rows=rows,
               graph_fixed_us=g0, graph_per_node_us=gslope,
               eager_fixed_us=e0, eager_per_kernel_us=eslope,
               replay_host_us_median=statistics.median(r["replay_host_us"] for r in rows),
               launch_host_us_median=statistics.median(r["launch_host_us"] for r in rows))
    print("RESULT " + json.dumps(res), flush=True)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write(",".join(rows[0]) + "\n")
            for r in rows:
                f.write(",".join(str(v) for v in r.values()) + "\n")


if __name__ == "__main__":
    main()
