#!/usr/bin/env python3
"""A scenario script and phantora-nccl-tests agree on the same machine and size.

phantora-script-nic-speed builds two 8 x H100 servers on InfiniBand (the servers and fabric
of scenarios/cluster-2x8-h100-ib.toml, with its 2 spines) and plans its all-reduce with
the NCCL model; phantora-nccl-tests runs the same all-reduce on that scenario file. Both
go through nccl::MakePlan and the flow-level network, so they must agree (within 0.1 %: the printed digits), with NCCL's own
choice and with NCCL_ALGO=Ring / Tree forced. The script times one call: phantora-nccl-tests
runs one too (--iters 1, not nccl-tests' 20 back to back).

usage: scripts_agree_test.py NIC_SPEED_SCRIPT PHANTORA_NCCL_TESTS SOURCE_DIR
"""
import os
import re
import subprocess
import sys

script, nccl_tests, source = sys.argv[1:4]
scenario = os.path.join(source, "scenarios/cluster-2x8-h100-ib.toml")
failed = False
for size in (1 << 20, 64 << 20, 1 << 30):
    for algo in ("auto", "ring", "tree"):
        out = subprocess.run([script, "--nodes=2", "--rates=400Gbps", "--spines=2",
                              f"--bytes={size}", f"--algorithm={algo}"],
                             capture_output=True, text=True, check=True).stdout
        m = re.search(r"NICs 400Gbps\s+([0-9.]+) ms .*\((\w+) (\w+), (\d+) channels?\)", out)
        assert m, out
        script_us = float(m.group(1)) * 1e3
        env = dict(os.environ)
        env.pop("NCCL_ALGO", None)
        # The scripts plan ring and tree (no NVLS): the scenario's NVLS-tree stays out.
        env["NCCL_NVLS_ENABLE"] = "0"
        if algo != "auto":
            env["NCCL_ALGO"] = algo.capitalize()
        bench = subprocess.run([nccl_tests, "--scenario", scenario, "--ngpus", "16", "--op",
                                "all_reduce", "--min-bytes", str(size), "--max-bytes", str(size),
                                "--transport", "flow", "--iters", "1"],
                               capture_output=True, text=True, check=True, env=env).stdout
        row = [l.split() for l in bench.splitlines() if l.strip().startswith(str(size))]
        assert row, bench
        # columns: size count type redop time(us) algbw busbw nccl
        bench_us = float(row[0][4])
        diff = abs(script_us - bench_us) / bench_us
        ok = diff < 0.001
        failed |= not ok
        print(f"{size:>11} B {algo:>5}: script {script_us:10.1f} us ({m.group(2)} {m.group(3)}, "
              f"{m.group(4)} ch)  phantora-nccl-tests {bench_us:10.1f} us  {100 * diff:5.2f}%"
              + ("" if ok else "  <- differ by more than 0.1%"))
sys.exit(1 if failed else 0)
