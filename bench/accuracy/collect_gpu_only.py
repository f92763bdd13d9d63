"""The real GPU's own step time, from gpu_ahead_on_device.sh's logs, in the harness's format.

    python3 bench/accuracy/collect_gpu_only.py --size 217m \
        -o bench/accuracy/real/H200x4-gpt_ref-gpu-only.json \
        data/raw/accuracy/H200x4/ahead-2026-11-26T{2127,2137,2159}/ahead.log

gpu_ahead_on_device.sh runs workloads/phase_times.py on each cell twice: as is, and with the
GPU held at every step's start (--gpu-ahead-ms) so that the host has issued the step before
the GPU runs it.  The held runs' step (CUDA events from the forward's start to zero_grad's
end, median over the timed steps) is the GPU's work alone, which the simulation gives with
host time off ([cpu] time_scale = 0): accuracy.py sets the two side by side.  Per cell
(mode, world size): rank 0's step of every held run, their median, min and max; the same
runs' unheld steps are kept for reference, and the logs as paths from the output's folder.
Standard library only.
"""

import argparse
import json
import os
import re
import statistics
import sys

HEADER_RE = re.compile(r"^== (\w+) (\d+) ahead=([0-9.]+) ")


def phases(line):
    """Every PHASES payload on one line (ranks' lines can share one)."""
    decoder = json.JSONDecoder()
    found, i = [], 0
    while True:
        j = line.find("PHASES {", i)
        if j < 0:
            return found
        payload, i = decoder.raw_decode(line, j + len("PHASES "))
        found.append(payload)


def read_log(path):
    """{(mode, world): {"held": [step ms], "unheld": [step ms]}} of rank 0, run by run."""
    cells, current = {}, None
    with open(path) as f:
        for line in f:
            m = HEADER_RE.match(line)
            if m:
                mode, world, ahead = m.group(1), int(m.group(2)), float(m.group(3))
                current = cells.setdefault((mode, world), {"held": [], "unheld": []})
                current = current["held" if ahead > 0 else "unheld"]
                continue
            if line.startswith("== "):  # the traced runs and other sections
                current = None
            for p in phases(line):
                if current is not None and p.get("rank") == 0:
                    current.append(p["step_ms"])
    return cells


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("logs", nargs="+", help="ahead.log files of gpu_ahead_on_device.sh")
    p.add_argument("--size", required=True, help="the matrix's size label of phase_times.py's "
                   "default model (217m)")
    p.add_argument("--suite", default="gpt_ref")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    runs = {}
    for path in args.logs:
        for key, sides in read_log(path).items():
            for side, steps in sides.items():
                runs.setdefault(key, {"held": [], "unheld": []})[side] += steps
    cells = []
    for (mode, world), sides in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        held = sides["held"]
        if not held:
            continue
        cells.append({"size": args.size, "mode": mode, "gpus": world,
                      "gpu_only_step_ms": round(statistics.median(held), 4),
                      "gpu_only_step_ms_min": min(held), "gpu_only_step_ms_max": max(held),
                      "gpu_only_runs_ms": held, "unheld_runs_ms": sides["unheld"]})
    if not cells:
        sys.exit(f"collect_gpu_only.py: no held runs in {', '.join(args.logs)}")
    out = {"suite": args.suite,
           "what": "the GPU's own step: workloads/phase_times.py with the GPU held at each step's "
                   "start (gpu_ahead_on_device.sh), rank 0, median over runs",
           "sources": [os.path.relpath(log, os.path.dirname(os.path.abspath(args.output)))
                       for log in args.logs],
           "cells": cells}
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
