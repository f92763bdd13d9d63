#!/usr/bin/env python3
"""Wall time and peak memory of folded runs (docs/folding.md) at growing world sizes.

Runs phantora-cluster --nproc N --fold D on a cluster scenario (flow level) for each N of
--world, with a torch DDP program (examples/torch/train_gpt.py --mode ddp) or TorchTitan
(Llama3 of --flavor, FSDP2 over the folded dimension, optional --tp), samples the
proportional set size (PSS) of every process of the run every --interval seconds, and
prints one Markdown row per run:

    python3 bench/fold_scale.py --build build --example torchtitan --flavor 70B \\
        --scenario scenarios/cluster-128x8-h100-ib.toml --world 128 1024 --steps 3
    python3 bench/fold_scale.py --build build --example ddp --world 16 --unfolded

wall: the whole run, start to exit; peak PSS: the largest sample of the sum over the run's
processes (the bridge, the store host, the fork server, the ranks); bridge: the
phantora-cluster process's own largest PSS; step: rank 0's step times as the program
printed them.  --unfolded runs the same world unfolded too, for comparison.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def children_of(pid):
    """pid and every descendant (by /proc/*/stat's ppid)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    def __init__(self, pid, interval):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kib = self.bridge_kib = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            total = sum(pss_kib(p) for p in children_of(self.pid))
            self.peak_kib = max(self.peak_kib, total)
            self.bridge_kib = max(self.bridge_kib, pss_kib(self.pid))
            self.done.wait(self.interval)


def command(args, world, fold, report, scratch):
    python = os.path.join(args.build, "venv", "bin", "python")
    cluster = os.path.join(args.build, "bridge", "phantora-cluster")
    head = [cluster, "--scenario", args.scenario, "--nproc", str(world), "--report", report,
            "--progress", "never", "--connect-timeout", "600"]
    if fold > 1:
        head += ["--fold", str(fold)]
        if args.fold_stride:
            head += ["--fold-stride", str(args.fold_stride)]
    if args.example == "ddp":
        return head + ["--", python, os.path.join(ROOT, "examples/torch/train_gpt.py"),
                       "--mode", "ddp", "--steps", str(args.steps)] + args.args.split()
    assets = args.assets
    return head + ["--", python, "-m", "torchtitan.train",
                   "--job.config_file", os.path.join(ROOT, "examples/torchtitan/llama3_8b.toml"),
                   "--model.flavor", args.flavor,
                   "--model.hf_assets_path", os.path.join(assets, "tokenizer"),
                   "--training.dataset_path", os.path.join(assets, "c4_test"),
                   "--job.dump_folder", os.path.join(scratch, "outputs"),
                   "--training.steps", str(args.steps),
                   "--parallelism.tensor_parallel_degree", str(args.tp)] + args.args.split()


def step_times(output, example):
    if example == "ddp":
        return [float(m) for m in re.findall(r"\[rank 0\] step \d+: ([0-9.]+) ms", output)]
    # TorchTitan logs tokens/s per device; a step is local batch x sequence of them.
    return [m for m in re.findall(r"\[rank 0\] .*step: +\d+ .* tps: ([0-9,]+) ", output)]


def run(args, world, fold):
    scratch = tempfile.mkdtemp(prefix="fold-scale-")
    report = os.path.join(scratch, "report.json")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HOME=os.path.join(scratch, "hf"))
    start = time.monotonic()
    proc = subprocess.Popen(command(args, world, fold, report, scratch), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    sampler = Sampler(proc.pid, args.interval)
    sampler.start()
    output = proc.communicate()[0]
    wall = time.monotonic() - start
    sampler.done.set()
    sampler.join()
    if args.verbose or proc.returncode != 0:
        sys.stderr.write(output[-args.tail:])
    steps = step_times(output, args.example)
    live = world // fold if fold > 1 else world
    print(f"| {world} | {live} | {args.example}{' ' + args.flavor if args.example != 'ddp' else ''}"
          f" | {proc.returncode} | {wall:.1f} | {sampler.peak_kib / 2**20:.2f} | "
          f"{sampler.bridge_kib / 2**20:.2f} | {', '.join(map(str, steps))} |", flush=True)
    return proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--example", choices=["ddp", "torchtitan"], default="ddp")
    ap.add_argument("--flavor", default="70B", help="TorchTitan's Llama3 flavor")
    ap.add_argument("--tp", type=int, default=1, help="TorchTitan's tensor-parallel degree")
    ap.add_argument("--assets", default=os.path.join(ROOT, "build", "torchtitan-assets"),
                    help="examples/torchtitan/make_assets.py's folder")
    ap.add_argument("--scenario", default=os.path.join(ROOT, "scenarios/cluster-128x8-h100-ib.toml"))
    ap.add_argument("--world", type=int, nargs="+", default=[16])
    ap.add_argument("--fold", type=int, default=0,
                    help="replicas to fold (default: the world over --tp)")
    ap.add_argument("--fold-stride", type=int, default=0)
    ap.add_argument("--unfolded", action="store_true", help="run each world unfolded too")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--args", default="", help="more arguments for the program")
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--tail", type=int, default=4000, help="output shown of a failed run")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    print("| world | live | program | exit | wall s | peak PSS GiB | bridge GiB | rank 0 steps |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    status = 0
    for world in args.world:
        fold = args.fold or world // args.tp
        status |= run(args, world, fold)
        if args.unfolded:
            status |= run(args, world, 1)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
