"""The frameworks_h100 cells lease by lease: each lease's host-time recordings alone against
that lease's real runs, so that what one lease's turns say can be told from what the pooled
profile says.

    python3 bench/accuracy/per_lease.py --build build [--cells megatron/dense/1 ...]

For every (cell, lease) below: a copy of profiles/H100.sqlite in a scratch folder, every
host-time recording of the cell's program forgotten (`gpu_profiler forget-host-time`) and
that lease's imported (`gpu_profiler import`), a scenario extending the suite's with that
copy as its profile, the cell's command simulated (accuracy.py), and the real figure of that
lease's plain runs (collect_frameworks.py: the median of their steps pooled); then per cell
the mean of its leases' signed errors.  Recordings
are made by tools/device/record_host_interleaved_on_device.sh; the leases are the rows of
data/leases.tsv (read_leases), and a new lease adds a row there.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import accuracy  # noqa: E402
import collect_frameworks  # noqa: E402

RAW = collect_frameworks.RAW

LEASES_FILE = os.path.join(accuracy.ROOT, "data", "leases.tsv")
# Its columns: the cell; the runs holding its program's host time that a lease's recordings
# replace, as `forget-host-time --like` patterns joined by commas (the same on every row of
# a cell); the lease's label; its real-run log and its raw logs' glob, under RAW.
COLUMNS = ("cell", "forget_like", "lease", "real_log", "raw_logs")


def read_leases(path=LEASES_FILE):
    """cell -> (forget-host-time --like patterns, [(lease, its real-run log, its raw logs'
    glob)]), in the order of \\p path's rows; ValueError naming the file and line of a
    malformed one."""
    where = accuracy.rel(path)
    leases = {}
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    if not lines or lines[0].split("\t") != list(COLUMNS):
        raise ValueError(f"{where}:1: expected the header line {' '.join(COLUMNS)} (tab-separated), "
                         f"got {lines[0] if lines else 'an empty file'!r}")
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS) or not all(x and x.strip() == x for x in fields):
            raise ValueError(f"{where}:{number}: expected {len(COLUMNS)} non-empty tab-separated fields "
                             f"({', '.join(COLUMNS)}), got {line!r}")
        cell, like, lease, real_log, raw_glob = fields
        patterns = like.split(",")
        if not all(patterns):
            raise ValueError(f"{where}:{number}: forget_like {like!r}: an empty pattern")
        if cell in leases and leases[cell][0] != patterns:
            raise ValueError(f"{where}:{number}: forget_like {like!r} of {cell} differs from its "
                             f"earlier rows' {','.join(leases[cell][0])!r}")
        leases.setdefault(cell, (patterns, []))[1].append((lease, real_log, raw_glob))
    if not leases:
        raise ValueError(f"{where}: no leases")
    return leases


def lease_profile(build, workdir, name, patterns, raw_logs):
    """A copy of the committed H100 profile whose host time for the cell's program is that
    of \\p raw_logs alone; its path."""
    db = os.path.join(workdir, f"{name}.sqlite")
    shutil.copyfile(os.path.join(accuracy.ROOT, "profiles", "H100.sqlite"), db)
    gp = os.path.join(build, "gpu_profiler", "gpu_profiler")
    subprocess.run([gp, "forget-host-time", "--db", db, *sum((["--like", p] for p in patterns), [])],
                   check=True, stdout=subprocess.DEVNULL)
    # The lease's own logs were forgotten with the rest; a re-import keeps forgotten host
    # time out, so import copies under new names.
    fresh = []
    for log in raw_logs:
        copy = os.path.join(workdir, f"{name}-{os.path.basename(log)}")
        shutil.copyfile(log, copy)
        fresh.append(copy)
    subprocess.run([gp, "import", "--db", db, *fresh], check=True, stdout=subprocess.DEVNULL)
    return db


def main():
    try:
        table = read_leases()
    except (OSError, ValueError) as e:
        sys.exit(f"per_lease.py: {e}")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True, help="a built tree (phantora-cluster, gpu_profiler, venv/)")
    p.add_argument("--cells", nargs="*", default=list(table), help=f"of {', '.join(table)}")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    suite = accuracy.SUITES["frameworks_h100"]
    matrix = {accuracy.key(c): c for c in accuracy.read_matrix(suite.matrix)}
    # each cell's metric and step window, as the pooled real data takes them
    windows = {f"{size}/{mode}/1": (metric, first, last)
               for size, mode, metric, _, first, last in collect_frameworks.CELLS}
    unknown = [c for c in a.cells if c not in table]
    if unknown:
        sys.exit(f"per_lease.py: unknown cell(s) {', '.join(unknown)}; known: {', '.join(table)}")
    print(f"{'cell':22s} {'lease':11s} {'recordings':>10s} {'real ms':>9s} {'sim ms':>9s} {'err %':>7s}")
    with tempfile.TemporaryDirectory(prefix="per-lease-") as workdir:
        for cell_key in a.cells:
            patterns, leases = table[cell_key]
            cell = matrix[cell_key]
            errors = []
            for lease, real_log, raw_glob in leases:
                raw_logs = sorted(glob.glob(os.path.join(RAW, raw_glob)))
                if not raw_logs:
                    sys.exit(f"per_lease.py: no raw logs match {os.path.join(RAW, raw_glob)}")
                metric, first, last = windows[cell_key]
                real = collect_frameworks.collect_cell(
                    cell["size"], cell["mode"], metric, [os.path.join(RAW, real_log)], first, last,
                    lend_from=[os.path.join(RAW, log) for _, log, _ in leases])
                name = f"{cell_key.replace('/', '_')}-{lease.replace(':', '')}"
                db = lease_profile(a.build, workdir, name, patterns, raw_logs)
                scenario = os.path.join(workdir, f"{name}.toml")
                with open(scenario, "w") as f:
                    f.write(f'extends = "{suite.scenario}"\n[kernels]\nprofile = "{db}"\n')
                sim = accuracy.simulate(a.build, suite, scenario, cell, 0, 0, a.verbose)
                errors.append(accuracy.pct(sim['step_ms'], real['step_ms']))
                print(f"{cell_key:22s} {lease:11s} {len(raw_logs):10d} {real['step_ms']:9.3f} "
                      f"{sim['step_ms']:9.3f} {errors[-1]:+7.1f}", flush=True)
            # A mechanism of the program would show as errors of one sign on every lease.
            print(f"{cell_key:22s} {'leases':11s} {len(errors):10d} {'':9s} {'mean signed error':>17s} "
                  f"{sum(errors) / len(errors):+7.1f}", flush=True)


if __name__ == "__main__":
    main()
