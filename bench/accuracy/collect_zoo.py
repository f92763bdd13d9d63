"""The zoo suite's real data from the committed device results, so that every real figure
traces to a file:

    python3 bench/accuracy/collect_zoo.py > bench/accuracy/real/H200-zoo.json

Sources: data/raw/accuracy/H200/zoo-2026-12-01T2154/results.jsonl (one H200, 2026-12-01: the
first 13 cells) and zoo-2026-12-02T1349/results.jsonl (one H200, 2026-12-02: the next 13), both
by tools/device/record_zoo_on_device.sh: one line per run, {"cell", "rep", "result": zoo.py's
RESULT json}. Reps "1" and "2" are the two plain runs of a cell; the "record" reps ran under
gpu_profiler's recorder (slower) and are left out.

A cell's real step is the median of the timed steps of both plain runs pooled (iter_s, 10
a run: 20 steps); its range spans the two runs' own medians (step_ms_median). Peak memory:
torch.cuda.max_memory_allocated() (peak_mem_gib, GiB of 2^30 bytes, back in bytes), the
lower middle of the runs' peaks (they differ only for gpt2_m_bf16_fused_ddp: 28.88 and
27.56 GiB). Each cell of matrix-zoo.tsv must have both plain runs, and its row's arguments
must be those of the cell's log header (`# <command>` in <cell>.log). Standard library only.
"""

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import accuracy  # noqa: E402

RAW = os.path.join(accuracy.ROOT, "data", "raw", "accuracy", "H200", "zoo-2026-12-01T2154")
RESULTS = os.path.join(RAW, "results.jsonl")
# Every lease's folder, in the order the cells were taken; a cell is in exactly one.
RAWS = (RAW, os.path.join(accuracy.ROOT, "data", "raw", "accuracy", "H200", "zoo-2026-12-02T1349"))
PLAIN_REPS = ("1", "2")  # "record": the recorder's passes, left out
# DDP and FSDP2 cells ran under torchrun with one process, the others as plain python3
LAUNCHERS = {"single": "python3", "ddp": "torchrun --standalone --nproc_per_node 1",
             "fsdp": "torchrun --standalone --nproc_per_node 1"}


def ms(seconds):
    return round(seconds * 1e3, 6)  # to the ns: no binary-fraction noise in the files


def lower_middle(values):
    v = sorted(values)
    return v[(len(v) - 1) // 2]


def read_runs(path=RESULTS):
    """{cell: {rep: result}} of a results.jsonl; a cell's rep seen twice is an error for the
    plain reps (the recorder's two passes share the rep "record")."""
    runs = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                cell, rep, result = row["cell"], str(row["rep"]), row["result"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{accuracy.rel(path)}:{number}: not a zoo result line ({e})") from e
            reps = runs.setdefault(cell, {})
            if rep in PLAIN_REPS and rep in reps:
                raise ValueError(f"{accuracy.rel(path)}:{number}: cell {cell} rep {rep} twice")
            reps.setdefault(rep, result)
    return runs


def collect_cell(row, reps, where):
    """The real figures of one matrix row from its plain runs (reps "1" and "2")."""
    name = row["size"]
    missing = [r for r in PLAIN_REPS if r not in reps]
    if missing:
        raise ValueError(f"{where}: cell {name} has no plain run {', '.join(missing)} (reps: "
                         f"{', '.join(sorted(reps)) or 'none'})")
    plain = [reps[r] for r in PLAIN_REPS]
    for r, res in zip(PLAIN_REPS, plain):
        if res.get("mode") != row["mode"] or res.get("world") != row["gpus"]:
            raise ValueError(f"{where}: cell {name} rep {r} ran mode {res.get('mode')} on "
                             f"{res.get('world')} GPUs, the matrix says {row['mode']} on {row['gpus']}")
        if len(res.get("iter_s", [])) != res.get("steps"):
            raise ValueError(f"{where}: cell {name} rep {r}: {len(res.get('iter_s', []))} timed steps, "
                             f"its steps say {res.get('steps')}")
    pooled = [s for res in plain for s in res["iter_s"]]
    return {"size": name, "mode": row["mode"], "gpus": row["gpus"], "metric": row["flags"][0],
            "step_ms": ms(statistics.median(pooled)),
            "step_ms_min": round(min(res["step_ms_median"] for res in plain), 6),
            "step_ms_max": round(max(res["step_ms_median"] for res in plain), 6),
            "peak_allocated_bytes": round(lower_middle(res["peak_mem_gib"] for res in plain) * 2**30),
            "peak_reserved_bytes": round(lower_middle(res["peak_reserved_gib"] for res in plain) * 2**30),
            "params": plain[0]["params"], "arch": plain[0]["arch"],
            "runs": [{"rep": r, "step_ms_median": round(res["step_ms_median"], 6),
                      "iter_gpu_ms_median": ms(res["iter_gpu_s_median"]),
                      "peak_allocated_bytes": round(res["peak_mem_gib"] * 2**30),
                      "steps_ms": [ms(s) for s in res["iter_s"]]} for r, res in zip(PLAIN_REPS, plain)]}


def check_command(row, raw=RAW):
    """The row's command is the one its cell's log ran (the log's first line, `# CMD`)."""
    command = f"{LAUNCHERS[row['mode']]} {' '.join(row['flags'][1:])}"
    log = os.path.join(raw, f"{row['size']}.log")
    with open(log) as f:
        head = f.readline().rstrip("\n")
    if head != f"# {command}":
        raise ValueError(f"{accuracy.rel(log)}: its header '{head}' is not the matrix's command '{command}'")
    return command


def collect(raws=RAWS, matrix=None):
    matrix = matrix or accuracy.SUITES["zoo"].matrix
    found = {}  # cell -> (its lease's folder, its reps)
    for raw in raws:
        results = os.path.join(raw, "results.jsonl")
        for cell, reps in read_runs(results).items():
            if cell in found:
                raise ValueError(f"{accuracy.rel(results)}: cell {cell} was already taken in "
                                 f"{accuracy.rel(found[cell][0])}")
            found[cell] = (raw, reps)
    cells = []
    for row in accuracy.read_matrix(matrix):
        raw, reps = found.get(row["size"], (raws[0], {}))
        cell = collect_cell(row, reps, accuracy.rel(os.path.join(raw, "results.jsonl")))
        cell["command"] = check_command(row, raw)
        cell["lease"] = os.path.basename(raw)
        cells.append(cell)
    env = {
        "date_utc": "2026-12-01T21:54Z-22:10Z (two calls on one machine: the first 13 cells), "
                    "2026-12-02T13:49Z-14:06Z (three calls on one machine: the next 13)",
        "device": "one NVIDIA H200 (this workplace's nvidia-h200 machine, 16 cores)",
        "query": "NVIDIA H200, 580.159.04, 143771 MiB, 1980 MHz, 3201 MHz, 700.00 W "
                 "(env-call1.txt of both leases' folders)",
        "torch": "2.11.0+cu130 cuda 13.0 cudnn 91900 nccl 2.28.9; transformers 5.17.0, timm 1.0.29, "
                 "torchvision 0.26.0+cu130",
        "reps": "2 plain runs a cell, 3 warm-up and 10 timed steps each (the recorder's runs left out)",
        "source": "bench/accuracy/collect_zoo.py from data/raw/accuracy/H200/zoo-*/results.jsonl "
                  "(tools/device/record_zoo_on_device.sh; a cell's `lease` names its folder); step: the median of both runs' "
                  "timed steps pooled, range: the two runs' medians",
    }
    return {"suite": "zoo", "env": env, "cells": cells}


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    json.dump(collect(), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"collect_zoo.py: {e}")
