#!/usr/bin/env python3
"""phantora-sweep: run a program on the simulated cluster over a grid of scenario values.

    phantora-sweep --scenario scenarios/cluster-2x8-h100-ib-profiled.toml \\
        --set topology.gpus_per_node=4 --set topology.nic_bandwidth=200Gbps,400Gbps \\
        --out sweep-nic -- python examples/torch/train_gpt.py --steps 6

Each point of the grid (every combination of the --set values) is a scenario that
`extends` the base one and overrides the swept keys (so the strict reader checks them);
phantora-cluster runs the program on it with --report. The runs go in parallel where the
cores allow. Out of the runs' reports and rank 0's own log lines come one CSV
(sweep.csv) and a chart of step time and tokens/s against the first swept key, one line
per value of the others: sweep.png and sweep.html (the PNG embedded, nothing external).
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures
import csv
import html
import itertools
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

# A rank-0 line that logs a step and its time: "step 3: 12.5 ms, ..." (train_gpt.py),
# "rank 0 step 2 time 158.185 us" (the CUDA example), "iter 10 | 250.1 ms".
# The step's index is a whole number ("mean step 11.9 ms" is not a step line).
STEP_TIME = re.compile(r"(?:^|[^A-Za-z])(?:step|iter|iteration)\s*[:#=]?\s*\d+(?![\d.])\D{1,24}?"
                       r"([0-9]+(?:\.[0-9]+)?)\s*(ms|us|s)\b", re.IGNORECASE)
TOKENS_PER_S = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*(?:tokens|tok)/s", re.IGNORECASE)
PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.-]+)\}")
RANK0 = re.compile(r"^\[rank 0\] (.*)$")
UNIT_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6}

CSV_FIELDS = [
    "run", "ok", "exit_code", "simulated_time_s", "step_time_ms", "steps_logged", "tokens_per_s",
    "gpus", "gpu_busy_s", "compute_share", "exposed_comm_share", "idle_share",
    "peak_memory_mib", "measured_share", "wall_time_s", "report",
]


def toml_value(text: str) -> str:
    """A --set value as TOML: integers, floats and booleans as such, the rest as strings."""
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return text
    if re.fullmatch(r"[+-]?[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", text):
        return text
    if text in ("true", "false"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_set(spec: str) -> tuple[str, list[str]]:
    key, eq, values = spec.partition("=")
    if not eq or not key or not values:
        raise SystemExit(f"phantora-sweep: --set {spec!r}: expected TABLE.KEY=V1,V2,... "
                         "such as topology.gpus=2,4,8")
    if "." not in key or not all(re.fullmatch(r"[A-Za-z0-9_-]+", p) for p in key.split(".")):
        raise SystemExit(f"phantora-sweep: --set {spec!r}: the key must name a table and a key, "
                         "such as topology.nic_bandwidth")
    return key, [v.strip() for v in values.split(",") if v.strip()]


def scenario_text(base: Path, point: dict[str, str]) -> str:
    """A scenario that extends \\p base with the point's keys (grouped by table)."""
    lines = [f"# written by phantora-sweep: {base} with " +
             ", ".join(f"{k}={v}" for k, v in point.items()),
             f"extends = {toml_value(str(base))}"]
    tables: dict[str, list[str]] = {}
    for key, value in point.items():
        table, _, leaf = key.rpartition(".")
        tables.setdefault(table, []).append(f"{leaf} = {toml_value(value)}")
    for table, entries in tables.items():
        lines += ["", f"[{table}]"] + entries
    return "\n".join(lines) + "\n"


def run_label(point: dict[str, str]) -> str:
    return "_".join(f"{k.rpartition('.')[2]}-{v}" for k, v in point.items()).replace("/", "_")


def median_of(pattern: re.Pattern, lines: list[str], convert) -> tuple[float | None, int]:
    found = []
    for line in lines:
        m = pattern.search(line)
        if m:
            found.append(convert(m))
    return (statistics.median(found) if found else None), len(found)


def summarise(run_dir: Path, point: dict[str, str], exit_code: int, wall: float,
              metrics: dict[str, re.Pattern]) -> dict:
    row: dict = {"run": run_dir.name, **point, "ok": exit_code == 0, "exit_code": exit_code,
                 "wall_time_s": round(wall, 3)}
    log = (run_dir / "log.txt").read_text(errors="replace").splitlines()
    rank0 = [m.group(1) for m in map(RANK0.match, log) if m]
    step, n = median_of(STEP_TIME, rank0,
                        lambda m: float(m.group(1)) * UNIT_S[m.group(2).lower()] * 1e3)
    row["step_time_ms"] = round(step, 6) if step is not None else ""
    row["steps_logged"] = n
    # tokens/s of the step lines only (not a closing mean over them)
    steps = [line for line in rank0 if STEP_TIME.search(line)]
    tok, _ = median_of(TOKENS_PER_S, steps or rank0, lambda m: float(m.group(1).replace(",", "")))
    row["tokens_per_s"] = round(tok, 1) if tok is not None else ""
    for name, pattern in metrics.items():
        value, _ = median_of(pattern, rank0, lambda m: float(m.group(1).replace(",", "")))
        row[name] = value if value is not None else ""
    report = run_dir / "report.json"
    row["report"] = str(report) if report.exists() else ""
    if report.exists():
        import json
        j = json.loads(report.read_text())
        ranks = j.get("ranks", [])
        row["gpus"] = len(ranks)
        if ranks:
            row["simulated_time_s"] = max(r["simulated_time_s"] for r in ranks)
            row["gpu_busy_s"] = round(statistics.mean(r["gpu_busy_s"] for r in ranks), 9)
            for col, share in (("compute_share", "compute"),
                               ("exposed_comm_share", "exposed_communication"),
                               ("idle_share", "idle")):
                row[col] = round(statistics.mean(r["time_shares"][share] for r in ranks), 4)
            row["peak_memory_mib"] = round(max(r["peak_device_bytes"] for r in ranks) / 2**20, 1)
        row["measured_share"] = round(j.get("kernels", {}).get("coverage", {}).get("measured_share", 0), 4)
    return row


def number(text: str):
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)", str(text))
    return float(m.group(1)) if m else None


def draw(rows: list[dict], keys: list[str], out: Path) -> list[Path]:
    """step time and tokens/s (or simulated time when the program logs no steps) against
    the first swept key, one line per combination of the other keys."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Keys with one value (a fixed override) neither split lines nor crowd the legend.
    x_key = keys[0]
    others = [k for k in keys[1:] if len({r[k] for r in rows}) > 1]
    panels = []
    if any(r.get("step_time_ms") not in ("", None) for r in rows):
        panels.append(("step_time_ms", "step time (ms, simulated)"))
    if any(r.get("tokens_per_s") not in ("", None) for r in rows):
        panels.append(("tokens_per_s", "tokens/s (simulated)"))
    if not panels:
        panels.append(("simulated_time_s", "simulated run time (s)"))
    xs = list(dict.fromkeys(r[x_key] for r in rows))
    numeric = all(number(x) is not None for x in xs)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.4), squeeze=False)
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in others), []).append(r)
    for ax, (col, label) in zip(axes[0], panels):
        for group, members in groups.items():
            pts = [(r[x_key], r[col]) for r in members if r.get(col) not in ("", None) and r["ok"]]
            if not pts:
                continue
            pts.sort(key=lambda p: number(p[0]) if numeric else xs.index(p[0]))
            px = [number(p[0]) if numeric else xs.index(p[0]) for p in pts]
            name = ", ".join(f"{k} = {v}" for k, v in zip(others, group)) or None
            ax.plot(px, [float(p[1]) for p in pts], marker="o", label=name)
        ax.set_xlabel(x_key)
        ax.set_ylabel(label)
        if numeric:
            ax.set_xticks([number(x) for x in xs], xs)
        else:
            ax.set_xticks(range(len(xs)), xs)
        ax.grid(True, alpha=0.3)
        if others:
            ax.legend(fontsize="small")
    fixed = [f"{k} = {rows[0][k]}" for k in keys[1:] if k not in others]
    fig.suptitle("phantora-sweep: " + ", ".join([x_key] + others)
                 + (f" ({', '.join(fixed)})" if fixed else ""))
    fig.tight_layout()
    png = out / "sweep.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    page = out / "sweep.html"
    encoded = base64.b64encode(png.read_bytes()).decode()
    table_cols = keys + [c for c in ("step_time_ms", "tokens_per_s", "simulated_time_s", "gpus",
                                     "compute_share", "exposed_comm_share", "ok") if c in rows[0]]
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(c, '')))}</td>" for c in table_cols)
                    + "</tr>\n" for r in rows)
    page.write_text(
        "<!doctype html><meta charset=\"utf-8\"><title>phantora-sweep</title>\n"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd;text-align:right}</style>\n"
        f"<h1>phantora-sweep: {html.escape(', '.join(keys))}</h1>\n"
        f"<img alt=\"chart\" src=\"data:image/png;base64,{encoded}\">\n"
        "<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in table_cols) + "</tr>\n"
        + cells + "</table>\n<p>Data: sweep.csv beside this page.</p>\n")
    return [png, page]


def main(argv: list[str]) -> int:
    if "--" in argv:
        cut = argv.index("--")
        ours, program = argv[:cut], argv[cut + 1:]
    else:
        ours, program = argv, []
    ap = argparse.ArgumentParser(
        prog="phantora-sweep",
        description="Run a program on the simulated cluster over a grid of scenario values; "
                    "one CSV, a PNG and an HTML chart.",
        epilog="Placeholders {table.key} in the program's arguments take each run's value "
               "(e.g. --tp {topology.gpus}). Example: phantora-sweep --scenario "
               "scenarios/h100x8-nvlink-profiled.toml --set topology.gpus=2,4,8 -- ./my_program")
    ap.add_argument("--scenario", required=True, type=Path, help="base scenario (TOML)")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="TABLE.KEY=V1,V2",
                    help="a swept key and its values; repeat for a grid (the first is the x axis)")
    ap.add_argument("--out", type=Path, default=Path("sweep"), help="output folder (default: sweep)")
    ap.add_argument("--jobs", type=int, default=0,
                    help="runs at once (default: cores / 2, at least 1)")
    ap.add_argument("--metric", action="append", default=[], metavar="NAME=REGEX",
                    help="another CSV column: the median over rank 0's lines of REGEX's first group")
    ap.add_argument("--cluster-args", default="",
                    help="more phantora-cluster flags for every run, e.g. \"--sync conservative\"")
    ap.add_argument("--cluster", default=os.environ.get("PHANTORA_CLUSTER", "phantora-cluster"),
                    help="the phantora-cluster program")
    ap.add_argument("--no-plot", action="store_true", help="CSV only")
    args = ap.parse_args(ours)
    if not args.sets:
        ap.error("give at least one --set TABLE.KEY=V1,V2")
    if not args.scenario.is_file():
        ap.error(f"--scenario {args.scenario}: no such file")
    swept = [parse_set(s) for s in args.sets]
    keys = [k for k, _ in swept]
    if len(set(keys)) != len(keys):
        ap.error("a key is swept twice")
    metrics = {}
    for m in args.metric:
        name, eq, rx = m.partition("=")
        if not eq:
            ap.error(f"--metric {m!r}: expected NAME=REGEX")
        metrics[name] = re.compile(rx)
    base = args.scenario.resolve()
    out = args.out
    (out / "runs").mkdir(parents=True, exist_ok=True)
    points = [dict(zip(keys, combo)) for combo in itertools.product(*(v for _, v in swept))]
    jobs = args.jobs or max(1, (os.cpu_count() or 2) // 2)
    print(f"phantora-sweep: {len(points)} runs of {base.name}, {min(jobs, len(points))} at once, "
          f"into {out}/", flush=True)

    def one(i_point):
        i, point = i_point
        run_dir = out / "runs" / f"{i:03d}_{run_label(point)}"
        run_dir.mkdir(parents=True, exist_ok=True)
        scenario = run_dir / "scenario.toml"
        scenario.write_text(scenario_text(base, point))
        prog = [PLACEHOLDER.sub(lambda m: point.get(m.group(1), m.group(0)), a) for a in program]
        cmd = ([args.cluster, "--scenario", str(scenario), "--report", str(run_dir / "report.json"),
                "--progress", "never"] + shlex.split(args.cluster_args) + (["--"] + prog if prog else []))
        (run_dir / "command.txt").write_text(shlex.join(cmd) + "\n")
        start = time.monotonic()
        with open(run_dir / "log.txt", "w") as log:
            rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
        row = summarise(run_dir, point, rc, time.monotonic() - start, metrics)
        status = "ok" if rc == 0 else f"FAILED (exit {rc}; see {run_dir}/log.txt)"
        print(f"  {', '.join(f'{k}={v}' for k, v in point.items())}: {status}"
              + (f", step {row['step_time_ms']} ms" if row["step_time_ms"] != "" else "")
              + (f", simulated {row.get('simulated_time_s', 0):.6f} s" if "simulated_time_s" in row else ""),
              flush=True)
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = list(pool.map(one, enumerate(points)))
    fields = keys + CSV_FIELDS + list(metrics)
    csv_path = out / "sweep.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"phantora-sweep: {csv_path}")
    if not args.no_plot and any(r["ok"] for r in rows):
        for p in draw(rows, keys, out):
            print(f"phantora-sweep: {p}")
    failed = sum(1 for r in rows if not r["ok"])
    if failed:
        print(f"phantora-sweep: {failed} of {len(rows)} runs failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
