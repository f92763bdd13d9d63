"""host_speed.py's python workload pinned to each CPU of this machine in turn: does the
host's speed depend on the CPU a process lands on (SMT siblings, frequency, a busy
neighbour)?  Prints one line per CPU: median ns per iteration of --reps repetitions."""

import argparse
import os
import statistics
import time


def bench(n):
    def f(d, i):
        d[i & 1023] = d.get((i * 7) & 1023, 0) + i
        return len(d)

    d, acc = {}, []
    t0 = time.thread_time_ns()
    for i in range(n):
        acc.append(f(d, i))
        if len(acc) > 512:
            acc.clear()
    return (time.thread_time_ns() - t0) / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=300000)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    for cpu in sorted(os.sched_getaffinity(0)):
        os.sched_setaffinity(0, {cpu})
        times = [bench(a.n) for _ in range(a.reps)]
        print(f"cpu {cpu:3d}  median {statistics.median(times):7.1f} ns  min {min(times):7.1f}  max {max(times):7.1f}", flush=True)


if __name__ == "__main__":
    main()
