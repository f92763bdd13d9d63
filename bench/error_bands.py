"""Writes profiles/error_bands.tsv: how far each source that prices a simulated run is
from real measurements, measured by leaving out what it prices.  phantora-cluster reads
it and prints every run's error band (bridge/error_band.h).

    python3 bench/error_bands.py --build build [--harness bench/accuracy/sim/all-suites.json]

Rows (gpu, part, class, count, mean_abs_error_pct):
- gpu / shape_scaled, bytes, family, roofline: `phantora-estimator-accuracy --leave program
  --min-us 0 --bands`: every measured op of each committed profile estimated with every op
  its program measured hidden, the launch-weighted mean |error| of the ops each source priced;
- host / model: `phantora-host-model-accuracy`: each recorded program left out of the
  host-time model in turn, the 80th percentile (nearest rank) of the |error| of its steady
  host time over the programs (a band should hold four runs in five);
- host / recording: the same for the program's own table (what a recorded run charges:
  each context's median);
- gpu / measured: with --harness, a saved accuracy.py run: the mean |error| of the
  simulated GPU timeline alone (host time off) against the real GPU's own step (the GPU
  held until the host is ahead: collect_gpu_only.py), over the cells that have both.
  Without it no row is written, and a band counts measured ops as not measured.
Standard library only.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = {"H100": "profiles/H100.sqlite", "H200": "profiles/H200.sqlite"}


def gpu_rows(build):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bands.tsv")
        subprocess.run([os.path.join(build, "bench", "phantora-estimator-accuracy"), "--leave", "program",
                        "--min-us", "0", "--bands", out], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        with open(out) as f:
            lines = [ln for ln in f if not ln.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    return [(r["gpu"], "gpu", r["class"], int(r["count"]), float(r["mean_abs_error_pct"])) for r in rows]


def host_rows(build):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "host.tsv")
        subprocess.run([os.path.join(build, "bench", "phantora-host-model-accuracy"),
                        *[os.path.join(ROOT, p) for p in PROFILES.values()], "--tsv", out],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            table = list(csv.DictReader(f, delimiter="\t"))
    for gpu, path in PROFILES.items():
        mine = [r for r in table if r["profile"].endswith(path)]
        if mine:
            rows.append((gpu, "host", "model", len(mine),
                         p80([abs(float(r["model_error_pct"])) for r in mine])))
            rows.append((gpu, "host", "recording", len(mine),
                         p80([abs(float(r["own_table_error_pct"])) for r in mine])))
    return rows


def p80(errors):
    """The 80th percentile (nearest rank) of the programs' errors: a band should hold four
    runs in five, which the mean of a few programs' errors does not."""
    ranked = sorted(errors)
    return ranked[max(0, -(-len(ranked) * 8 // 10) - 1)]


def measured_rows(harness):
    """gpu / measured from a saved accuracy.py run: host-off step vs the real GPU's own."""
    with open(harness) as f:
        saved = json.load(f)["suites"]
    errors = {}
    for name, suite in saved.items():
        gpu_only = {"gpt_ref": "H200x4-gpt_ref-gpu-only.json"}.get(name)
        if not gpu_only:
            continue
        with open(os.path.join(ROOT, "bench", "accuracy", "real", gpu_only)) as f:
            real = {f"{c['size']}/{c['mode']}/{c['gpus']}": c for c in json.load(f)["cells"]
                    if "gpu_only_step_ms" in c}
        for key, cell in suite["cells"].items():
            if key in real and cell.get("host_off_step_ms"):
                errors.setdefault("H200", []).append(
                    abs(cell["host_off_step_ms"] / real[key]["gpu_only_step_ms"] - 1) * 100)
    return [(gpu, "gpu", "measured", len(e), statistics.mean(e)) for gpu, e in errors.items()]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--harness", help="a saved accuracy.py run (--save-sim) for the gpu / measured row")
    p.add_argument("--out", default=os.path.join(ROOT, "profiles", "error_bands.tsv"))
    args = p.parse_args()
    rows = gpu_rows(args.build) + host_rows(args.build)
    if args.harness:
        rows += measured_rows(args.harness)
    # H100 has no GPU-alone measurement of its own: the H200's stands for it, said in the row.
    have = {(r[0], r[2]) for r in rows if r[1] == "gpu"}
    rows += [("H100", "gpu", "measured", r[3], r[4]) for r in rows
             if r[1] == "gpu" and r[2] == "measured" and r[0] == "H200" and ("H100", "measured") not in have]
    rows.sort()
    with open(args.out, "w") as f:
        f.write("# Written by bench/error_bands.py (its docstring says how each row is measured).\n")
        f.write("gpu\tpart\tclass\tcount\tmean_abs_error_pct\n")
        for gpu, part, cls, n, pct in rows:
            f.write(f"{gpu}\t{part}\t{cls}\t{n}\t{pct:.1f}\n")
    with open(args.out) as f:
        sys.stdout.write(f.read())


if __name__ == "__main__":
    main()
