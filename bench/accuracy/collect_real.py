"""Parses what measure_real_on_device.sh wrote (env.txt, runs.log, probe.log,
host_speed.json, host_speed_end.json) into one JSON file: bench/accuracy/real/<KIND>.json.

    python3 bench/accuracy/collect_real.py --dir OUT -o real.json

Per cell (size, mode, gpus): every repetition's rank-0 'mean step' and peak memory lines,
their median, min and max, the exact command, and host_probe.py's summary.
Standard library only (it runs on the GPU machine and here).
"""

import argparse
import json
import os
import re
import statistics

MEAN_RE = re.compile(r"rank (\d+): mean step ([0-9.]+) ms, .*peak memory allocated (\d+) bytes .*reserved (\d+) bytes")
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
            m = MEAN_RE.search(line)
            if m and m.group(1) == "0":
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True, help="the folder measure_real_on_device.sh wrote")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    data = collect(args.dir)
    with open(args.output, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    for c in data["cells"]:
        print(c["size"], c["mode"], c["gpus"], c.get("step_ms"), c.get("peak_allocated_bytes"), c.get("probe"))


if __name__ == "__main__":
    main()
