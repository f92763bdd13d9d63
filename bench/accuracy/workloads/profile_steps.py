"""Runs a training script unchanged under torch.profiler (CPU and CUDA activity) and writes
one Chrome trace per rank: a diagnostic for where a multi-GPU step's GPU time goes, read by
bench/accuracy/step_trace.py beside the simulator's --trace of the same script.

    [torchrun ...] profile_steps.py --out DIR [--skip 8] [--active 3] -- SCRIPT ARGS...

A step ends where the script's optimizer calls zero_grad() (every script of this suite
does, once a step); the profiler records --active steps after --skip.  The script is run
with runpy as __main__, so it cannot tell it is being profiled.
"""

import argparse
import os
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--skip", type=int, default=8)
    p.add_argument("--active", type=int, default=3)
    p.add_argument("--cuda-only", action="store_true",
                   help="record GPU activity only: no CPU ops, so the host runs almost as fast as unprofiled")
    p.add_argument("script", nargs=argparse.REMAINDER)
    a = p.parse_args()
    script = a.script[1:] if a.script[:1] == ["--"] else a.script
    if not script:
        p.error("expected -- SCRIPT ARGS...")
    os.makedirs(a.out, exist_ok=True)
    rank = int(os.environ.get("RANK", 0))

    def done(prof):
        prof.export_chrome_trace(os.path.join(a.out, f"trace_rank{rank}.json"))

    activities = [ProfilerActivity.CUDA] if a.cuda_only else [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    prof = profile(activities=activities,
                   schedule=schedule(wait=a.skip - 1, warmup=1, active=a.active, repeat=1),
                   on_trace_ready=done)
    zero_grad = torch.optim.Optimizer.zero_grad

    def zero_grad_and_step(self, *args, **kwargs):
        out = zero_grad(self, *args, **kwargs)
        prof.step()
        return out

    torch.optim.Optimizer.zero_grad = zero_grad_and_step
    sys.argv = script
    with prof:
        runpy.run_path(script[0], run_name="__main__")


if __name__ == "__main__":
    main()
