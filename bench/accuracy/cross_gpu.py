"""Predicting a GPU from another's profile: every accuracy cell of each GPU simulated from the other's.

    python3 bench/accuracy/cross_gpu.py --build build                  # both directions, every cell
    python3 bench/accuracy/cross_gpu.py --build build --targets H200 --cells train_gpt/w1024
    python3 bench/accuracy/cross_gpu.py --results bench/accuracy/sim/cross-gpu.json   # print saved

Each H200 cell of the accuracy suites (accuracy.py's SUITES, real/*.json) is simulated with
the H100's profile standing in for the H200 ([kernels] profile = profiles/H100.sqlite,
profile_of = the H100's datasheet, scenarios/gpus/H100.toml; the [gpu] table the H200's
datasheet, scenarios/gpus/H200.toml: gpu_model/gpu_prediction.h scales each op), and each
H100 cell with the H200's profile.  Everything else is the cell's own scenario (its network,
its [cpu]); the host time is what the source profile recorded (or its host-time model where
it holds no recording of the program): the target's host is taken to be the same kind of
machine as the source's.

Per cell it prints the real step, the predicted step and its error (whole step), and the
GPU alone: the predicted step with host time off ([cpu] time_scale = 0, no call overheads)
against the target GPU's own: the real GPU-only step where one was measured
(real/H200x4-gpt_ref-gpu-only.json, collect_gpu_only.py), else the same simulation with the
target's own measured profile (its kernels' real times on the same timeline: what isolates
the prediction of the GPU from the host's), or that simulation's saved result (--reference).  Whether the source profile holds a recording
of the cell's program is a column: where it does not, its ops are estimated before they are
predicted (accuracy.py's left-out table is that error alone).
"""

import argparse
import dataclasses
import json
import os
import sqlite3
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import accuracy  # noqa: E402
import left_out  # noqa: E402

ROOT = accuracy.ROOT
GPUS = os.path.join(ROOT, "scenarios", "gpus")
PROFILES = os.path.join(ROOT, "profiles")

# Each target GPU's cells: (suite, real data, scenario); None keeps the suite's own.  One-GPU
# suites first: they take a fraction of the multi-GPU ones' time.
TARGETS = {
    "H200": ("H100", [("train_gpt", None, None), ("cudnn_gpt", None, None), ("cudnn_cnn", None, None),
                      ("zoo", None, None), ("compiled", None, None), ("gpt_ref", None, None),
                      ("train_gpt_x4", None, None)]),
    "H100": ("H200", [("train_gpt", "H100.json", "h100-profile.toml"), ("frameworks_h100", None, None),
                      ("gpt_ref_h100", None, None),
                      ("train_gpt_x4", "H100x4-train_gpt-2026-11-26T1032.json",
                       "h100x4-nvlink-profiled.toml")]),
}


def suite_for(target, name, real, scenario):
    """accuracy.py's suite \\p name with the target's real data and scenario."""
    s = accuracy.SUITES[name]
    changes = {}
    if real:
        changes["real"] = os.path.join(HERE, "real", real)
    if scenario:
        changes["scenario"] = os.path.join(ROOT, "scenarios", scenario)
    return dataclasses.replace(s, **changes)


def predicted_scenario(scenario, target, source, tmp, name):
    """\\p scenario with the target's datasheet as its [gpu] and the source's profile standing in."""
    lines = [f"extends = {json.dumps([os.path.abspath(scenario), os.path.join(GPUS, target + '.toml')])}",
             "[kernels]",
             f"profile = {json.dumps(os.path.join(PROFILES, source + '.sqlite'))}",
             f"profile_of = {json.dumps(os.path.join(GPUS, source + '.toml'))}"]
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def recorded_programs(gpu):
    """The programs the profile of \\p gpu holds recordings of (its runs table)."""
    with sqlite3.connect(f"file:{os.path.join(PROFILES, gpu + '.sqlite')}?mode=ro", uri=True) as db:
        return {row[0] for row in db.execute("SELECT DISTINCT program FROM runs")}


def gpu_only_reference(suite):
    """{cell key: the real GPU-only step} where the suite has such measurements."""
    if not suite.gpu_only:
        return {}
    data = accuracy.load_json(suite.gpu_only)
    return {accuracy.key(c): c["gpu_only_step_ms"] for c in data["cells"] if "gpu_only_step_ms" in c}


def saved_reference(args, suite):
    """{cell key: host-off step} of the suite in --reference (a saved accuracy.py run with the
    target's own profile), where it was simulated with this suite's scenario."""
    if not args.reference:
        return {}
    saved = accuracy.load_sim_results(args.reference).get(suite.name)
    if not saved or saved.get("scenario") != accuracy.rel(suite.scenario):
        return {}
    if (saved.get("left_out") or {}).get("same_as_recorded"):
        return {}  # simulated while the profile held none of its programs: estimates, not measurements
    return {k: c for k, c in saved.get("cells", {}).items() if c.get("host_off_step_ms")}


def simulate_direction(args, target, tmp, saved):
    source, entries = TARGETS[target]
    programs = recorded_programs(source)
    out = saved.setdefault(target, {"source": source, "cells": {}})
    for name, real_file, scenario_file in entries:
        suite = suite_for(target, name, real_file, scenario_file)
        real = accuracy.load_real(suite.real)
        cells = [c for c in accuracy.measured_cells(accuracy.read_matrix(suite.matrix), real)
                 if not args.cells or any(accuracy.cell_matches(p, f"{name}/{accuracy.key(c)}")
                                          for p in args.cells)]
        if not cells:
            continue
        blocked = accuracy.check_imports(args.build, suite)
        real_cells = {accuracy.key(c): c for c in real["cells"] if "step_ms" in c}
        measured_gpu = gpu_only_reference(suite)
        reference = saved_reference(args, suite)
        stem = f"{target}-{name}"
        predicted = predicted_scenario(suite.scenario, target, source, tmp, f"{stem}-predicted.toml")
        predicted_off = accuracy.host_off_scenario(predicted, tmp, f"{stem}-predicted-off.toml")
        own_off = accuracy.host_off_scenario(suite.scenario, tmp, f"{stem}-own-off.toml")
        for c in cells:
            k = f"{name}/{accuracy.key(c)}"
            if k in out["cells"] and "failed" not in out["cells"][k]:
                continue  # kept from --resume
            program = left_out.program_name(suite.program(c, args.steps, args.warmup)[0])
            row = {"suite": name, "real_step_ms": real_cells[accuracy.key(c)]["step_ms"],
                   "program": program, "source_recorded": program in programs}
            if accuracy.key(c) in reference:  # the target's own profile, whole step, for comparison
                row["own_step_ms"] = reference[accuracy.key(c)]["step_ms"]
            print(f"{target} from {source}: {k} ...", file=sys.stderr, flush=True)
            try:
                if blocked:
                    raise accuracy.SimulationFailed(blocked)
                whole = accuracy.simulate(args.build, suite, predicted, c, args.steps, args.warmup,
                                          args.verbose, args.sim_timeout)
                row.update(step_ms=whole["step_ms"], measured_share=whole.get("measured_share"),
                           band_pct=whole.get("band_pct"))
                row["gpu_ms"] = accuracy.simulate(args.build, suite, predicted_off, c, args.steps,
                                                  args.warmup, args.verbose, args.sim_timeout)["step_ms"]
                if accuracy.key(c) in measured_gpu:
                    row.update(gpu_ref_ms=measured_gpu[accuracy.key(c)], gpu_ref="real")
                elif accuracy.key(c) in reference:
                    row.update(gpu_ref_ms=reference[accuracy.key(c)]["host_off_step_ms"],
                               gpu_ref="own profile, saved")
                else:
                    row.update(gpu_ref_ms=accuracy.simulate(args.build, suite, own_off, c, args.steps,
                                                            args.warmup, args.verbose,
                                                            args.sim_timeout)["step_ms"],
                               gpu_ref="own profile")
            except accuracy.SimulationFailed as e:
                row["failed"] = str(e)[:3000]
            out["cells"][k] = row
            if args.save:
                with open(args.save, "w") as f:
                    json.dump({"steps": args.steps, "warmup": args.warmup, "targets": saved}, f, indent=1)


def attach_own(args, targets):
    """Adds each cell's whole step with the target's own profile from --reference (saved
    results that predate it)."""
    for target, data in targets.items():
        for name, real_file, scenario_file in TARGETS[target][1]:
            reference = saved_reference(args, suite_for(target, name, real_file, scenario_file))
            for k, c in reference.items():
                row = data["cells"].get(f"{name}/{k}")
                if row is not None and "own_step_ms" not in row:
                    row["own_step_ms"] = c["step_ms"]


def mean(values):
    return statistics.mean(values) if values else float("nan")


def print_tables(saved, out=sys.stdout):
    overall = {"step": [], "gpu": []}
    for target, data in saved.items():
        source = data["source"]
        print(f"\n== {target} predicted from the {source} profile ([kernels] profile_of = "
              f"\"{source}\", [gpu] = scenarios/gpus/{target}.toml) ==", file=out)
        head = ["cell", f"{source} recorded", "real ms", "pred ms", "err %", "own err %", "GPU-alone pred",
                "GPU-alone ref", "ref", "GPU err %", "band ±%"]
        rows, step_err, gpu_err, recorded_err, own_pairs = [], [], [], [], []
        for k, r in data["cells"].items():
            if "failed" in r:
                rows.append([k, "yes" if r["source_recorded"] else "no", f"{r['real_step_ms']:.3f}",
                         f"(failed: {r['failed'].splitlines()[-1][:100]})"])
                continue
            e = accuracy.pct(r["step_ms"], r["real_step_ms"])
            # no reference where the saved one was not the target's measurements (--reference)
            ge = accuracy.pct(r["gpu_ms"], r["gpu_ref_ms"]) if r.get("gpu_ref_ms") else None
            step_err.append(abs(e))
            if ge is not None:
                gpu_err.append(abs(ge))
            if r["source_recorded"]:
                recorded_err.append((abs(e), abs(ge) if ge is not None else None))
            band = r.get("band_pct")
            own = r.get("own_step_ms")
            own_e = accuracy.pct(own, r["real_step_ms"]) if own else None
            if own_e is not None:
                own_pairs.append((abs(e), abs(own_e)))
            rows.append([k, "yes" if r["source_recorded"] else "no", f"{r['real_step_ms']:.3f}",
                         f"{r['step_ms']:.3f}", f"{e:+.1f}", f"{own_e:+.1f}" if own_e is not None else "-",
                         f"{r['gpu_ms']:.3f}", f"{r['gpu_ref_ms']:.3f}" if ge is not None else "-",
                         r.get("gpu_ref", "-") if ge is not None else "-", f"{ge:+.1f}" if ge is not None else "-",
                         f"{band:.1f}" if band is not None else "-"])
        widths = [max([len(head[i])] + [len(r[i]) for r in rows if len(r) == len(head)])
                  for i in range(len(head))]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
        print(line, file=out)
        print("-" * len(line), file=out)
        for r in rows:
            if len(r) == len(head):
                print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))),
                      file=out)
            else:
                print("  ".join(v.ljust(w) for v, w in zip(r, widths)) + "  " + "  ".join(r[len(widths):]), file=out)
        print("-" * len(line), file=out)
        print(f"{target} from {source}: whole step mean |error| {mean(step_err):.1f} % (max "
              f"{max(step_err, default=float('nan')):.1f} %) over {len(step_err)} cells, GPU alone mean |error| "
              f"{mean(gpu_err):.1f} % (max {max(gpu_err, default=float('nan')):.1f} %) over {len(gpu_err)}", file=out)
        if recorded_err:
            print(f"  cells whose program the {source} profile recorded ({len(recorded_err)}): whole step "
                  f"{mean([a for a, _ in recorded_err]):.1f} %, GPU alone "
                  f"{mean([b for _, b in recorded_err if b is not None]):.1f} %", file=out)
        if own_pairs:
            print(f"  cells with a saved simulation on the {target}'s own profile ({len(own_pairs)}): whole step "
                  f"predicted {mean([a for a, _ in own_pairs]):.1f} %, own profile {mean([b for _, b in own_pairs]):.1f} %",
                  file=out)
        overall["step"] += step_err
        overall["gpu"] += gpu_err
    if len(saved) > 1:
        print(f"\nboth directions: whole step mean |error| {mean(overall['step']):.1f} % over "
              f"{len(overall['step'])} cells, GPU alone mean |error| {mean(overall['gpu']):.1f} % over "
              f"{len(overall['gpu'])}", file=out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("PHANTORA_BUILD_DIR", os.path.join(ROOT, "build")))
    p.add_argument("--targets", default="H200,H100", help="comma-separated target GPUs (H200, H100)")
    p.add_argument("--cells", action="append", metavar="PATTERN",
                   help="only cells whose suite/size/mode/gpus hold these parts (accuracy.py --cells)")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--sim-timeout", type=int, default=1800)
    p.add_argument("--connect-timeout", type=int, default=900,
                   help="phantora-cluster --connect-timeout: seconds a rank may take to its first CUDA "
                        "call (its default 120 is too short on a loaded 2-core machine)")
    p.add_argument("--save", help="write the results here (JSON) after each cell")
    p.add_argument("--resume", action="store_true", help="keep the cells --save's file already holds")
    p.add_argument("--results", action="append", metavar="FILE",
                   help="print these saved results instead of simulating (repeatable: the cells of "
                        "each target merged, a later file's winning)")
    p.add_argument("--reference", metavar="FILE",
                   help="a saved accuracy.py run (--save-sim) whose host-off steps with the target's own "
                        "profile stand for the GPU-alone reference of the suites it holds with the same "
                        "scenario (instead of simulating them again)")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.results:
        merged = {}
        for path in args.results:
            for t, data in accuracy.load_json(path)["targets"].items():
                merged.setdefault(t, {"source": data["source"], "cells": {}})["cells"].update(data["cells"])
        if args.reference:
            attach_own(args, merged)
        print_tables(merged)
        return 0
    args.cells = [q for v in (args.cells or []) for q in v.split(",") if q]
    accuracy.check_build(args.build)
    accuracy.CLUSTER_OPTIONS[:] = ["--connect-timeout", str(args.connect_timeout)]
    targets = [t for t in args.targets.split(",") if t]
    for t in targets:
        if t not in TARGETS:
            p.error(f"--targets: unknown GPU {t} (known: {', '.join(TARGETS)})")
    saved = {}
    if args.resume and args.save and os.path.exists(args.save):
        saved = accuracy.load_json(args.save)["targets"]
    with tempfile.TemporaryDirectory(prefix="phantora-cross-") as tmp:
        for t in targets:
            simulate_direction(args, t, tmp, saved)
    print_tables({t: saved[t] for t in targets if t in saved})
    return 0


if __name__ == "__main__":
    sys.exit(main())
