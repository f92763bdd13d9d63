#!/usr/bin/env python3
"""Soak: one long or large simulation, watched for leaks and stalls (issue 37, item 4).

Runs examples/torch/train_gpt.py (the small model of the torch tests, DDP) on N forked ranks
for S steps under phantora-cluster and, every --interval seconds, samples the bridge's
resident memory (VmRSS) and open descriptors (/proc/PID/fd) and the ranks' PSS (their sum).
Prints, for the run:
  wall            the run's wall time, and seconds per step between the warm-up's end and
                  the last step (the warm-up: the first --warmup fraction of the steps);
  bridge RSS      at the warm-up's end and at the end, its growth after the warm-up per
                  1,000 steps, and its largest sample;
  bridge fds      the same for its open descriptors;
  ranks PSS       the same for the sum of the ranks' PSS;
  steps           rank 0's simulated step time at --compare-step and at the last step, the
                  largest wall gap between two of its step lines (a stall shows there), and
                  the exit status;
  messages        the bridge's own count of requests and host events;
and a few of the samples (memory over time).  Leaks show as growth after the warm-up that
does not level off; the simulated steps of a steady loop should not drift.

usage: bench/soak.py [--build build] [--ranks 8] [--steps 2000] [--scenario FILE]
                     [--interval 5] [--compare-step 50] [--warmup 0.25]
e.g.   bench/soak.py --ranks 8 --steps 2000
       bench/soak.py --ranks 256 --steps 50 --scenario scenarios/cluster-128x8-h100-ib.toml \
           --connect-timeout 900
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rank_memory  # noqa: E402  (this folder: its process walk, PSS reader and scenario)

ROOT = rank_memory.ROOT
STEP_RE = re.compile(r"^\[rank 0\] step (\d+): ([0-9.]+) ms")
REQUESTS_RE = re.compile(r"bridge: (\d+) requests from (\d+) ranks in ([0-9.]+) s")
EVENTS_RE = re.compile(r"bridge: (\d+) host events")


def vm_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def open_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def at_or_after(samples, t):
    """The first sample taken at or after time t (the last one if none is)."""
    for s in samples:
        if s["t"] >= t:
            return s
    return samples[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--scenario", default=None,
                    help="scenario file (default: scenarios/default.toml with --ranks GPUs)")
    ap.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--compare-step", type=int, default=50,
                    help="the step whose simulated time the last step's is compared with")
    ap.add_argument("--warmup", type=float, default=0.25,
                    help="fraction of the steps left out of the growth figures")
    ap.add_argument("--connect-timeout", type=int, default=600)
    ap.add_argument("--model", default=rank_memory.SMALL)
    args = ap.parse_args()

    cluster = os.path.join(args.build, "bridge/phantora-cluster")
    python = os.path.join(args.build, "venv/bin/python")
    tmp = tempfile.mkdtemp(prefix="phantora-soak-")
    scen = args.scenario or rank_memory.scenario(tmp, args.ranks)
    cmd = [cluster, "--scenario", scen, "--nproc", str(args.ranks), "--fork-server",
           "--progress", "never", "--connect-timeout", str(args.connect_timeout),
           "--report", os.path.join(tmp, "report.json"), "--", python,
           os.path.join(ROOT, "examples/torch/train_gpt.py"), *args.model.split(), "--mode", "ddp",
           "--steps", str(args.steps)]
    print("command:", " ".join(cmd), flush=True)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    steps = {}  # step -> (wall time, simulated ms)
    tail = []
    messages = {}

    def read():
        for line in proc.stdout:
            now = time.monotonic() - start
            m = STEP_RE.match(line)
            if m:
                steps[int(m.group(1))] = (now, float(m.group(2)))
            m = REQUESTS_RE.search(line)
            if m:
                messages.update(requests=int(m.group(1)), seconds=float(m.group(3)))
            m = EVENTS_RE.search(line)
            if m:
                messages["host_events"] = int(m.group(1))
            tail.append(line)
            del tail[:-40]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples = []
    while proc.poll() is None:
        kids = {}
        for pid, ppid in rank_memory.parents().items():
            kids.setdefault(ppid, []).append(pid)
        ranks = kids.get(proc.pid, [])
        pss = [rank_memory.pss_kib(p) for p in ranks]
        rss, fds = vm_rss_kib(proc.pid), open_fds(proc.pid)
        if rss is not None:
            samples.append({"t": time.monotonic() - start, "step": max(steps, default=-1),
                            "rss": rss, "fds": fds, "ranks": len(ranks),
                            "pss": sum(p for p in pss if p is not None)})
            if len(samples) % max(int(60 / args.interval), 1) == 0:  # a line a minute
                s = samples[-1]
                print(f"  {s['t']:.0f} s: step {s['step']}, bridge RSS {s['rss'] / 1024:.1f} MiB, "
                      f"{s['fds']} fds, ranks PSS {s['pss'] / 1024:.1f} MiB", flush=True)
        time.sleep(args.interval)
    reader.join(timeout=10)
    wall = time.monotonic() - start
    status = proc.returncode
    if not steps or not samples:
        print(f"no steps or no samples (exit status {status}):\n" + "".join(tail))
        return 1

    last = max(steps)
    warm = max(int(args.steps * args.warmup), 1)
    warm_t = steps[min(warm, last)][0]
    end_t = steps[last][0]
    # the samples while the ranks ran (after the last step they exit and the bridge reports)
    running = [s for s in samples if s["t"] <= end_t and s["ranks"] == args.ranks] or samples
    at_warm = at_or_after(running, warm_t)
    at_end = running[-1]
    per_k = 1000.0 / max(at_end["step"] - at_warm["step"], 1)
    gaps = [steps[i + 1][0] - steps[i][0] for i in range(min(steps), last) if i + 1 in steps]
    cmp_step = min(args.compare_step, last)

    def fig(key, unit, scale):
        a, b = at_warm[key] * scale, at_end[key] * scale
        top = max(s[key] for s in running) * scale
        return (f"{a:.1f} {unit} at step {at_warm['step']}, {b:.1f} {unit} at step "
                f"{at_end['step']} ({(b - a) * per_k:+.2f} {unit} per 1,000 steps), "
                f"largest {top:.1f} {unit}")

    print(f"ranks {args.ranks}, steps {args.steps}, scenario {os.path.relpath(scen, ROOT)}")
    print(f"wall: {wall:.1f} s in all, {(end_t - warm_t) / max(last - warm, 1):.3f} s a step "
          f"after the warm-up (steps {warm}-{last})")
    print(f"bridge RSS: {fig('rss', 'MiB', 1 / 1024)}")
    print(f"bridge fds: {fig('fds', 'fds', 1)}")
    print(f"ranks PSS (sum of {at_end['ranks']}): {fig('pss', 'MiB', 1 / 1024)}")
    print(f"steps: simulated {steps[cmp_step][1]:.3f} ms at step {cmp_step}, "
          f"{steps[last][1]:.3f} ms at step {last} "
          f"({(steps[last][1] / steps[cmp_step][1] - 1) * 100:+.2f} %); largest wall gap "
          f"between two steps {max(gaps, default=0):.2f} s; exit status {status}")
    if messages:
        print(f"messages: {messages.get('requests')} requests "
              f"({messages.get('requests', 0) / max(last + 1, 1) / args.ranks:.0f} a rank a step), "
              f"{messages.get('host_events')} host events")
    print("samples (wall s, step, bridge RSS MiB, bridge fds, ranks PSS MiB):")
    for s in running[:: max(len(running) // 12, 1)] + [at_end]:
        print(f"  {s['t']:8.1f} {s['step']:6d} {s['rss'] / 1024:9.1f} {s['fds']:5d} "
              f"{s['pss'] / 1024:9.1f}")
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
