"""Joins nccl_perf.py's timings with NCCL's own account of each call (its NCCL_DEBUG=INFO
TUNING lines: `AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}`) into
one table: what was measured and how NCCL ran it.

    python3 bench/collectives/nccl_tuning.py --dir OUT -o tests/data/<machine>/nccl_perf.csv

OUT is what tools/device/measure_collectives_on_device.sh wrote: nccl_perf_<mode>_<N>gpu.csv
and nccl_debug_<mode>_<N>gpu.<pid>.log (one log a rank; the lowest pid, rank 0's in
practice, is read: every rank makes the same choice); a log kept as
nccl_debug_<mode>_<N>gpu_rank0.log, in OUT or OUT/nccl_logs, is read as well. Rows keep
nccl_perf.py's columns and add algorithm, protocol and channels; send_recv and all_to_all
rows have none (NCCL logs no tuning for point-to-point).

NCCL logs `count x type size` (src/enqueue.cc): the whole buffer for an all-reduce or a
broadcast, one rank's share for an all-gather (its input) or a reduce-scatter (its output),
so those two are joined to the row of N times the logged bytes, nccl_perf.py's `bytes` being
the whole buffer as in nccl-tests.

To rejoin a table made earlier (its timing columns kept, its choice columns made again):

    python3 bench/collectives/nccl_tuning.py --timings tests/data/h200x4-nvlink/nccl_perf.csv \\
        --dir tests/data/h200x4-nvlink/nccl_logs -o tests/data/h200x4-nvlink/nccl_perf.csv

Standard library only.
"""

import argparse
import csv
import glob
import os
import re
import sys

TUNING_RE = re.compile(r"NCCL INFO (\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
NCCL_NAMES = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
              "Broadcast": "broadcast"}
# Collectives whose logged bytes are one rank's share of nccl-tests' whole buffer.
PER_RANK = {"all_gather", "reduce_scatter"}
CHOICE_COLUMNS = ("algorithm", "protocol", "channels")


def tuning(log, n):
    """{(op, whole-buffer bytes): (algorithm, protocol, channels)} from one rank's NCCL log of
    a run on n GPUs."""
    choices = {}
    with open(log, errors="replace") as f:
        for line in f:
            m = TUNING_RE.search(line)
            if m and m.group(1) in NCCL_NAMES:
                op = NCCL_NAMES[m.group(1)]
                nbytes = int(m.group(2)) * (n if op in PER_RANK else 1)
                choices[(op, nbytes)] = (m.group(3).lower(), m.group(4).lower(),
                                         int(m.group(6)) - int(m.group(5)) + 1)
    return choices


def rank0_log(directory, mode, n):
    """Rank 0's log of the run on n GPUs in mode: the lowest pid's, or one kept as _rank0."""
    logs = glob.glob(os.path.join(directory, f"nccl_debug_{mode}_{n}gpu.*.log"))
    logs.sort(key=lambda s: int(s.rsplit(".", 2)[-2]))
    if logs:
        return logs[0]
    for sub in ("", "nccl_logs"):
        kept = os.path.join(directory, sub, f"nccl_debug_{mode}_{n}gpu_rank0.log")
        if os.path.exists(kept):
            return kept
    return None


def timing_rows(args):
    """nccl_perf.py's rows: from --timings (choice columns dropped) or OUT's CSVs."""
    if args.timings:
        with open(args.timings) as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            for c in CHOICE_COLUMNS:
                r.pop(c, None)
        return rows
    rows = []
    for path in sorted(glob.glob(os.path.join(args.dir, "nccl_perf_*_*gpu.csv"))):
        with open(path) as f:
            rows.extend(csv.DictReader(f))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True, help="nccl_perf.py's output, or where the logs are")
    p.add_argument("--timings", help="a table made earlier whose timing columns to keep")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    rows = timing_rows(args)
    if not rows:
        sys.exit(f"nccl_tuning.py: no timings: no nccl_perf_<mode>_<N>gpu.csv in {args.dir} and no --timings")
    choices = {}
    for mode, n in sorted({(r["mode"], int(r["world"])) for r in rows}):
        log = rank0_log(args.dir, mode, n)
        choices[(mode, n)] = tuning(log, n) if log else {}
        if not log:
            print(f"nccl_tuning.py: no NCCL log for {mode} on {n} GPUs in {args.dir}", file=sys.stderr)
    for r in rows:
        found = choices[(r["mode"], int(r["world"]))].get((r["op"], int(r["bytes"])), ("", "", ""))
        r.update(zip(CHOICE_COLUMNS, found))
    order = {"graph": 0, "eager": 1}
    rows.sort(key=lambda r: (order.get(r["mode"], 2), r["op"], int(r["world"]), int(r["bytes"])))
    with open(args.output, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    missing = sum(1 for r in rows if r["op"] in NCCL_NAMES.values() and not r["algorithm"])
    print(f"nccl_tuning.py: {len(rows)} rows to {args.output}; {missing} collective rows without NCCL's choice")


if __name__ == "__main__":
    main()
