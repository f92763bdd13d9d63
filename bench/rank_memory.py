#!/usr/bin/env python3
"""Host cost per simulated GPU: wall time per simulated step and memory per rank.

Runs examples/torch/train_gpt.py (the small model of the torch tests, DDP) or, with
--example megatron, examples/megatron/train_gpt.py (a tiny model, DP over every rank unless
--args says otherwise) at each rank count and launch, and samples every process of the run
(PSS, /proc/PID/smaps_rollup: shared pages divided among the processes that share them, so
the figures add up to what the processes take) once a second (--interval).

Launches (--launch, any of them, each run in turn):
  plain   phantora-cluster --no-fork-server execs one interpreter per rank;
  fork    phantora-cluster --fork-server forks them from one process that imported torch,
          the framework and the program's own imports once (copy-on-write);
  default phantora-cluster without either flag (it forks `python SCRIPT` commands);
  served  two "hosts" on one machine, as tests/torch/two_hosts_torchrun.sh runs them:
          phantora-cluster --serve on 127.0.0.1 with CURVE keys, and two torchrun node
          groups of N/2 ranks each under phantora-rank, on 127.0.0.2 and 127.0.0.3;
          torchrun execs each rank's interpreter, which has phantora-rank's per-host fork
          server fork the rank and stands in for it (both groups share one fork server:
          one machine, one network namespace);
  served-exec  the same with phantora-rank --no-fork-server: the ranks are torchrun's
          exec'd interpreters, plain ones.

Printed per rank count and launch, one Markdown table row:
  wall per step   wall-clock seconds between rank 0's first and last step lines,
                  divided by the steps between them (start-up left out);
  PSS per rank    per rank process, the median of the samples taken during those steps,
                  then the mean and largest over the ranks, and their sum;
  every process   the median over those samples of the PSS of every process of the run
                  (the bridge, the fork server or torchrun's agents and phantora-rank, the
                  ranks; served: the host's fork server and the ranks' stand-ins too),
                  divided by the ranks;
  simulated step  rank 0's mean step as the program prints it;
  load average    the machine's, as the run ends (wall times depend on what else runs);
and below it the largest sample of any one process (the fork server while it imports).

usage: bench/rank_memory.py [--example torch|megatron] [--ranks 8 32 64] [--steps 6]
                            [--launch plain fork default served served-exec] [--model ARGS]
                            [--args ARGS]
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
# The tiny model of examples/megatron/README.md (DP over every rank unless --args says TP/PP).
MEGATRON_TINY = "--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 1024"
# A served rank's stand-in says which pid its rank is and which fork server forked it.
FORKED_RE = re.compile(r"\[phantora\] rank \d+ \(pid \d+\) forked as pid (\d+) by this "
                       r"host's fork server \(pid (\d+)")


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


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


EXAMPLES = {
    # name: (script, default model arguments, arguments always given)
    "torch": ("examples/torch/train_gpt.py", SMALL, "--mode ddp"),
    "megatron": ("examples/megatron/train_gpt.py", MEGATRON_TINY, ""),
}


def parents():
    """{pid: parent pid} of every process (one pass over /proc)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return parent


def descendants(pid, kids):
    """Every process under pid (pid itself left out); kids: {pid: [child pids]}."""
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        found += kids.get(p, [])
        frontier += kids.get(p, [])
    return found


class Run:
    """The processes of one run: what is started, and the output lines of rank 0."""

    def __init__(self):
        self.procs = []  # (name, Popen)
        self.lines = []
        self.lock = threading.Lock()
        # Served ranks forked by phantora-rank's fork server: {rank pid: server pid}, from
        # the stand-ins' "[phantora] rank R (pid P) forked as pid Q by ... (pid S" lines.
        self.forked = {}

    def start(self, name, cmd, on_line=None):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.procs.append((name, proc))

        def read():
            for line in proc.stdout:
                with self.lock:
                    self.lines.append((name, line))
                    m = FORKED_RE.search(line)
                    if m:
                        self.forked[int(m.group(1))] = int(m.group(2))
                if on_line:
                    on_line(line)

        t = threading.Thread(target=read, daemon=True)
        t.start()
        return proc, t

    def pids(self):
        """(every process of the run, the ranks among them): phantora-cluster's children
        are the exec'd or forked ranks (the fork server too until it exits, after
        forking); under phantora-rank, the children of torchrun's agent are, or, when
        those are stand-ins, the ranks the host's fork server forked for them."""
        kids = {}
        for pid, ppid in parents().items():
            kids.setdefault(ppid, []).append(pid)
        every, ranks = [], []
        for name, p in self.procs:
            every += [p.pid, *descendants(p.pid, kids)]
            if name == "cluster":
                ranks += kids.get(p.pid, [])
            elif name.startswith("group"):
                for agent in kids.get(p.pid, []):
                    ranks += kids.get(agent, [])
        with self.lock:
            forked = dict(self.forked)
        if forked:  # torchrun's children are stand-ins: the ranks are the forked ones
            alive = [q for q in forked if os.path.exists(f"/proc/{q}")]
            servers = [s for s in set(forked.values()) if os.path.exists(f"/proc/{s}")]
            every += alive + servers
            ranks = alive
        return every, ranks

    def terminate(self):
        for _, p in self.procs:
            if p.poll() is None:
                p.terminate()  # phantora-cluster and phantora-rank end their ranks on SIGTERM


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(build, ranks, steps, example, model, extra, tmp, min_available, connect_timeout, launch,
        python, interval, scenario_file):
    cluster = os.path.join(build, "bridge/phantora-cluster")
    script, _, always = EXAMPLES[example]
    program = [os.path.join(ROOT, script), *model.split(), *extra.split(), "--steps", str(steps),
               *always.split()]
    scen = scenario_file or scenario(tmp, ranks)
    step_at = {}
    mean_step = [None]
    # rank 0's lines: "[rank 0] step N" from phantora-cluster's relay, "step N" from torchrun
    step_re = re.compile(r"^(\[rank 0\] )?step (\d+): ([0-9.]+) ms")
    mean_re = re.compile(r"^(\[rank 0\] )?rank 0: mean step ([0-9.]+) ms")

    def on_rank0_line(line):
        m = step_re.match(line)
        if m:
            step_at[int(m.group(2))] = time.monotonic()
        m = mean_re.match(line)
        if m:
            mean_step[0] = float(m.group(2))

    r = Run()
    start = time.monotonic()
    readers = []
    if launch in ("plain", "fork", "default"):
        fork = {"plain": ["--no-fork-server"], "fork": ["--fork-server"], "default": []}[launch]
        readers.append(r.start("cluster", [
            cluster, "--scenario", scen, "--nproc", str(ranks), "--progress", "never",
            "--connect-timeout", str(connect_timeout), *fork, "--", python, *program],
            on_rank0_line)[1])
    else:
        # Two "hosts" on one machine, as tests/torch/two_hosts_torchrun.sh runs them: the
        # bridge serving over CURVE on 127.0.0.1, two torchrun node groups of ranks/2 each
        # under phantora-rank, on 127.0.0.2 and 127.0.0.3.
        if ranks % 2:
            raise SystemExit("--launch served needs an even rank count (two node groups)")
        keys = os.path.join(tmp, f"keys{ranks}")
        serving = threading.Event()
        endpoint = []

        def on_server_line(line):
            m = re.search(r"serving on (tcp:[^ ;]*)", line)
            if m:
                endpoint.append(m.group(1))
                serving.set()

        readers.append(r.start("bridge", [
            cluster, "--scenario", scen, "--serve", "--nproc", str(ranks), "--listen",
            "tcp://127.0.0.1:*", "--keys", keys, "--connect-timeout", str(connect_timeout),
            "--progress", "never", "--", python, program[0]], on_server_line)[1])
        if not serving.wait(60):
            r.terminate()
            raise SystemExit(f"{ranks} ranks: the bridge did not start serving")
        master_port = str(free_port())
        for k in (0, 1):
            readers.append(r.start(f"group{k}", [
                os.path.join(build, "bridge/phantora-rank"), "--connect", endpoint[0], "--keys",
                keys, *(["--no-fork-server"] if launch == "served-exec" else []), "--", python, "-m", "torch.distributed.run", "--nnodes", "2",
                "--node_rank", str(k), "--nproc_per_node", str(ranks // 2), "--master_addr",
                "127.0.0.2", "--master_port", master_port, "--local_addr", f"127.0.0.{2 + k}",
                *program], on_rank0_line if k == 0 else None)[1])
    samples = []  # (time, {pid: pss KiB} of the ranks, PSS KiB of every process of the run)
    done = threading.Event()
    starved = []
    lowest = [available_gib()]

    def sample():
        while not done.is_set():
            lowest[0] = min(lowest[0], available_gib())
            if available_gib() < min_available:
                # A shared machine: stop before the kernel's OOM killer picks anyone.
                starved.append(available_gib())
                r.terminate()
                return
            now = time.monotonic()
            every, rank_pids = r.pids()
            pss = {p: v for p in every if (v := pss_kib(p)) is not None}
            if pss:
                ranks_pss = {p: v for p, v in pss.items() if p in set(rank_pids)}
                samples.append((now, ranks_pss, sum(pss.values())))
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    codes = [p.wait() for _, p in r.procs]
    for t in readers:
        t.join()
    done.set()
    sampler.join()
    wall = time.monotonic() - start
    if starved:
        raise SystemExit(f"{ranks} ranks: stopped, {starved[0]:.1f} GiB of memory left "
                         f"(--min-available-gib {min_available})")
    if any(codes) or len(step_at) < 2:
        sys.stdout.write("".join(f"[{n}] {l}" for n, l in r.lines[-40:]))
        raise SystemExit(f"{ranks} ranks, {launch}: the run failed (exit {codes})")
    first, last = min(step_at), max(step_at)
    per_step = (step_at[last] - step_at[first]) / (last - first)
    steady = {}
    totals = []
    for t, pss, total in samples:
        if step_at[first] <= t <= step_at[last]:
            totals.append(total)
            for pid, v in pss.items():
                steady.setdefault(pid, []).append(v)
    per_rank = [statistics.median(v) / 2**20 for v in steady.values()]  # GiB
    total = statistics.median(totals) / 2**20 if totals else float("nan")
    peak = max(max(p.values(), default=0) for _, p, _ in samples) / 2**20 if samples else float("nan")
    return wall, per_step, per_rank, total, peak, mean_step[0], lowest[0]


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--example", choices=sorted(EXAMPLES), default="torch",
                    help="examples/torch/train_gpt.py with DDP (default) or "
                         "examples/megatron/train_gpt.py")
    ap.add_argument("--model", default=None,
                    help="the example's model arguments ('' for its default model; default: "
                         f"torch '{SMALL}', megatron '{MEGATRON_TINY}')")
    ap.add_argument("--args", default="",
                    help="more arguments for the example (megatron: '--tp 2')")
    ap.add_argument("--launch", nargs="+", choices=["plain", "fork", "default", "served", "served-exec"],
                    default=["plain"],
                    help="exec every rank (plain), fork them (phantora-cluster --fork-server), "
                         "or two 'hosts': a --serve bridge and two torchrun node groups under "
                         "phantora-rank on separate loopback addresses, whose ranks its "
                         "per-host fork server forks (served) or torchrun execs (served-exec)")
    ap.add_argument("--python", default=None, help="the ranks' interpreter (default BUILD/venv)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between PSS samples")
    ap.add_argument("--scenario", default=None,
                    help="a scenario with enough GPUs, instead of the default one-switch one "
                         "(torch counts at most 127 GPUs on one node)")
    ap.add_argument("--connect-timeout", type=int, default=900,
                    help="phantora-cluster --connect-timeout: every rank imports torch first")
    ap.add_argument("--min-available-gib", type=float, default=2.0,
                    help="stop a run when the machine has less memory available (default 2)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every run's ranks were all sampled during its steps "
                         "(for the test)")
    args = ap.parse_args()
    python = args.python or os.path.join(args.build, "venv/bin/python")
    model = EXAMPLES[args.example][1] if args.model is None else args.model
    script, _, always = EXAMPLES[args.example]
    print(f"{script} {model} {args.args} {always}, {args.steps} steps, {os.cpu_count()} CPUs")
    print("| ranks | launch | wall per step | PSS per rank, steady (mean / max) | PSS of the ranks "
          "| PSS of every process per rank | simulated mean step | start to end | load average "
          "(1/5/15 min, at the end) |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.ranks:
            for launch in args.launch:
                try:
                    wall, per_step, per_rank, total, peak, mean_step, lowest = run(
                        args.build, n, args.steps, args.example, model, args.args, tmp,
                        args.min_available_gib, args.connect_timeout, launch, python,
                        args.interval, args.scenario)
                except SystemExit as e:
                    print(f"| {n} | {launch} | {e} | | | | | | {load_average()} |", flush=True)
                    failed = True
                    continue
                if args.check and len(per_rank) != n:
                    print(f"{n} ranks, {launch}: {len(per_rank)} rank processes sampled during "
                          f"the steps, not {n}", flush=True)
                    failed = True
                if per_rank:
                    pss = (f"{statistics.mean(per_rank):.3f} / {max(per_rank):.3f} GiB | "
                           f"{sum(per_rank):.2f} GiB ({len(per_rank)} sampled)")
                else:
                    pss = "no sample fell within the steps (too short a run) | "
                print(f"| {n} | {launch} | {per_step:.2f} s | {pss} | {total / n:.3f} GiB | "
                      f"{mean_step} ms | {wall:.1f} s | {load_average()} |", flush=True)
                print(f"  ({n} ranks, {launch}: PSS peak of one process {peak:.3f} GiB; the "
                      f"machine's available memory at its lowest {lowest:.1f} GiB)", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
