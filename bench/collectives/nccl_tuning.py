"""Joins nccl_perf.py's timings with NCCL's own account of each call (its NCCL_DEBUG=INFO
TUNING lines: `AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}`) into
one table: what was measured and how NCCL ran it.

    python3 bench/collectives/nccl_tuning.py --dir OUT -o tests/data/<machine>/nccl_perf.csv

OUT is what tools/device/measure_collectives_on_device.sh wrote: nccl_perf_<mode>_<N>gpu.csv
and nccl_debug_<mode>_<N>gpu.<pid>.log (one log a rank; the lowest pid, rank 0's in
practice, is read: every rank makes the same choice). Rows keep nccl_perf.py's columns and add
algorithm, protocol and channels; send_recv rows have none (NCCL logs no tuning for
point-to-point). Standard library only.
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


def tuning(log):
    """{(op, bytes): (algorithm, protocol, channels)} from one rank's NCCL log."""
    choices = {}
    with open(log, errors="replace") as f:
        for line in f:
            m = TUNING_RE.search(line)
            if m and m.group(1) in NCCL_NAMES:
                key = (NCCL_NAMES[m.group(1)], int(m.group(2)))
                choices[key] = (m.group(3).lower(), m.group(4).lower(), int(m.group(6)) - int(m.group(5)) + 1)
    return choices


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    rows = []
    for path in sorted(glob.glob(os.path.join(args.dir, "nccl_perf_*_*gpu.csv"))):
        mode, n = re.search(r"nccl_perf_(\w+)_(\d+)gpu\.csv$", path).groups()
        logs = glob.glob(os.path.join(args.dir, f"nccl_debug_{mode}_{n}gpu.*.log"))
        logs.sort(key=lambda s: int(s.rsplit(".", 2)[-2]))
        choices = tuning(logs[0]) if logs else {}
        with open(path) as f:
            for r in csv.DictReader(f):
                algo, proto, ch = choices.get((r["op"], int(r["bytes"])), ("", "", ""))
                r.update(algorithm=algo, protocol=proto, channels=ch)
                rows.append(r)
    if not rows:
        sys.exit(f"nccl_tuning.py: no nccl_perf_<mode>_<N>gpu.csv in {args.dir}")
    order = {"graph": 0, "eager": 1}
    rows.sort(key=lambda r: (order.get(r["mode"], 2), r["op"], int(r["world"]), int(r["bytes"])))
    with open(args.output, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    missing = sum(1 for r in rows if r["op"] != "send_recv" and not r["algorithm"])
    print(f"nccl_tuning.py: {len(rows)} rows to {args.output}; {missing} without NCCL's choice")


if __name__ == "__main__":
    main()
