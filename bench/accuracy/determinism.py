"""Is the simulated step time the same run after run, on a quiet and on a busy machine?

    python3 bench/accuracy/determinism.py --build build [--cell gpt_ref/fsdp/4] [--unrecorded]
    python3 bench/accuracy/determinism.py --build build --cuda-example 8

`--unrecorded` runs a copy of the cell's script under another file name, so that no recording
in the profile is of it and its host time comes from the host-time model (the summary's
`host time: model of ...`, checked): a program of the user's own. `--cuda-example N` runs
the bundled CUDA example (`phantora-cuda-train-step`, recorded in no profile: host time from
the model of the committed H200 profile) on N ranks of `scenarios/h200x8-nvlink.toml`, and
compares every rank's simulated end (its `--report`) besides the steps. Both print
`identical: yes` when every figure compared is the same in all three runs (issue 33's target
for programs nobody recorded), and exit 1 otherwise.

Simulates one cell of the accuracy harness (accuracy.py's suites; default the 4-rank FSDP2
cell of gpt_ref) three times with the same command: with no extra load, with every core of
this machine kept busy by another process (`python3 -c 'while True: pass'`, one per core,
started before the run and killed after it), and with no extra load again. Prints the three step times, peak memory, and
their spread: (slowest - fastest) / median, in percent. Issue 12's target is 0.5 % or less
(--max-spread); the exit status is 1 when the spread exceeds it. Standard library only.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402


def find_cell(pattern):
    """(suite, cell) of the one matrix cell that \\p pattern picks (accuracy.py --cells rules)."""
    hits = [(suite, c) for suite in accuracy.SUITES.values() for c in accuracy.read_matrix(suite.matrix)
            if accuracy.cell_matches(pattern, f"{suite.name}/{accuracy.key(c)}")]
    if len(hits) != 1:
        names = [f"{s.name}/{accuracy.key(c)}" for s, c in hits]
        raise ValueError(f"--cell {pattern} picks {len(hits)} cells{': ' + ', '.join(names) if names else ''}; "
                         f"name exactly one")
    return hits[0]


class BusyCores:
    """Spinning processes, one per core, for as long as the `with` block runs."""

    def __init__(self, count):
        self.count = count
        self.procs = []

    def __enter__(self):
        for _ in range(self.count):
            self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        return self

    def __exit__(self, *exc):
        for p in self.procs:  # only the processes this object started, by their own handles
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []
        return False


STEP_LINE_RE = re.compile(r"\[rank \d+\] rank \d+ step \d+ time [0-9.]+ us")
LOADS = (("no extra load", False), ("busy", True), ("no extra load", False))


def cuda_example(args):
    """The bundled CUDA example on args.cuda_example ranks, three times: (step, rank ends) each."""
    cluster = os.path.join(args.build, "bridge", "phantora-cluster")
    example = os.path.join(args.build, "examples", "cuda", "phantora-cuda-train-step")
    scenario = os.path.abspath(args.scenario or os.path.join(accuracy.ROOT, "scenarios", "h200x8-nvlink.toml"))
    for f in (cluster, example):
        if not os.access(f, os.X_OK):
            raise RuntimeError(f"{f} is not built (cmake --build {args.build} --target phantora-cluster)")
    print(f"CUDA example ({accuracy.rel(example)} {args.elements} {args.example_steps}) on "
          f"{args.cuda_example} ranks, {accuracy.rel(scenario)}, build {args.build}", flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="phantora-determinism-") as tmp:
        for label, busy in LOADS:
            report = os.path.join(tmp, f"report{len(runs)}.json")
            cmd = [cluster, "--scenario", scenario, "--nproc", str(args.cuda_example), "--report", report,
                   "--connect-timeout", str(args.connect_timeout),
                   "--", example, str(args.elements), str(args.example_steps)]
            with BusyCores(args.busy if busy else 0):
                p = subprocess.run(cmd, cwd=accuracy.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=args.sim_timeout)
            if p.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout[-2000:]}")
            with open(report) as f:
                ends = {r["rank"]: r["simulated_time_ns"] for r in json.load(f)["ranks"]}
            host = accuracy.HOST_TIME_RE.search(p.stdout)
            runs.append({"label": label if not busy else f"busy: {args.busy} spinning processes",
                         "step_ms": max(ends.values()) / 1e6, "host_time": host.group(1).strip() if host else None,
                         "signature": sorted(STEP_LINE_RE.findall(p.stdout)) + [f"end{r}={ns}" for r, ns in
                                                                              sorted(ends.items())]})
            print(f"run {len(runs)} ({runs[-1]['label']}): last rank ends at {runs[-1]['step_ms']:.6f} ms, "
                  f"ranks end at {sorted(set(ends.values()))} ns; host time: {runs[-1]['host_time']}", flush=True)
    return runs


def verdict(runs, args, what):
    """Prints the spread of \p runs' figure and whether every figure compared is the same; exit status."""
    steps = [r["step_ms"] for r in runs]
    spread = 100.0 * (max(steps) - min(steps)) / statistics.median(steps)
    within = "within" if spread <= args.max_spread else "NOT within"
    print(f"spread (slowest - fastest) / median of the {what}: {spread:.2f} % ({within} {args.max_spread} %)")
    same = all(r["signature"] == runs[0]["signature"] for r in runs)
    print(f"identical: {'yes' if same else 'no'} ({len(runs[0]['signature'])} figures compared in each run)")
    if args.unrecorded or args.cuda_example:
        model = all((r["host_time"] or "").startswith("model of") for r in runs)
        print(f"host time from the model in every run: {'yes' if model else 'no'}")
        if not model or not same:
            return 1
    return 1 if spread > args.max_spread else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("PHANTORA_BUILD_DIR", os.path.join(accuracy.ROOT, "build")),
                   help="a built tree (phantora-cluster and venv/)")
    p.add_argument("--cell", default="gpt_ref/fsdp/4", help="the cell, as accuracy.py --cells picks it")
    p.add_argument("--scenario", help="another scenario than the suite's")
    p.add_argument("--script", help="run this script instead of the suite's (a modified copy, to debug)")
    p.add_argument("--unrecorded", action="store_true",
                   help="run the script copied under a file name no recording has (host time from the model)")
    p.add_argument("--cuda-example", type=int, metavar="RANKS",
                   help="the bundled CUDA example on RANKS ranks instead of a cell")
    p.add_argument("--elements", type=int, default=4194304, help="--cuda-example: floats a rank's buffer holds")
    p.add_argument("--example-steps", type=int, default=5, help="--cuda-example: its steps")
    p.add_argument("--steps", type=int, default=8, help="simulated steps (as accuracy.py counts them)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--busy", type=int, default=os.cpu_count() or 1,
                   help="spinning processes during the busy run (default: one per core)")
    p.add_argument("--max-spread", type=float, default=0.5, help="percent; exit 1 above it")
    p.add_argument("--sim-timeout", type=int, default=1800, help="seconds one simulation may take")
    p.add_argument("--connect-timeout", type=int, default=900,
                   help="seconds the ranks may take to start (phantora-cluster --connect-timeout)")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.steps <= args.warmup or args.warmup < 0:
        p.error("--steps must exceed --warmup >= 0")

    accuracy.CONNECT_TIMEOUT = args.connect_timeout
    if args.cuda_example:
        sys.exit(verdict(cuda_example(args), args, "last rank's end"))
    suite, cell = find_cell(args.cell)
    accuracy.check_build(args.build)
    scenario = os.path.abspath(args.scenario) if args.scenario else suite.scenario
    with tempfile.TemporaryDirectory(prefix="phantora-unrecorded-") as tmp:
        if args.script:
            suite.script = os.path.abspath(args.script)
        if args.unrecorded:
            # Another file name: profile::ProgramName finds no recording of it.
            copy = os.path.join(tmp, "unrecorded_" + os.path.basename(suite.script))
            shutil.copyfile(suite.script, copy)
            suite.script = copy
        print(f"cell {suite.name}/{accuracy.key(cell)}: {accuracy.rel(suite.script)} "
              f"{' '.join(cell['flags'])} --mode {cell['mode']}, {cell['gpus']} ranks, "
              f"{accuracy.rel(scenario)}, {suite.describe_steps(args.steps, args.warmup)}, "
              f"build {args.build}", flush=True)
        runs = []
        # "no extra load", not "quiet": what else runs on this machine is not ours to stop
        for label, busy in LOADS:
            with BusyCores(args.busy if busy else 0):
                r = accuracy.simulate(args.build, suite, scenario, cell, args.steps, args.warmup,
                                      args.verbose, args.sim_timeout)
            r["label"] = f"busy: {args.busy} spinning processes" if busy else label
            r["signature"] = [r["step_ms"], r["peak_allocated_bytes"], *r["rank_means"]]
            runs.append(r)
            print(f"run {len(runs)} ({r['label']}): step {r['step_ms']:.3f} ms, peak allocated "
                  f"{r['peak_allocated_bytes']} B; host time: {r['host_time']}", flush=True)
            for line in r["rank_means"]:
                print(f"  {line}")
    if len({r["peak_allocated_bytes"] for r in runs}) != 1:
        print("peak memory differs between the runs")
    sys.exit(verdict(runs, args, "step"))


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        sys.exit(f"determinism.py: {e}")
