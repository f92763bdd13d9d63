"""Writes profiles/error_bands.tsv: how far each source that prices a simulated run is
from real measurements, measured by leaving out what it prices.  phantora-cluster reads
it and prints every run's error band (bridge/error_band.h).

    python3 bench/error_bands.py --build build [--harness bench/accuracy/sim/all-suites.json]

Rows (gpu, part, class, count, mean_abs_error_pct; the last column is the band's figure,
whatever statistic the row says it is):
- gpu / <op class> (elementwise, gemm, cudnn, ...: gpu_model/op_class.h): the estimates of
  that class.  `phantora-estimator-accuracy --leave program --min-us 0 --bands`: every
  program of each committed profile left out in turn, its ops estimated from the others;
  for H200 also `--held-out` the zoo's recordings (data/raw/profiles/H200/zoo-*: public
  models, each recording a program of its own) against a copy of the profile without
  zoo.py (`gpu_profiler leave-out`), in place of zoo.py's one row (the replay tool's
  recordings, ops run one at a time, are no program a user simulates: not counted).
  Per program, the error
  of the class's launch-weighted time (|estimated - measured| / measured: the ops' errors
  cancel or add up as they do in a step); the row is the 80th percentile (nearest rank)
  over the programs (count), so that a band holds four programs in five.  A class with no
  program on one GPU takes the other GPU's row (the estimators are the same code);
- gpu / measured_other: ops a program measured that other programs measured too, priced
  from the others' samples (what a run the profile never recorded gets for them): per
  program the error of their launch-weighted time, the 80th percentile over programs;
- gpu / default: ops no estimator priced (the scenario's default duration): 100 %;
- host / model: `phantora-host-model-accuracy`: each recorded program left out of the
  host-time model in turn, the |error| of its steady host time; the programs of both
  profiles pooled (the host model prices CPU work, which a program does alike on either
  GPU's host) and, for H200, the never-imported recordings as one more program (zoo.py,
  imported into a scratch copy of the profile and left out of its model: exactly the
  model a run of it gets); the 80th percentile (nearest rank) over the programs;
- host / recording: the same for the program's own table (what a recorded run charges:
  each context's median), per GPU;
- gpu / predicted: with --cross, a saved bench/accuracy/cross_gpu.py run: how far a GPU
  predicted from this GPU's profile was off (gpu_model/gpu_prediction.h), the 80th
  percentile (nearest rank) over its cells of the |error| of the GPU timeline alone
  (host time off) against the target's own (its real GPU-only step, else the same
  simulation with the target's measured profile); a predicted run's band adds it to the
  source's errors (bridge/error_band.cc);
- gpu / measured: with --harness, a saved accuracy.py run: the |error| of the simulated
  GPU timeline alone (host time off) against the real GPU's own step (the GPU held until
  the host is ahead: collect_gpu_only.py), the 80th percentile over the cells that have
  both (what no op's own measurement says: gaps between kernels, HBM and SM sharing).
  Without it no row is written, and a band counts measured ops as not measured.
Standard library only.
"""

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = {"H100": "profiles/H100.sqlite", "H200": "profiles/H200.sqlite"}


HELD_OUT = {"H200": "data/raw/profiles/H200/zoo-2026-12-01T2154"}
# The program the held-out recordings are runs of: once imported into the profile, they are
# estimated from a copy without it (gpu_profiler leave-out), each recording a program.
HELD_OUT_PROGRAM = "zoo.py"


def held_out_logs(gpu):
    folder = HELD_OUT.get(gpu)
    if not folder or not os.path.isdir(os.path.join(ROOT, folder)):
        return []
    return sorted(os.path.join(ROOT, folder, f) for f in os.listdir(os.path.join(ROOT, folder))
                  if f.endswith((".tsv", ".tsv.zst")))


def band_evidence(build, args):
    """phantora-estimator-accuracy ARGS --bands: rows (gpu, program, class, error %)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bands.tsv")
        subprocess.run([os.path.join(build, "bench", "phantora-estimator-accuracy"), *args,
                        "--min-us", "0", "--bands", out], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        with open(out) as f:
            lines = [ln for ln in f if not ln.startswith("#")]
    return [(r["gpu"], r["program"], r["class"], float(r["error_pct"]))
            for r in csv.DictReader(lines, delimiter="\t")]


def without_program(build, gpu, program, tmp):
    """A scenario of \p gpu whose profile is a copy without \p program's runs."""
    db = os.path.join(tmp, f"{gpu}-without-{program}.sqlite")
    subprocess.run([os.path.join(build, "gpu_profiler", "gpu_profiler"), "leave-out", "--db",
                    os.path.join(ROOT, PROFILES[gpu]), "--out", db, "--program", program],
                   check=True, stdout=subprocess.DEVNULL)
    scenario = os.path.join(tmp, f"{gpu}-without-{program}.toml")
    with open(scenario, "w") as f:
        f.write(f'extends = "{os.path.join(ROOT, "scenarios", gpu.lower() + "-profile.toml")}"\n'
                f'[kernels]\nprofile = "{db}"\n')
    return scenario


# The replay tool's recordings (gpu_profiler replay: ops run one at a time, host copies from
# pinned memory) are no program a user simulates: not evidence of a band.
REPLAY_PROGRAM = "gpu_profiler_gpu"


def gpu_rows(build):
    # every program left out in turn, its ops estimated from the others (and, class
    # measured_other, its ops that others measured too, priced from their samples)
    evidence = band_evidence(build, ["--leave", "program"])
    for gpu in PROFILES:
        logs = held_out_logs(gpu)
        if logs:
            # its recordings count one by one below, not also all together
            evidence = [e for e in evidence if not (e[0] == gpu and e[1] == HELD_OUT_PROGRAM
                                                    and e[2] != "measured_other")]
            with tempfile.TemporaryDirectory() as tmp:
                scenario = without_program(build, gpu, HELD_OUT_PROGRAM, tmp)
                evidence += band_evidence(build, ["--scenario", scenario, "--held-out", *logs])
    by = {}
    for gpu, program, cls, err in evidence:
        if program == REPLAY_PROGRAM:
            continue
        by.setdefault((gpu, cls), []).append(err)
    rows = [(gpu, "gpu", cls, len(errs), p80(errs)) for (gpu, cls), errs in by.items()]
    # A class one GPU's programs never ran: the other GPU's figure (the same estimators).
    for (gpu, cls), errs in list(by.items()):
        for other in PROFILES:
            if other != gpu and (other, cls) not in by:
                rows.append((other, "gpu", cls, len(errs), p80(errs)))
                by[(other, cls)] = errs
    rows += [(gpu, "gpu", "default", 0, 100.0) for gpu in PROFILES]
    return rows


def host_rows(build):
    """host / model pooled over both profiles' programs (and the never-imported ones);
    host / recording per GPU."""
    def accuracy(paths, tmp):
        out = os.path.join(tmp, "host.tsv")
        subprocess.run([os.path.join(build, "bench", "phantora-host-model-accuracy"), *paths,
                        "--tsv", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return list(csv.DictReader(f, delimiter="\t"))

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        table = accuracy([os.path.join(ROOT, p) for p in PROFILES.values()], tmp)
        model = [abs(float(r["model_error_pct"])) for r in table]
        for gpu, path in PROFILES.items():
            logs = held_out_logs(gpu)
            before = {r["program"] for r in table if r["profile"].endswith(path)}
            if not logs or HELD_OUT_PROGRAM in before:
                continue  # none, or imported already: left out above like every program
            scratch = os.path.join(tmp, f"{gpu}-held-out.sqlite")
            shutil.copy(os.path.join(ROOT, path), scratch)
            subprocess.run([os.path.join(build, "gpu_profiler", "gpu_profiler"), "import", "--db", scratch,
                            *logs], check=True, stdout=subprocess.DEVNULL)
            model += [abs(float(r["model_error_pct"])) for r in accuracy([scratch], tmp)
                      if r["program"] not in before]
        for gpu, path in PROFILES.items():
            mine = [r for r in table if r["profile"].endswith(path)]
            if mine:
                rows.append((gpu, "host", "model", len(model), p80(model)))
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
    return [(gpu, "gpu", "measured", len(e), p80(e)) for gpu, e in errors.items()]


def predicted_rows(cross):
    """gpu / predicted from a saved cross_gpu.py run, by the GPU whose profile predicted."""
    with open(cross) as f:
        targets = json.load(f)["targets"]
    rows = []
    for data in targets.values():
        errors = [abs(c["gpu_ms"] / c["gpu_ref_ms"] - 1) * 100 for c in data["cells"].values()
                  if "failed" not in c and c.get("gpu_ref_ms")]
        if errors:
            rows.append((data["source"], "gpu", "predicted", len(errors), p80(errors)))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--harness", help="a saved accuracy.py run (--save-sim) for the gpu / measured row")
    p.add_argument("--cross", help="a saved bench/accuracy/cross_gpu.py run for the gpu / predicted rows")
    p.add_argument("--out", default=os.path.join(ROOT, "profiles", "error_bands.tsv"))
    args = p.parse_args()
    rows = gpu_rows(args.build) + host_rows(args.build)
    if args.harness:
        rows += measured_rows(args.harness)
    if args.cross:
        rows += predicted_rows(args.cross)
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
