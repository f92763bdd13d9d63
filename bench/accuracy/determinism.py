"""Is the simulated step time the same run after run, on a quiet and on a busy machine?

    python3 bench/accuracy/determinism.py --build build [--cell gpt_ref/fsdp/4]

Simulates one cell of the accuracy harness (accuracy.py's suites; default the 4-rank FSDP2
cell of gpt_ref) three times with the same command: with no extra load, with every core of
this machine kept busy by another process (`python3 -c 'while True: pass'`, one per core,
started before the run and killed after it), and with no extra load again. Prints the three step times, peak memory, and
their spread: (slowest - fastest) / median, in percent. Issue 12's target is 0.5 % or less
(--max-spread); the exit status is 1 when the spread exceeds it. Standard library only.
"""

import argparse
import os
import statistics
import subprocess
import sys

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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("PHANTORA_BUILD_DIR", os.path.join(accuracy.ROOT, "build")),
                   help="a built tree (phantora-cluster and venv/)")
    p.add_argument("--cell", default="gpt_ref/fsdp/4", help="the cell, as accuracy.py --cells picks it")
    p.add_argument("--scenario", help="another scenario than the suite's")
    p.add_argument("--script", help="run this script instead of the suite's (a modified copy, to debug)")
    p.add_argument("--steps", type=int, default=8, help="simulated steps (as accuracy.py counts them)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--busy", type=int, default=os.cpu_count() or 1,
                   help="spinning processes during the busy run (default: one per core)")
    p.add_argument("--max-spread", type=float, default=0.5, help="percent; exit 1 above it")
    p.add_argument("--sim-timeout", type=int, default=1800, help="seconds one simulation may take")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.steps <= args.warmup or args.warmup < 0:
        p.error("--steps must exceed --warmup >= 0")

    suite, cell = find_cell(args.cell)
    accuracy.check_build(args.build)
    scenario = os.path.abspath(args.scenario) if args.scenario else suite.scenario
    if args.script:
        suite.script = os.path.abspath(args.script)
    print(f"cell {suite.name}/{accuracy.key(cell)}: {accuracy.rel(suite.script)} "
          f"{' '.join(cell['flags'])} --mode {cell['mode']}, {cell['gpus']} ranks, "
          f"{accuracy.rel(scenario)}, {suite.describe_steps(args.steps, args.warmup)}, "
          f"build {args.build}", flush=True)
    runs = []
    # "no extra load", not "quiet": what else runs on this machine is not ours to stop
    for label, busy in (("no extra load", 0), (f"busy: {args.busy} spinning processes", args.busy),
                        ("no extra load", 0)):
        with BusyCores(busy):
            r = accuracy.simulate(args.build, suite, scenario, cell, args.steps, args.warmup,
                                  args.verbose, args.sim_timeout)
        runs.append(r)
        print(f"run {len(runs)} ({label}): step {r['step_ms']:.3f} ms, peak allocated "
              f"{r['peak_allocated_bytes']} B", flush=True)
    steps = [r["step_ms"] for r in runs]
    spread = 100.0 * (max(steps) - min(steps)) / statistics.median(steps)
    verdict = "within" if spread <= args.max_spread else "NOT within"
    print(f"spread (slowest - fastest) / median: {spread:.2f} % ({verdict} {args.max_spread} %)")
    if len({r["peak_allocated_bytes"] for r in runs}) != 1:
        print("peak memory differs between the runs")
    if spread > args.max_spread:
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        sys.exit(f"determinism.py: {e}")
