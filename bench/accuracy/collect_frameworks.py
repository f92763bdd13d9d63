"""The frameworks_h100 suite's real data from the committed device logs, so that every real
figure traces to a file:

    python3 bench/accuracy/collect_frameworks.py > bench/accuracy/real/H100-frameworks.json

Megatron dense, DeepSpeed ZeRO-1 and ZeRO-2:
data/raw/profiles/H100/interleaved-2026-11-26T1900/, and for Megatron and ZeRO-1 also
interleaved-2026-11-26T1942/, for ZeRO-2 and TorchTitan interleaved-2026-11-26T2001/, for
all four interleaved-2026-11-27T0147/, and for TorchTitan interleaved-2026-11-27T0212/
(other leases; the runs of all pooled) (tools/device/record_host_interleaved_on_device.sh:
`== record r` blocks are recorder runs, left out; `== real r` blocks are plain runs, used).
TorchTitan debug: data/raw/profiles/H100/record_frameworks_titan_real_steps.log (two plain
runs, `== rep r` blocks).

A cell's real step is the median over every real run's steps in the metric's window (Megatron
steps 5-19, DeepSpeed 4-11, TorchTitan 5-12; all runs' steps pooled); its range spans the runs'
own figures (Megatron's `median step`, DeepSpeed's `mean step over steps 4-11`, TorchTitan's
median of its window).  The parsers are accuracy.py's, so the simulated side reads the same
lines.  Standard library only.
"""

import argparse
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import accuracy  # noqa: E402

RAW = os.path.join(accuracy.ROOT, "data", "raw", "profiles", "H100")
INTERLEAVED = os.path.join(RAW, "interleaved-2026-11-26T1900")
INTERLEAVED_2 = os.path.join(RAW, "interleaved-2026-11-26T1942")  # a second lease, two turns
INTERLEAVED_3 = os.path.join(RAW, "interleaved-2026-11-26T2001")  # a third, two turns
INTERLEAVED_4 = os.path.join(RAW, "interleaved-2026-11-27T0147")  # a fourth, five turns a cell
INTERLEAVED_5 = os.path.join(RAW, "interleaved-2026-11-27T0212")  # a fifth, TorchTitan, six turns
BLOCK_RE = re.compile(r"^== (record|real|rep) (\d+)\b.*$", re.M)

# (size, mode, metric, log, first step, last step or None: to the end) per cell; the matrix
# row of the cell gives the command (checked against the log's own header).
CELLS = [
    ("megatron", "dense", "megatron_median",
     [os.path.join(d, "megatron_dense.log") for d in (INTERLEAVED, INTERLEAVED_2, INTERLEAVED_4)], 5, 19),
    ("deepspeed", "zero1", "deepspeed_mean",
     [os.path.join(d, "deepspeed_zero1.log") for d in (INTERLEAVED, INTERLEAVED_2, INTERLEAVED_4)], 4, 11),
    ("deepspeed", "zero2", "deepspeed_mean",
     [os.path.join(d, "deepspeed_zero2.log") for d in (INTERLEAVED, INTERLEAVED_3, INTERLEAVED_4)], 4, 11),
    ("torchtitan", "debug", "titan_tps",
     [os.path.join(RAW, "record_frameworks_titan_real_steps.log"), os.path.join(INTERLEAVED_3, "titan_debug.log"),
      os.path.join(INTERLEAVED_4, "titan_debug.log"), os.path.join(INTERLEAVED_5, "titan_debug.log")],
     accuracy.TITAN_FIRST_STEP, None),
]


def plain_runs(path):
    """[(label, text)] of the log's plain runs: `== real r` and `== rep r` blocks (the
    `== record r` blocks ran under the recorder and are left out)."""
    with open(path) as f:
        text = f.read()
    heads = list(BLOCK_RE.finditer(text))
    runs = []
    for i, h in enumerate(heads):
        if h.group(1) == "record":
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        runs.append((f"{h.group(1)} {h.group(2)}", text[h.end():end]))
    if not runs:
        raise ValueError(f"{path}: no plain runs (`== real N` or `== rep N` blocks)")
    return runs


def window_steps(metric, text, first, last):
    """{step: ms} of one run in [first, last] (last None: to the run's end)."""
    if metric == "titan_tps":
        steps = {s: ms for s, (ms, _) in accuracy.titan_steps(text).items()}
    else:
        steps = accuracy.step_times(text)
    return {s: ms for s, ms in steps.items() if s >= first and (last is None or s <= last)}


def collect_cell(size, mode, metric, paths, first, last, lend_from=None):
    """The cell's real figures from the plain runs of every log in \p paths (one per lease);
    \p lend_from (default \p paths): the logs to find TorchTitan's tokens line in."""
    parse = accuracy.METRICS[metric]
    runs, pooled = [], []
    # TorchTitan's step time needs the trainer's start-up line (tokens a step), which the
    # interleaved script's first logs filtered out: the same command's other log lends it.
    lent = ""
    if metric == "titan_tps":
        for p in lend_from or paths:
            with open(p) as f:
                m = re.search(r"^.*" + accuracy.TITAN_TOKENS_RE.pattern + r".*$", f.read(), re.M)
            if m:
                lent = m.group(0) + "\n"
                break
    for path, label, text in [(p, label, text) for p in paths for label, text in plain_runs(p)]:
        if lent and not accuracy.TITAN_TOKENS_RE.search(text):
            text = lent + text
        where = f"{accuracy.rel(path)} ({label})"
        own = parse(text)
        steps = window_steps(metric, text, first, last)
        if own is None or not steps:
            raise ValueError(f"{where}: no {metric} figure or no steps {first}-{last or 'end'}")
        expected = last - first + 1 if last is not None else None
        if expected is not None and len(steps) != expected:
            raise ValueError(f"{where}: {len(steps)} steps in {first}-{last}, expected {expected}")
        pooled += steps.values()
        runs.append({"run": f"{os.path.basename(os.path.dirname(path))} {label}", "step_ms": own["step_ms"], "peak_allocated_bytes": own["peak_allocated_bytes"],
                     "steps_ms": {str(s): round(ms, 6) for s, ms in sorted(steps.items())}})
    peaks = sorted({r["peak_allocated_bytes"] for r in runs})
    return {"size": size, "mode": mode, "gpus": 1, "metric": metric,
            "window": f"steps {first}-{last if last is not None else 'end'}",
            "step_ms": round(statistics.median(pooled), 6),
            "step_ms_min": min(r["step_ms"] for r in runs), "step_ms_max": max(r["step_ms"] for r in runs),
            "peak_allocated_bytes": peaks[len(peaks) // 2] if len(peaks) % 2 else peaks[len(peaks) // 2 - 1],
            "log": "; ".join(accuracy.rel(p) for p in paths), "runs": runs}


def collect():
    matrix = {accuracy.key(c): c for c in accuracy.read_matrix(accuracy.SUITES["frameworks_h100"].matrix)}
    cells = []
    for size, mode, metric, paths, first, last in CELLS:
        cell = collect_cell(size, mode, metric, paths, first, last)
        row = matrix.get(accuracy.key(cell))
        if row is None or row["flags"][0] != metric:
            raise ValueError(f"cell {accuracy.key(cell)} ({metric}) is not a row of matrix-frameworks_h100.tsv")
        cell["command"] = "torchrun --standalone --nproc_per_node 1 " + " ".join(row["flags"][1:])
        for path in paths:
            with open(path) as f:
                head = f.read(4000)
            if cell["command"] not in head:
                raise ValueError(f"{accuracy.rel(path)}: its header does not show the matrix's command "
                                 f"'{cell['command']}'")
        cells.append(cell)
    env = {
        "date_utc": "2026-11-26T19:00Z, T19:42Z and 2026-11-27T01:47Z (Megatron, DeepSpeed ZeRO-1), "
                    "2026-11-26T19:08Z, T20:01Z and 2026-11-27T01:57Z (ZeRO-2), 2026-11-26T08:55Z, "
                    "T20:01Z, 2026-11-27T02:01Z and T02:12Z (TorchTitan)",
        "device": "one NVIDIA H100 80GB HBM3 (seven leases)",
        "query": "NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB, 1980 MHz, 2619 MHz, 700.00 W "
                 "(the TorchTitan lease's data/raw/profiles/H100/record_frameworks_env.txt)",
        "torch": "2.11.0+cu130 cuda 13.0 nccl 2.28.9; megatron-core 0.16.1, deepspeed 0.19.8, torchtitan 0.2.2",
        "reps": "10 real runs a cell (Megatron, ZeRO-1, ZeRO-2: 3, 2 and 5 on three leases, each in turns "
                "with a host-time recording); 15 (TorchTitan: 2 after a recording, then 2, 5 and 6 in turns "
                "with recordings)",
        "source": "bench/accuracy/collect_frameworks.py from data/raw/profiles/H100/"
                  "interleaved-2026-11-26T1900/*.log, interleaved-2026-11-26T1942/*.log, interleaved-2026-11-26T2001/*.log and "
                  "interleaved-2026-11-27T0147/*.log, interleaved-2026-11-27T0212/titan_debug.log "
                  "(tools/device/record_host_interleaved_on_device.sh) and "
                  "data/raw/profiles/H100/record_frameworks_titan_real_steps.log "
                  "(tools/device/record_frameworks_on_device.sh ONLY=titan_debug STEPS=12 REPS=2)",
    }
    return {"suite": "frameworks_h100", "env": env, "cells": cells}


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    json.dump(collect(), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"collect_frameworks.py: {e}")
