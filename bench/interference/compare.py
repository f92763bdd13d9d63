"""Simulated vs measured compute-communication interference.

    python3 bench/interference/compare.py --build build [--gpus 2 4] [--scenario S]
        [--real CSV --script-args "--computes ... --comms ... --cover 1.5"]

Runs `gemm_allreduce.py` under `phantora-cluster` on 2 and 4 simulated GPUs of the
calibrated 4 x H200 node and prints, pair by pair, the slowdown of the compute kernel and
of the all-reduce (together / alone) beside the ones measured on real GPUs
(`data/raw/interference/interference_<N>gpu.csv`), and the share of the shorter batch that
overlapped the other: a slowdown is only comparable where both overlapped about as much.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(ROOT, "data", "raw", "interference")  # the real GPUs' CSVs


def read(path):
    with open(path, newline="") as f:
        return {(r["compute"], r["comm"]): r for r in csv.DictReader(f)}


def simulate(build, scenario, gpus, out, script_args):
    cmd = [os.path.join(build, "bridge", "phantora-cluster"), "--scenario", scenario,
           "--nproc", str(gpus), "--", os.path.join(build, "venv", "bin", "python"),
           os.path.join(HERE, "gemm_allreduce.py"), "--out", out] + script_args
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"simulation on {gpus} GPUs failed ({done.returncode}):\n{done.stdout[-3000:]}"
                 f"{done.stderr[-3000:]}")
    return read(os.path.join(out, f"interference_{gpus}gpu.csv"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--scenario", default=os.path.join(ROOT, "scenarios", "h200x4-nvlink-profiled.toml"))
    p.add_argument("--gpus", type=int, nargs="+", default=[2, 4])
    p.add_argument("--real", help="the real CSV to compare with (default: data/raw/interference/"
                   "interference_<N>gpu.csv); --script-args must ask for its pairs")
    p.add_argument("--script-args", default="", help="arguments for gemm_allreduce.py, e.g. "
                   "\"--computes add_fp32_64MiB,ddp_mix --comms 32 --cover 1.5\" (no --tag)")
    args = p.parse_args()
    script_args = args.script_args.split()
    print(f"simulated: {os.path.relpath(args.scenario, ROOT)}; real: data/raw/interference/")
    header = (f"{'compute':>16} {'beside':>17} {'GPUs':>4}  {'compute x real':>14} {'sim':>6}"
              f"  {'all-reduce x real':>17} {'sim':>6}  {'overlap real':>12} {'sim':>5}")
    print(header)
    print("-" * len(header))
    for gpus in args.gpus:
        real = read(args.real or os.path.join(RESULTS, f"interference_{gpus}gpu.csv"))
        with tempfile.TemporaryDirectory() as out:
            sim = simulate(args.build, args.scenario, gpus, out, script_args)
        for key, r in real.items():
            s = sim.get(key)
            if s is None:
                continue
            print(f"{key[0]:>16} {key[1]:>17} {gpus:>4}  {float(r['compute_slowdown']):>14.3f} "
                  f"{float(s['compute_slowdown']):>6.3f}  {float(r['comm_slowdown']):>17.3f} "
                  f"{float(s['comm_slowdown']):>6.3f}  {float(r['overlap']):>12.2f} "
                  f"{float(s['overlap']):>5.2f}")


if __name__ == "__main__":
    main()
