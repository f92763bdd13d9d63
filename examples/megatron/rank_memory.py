#!/usr/bin/env python3
"""Host memory of each simulated rank: the peak proportional set size (PSS, from
/proc/PID/smaps_rollup: shared pages such as torch's libraries counted once among the
processes that map them) of every process under a phantora-cluster run, sampled until
that run ends.

    python3 examples/megatron/rank_memory.py -- build/bridge/phantora-cluster ... -- python train.py
    python3 examples/megatron/rank_memory.py --pid PID   # a run already going

Prints one line per rank process (its PID, RANK from its environment, peak PSS and RSS).
"""

import argparse
import os
import subprocess
import sys
import time


def children(pid):
    """Every descendant of pid (from /proc/*/stat's parent field)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parent[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        for child, ppid in parent.items():
            if ppid == p:
                found.append(child)
                frontier.append(child)
    return found


def rollup_kib(pid):
    """(Pss, Rss) in KiB, or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            values = {}
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] in ("Pss:", "Rss:"):
                    values[parts[0]] = int(parts[1])
        return values.get("Pss:", 0), values.get("Rss:", 0)
    except OSError:
        return None


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for item in f.read().split(b"\0"):
                if item.startswith(b"RANK="):
                    return int(item[5:])
    except (OSError, ValueError):
        pass
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pid", type=int, help="sample the processes under this running PID")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run and sample")
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    proc = None
    if args.pid:
        root = args.pid
    elif command:
        proc = subprocess.Popen(command)
        root = proc.pid
    else:
        p.error("give --pid or a command")
    peak = {}  # pid -> [rank, pss, rss]
    while True:
        alive = os.path.exists(f"/proc/{root}") if proc is None else proc.poll() is None
        if not alive:
            break
        for pid in children(root):
            rank = rank_of(pid)
            if rank is None:
                continue
            sample = rollup_kib(pid)
            if sample is None:
                continue
            entry = peak.setdefault(pid, [rank, 0, 0])
            entry[1] = max(entry[1], sample[0])
            entry[2] = max(entry[2], sample[1])
        time.sleep(args.interval)
    for pid, (rank, pss, rss) in sorted(peak.items(), key=lambda kv: (kv[1][0], kv[0])):
        print(f"rank {rank} pid {pid}: peak PSS {pss / 1024:.0f} MiB, peak RSS {rss / 1024:.0f} MiB",
              flush=True)
    return proc.returncode if proc else 0


if __name__ == "__main__":
    sys.exit(main())
