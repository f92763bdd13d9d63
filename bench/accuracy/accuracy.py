"""Accuracy harness: examples/torch/train_gpt.py on real GPUs against Phantora's simulation.

    python3 bench/accuracy/accuracy.py --build build        (or bench/accuracy/run.sh [build])

For every cell of matrix.tsv (size, mode, GPUs) it takes the real measurement from the
committed data (real/H200.json, written on the GPU machine by measure_real_on_device.sh and
collect_real.py) and, where one exists, runs the same command under phantora-cluster on this
machine (no GPU) with the scenario (default scenarios/h200-profile.toml), then prints

  real step time, simulated step time, error %, peak memory allocated real vs simulated
  (torch.cuda.max_memory_allocated, bytes and error %), the range of the real runs and of the
  simulations (--sim-reps, 3 by default; both sides give their median), and a diagnostic column: the
  simulated step with host time off ([cpu] time_scale = 0, call_overhead = 0: the GPU
  timeline alone);

then the mean and max absolute step-time and memory errors over the measured cells.
Cells the real data lacks (several GPUs) are listed as not measured and not simulated.
Standard library only.  --sim-results FILE prints the table from saved simulated results
(--save-sim writes them) instead of running the simulator: the CTest uses that.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MEAN_RE = re.compile(r"rank 0: mean step ([0-9.]+) ms, .*peak memory allocated (\d+) bytes .*reserved (\d+) bytes")
NOT_MEASURED = "not measured (needs a multi-GPU machine)"


def read_matrix(path):
    cells = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            if len(words) < 3 or not words[2].isdigit():
                raise ValueError(f"{path}:{number}: expected 'size mode gpus [train_gpt.py flags]', "
                                 f"got '{line}'")
            size, mode, gpus, *flags = words
            cells.append({"size": size, "mode": mode, "gpus": int(gpus), "flags": flags})
    return cells


def key(c):
    return f"{c['size']}/{c['mode']}/{c['gpus']}"


def scenario_copy(scenario, tmpdir, name, time_scale, overheads=True):
    """The scenario with [cpu] time_scale replaced (and, unless \p overheads, no call
    overheads); relative paths (the profile) made absolute so the copy can live elsewhere."""
    base = os.path.dirname(os.path.abspath(scenario))
    out = []
    with open(scenario) as f:
        for line in f:
            s = line.strip()
            if s.startswith("time_scale"):
                line = f"time_scale = {time_scale}\n"
            elif s.startswith("call_overhead") and not overheads:
                line = 'call_overhead = "0us"\n'
            elif s.startswith("query_overhead") and not overheads:
                line = 'query_overhead = "0us"\n'
            else:
                m = re.match(r'(\s*profile\s*=\s*")([^"]+)(".*)', line)
                if m and not os.path.isabs(m.group(2)):
                    line = m.group(1) + os.path.normpath(os.path.join(base, m.group(2))) + m.group(3) + "\n"
            out.append(line)
    path = os.path.join(tmpdir, name)
    with open(path, "w") as f:
        f.writelines(out)
    return path


def host_off_scenario(scenario, tmpdir):
    """The scenario with [cpu] time_scale = 0 and no call overheads (GPU timeline alone)."""
    return scenario_copy(scenario, tmpdir, "host-off.toml", 0.0, overheads=False)


def run_simulated(build, scenario, nproc, script, args, verbose):
    """`phantora-cluster --scenario S --nproc N -- <build's venv python> SCRIPT ARGS...`;
    the finished process, stdout and stderr together."""
    cmd = [os.path.join(build, "bridge", "phantora-cluster"), "--scenario", scenario,
           "--nproc", str(nproc), "--", os.path.join(build, "venv", "bin", "python"), script, *args]
    if verbose:
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def simulate(build, scenario, cell, steps, warmup, verbose):
    p = run_simulated(build, scenario, cell["gpus"], os.path.join(ROOT, "examples", "torch", "train_gpt.py"),
                      [*cell["flags"], "--mode", cell["mode"], "--steps", str(steps),
                       "--warmup", str(warmup)], verbose)
    m = MEAN_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        tail = "\n".join(p.stdout.splitlines()[-15:])
        raise RuntimeError(f"simulation of {key(cell)} failed (exit {p.returncode}):\n{tail}")
    cov = re.search(r"([0-9.]+)% of the GPU time measured", p.stdout)
    return {"step_ms": float(m.group(1)), "peak_allocated_bytes": int(m.group(2)),
            "peak_reserved_bytes": int(m.group(3)), "measured_share": float(cov.group(1)) if cov else None}


def simulate_reps(build, scenario, cell, steps, warmup, reps, verbose):
    """The median of `reps` simulations: the simulated host time is this machine's real
    CPU time, which varies from run to run as the real host's does."""
    runs = [simulate(build, scenario, cell, steps, warmup, verbose) for _ in range(reps)]
    med = statistics.median(r["step_ms"] for r in runs)
    best = min(runs, key=lambda r: abs(r["step_ms"] - med))
    return dict(best, step_ms=med, step_ms_all=[r["step_ms"] for r in runs])


HOST_WORKLOADS = ("python", "dispatch", "autograd")


def host_scale(build, scenario, real, verbose):
    """[cpu] time_scale from host_speed.py on both sides: the real GPU machine's figures
    (real["host_speed"], and real["host_speed_end"] where measured, averaged) over what the
    simulator charges for the same workloads here (host_speed.py --clock monotonic as a rank
    of phantora-cluster, so its own interposition counts).  The geometric mean of the three
    workloads' ratios; the workloads are not the validated ones (no training step in them)."""
    runs = [real.get(k) for k in ("host_speed", "host_speed_end") if real.get(k)]
    if not runs:
        raise RuntimeError("the real data has no host_speed.py figures (host_speed / host_speed_end)")
    p = run_simulated(build, scenario, 1, os.path.join(HERE, "host_speed.py"),
                      ["--clock", "monotonic", "--reps", "7"], verbose)
    m = re.search(r"^\[rank 0\] (\{.*\})$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        raise RuntimeError("host_speed.py under phantora-cluster failed:\n" + p.stdout[-2000:])
    here = json.loads(m.group(1))
    ratios = {}
    for w in HOST_WORKLOADS:
        ratios[w] = statistics.mean(r[w] for r in runs) / here[w]
    scale = statistics.geometric_mean(ratios.values())
    return scale, ratios, here


def pct(sim, real):
    return 100.0 * (sim - real) / real


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from e


def minmax(values):
    return (min(values), max(values)) if values else (None, None)


def spread(lo, hi):
    return f"{lo:.2f}-{hi:.2f}" if lo is not None and hi is not None else "-"


def table(matrix, real, sim, out=sys.stdout):
    real_cells = {key(c): c for c in real["cells"] if "step_ms" in c}
    head = ["workload (size, mode, GPUs)", "real ms", "real range", "sim ms", "sim range", "err %",
            "sim GPU-only ms",
            "real peak alloc B", "sim peak alloc B", "mem err %"]
    rows, step_err, mem_err = [], [], []
    for c in matrix:
        k = key(c)
        name = f"{c['size']} {c['mode']} {c['gpus']}"
        r = real_cells.get(k)
        s = sim.get(k)
        if r is None:
            rows.append([name, NOT_MEASURED])
            continue
        if s is None:
            rows.append([name, f"{r['step_ms']:.3f}", "(not simulated)"])
            continue
        e = pct(s["step_ms"], r["step_ms"])
        me = pct(s["peak_allocated_bytes"], r["peak_allocated_bytes"])
        step_err.append(abs(e))
        mem_err.append(abs(me))
        gpu = s.get("host_off_step_ms")
        rows.append([name, f"{r['step_ms']:.3f}", spread(r.get("step_ms_min"), r.get("step_ms_max")),
                     f"{s['step_ms']:.3f}", spread(*minmax(s.get("step_ms_all"))), f"{e:+.1f}",
                     f"{gpu:.3f}" if gpu is not None else "-",
                     str(r["peak_allocated_bytes"]), str(s["peak_allocated_bytes"]), f"{me:+.2f}"])
    widths = [max(len(head[i]), *(len(r[i]) for r in rows if len(r) > i and len(r) == len(head)))
              for i in range(len(head))]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    print(line, file=out)
    print("-" * len(line), file=out)
    for r in rows:
        if len(r) == len(head):
            print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))),
                  file=out)
        else:
            print(r[0].ljust(widths[0]) + "  " + "  ".join(r[1:]), file=out)
    print("-" * len(line), file=out)
    if step_err:
        print(f"step time: mean |error| {sum(step_err) / len(step_err):.1f} %, max |error| {max(step_err):.1f} % "
              f"over {len(step_err)} measured cells", file=out)
        print(f"peak memory allocated: mean |error| {sum(mem_err) / len(mem_err):.2f} %, "
              f"max |error| {max(mem_err):.2f} %", file=out)
    missing = sum(1 for r in rows if r[1] == NOT_MEASURED)
    if missing:
        print(f"{missing} cells not measured: they need a multi-GPU machine "
              f"(bench/accuracy/measure_real_on_device.sh runs them where the GPUs exist)", file=out)
    return step_err, mem_err


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("PHANTORA_BUILD_DIR", os.path.join(ROOT, "build")),
                   help="a built tree (phantora-cluster and venv/)")
    p.add_argument("--real", default=os.path.join(HERE, "real", "H200.json"))
    p.add_argument("--matrix", default=os.path.join(HERE, "matrix.tsv"))
    p.add_argument("--scenario", default=os.path.join(ROOT, "scenarios", "h200-profile.toml"))
    p.add_argument("--steps", type=int, default=8, help="simulated steps per cell")
    p.add_argument("--warmup", type=int, default=3, help="simulated steps left out of the mean")
    p.add_argument("--host-scale", action="store_true",
                   help="simulate with the [cpu] time_scale host_speed.py gives (the real data's "
                        "figures over what the simulator charges here for the same work)")
    p.add_argument("--time-scale", type=float,
                   help="simulate with this [cpu] time_scale instead of the scenario's (the real "
                        "host's speed relative to this one, e.g. from host_speed.py run on both)")
    p.add_argument("--sim-reps", type=int, default=3,
                   help="simulations per cell; the table gives their median, as it does the real runs'")
    p.add_argument("--no-host-off", action="store_true", help="skip the GPU-only diagnostic runs")
    p.add_argument("--sim-results", help="print from these saved simulated results instead of simulating")
    p.add_argument("--save-sim", help="write the simulated results here (JSON)")
    p.add_argument("--max-step-error", type=float,
                   help="exit 1 if the max |step-time error| exceeds this many percent")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()

    matrix = read_matrix(args.matrix)
    real = load_json(args.real)
    measured = {key(c) for c in real["cells"] if "step_ms" in c}
    env = real.get("env", {})
    print(f"real: {os.path.relpath(args.real, ROOT)}: {env.get('query', '?')}; {env.get('torch', '?')}; "
          f"{env.get('date_utc', '?')}; reps {env.get('reps', '?')}")
    if args.sim_results:
        saved = load_json(args.sim_results)
        sim = saved["cells"]
        scaled = f", time_scale {saved['time_scale']}" if saved.get("time_scale") is not None else ""
        print(f"simulated: saved results {os.path.relpath(args.sim_results, ROOT)} "
              f"({saved.get('scenario', '?')}{scaled}, {saved.get('steps', '?')} steps, "
              f"warm-up {saved.get('warmup', '?')}, median of {saved.get('reps', 1)} runs)")
    else:
        scenario_name = os.path.relpath(args.scenario, ROOT)
        print(f"simulated: {scenario_name}, {args.steps} steps, warm-up {args.warmup}, "
              f"median of {args.sim_reps} runs, build {args.build}", flush=True)
        sim = {}
        with tempfile.TemporaryDirectory() as tmp:
            if args.host_scale:
                args.time_scale, ratios, here = host_scale(args.build, args.scenario, real, args.verbose)
                print("host_speed.py, real GPU machine / simulated here: " +
                      ", ".join(f"{w} {ratios[w]:.3f}" for w in HOST_WORKLOADS) +
                      f" (here: " + ", ".join(f"{w} {here[w]:.0f} ns" for w in HOST_WORKLOADS) + ")"
                      f"; time_scale = their geometric mean {args.time_scale:.3f}", flush=True)
                args.time_scale = round(args.time_scale, 3)
            if args.time_scale is not None:
                args.scenario = scenario_copy(args.scenario, tmp, "scaled.toml", args.time_scale)
                print(f"simulated with [cpu] time_scale = {args.time_scale}", flush=True)
            off = None if args.no_host_off else host_off_scenario(args.scenario, tmp)
            for c in matrix:
                if key(c) not in measured:
                    continue
                s = simulate_reps(args.build, args.scenario, c, args.steps, args.warmup,
                                  args.sim_reps, args.verbose)
                if off:
                    s["host_off_step_ms"] = simulate(args.build, off, c, args.steps, args.warmup,
                                                     args.verbose)["step_ms"]
                sim[key(c)] = s
        if args.save_sim:
            with open(args.save_sim, "w") as f:
                json.dump({"scenario": scenario_name, "time_scale": args.time_scale, "steps": args.steps,
                           "warmup": args.warmup, "reps": args.sim_reps, "real": os.path.relpath(args.real, ROOT),
                           "cells": sim}, f, indent=1)
                f.write("\n")
    print()
    step_err, _ = table(matrix, real, sim)
    if args.max_step_error is not None and (not step_err or max(step_err) > args.max_step_error):
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        # a missing or malformed data file, or a failed simulation: say which, not a traceback
        sys.exit(f"accuracy.py: {e}")
