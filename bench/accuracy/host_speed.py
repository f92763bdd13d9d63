"""Host (CPU) speed benchmark for calibrating a scenario's [cpu] time_scale.

Phantora charges a rank's host time as the thread CPU time the program really spends
on the simulating machine, times [cpu] time_scale.  For a CPU-bound training step the
host's speed therefore sets the simulated step time.  This script runs the same small,
single-threaded workloads on any machine (no GPU needed, nothing on a GPU is touched)
and prints the thread CPU time per iteration, so that

    time_scale = (time on the real GPU machine) / (time on the simulating machine)

can be computed from the same script run on both: on the GPU machine as it is, and here
under phantora-cluster with --clock monotonic (the simulated clock), so that what the
simulator charges for the same work, its own interposition included, is the denominator.

Workloads (each: median of --reps repetitions; thread CPU time, time.thread_time_ns):
  python    pure-Python interpreter work (function calls, dict and list operations);
  dispatch  PyTorch eager dispatch on tiny CPU tensors (the Python binding, dispatcher
            and TensorIterator set-up that every op of a training step pays);
  autograd  forward + backward + AdamW step of a tiny 4-layer MLP with LayerNorm and
            GELU on CPU (8x32 activations: compute is negligible, dispatch and autograd
            bookkeeping dominate, as on a GPU host issuing a small model's kernels).
Prints one JSON object.
"""

import argparse
import json
import platform
import statistics
import time

# What a workload is timed with: thread CPU time by default; --clock monotonic reads
# CLOCK_MONOTONIC, which under phantora-cluster is the rank's simulated clock, i.e. the
# host time the simulator charges for the same work (see main's --clock).
CLOCK = time.thread_time_ns


def bench_python(n):
    def f(d, i):
        d[i & 1023] = d.get((i * 7) & 1023, 0) + i
        return len(d)

    d = {}
    acc = []
    t0 = CLOCK()
    for i in range(n):
        acc.append(f(d, i))
        if len(acc) > 512:
            acc.clear()
    return (CLOCK() - t0) / n


def bench_dispatch(torch, n):
    a = torch.ones(16)
    b = torch.ones(16)
    t0 = CLOCK()
    for _ in range(n):
        c = a + b
        c.mul_(0.5)
        d = c.view(4, 4).t().contiguous()
        _ = d.sum()
    return (CLOCK() - t0) / n


def bench_autograd(torch, n):
    nn = torch.nn
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.LayerNorm(32), nn.Linear(32, 32), nn.GELU())])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(8, 32)
    for _ in range(5):  # warm-up (lazy state, first-call paths)
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    t0 = CLOCK()
    for _ in range(n):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return (CLOCK() - t0) / n


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--scale", type=float, default=1.0, help="multiply iteration counts")
    p.add_argument("--only", default="python,dispatch,autograd",
                   help="comma-separated workloads to run (autograd needs a CUDA runtime that "
                        "answers cudaGetDeviceCount: torch's backward asks it)")
    p.add_argument("--clock", choices=("thread", "monotonic"), default="thread",
                   help="thread: thread CPU time of this machine; monotonic: CLOCK_MONOTONIC, "
                        "which under phantora-cluster is the simulated clock (what the simulator "
                        "charges), so that the two runs give the host-time ratio directly")
    args = p.parse_args()
    global CLOCK
    CLOCK = time.thread_time_ns if args.clock == "thread" else time.monotonic_ns
    import torch

    torch.set_num_threads(1)
    s = args.scale
    only = args.only.split(",")
    runs = {k: [] for k in ("python", "dispatch", "autograd") if k in only}
    bench_python(int(20000 * s))  # warm-up
    bench_dispatch(torch, int(2000 * s))
    for _ in range(args.reps):
        if "python" in runs:
            runs["python"].append(bench_python(int(200000 * s)))
        if "dispatch" in runs:
            runs["dispatch"].append(bench_dispatch(torch, int(20000 * s)))
        if "autograd" in runs:
            runs["autograd"].append(bench_autograd(torch, int(300 * s)))
    out = {
        "unit": ("thread CPU" if args.clock == "thread" else "CLOCK_MONOTONIC") +
                " ns per iteration (median of reps)",
        "python_version": platform.python_version(),
        "torch_version": torch.__version__,
        "processor": platform.processor(),
        "reps": args.reps,
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    out["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    for k, v in runs.items():
        out[k] = statistics.median(v)
        out[k + "_all"] = [round(x, 1) for x in v]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
