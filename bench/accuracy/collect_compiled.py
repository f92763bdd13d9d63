"""The compiled suite's real data (issue 34: torch.compile and CUDA graphs) from the committed
device results, so that every real figure traces to a file:

    python3 bench/accuracy/collect_compiled.py > bench/accuracy/real/H200-compiled.json

Source: data/raw/accuracy/H200/compiled-2026-12-02T0940/ (one H200, 2026-12-02, two calls):
- the zoo.py cells (`result` rows of matrix-compiled.tsv: Hugging Face Llama and GPT-2
  under torch.compile, Llama and ResNet-50 captured whole in a CUDA graph), taken by
  tools/device/record_zoo_on_device.sh: results.jsonl and <cell>.log, read as
  collect_zoo.py reads the zoo's (reps "1" and "2" pooled, the recorder's left out);
- TorchTitan's debug model eager and with `--compile.enable` (`titan_tps` rows), taken by
  tools/device/record_frameworks_on_device.sh (ONLY="titan_debug titan_debug_compile"
  REPS=2): titan_debug.log and titan_debug_compile.log, the plain runs of each cut from the
  script's interleaved titan_real_steps.log, read as collect_frameworks.py reads TorchTitan's
  (steps 5-12 of both runs pooled; the trainer's tokens line lent by the recorder's log).
Standard library only.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import accuracy  # noqa: E402
import collect_frameworks  # noqa: E402
import collect_zoo  # noqa: E402

RAW = os.path.join(accuracy.ROOT, "data", "raw", "accuracy", "H200", "compiled-2026-12-02T0940")
TITAN_COMMAND = "torchrun --standalone --nproc_per_node 1 "


def titan_cell(row):
    name = "titan_debug_compile" if "--compile.enable" in row["flags"] else "titan_debug"
    log = os.path.join(RAW, f"{name}.log")
    cell = collect_frameworks.collect_cell(
        row["size"], row["mode"], row["flags"][0], [log], accuracy.TITAN_FIRST_STEP, None,
        lend_from=[os.path.join(RAW, f"record_{name}.log")])
    cell["command"] = TITAN_COMMAND + " ".join(row["flags"][1:])
    with open(log) as f:
        head = f.readline()
    if cell["command"] not in head:
        raise ValueError(f"{accuracy.rel(log)}: its header does not show the matrix's command "
                         f"'{cell['command']}'")
    return cell


def collect():
    runs = collect_zoo.read_runs(os.path.join(RAW, "results.jsonl"))
    cells = []
    for row in accuracy.read_matrix(accuracy.SUITES["compiled"].matrix):
        if row["flags"][0] == "titan_tps":
            cells.append(titan_cell(row))
            continue
        cell = collect_zoo.collect_cell(row, runs.get(row["size"], {}), accuracy.rel(RAW))
        cell["command"] = collect_zoo.check_command(row, RAW)
        cells.append(cell)
    env = {
        "date_utc": "2026-12-02T09:40Z-09:55Z (two calls on one machine)",
        "device": "one NVIDIA H200 (this workplace's nvidia-h200 machine, 16 cores)",
        "query": "NVIDIA H200, 580.159.04, 143771 MiB, 1980 MHz, 3201 MHz, 700.00 W "
                 "(data/raw/accuracy/H200/compiled-2026-12-02T0940/titan_env.txt)",
        "torch": "2.11.0+cu130 cuda 13.0 cudnn 91900 nccl 2.28.9, triton 3.6.0; transformers 5.17.0, "
                 "torchvision 0.26.0+cu130; torchtitan 0.2.2",
        "reps": "2 plain runs a cell (zoo.py: 3 warm-up and 10 timed steps; TorchTitan: 12 steps, "
                "5-12 timed); the recorder's runs left out",
        "source": "bench/accuracy/collect_compiled.py from data/raw/accuracy/H200/"
                  "compiled-2026-12-02T0940/ (tools/device/record_zoo_on_device.sh and "
                  "record_frameworks_on_device.sh)",
    }
    return {"suite": "compiled", "env": env, "cells": cells}


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    json.dump(collect(), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"collect_compiled.py: {e}")
