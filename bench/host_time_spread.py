"""How much a program's recorded host time moves from one recording to the next, and how much
of that the recording host's measured speed explains.

    python3 bench/host_time_spread.py profiles/H100.sqlite profiles/H200.sqlite [--min-runs 3]

For every command recorded at least --min-runs times with a measured host speed
(host_time/host_speed.h), the steady host time of each run (the gaps of each recorded
thread's second half, as phantora-host-model-accuracy prices them) and its coefficient of
variation over the runs: as recorded, and scaled to the median host speed (what the
host-time model does before it compares programs); with the correlation of the runs' host
time with their host speed. A left-out prediction cannot be held to less than this spread:
it is how far the truth itself moves. Standard library only.
"""

import argparse
import collections
import sqlite3
import statistics
import sys


def steady_host_ns(db, run):
    """The sum of the gaps of each thread's second half (host_time::SteadyFrom)."""
    threads = collections.defaultdict(list)
    for thread, gap in db.execute("SELECT thread, gap_ns FROM host_gaps WHERE run = ? ORDER BY thread, seq", (run,)):
        threads[thread].append(gap)
    return sum(sum(g for g in gaps[(len(gaps) + 1) // 2:] if g >= 0) for gaps in threads.values())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("profiles", nargs="+")
    p.add_argument("--min-runs", type=int, default=3)
    args = p.parse_args()
    cvs = []
    print(f"{'profile':<22} {'runs':>4} {'CV recorded':>12} {'CV scaled':>10} {'corr(speed)':>12}  command")
    for path in args.profiles:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        by_command = collections.defaultdict(list)
        for run, command, speed in db.execute("SELECT run, command, host_speed_ns FROM runs "
                                              "WHERE host_speed_ns IS NOT NULL ORDER BY run"):
            ns = steady_host_ns(db, run)
            if ns > 0:
                by_command[command].append((speed, ns))
        for command, runs in sorted(by_command.items()):
            if len(runs) < args.min_runs:
                continue
            speeds = [s for s, _ in runs]
            host = [ns for _, ns in runs]
            reference = statistics.median(speeds)
            scaled = [ns * reference / s for s, ns in runs]

            def cv(x):
                return 100.0 * statistics.pstdev(x) / statistics.mean(x)

            cvs.append((cv(host), cv(scaled)))
            print(f"{path:<22} {len(runs):>4} {cv(host):>11.1f}% {cv(scaled):>9.1f}% "
                  f"{statistics.correlation(speeds, host):>+12.2f}  {command[:100]}")
    if cvs:
        print(f"median over {len(cvs)} commands: CV recorded {statistics.median(c for c, _ in cvs):.1f} %, "
              f"scaled to one host speed {statistics.median(c for _, c in cvs):.1f} %")


if __name__ == "__main__":
    try:
        main()
    except (OSError, sqlite3.Error, statistics.StatisticsError) as e:
        sys.exit(f"host_time_spread.py: {e}")
