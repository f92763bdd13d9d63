"""Parses real measurements into the accuracy harness's real-data format (bench/accuracy/real/).

    python3 bench/accuracy/collect_real.py --dir OUT -o real.json
    python3 bench/accuracy/collect_real.py --results RESULTS --suite gpt_ref --size 217m \
        [--env KEY=VALUE ...] -o real.json

--dir: what tools/device/measure_real_on_device.sh wrote (env.txt, runs.log, probe.log,
host_speed.json, host_speed_end.json), the train_gpt suite. Per cell (size, mode, gpus): every repetition's
rank-0 'mean step' and peak memory lines, their median, min and max, the exact command, and
host_probe.py's summary.

--results: the `RESULT {json}` lines of bench/accuracy/workloads/gpt_ref.py (a log holding
them, or a JSON-lines file of their payloads), the gpt_ref suite. Per cell (mode, world
size): every run's RESULT, the median of the runs' median steps, the fastest and slowest
timed step of any run, the largest peak, and the command that ran it. --env adds the
provenance the lines lack (date, versions, machine).

Standard library only (it runs on the GPU machine and here).
"""

import argparse
import json
import os
import re
import statistics
import sys

# the RESULT line's numbers in the table's units: one definition for the real and simulated sides
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accuracy import gpt_ref_numbers, read_result_lines  # noqa: E402

# Non-greedy and searched repeatedly: ranks print at once, and two ranks' lines can share one
# line of the log ("...(6812.0 MiB)rank 0: mean step ...").
MEAN_RE = re.compile(r"rank (\d+): mean step ([0-9.]+) ms, .*?peak memory allocated (\d+) bytes .*?reserved (\d+) bytes")
STEP_RE = re.compile(r"^step (\d+): ([0-9.]+) ms")
PROBE_RE = re.compile(r"^probe: step_ms ([0-9.]+) issue_wall_ms ([0-9.]+) issue_cpu_ms ([0-9.]+) steps (\d+)(?: proc_cpu_ms ([0-9.]+))?")


def parse_env(path):
    env = {}
    with open(path) as f:
        text = f.read()
    head, _, smi = text.partition("--- nvidia-smi\n")
    for line in head.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            env[key.strip()] = value.strip()
    env["nvidia_smi"] = smi.rstrip("\n")
    return env


def sections(path):
    """Yields (header words, command, lines, rc) for each '### cell' block."""
    cur = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("### cell "):
                cur = {"head": line[len("### cell "):].split(), "command": None, "lines": []}
            elif line.startswith("### command ") and cur is not None:
                cur["command"] = line[len("### command "):]
            elif line.startswith("### rc ") and cur is not None:
                cur["rc"] = int(line.split()[2])
                yield cur
                cur = None
            elif cur is not None:
                cur["lines"].append(line)


def collect(d):
    out = {"env": parse_env(os.path.join(d, "env.txt"))}
    for name in ("host_speed", "host_speed_end"):
        try:
            with open(os.path.join(d, name + ".json")) as f:
                out[name] = json.loads(f.read().splitlines()[0])
        except (OSError, ValueError, IndexError):
            out[name] = None
    cells = {}
    for sec in sections(os.path.join(d, "runs.log")):
        size, mode, gpus, _, rep = sec["head"]
        key = f"{size}/{mode}/{gpus}"
        cell = cells.setdefault(key, {"size": size, "mode": mode, "gpus": int(gpus),
                                      "command": sec["command"], "reps": []})
        run = {"rep": int(rep), "rc": sec["rc"], "step_ms": []}
        for line in sec["lines"]:
            m = STEP_RE.match(line)
            if m:
                run["step_ms"].append(float(m.group(2)))
            m = next((m for m in MEAN_RE.finditer(line) if m.group(1) == "0"), None)
            if m:
                run["mean_step_ms"] = float(m.group(2))
                run["peak_allocated_bytes"] = int(m.group(3))
                run["peak_reserved_bytes"] = int(m.group(4))
        cell["reps"].append(run)
    probe_path = os.path.join(d, "probe.log")
    if os.path.exists(probe_path):
        for sec in sections(probe_path):
            size, mode, gpus = sec["head"][:3]
            cell = cells.get(f"{size}/{mode}/{gpus}")
            for line in sec["lines"]:
                m = PROBE_RE.match(line)
                if m and cell is not None:
                    cell["probe"] = {"step_ms": float(m.group(1)), "issue_wall_ms": float(m.group(2)),
                                     "issue_cpu_ms": float(m.group(3)), "steps": int(m.group(4))}
                    if m.group(5):
                        cell["probe"]["proc_cpu_ms"] = float(m.group(5))
    for cell in cells.values():
        ok = [r for r in cell["reps"] if r["rc"] == 0 and "mean_step_ms" in r]
        if ok:
            means = [r["mean_step_ms"] for r in ok]
            cell["step_ms"] = statistics.median(means)
            cell["step_ms_min"] = min(means)
            cell["step_ms_max"] = max(means)
            cell["peak_allocated_bytes"] = max(r["peak_allocated_bytes"] for r in ok)
            cell["peak_reserved_bytes"] = max(r["peak_reserved_bytes"] for r in ok)
    out["cells"] = list(cells.values())
    return out


# gpt_ref.py's defaults: the command of a RESULT names only the flags that differ from them
GPT_REF_DEFAULTS = {"vocab": 32000, "seq": 1024}
GPT_REF_FLAGS = (("layers", "layers"), ("dim", "d"), ("heads", "heads"), ("batch", "batch"),
                 ("seq", "seq"), ("vocab", "vocab"))


def gpt_ref_command(r):
    """The torchrun command that prints RESULT \p r (gpt_ref.py's flags from its fields)."""
    flags = [f"--{flag} {r[field]}" for flag, field in GPT_REF_FLAGS
             if GPT_REF_DEFAULTS.get(field) != r[field]]
    return (f"torchrun --standalone --nproc_per_node={r['world']} gpt_ref.py --mode {r['mode']} "
            + " ".join(flags))


def collect_results(paths, suite, size, env):
    """The real-data file of the gpt_ref suite from RESULT lines; several runs of a cell
    (same mode and world size) are its repetitions."""
    cells = {}
    for path in paths:
        for where, r in read_result_lines(path):
            try:
                key = f"{size}/{r['mode']}/{r['world']}"
                cell = cells.setdefault(key, {"size": size, "mode": r["mode"], "gpus": int(r["world"]),
                                              "command": gpt_ref_command(r), "reps": []})
                cell["reps"].append(dict(r, numbers=gpt_ref_numbers(r)))
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"{where}: a RESULT without the fields gpt_ref.py prints ({e})") from e
    if not cells:
        raise ValueError(f"no RESULT lines in {', '.join(paths)}")
    for cell in cells.values():
        runs = [r.pop("numbers") for r in cell["reps"]]
        cell["step_ms"] = statistics.median(n["step_ms"] for n in runs)
        cell["step_ms_min"] = min(n["step_ms_min"] for n in runs)
        cell["step_ms_max"] = max(n["step_ms_max"] for n in runs)
        cell["peak_allocated_bytes"] = max(n["peak_allocated_bytes"] for n in runs)
        cell["peak_reserved_bytes"] = max(n["peak_reserved_bytes"] for n in runs)
    return {"suite": suite, "env": env, "cells": list(cells.values())}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--dir", help="the folder measure_real_on_device.sh wrote (suite train_gpt)")
    source.add_argument("--results", nargs="+", help="logs or JSON lines of gpt_ref.py's RESULT lines")
    p.add_argument("--suite", default="gpt_ref", help="with --results: the suite the data is for")
    p.add_argument("--size", default="217m", help="with --results: the size label of matrix-gpt_ref.tsv")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="with --results: provenance (date_utc, query, torch, reps, ...)")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    if args.results:
        env = {}
        for item in args.env:
            k, sep, v = item.partition("=")
            if not sep or not k:
                p.error(f"--env takes KEY=VALUE, got '{item}'")
            env[k] = v
        data = collect_results(args.results, args.suite, args.size, env)
    else:
        data = collect(args.dir)
    with open(args.output, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    for c in data["cells"]:
        print(c["size"], c["mode"], c["gpus"], c.get("step_ms"), c.get("peak_allocated_bytes"), c.get("probe"))


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"collect_real.py: {e}")
