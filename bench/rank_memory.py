#!/usr/bin/env python3
"""Host cost per simulated GPU: wall time per simulated step and memory per rank.

Runs examples/torch/train_gpt.py (the small model of the torch tests, DDP) under
phantora-cluster at each rank count, and samples every rank process's proportional
set size (PSS, /proc/PID/smaps_rollup: shared pages divided among the processes that
share them, so the per-rank figures add up to what the ranks take) once a second
(--interval).

Printed per rank count:
  wall per step   wall-clock seconds between rank 0's first and last step lines,
                  divided by the steps between them (start-up left out);
  PSS steady      per rank, the median over the samples taken during those steps
                  (mean and largest over the ranks);
  PSS peak        the largest sample of any rank at any time (model building included);
  simulated step  rank 0's mean step as the program prints it.

With --launch fork (or both: --launch plain fork) the ranks are started by
`phantora-cluster --fork-server`: forked from one process that imported torch once, they
share its pages copy-on-write.  --model '' runs train_gpt.py's default model.

usage: bench/rank_memory.py [--build DIR] [--ranks 8 32] [--steps 6] [--model ARGS]
                            [--launch plain fork]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = "--layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096"


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return out


def scenario(tmp, gpus):
    """The default one-switch scenario with `gpus` GPUs and host time measured."""
    path = os.path.join(tmp, f"s{gpus}.toml")
    with open(os.path.join(ROOT, "scenarios/default.toml")) as f:
        text = re.sub(r"(?m)^gpus = .*$", f"gpus = {gpus}", f.read())
    with open(path, "w") as f:
        f.write(text)
    return path


def available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    return float("inf")


def run(build, ranks, steps, model, tmp, min_available, connect_timeout, launch, python,
        interval, scenario_file):
    cluster = os.path.join(build, "bridge/phantora-cluster")
    fork = ["--fork-server"] if launch == "fork" else []
    cmd = [cluster, "--scenario", scenario_file or scenario(tmp, ranks), "--nproc", str(ranks),
           "--progress",
           "never", "--connect-timeout", str(connect_timeout), *fork, "--", python,
           os.path.join(ROOT, "examples/torch/train_gpt.py"), *model.split(), "--steps",
           str(steps), "--mode", "ddp"]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples = []  # (time, {pid: pss KiB})
    done = threading.Event()
    starved = []
    lowest = [available_gib()]

    def sample():
        while not done.is_set():
            lowest[0] = min(lowest[0], available_gib())
            if available_gib() < min_available:
                # A shared machine: stop before the kernel's OOM killer picks anyone.
                starved.append(available_gib())
                proc.terminate()  # phantora-cluster ends its ranks on SIGTERM
                return
            now = time.monotonic()
            pss = {p: v for p in children(proc.pid) if (v := pss_kib(p)) is not None}
            if pss:
                samples.append((now, pss))
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    step_at = {}
    mean_step = None
    log = []
    for line in proc.stdout:
        log.append(line)
        m = re.match(r"\[rank 0\] step (\d+): ([0-9.]+) ms", line)
        if m:
            step_at[int(m.group(1))] = time.monotonic()
        m = re.match(r"\[rank 0\] rank 0: mean step ([0-9.]+) ms", line)
        if m:
            mean_step = float(m.group(1))
    rc = proc.wait()
    done.set()
    sampler.join()
    wall = time.monotonic() - start
    if starved:
        raise SystemExit(f"{ranks} ranks: stopped, {starved[0]:.1f} GiB of memory left "
                         f"(--min-available-gib {min_available})")
    if rc != 0 or len(step_at) < 2:
        sys.stdout.write("".join(log[-30:]))
        raise SystemExit(f"{ranks} ranks: the run failed (exit {rc})")
    first, last = min(step_at), max(step_at)
    per_step = (step_at[last] - step_at[first]) / (last - first)
    steady = {}
    for t, pss in samples:
        if step_at[first] <= t <= step_at[last]:
            for pid, v in pss.items():
                steady.setdefault(pid, []).append(v)
    per_rank = [statistics.median(v) / 2**20 for v in steady.values()]  # GiB
    peak = max(max(p.values()) for _, p in samples) / 2**20 if samples else float("nan")
    return wall, per_step, per_rank, peak, mean_step, lowest[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--model", default=SMALL,
                    help="train_gpt.py model arguments ('' for its default model)")
    ap.add_argument("--launch", nargs="+", choices=["plain", "fork"], default=["plain"],
                    help="exec every rank (plain) or fork them (phantora-cluster --fork-server)")
    ap.add_argument("--python", default=None, help="the ranks' interpreter (default BUILD/venv)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between PSS samples")
    ap.add_argument("--scenario", default=None,
                    help="a scenario with enough GPUs, instead of the default one-switch one "
                         "(torch counts at most 127 GPUs on one node)")
    ap.add_argument("--connect-timeout", type=int, default=900,
                    help="phantora-cluster --connect-timeout: every rank imports torch first")
    ap.add_argument("--min-available-gib", type=float, default=2.0,
                    help="stop a run when the machine has less memory available (default 2)")
    args = ap.parse_args()
    python = args.python or os.path.join(args.build, "venv/bin/python")
    print(f"examples/torch/train_gpt.py {args.model} --mode ddp, {args.steps} steps, "
          f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.ranks:
            for launch in args.launch:
                wall, per_step, per_rank, peak, mean_step, lowest = run(
                    args.build, n, args.steps, args.model, tmp, args.min_available_gib,
                    args.connect_timeout, launch, python, args.interval, args.scenario)
                if per_rank:
                    pss = (f"PSS steady {statistics.mean(per_rank):.3f} GiB/rank mean, "
                           f"{max(per_rank):.3f} max, {sum(per_rank):.2f} GiB in all "
                           f"({len(per_rank)} ranks sampled)")
                else:
                    pss = "PSS steady: no sample fell within the steps (too short a run)"
                print(f"{n:3d} ranks, {launch:5s}: {wall:.1f} s wall in all, {per_step:.2f} s "
                      f"wall per step; {pss}; PSS peak {peak:.3f} GiB; simulated mean step "
                      f"{mean_step} ms; machine's available memory at its lowest {lowest:.1f} GiB",
                      flush=True)


if __name__ == "__main__":
    main()
