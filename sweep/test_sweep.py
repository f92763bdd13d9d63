#!/usr/bin/env python3
"""A tiny sweep, checked: 2 GPU counts x 2 link speeds of the CUDA example on the default
scenario. The CSV has one row per run with the swept values, the reports' figures and the
step time rank 0 logged; a slower link gives a longer step; the chart files exist and the
HTML page needs nothing outside itself; a misspelt key fails its run with the strict
reader's message.

usage: test_sweep.py PHANTORA_SWEEP SOURCE_DIR TRAIN_STEP_PROGRAM OUT_DIR
"""
import csv
import shutil
import subprocess
import sys
from pathlib import Path

sweep, source, program, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
shutil.rmtree(out, ignore_errors=True)


def check(cond, what):
    if not cond:
        print("FAILED:", what)
        sys.exit(1)


cmd = [sweep, "--scenario", str(source / "scenarios/default.toml"),
       "--set", "topology.gpus=2,4", "--set", "topology.link_bandwidth=50GB/s,477GB/s",
       "--set", "network.transport=flow", "--out", str(out / "grid"), "--jobs", "2",
       "--", program, "16777216", "3"]
print("$", " ".join(cmd), flush=True)
rc = subprocess.call(cmd)
check(rc == 0, f"phantora-sweep exited {rc}")
rows = list(csv.DictReader(open(out / "grid/sweep.csv")))
print(open(out / "grid/sweep.csv").read())
check(len(rows) == 4, f"4 rows, got {len(rows)}")
check(list(rows[0])[:3] == ["topology.gpus", "topology.link_bandwidth", "network.transport"],
      f"swept keys first: {list(rows[0])[:3]}")
for r in rows:
    check(r["ok"] == "True", f"run {r['run']} ok")
    check(int(r["gpus"]) == int(r["topology.gpus"]), f"run {r['run']}: ranks = topology.gpus")
    check(int(r["steps_logged"]) == 3, f"run {r['run']}: 3 steps logged, got {r['steps_logged']}")
    check(float(r["step_time_ms"]) > 0 and float(r["simulated_time_s"]) > 0, "positive times")
    check(Path(r["report"]).is_file(), "report kept")
by = {(r["topology.gpus"], r["topology.link_bandwidth"]): float(r["step_time_ms"]) for r in rows}
for g in ("2", "4"):
    check(by[(g, "50GB/s")] > by[(g, "477GB/s")],
          f"{g} GPUs: a slower link gives a longer step ({by[(g, '50GB/s')]} vs {by[(g, '477GB/s')]} ms)")
png, page = out / "grid/sweep.png", out / "grid/sweep.html"
check(png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "sweep.png is a PNG")
text = page.read_text()
check("data:image/png;base64," in text and "http" not in text.replace("<!doctype html>", ""),
      "sweep.html is self-contained")
# A misspelt key: the run fails, naming the key, and the sweep says so.
bad = subprocess.run([sweep, "--scenario", str(source / "scenarios/default.toml"),
                      "--set", "topology.gpu=2", "--out", str(out / "bad"), "--no-plot",
                      "--", program, "1024", "1"], capture_output=True, text=True)
check(bad.returncode == 1, f"a failed run fails the sweep (exit {bad.returncode})")
log = next((out / "bad/runs").glob("*/log.txt")).read_text()
check("'topology.gpu': unknown key" in log, f"strict reader's message in the run's log: {log}")
print("OK")
