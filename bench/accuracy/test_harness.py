"""The accuracy harness's own logic, with no simulation and no GPU: cell selection, the
gpt_ref RESULT parser, the real-data converters, saved results by suite, the committed
data's consistency, the zoo suite (with a stand-in build: no transformers needed) and the
user errors. Run by CTest (phantora-accuracy-harness) or directly:

    python3 bench/accuracy/test_harness.py
"""

import glob
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import accuracy  # noqa: E402
import collect_frameworks  # noqa: E402
import collect_gpu_only  # noqa: E402
import collect_real  # noqa: E402
import collect_compiled  # noqa: E402
import collect_zoo  # noqa: E402
import cross_gpu  # noqa: E402
import left_out  # noqa: E402
import per_lease  # noqa: E402

# The suites whose programs the profile holds no recording of (accuracy.py simulates them once);
# none since the zoo's recordings were imported into profiles/H200.sqlite (2026-12-02)
UNSEEN_SUITES = set()
RESULT = {"tag": "t", "mode": "fsdp", "world": 4, "layers": 12, "d": 1024, "heads": 16, "vocab": 32000,
          "seq": 1024, "batch": 8, "params": 1, "iter_s_median": 0.0439433049999991,
          "iter_s_min": 0.04114158899997733, "iter_s_max": 0.049930971000009094,
          "iter_gpu_s_median": 0.0438, "tokens_per_s": 1.0, "peak_mem_gib": 7.266843318939209,
          "peak_reserved_gib": 8.298828125, "gpu": "NVIDIA H200", "torch": "2.11.0", "nccl": "2.28.9"}


def run_accuracy(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "accuracy.py"), *args],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class CrossGpu(unittest.TestCase):
    """cross_gpu.py: the predicted scenario it writes and the table of saved results."""

    def test_the_predicted_scenario_takes_the_targets_datasheet_and_the_sources_profile(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = cross_gpu.predicted_scenario(os.path.join(accuracy.ROOT, "scenarios", "h200-profile.toml"),
                                                "H200", "H100", tmp, "p.toml")
            with open(path) as f:
                text = f.read()
        self.assertIn("scenarios/h200-profile.toml", text)
        self.assertIn("scenarios/gpus/H200.toml", text)
        self.assertIn("profiles/H100.sqlite", text)
        self.assertIn("profile_of", text)
        self.assertIn("scenarios/gpus/H100.toml", text)
        for gpu in ("H100", "H200"):
            self.assertTrue(os.path.isfile(os.path.join(cross_gpu.GPUS, gpu + ".toml")))
            self.assertIn(cross_gpu.TARGETS[gpu][0], cross_gpu.TARGETS)  # each predicted from the other

    def test_every_cell_of_both_gpus_is_predicted(self):
        """Each target lists every suite of its GPU (accuracy.py's, by their scenario)."""
        for target, (_, entries) in cross_gpu.TARGETS.items():
            for name, real, scenario in entries:
                suite = cross_gpu.suite_for(target, name, real, scenario)
                self.assertIn(target.lower(), os.path.basename(suite.scenario), name)
                self.assertTrue(os.path.isfile(suite.real), suite.real)
        h200 = {n for n, s in accuracy.SUITES.items() if os.path.basename(s.scenario).startswith("h200")}
        self.assertEqual(h200, {n for n, _, _ in cross_gpu.TARGETS["H200"][1]})

    def test_the_table_means_whole_step_and_gpu_alone_errors(self):
        saved = {"H200": {"source": "H100", "cells": {
            "train_gpt/a/single/1": {"suite": "train_gpt", "real_step_ms": 10.0, "step_ms": 11.0, "gpu_ms": 5.0,
                                     "gpu_ref_ms": 5.0, "gpu_ref": "own profile", "source_recorded": True},
            "zoo/b/single/1": {"suite": "zoo", "real_step_ms": 20.0, "step_ms": 17.0, "gpu_ms": 9.0,
                               "gpu_ref_ms": 10.0, "gpu_ref": "own profile", "source_recorded": False},
            "zoo/c/single/1": {"suite": "zoo", "real_step_ms": 20.0, "failed": "x\nwhy", "source_recorded": False}}}}
        out = io.StringIO()
        cross_gpu.print_tables(saved, out)
        text = out.getvalue()
        self.assertIn("whole step mean |error| 12.5 % (max 15.0 %) over 2 cells, GPU alone mean |error| 5.0 % "
                      "(max 10.0 %) over 2", text)
        self.assertIn("recorded (1): whole step 10.0 %, GPU alone 0.0 %", text)
        self.assertIn("(failed: why)", text)


class CellSelection(unittest.TestCase):
    def test_parts_in_order(self):
        name = "gpt_ref/217m/fsdp/4"
        for pattern in ("gpt_ref", "gpt_ref/fsdp/4", "fsdp/4", "217m", name):
            self.assertTrue(accuracy.cell_matches(pattern, name), pattern)
        for pattern in ("gpt_ref/fsdp/2", "4/fsdp", "train_gpt", "fsdp/4/4", "gpt"):
            self.assertFalse(accuracy.cell_matches(pattern, name), pattern)


class GptRefResult(unittest.TestCase):
    def test_numbers_in_the_table_units(self):
        n = accuracy.gpt_ref_numbers(RESULT)
        self.assertEqual(n["step_ms"], 43.943305)
        self.assertEqual((n["step_ms_min"], n["step_ms_max"]), (41.141589, 49.930971))
        self.assertEqual(n["peak_allocated_bytes"], 7802713600)  # the GiB figure was bytes / 2^30
        self.assertEqual(n["peak_reserved_bytes"], 8910798848)

    def test_parsed_from_the_rank_prefixed_output(self):
        out = "[rank 1] noise\n[rank 0] RESULT " + json.dumps(RESULT) + "\n[rank 0] bye\n"
        r = accuracy.parse_gpt_ref(out)
        self.assertEqual(r["step_ms"], 43.943305)
        self.assertEqual(r["peak_allocated_bytes"], 7802713600)
        self.assertNotIn("step_ms_min", r)  # the simulated range is that of the simulations

    def test_missing_or_broken_result(self):
        self.assertIsNone(accuracy.parse_gpt_ref("[rank 0] Traceback ...\n"))
        self.assertIsNone(accuracy.parse_gpt_ref("[rank 0] RESULT {\"mode\": \"fsdp\"}\n"))
        self.assertIsNone(accuracy.parse_gpt_ref("[rank 0] RESULT {not json}\n"))


class RealDataConverter(unittest.TestCase):
    def test_runs_of_a_cell_are_its_repetitions(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "runs.log")
            slower = dict(RESULT, iter_s_median=0.05, iter_s_min=0.04, iter_s_max=0.06, peak_mem_gib=8.0)
            single = dict(RESULT, mode="single", world=1, nccl="")
            with open(log, "w") as f:
                f.write("some output\nRESULT " + json.dumps(RESULT) + "\n")
                f.write(json.dumps(slower) + "\n")
                f.write("[rank 0] RESULT " + json.dumps(single) + "\n")
            data = collect_real.collect_results([log], "gpt_ref", "217m", {"date_utc": "d"})
        self.assertEqual(data["suite"], "gpt_ref")
        cells = {accuracy.key(c): c for c in data["cells"]}
        self.assertEqual(sorted(cells), ["217m/fsdp/4", "217m/single/1"])
        fsdp = cells["217m/fsdp/4"]
        self.assertEqual(len(fsdp["reps"]), 2)
        self.assertAlmostEqual(fsdp["step_ms"], (43.943305 + 50.0) / 2)
        self.assertEqual((fsdp["step_ms_min"], fsdp["step_ms_max"]), (40.0, 60.0))
        self.assertEqual(fsdp["peak_allocated_bytes"], 8 * 2**30)
        self.assertEqual(fsdp["command"], "torchrun --standalone --nproc_per_node=4 gpt_ref.py --mode fsdp "
                                          "--layers 12 --dim 1024 --heads 16 --batch 8")

    def test_rank_0_found_where_two_ranks_share_a_line(self):
        line = ("rank 1: mean step 21.213 ms, 1 tokens/s, peak memory allocated 5 bytes (1 MiB), reserved 7 "
                "bytes (1 MiB)rank 0: mean step 21.181 ms, 1 tokens/s, peak memory allocated 6 bytes (1 MiB), "
                "reserved 8 bytes (1 MiB)")
        found = [m.groups() for m in collect_real.MEAN_RE.finditer(line)]
        self.assertEqual(found, [("1", "21.213", "5", "7"), ("0", "21.181", "6", "8")])

    def test_broken_lines_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "runs.log")
            with open(log, "w") as f:
                f.write("RESULT {\"mode\": \"ddp\"}\n")
            with self.assertRaisesRegex(ValueError, "runs.log:1: a RESULT without"):
                collect_real.collect_results([log], "gpt_ref", "217m", {})
            with open(log, "w") as f:
                f.write("nothing here\n")
            with self.assertRaisesRegex(ValueError, "no RESULT lines"):
                collect_real.collect_results([log], "gpt_ref", "217m", {})


class CommittedData(unittest.TestCase):
    def test_every_gpt_ref_cell_is_measured(self):
        suite = accuracy.SUITES["gpt_ref"]
        real = accuracy.load_real(suite.real)
        self.assertEqual(real["suite"], "gpt_ref")
        measured = {accuracy.key(c): c for c in real["cells"] if "step_ms" in c}
        matrix = accuracy.read_matrix(suite.matrix)
        self.assertEqual(sorted(accuracy.key(c) for c in matrix), sorted(measured))
        for c in matrix:
            r = measured[accuracy.key(c)]
            # the matrix's flags are the flags of the command that measured the cell
            self.assertTrue(r["command"].endswith(" ".join(["--mode", c["mode"], *c["flags"]])), r["command"])
            self.assertIn(f"--nproc_per_node={c['gpus']} ", r["command"])

    def test_suite_files_exist(self):
        for suite in accuracy.SUITES.values():
            for path in ([suite.script] if suite.script else []) + [suite.matrix, suite.real, suite.scenario]:
                self.assertTrue(os.path.isfile(path), path)
            if suite.commands_in_matrix:  # each row's script and the files its flags name
                for c in accuracy.read_matrix(suite.matrix):
                    args, _ = suite.program(c, 8, 3)
                    for a in args:
                        if a.endswith((".py", ".json", ".toml")):
                            self.assertTrue(os.path.isfile(os.path.join(accuracy.ROOT, a)), a)


MEGATRON_OUT = ("[rank 0] step 19: 232.716 ms, 8,800 tokens/s, MFU 0.5 %\n"
                "[rank 0] rank 0: mean step 45.034 ms, 45,476 tokens/s, MFU 2.5 %, peak memory allocated "
                "3897929728 bytes (3717.4 MiB), reserved 4234149888 bytes (4038.0 MiB); median step 31.651 ms\n")
DEEPSPEED_OUT = ("[rank 0] step 10: 31.1 ms, 131,771 tokens/s, MFU 9.7 %, loss 10.549, peak memory 3.56 GiB\n"
                 "[rank 0] step 11: 30.4 ms, 134,903 tokens/s, MFU 9.9 %, loss 10.536, peak memory 3.57 GiB\n"
                 "[rank 0] mean step over steps 4-11: 30.2 ms, 135,430 tokens/s\n")


def titan_out(tps_by_step):
    head = ("[rank 0] [titan] 2026-11-26 08:56:06,398 - root - INFO - Trainer is initialized with local batch "
            "size 8, global batch size 8, gradient accumulation steps 1, sequence length 2048, total steps 12\n")
    return head + "".join(
        f"[rank 0] [titan] 2026-11-26 08:56:07,091 - root - INFO - step: {s:2d}  loss:  8.10773  grad_norm:  "
        f"0.1441  memory:  1.98GiB(2.50%)  tps: {t:,}  tflops: 41.48  mfu: 4.19%\n" for s, t in tps_by_step)


class FrameworksSuite(unittest.TestCase):
    def test_each_metric_reads_its_line(self):
        m = accuracy.parse_megatron(MEGATRON_OUT)
        self.assertEqual((m["step_ms"], m["peak_allocated_bytes"]), (31.651, 3897929728))  # the median, not the mean
        d = accuracy.parse_deepspeed(DEEPSPEED_OUT)
        self.assertEqual((d["step_ms"], d["peak_allocated_bytes"]), (30.2, round(3.57 * 2**30)))
        # steps 1-4 left out; 16384 tokens / tps; the median of steps 5-8
        t = accuracy.parse_titan(titan_out([(1, 34650), (4, 594243), (5, 524288), (6, 262144), (7, 524288),
                                            (8, 1048576)]))
        self.assertEqual(t["step_ms"], 31.25)
        self.assertEqual(t["peak_allocated_bytes"], round(1.98 * 2**30))
        for parse in accuracy.METRICS.values():
            self.assertIsNone(parse("[rank 0] Traceback ...\n"))
        self.assertIsNone(accuracy.parse_titan(titan_out([(1, 34650), (4, 594243)])))

    def test_rows_are_whole_commands(self):
        suite = accuracy.SUITES["frameworks_h100"]
        cells = {accuracy.key(c): c for c in accuracy.read_matrix(suite.matrix)}
        self.assertEqual(sorted(cells), ["deepspeed/zero1/1", "deepspeed/zero2/1", "megatron/dense/1",
                                         "torchtitan/debug/1"])
        args, parse = suite.program(cells["torchtitan/debug/1"], 8, 3)  # --steps / --warmup do not apply
        self.assertEqual(args[:2], ["-m", "torchtitan.train"])
        self.assertNotIn("--warmup", args)
        self.assertIs(parse, accuracy.parse_titan)
        self.assertIs(suite.program(cells["megatron/dense/1"], 8, 3)[1], accuracy.parse_megatron)
        with self.assertRaisesRegex(ValueError, "cell x/y/1: expected 'size mode gpus METRIC ARGS...'"):
            suite.program({"size": "x", "mode": "y", "gpus": 1, "flags": ["mean", "a.py"]}, 8, 3)

    def test_real_data_is_the_converter_output_of_the_logs(self):
        committed = accuracy.load_real(accuracy.SUITES["frameworks_h100"].real)
        self.assertEqual(collect_frameworks.collect(), committed)
        cells = {accuracy.key(c): c for c in committed["cells"]}
        # the pooled medians of the real runs' windows (the brief's check figures)
        self.assertEqual(cells["megatron/dense/1"]["step_ms"], 31.337)
        self.assertEqual(cells["deepspeed/zero1/1"]["step_ms"], 28.85)
        self.assertEqual(cells["deepspeed/zero2/1"]["step_ms"], 24.2)
        self.assertAlmostEqual(cells["torchtitan/debug/1"]["step_ms"], 47.323, places=3)
        self.assertEqual([len(r["steps_ms"]) for r in cells["megatron/dense/1"]["runs"]], [15] * 10)
        self.assertEqual([r["run"] for r in cells["deepspeed/zero1/1"]["runs"]],
                         [f"interleaved-2026-11-26T1900 real {r}" for r in (1, 2, 3)]
                         + [f"interleaved-2026-11-26T1942 real {r}" for r in (1, 2)]
                         + [f"interleaved-2026-11-27T0147 real {r}" for r in range(1, 6)])
        self.assertEqual(len(cells["torchtitan/debug/1"]["runs"]), 15)

    def test_recorder_blocks_are_left_out(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "x.log")
            with open(log, "w") as f:
                f.write("# cmd\n== record 1 19:00\nstep 4: 99.0 ms\n== real 1 19:01\nstep 4: 20.0 ms\n"
                        "== record 2 19:02\nstep 4: 98.0 ms\n== real 2 19:03\nstep 4: 22.0 ms\n")
            runs = collect_frameworks.plain_runs(log)
            self.assertEqual([label for label, _ in runs], ["real 1", "real 2"])
            self.assertEqual([accuracy.step_times(t) for _, t in runs], [{4: 20.0}, {4: 22.0}])
            with open(log, "w") as f:
                f.write("== record 1\nstep 4: 99.0 ms\n")
            with self.assertRaisesRegex(ValueError, "x.log: no plain runs"):
                collect_frameworks.plain_runs(log)


    def test_leases_name_existing_logs_of_the_suite_cells(self):
        leases = per_lease.read_leases()
        matrix = accuracy.SUITES["frameworks_h100"].matrix
        cells = {accuracy.key(c) for c in accuracy.read_matrix(matrix)}
        self.assertEqual(set(leases), cells)
        for cell, (patterns, rows) in leases.items():
            self.assertTrue(patterns, cell)
            for lease, real_log, raw_glob in rows:
                self.assertTrue(os.path.exists(os.path.join(per_lease.RAW, real_log)), (cell, lease))
                self.assertTrue(glob.glob(os.path.join(per_lease.RAW, raw_glob)), (cell, lease))

    def test_a_malformed_lease_row_is_named(self):
        header = "\t".join(per_lease.COLUMNS) + "\n"
        good = "a/b/1\ta%\t11-26T19:00\tx.log\tx*.tsv.zst\n"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "leases.tsv")
            for text, message in [
                    ("cell lease\n", "leases.tsv:1: expected the header line"),
                    (header + good + "a/b/1\ta%\t11-26T19:42\tx.log\n",
                     "leases.tsv:3: expected 5 non-empty"),
                    (header + "a/b/1\ta% \t11-26T19:00\tx.log\tx*\n", "leases.tsv:2: expected 5 non-empty"),
                    (header + "a/b/1\ta%,\t11-26T19:00\tx.log\tx*\n", "leases.tsv:2: forget_like 'a%,'"),
                    (header + good + "a/b/1\tb%\t11-26T19:42\tx.log\tx*\n",
                     "leases.tsv:3: forget_like 'b%' of a/b/1"),
                    (header, "leases.tsv: no leases")]:
                with open(path, "w") as f:
                    f.write(text)
                with self.assertRaisesRegex(ValueError, re.escape(message)):
                    per_lease.read_leases(path)
            with open(path, "w") as f:
                f.write(header + good)
            self.assertEqual(per_lease.read_leases(path),
                             {"a/b/1": (["a%"], [("11-26T19:00", "x.log", "x*.tsv.zst")])})


class SavedResults(unittest.TestCase):
    def sim_cell(self, step_ms):
        return {"step_ms": step_ms, "peak_allocated_bytes": 7802713600, "peak_reserved_bytes": 1,
                "step_ms_all": [step_ms], "measured_share": 100.0}

    def test_files_saved_before_suites_are_train_gpt(self):
        saved = accuracy.load_sim_results(os.path.join(HERE, "sim", "h100-profile.json"))
        self.assertEqual(list(saved), ["train_gpt"])

    def test_both_tables_and_the_overall_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            train = accuracy.load_sim_results(os.path.join(HERE, "sim", "h200-profile.json"))["train_gpt"]
            gpt_ref = {"scenario": "scenarios/h200x4-nvlink-profiled.toml", "time_scale": None, "steps": 8,
                       "warmup": 3, "reps": 1, "cells": {"217m/fsdp/4": self.sim_cell(48.337636)}}
            path = os.path.join(tmp, "sim.json")
            with open(path, "w") as f:
                json.dump({"suites": {"train_gpt": train, "gpt_ref": gpt_ref}}, f)
            p = run_accuracy("--sim-results", path)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn("== gpt_ref: bench/accuracy/workloads/gpt_ref.py", p.stdout)
            self.assertIn("8 timed steps after 3 warm-up", p.stdout)
            self.assertRegex(p.stdout, r"217m fsdp 4 +43\.943 +41\.14-49\.93 +48\.338 .* \+10\.0 ")
            self.assertRegex(p.stdout, r"217m ddp 2 +34\.378 +\(not simulated\)")
            # the overall max is the larger of the two suites' maxima
            train_max = float(re.search(r"== train_gpt.*?max \|error\| ([0-9.]+) % over 7", p.stdout,
                                        re.S).group(1))
            self.assertRegex(p.stdout, r"all suites \(train_gpt 7, gpt_ref 1 measured cells\): step time "
                                       r"mean \|error\| [0-9.]+ %, max \|error\| "
                                       + re.escape(f"{max(train_max, 10.0):.1f}") + " %")
            p = run_accuracy("--sim-results", path, "--cells", "gpt_ref/fsdp/4")
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertNotIn("train_gpt", p.stdout)
            self.assertNotIn("ddp", p.stdout)
            self.assertIn("over 1 measured cells", p.stdout)


class Rebands(unittest.TestCase):
    # the sources of tests/unit/error_band_test.cc's first run: GPU 100 us from the
    # scenario's table and 100 us defaulted, host 200 us from the model
    PARTS = [{"part": "gpu", "source": "table", "share": 0.25, "error": 0.0, "measured": True},
             {"part": "gpu", "source": "default", "share": 0.25, "error": 0.5, "measured": True},
             {"part": "host", "source": "model", "share": 0.5, "error": 0.1, "measured": True}]

    def test_the_same_arithmetic_as_the_bridge(self):
        errors = {("H200", "gpu", "default"): 0.5, ("H200", "host", "model"): 0.1}
        self.assertAlmostEqual(accuracy.reband({"parts": self.PARTS, "gpu": "H200"}, errors), 17.5)
        # a source the table lacks counts at 100 %; measured_other falls back to measured
        # (GPU ±50 %, host ±100 %: between max(75, 100) and max(25, 0) of 200)
        self.assertAlmostEqual(accuracy.reband({"parts": self.PARTS, "gpu": "H100"}, {}), 75.0)
        other = [{"part": "gpu", "source": "measured_other", "share": 1.0, "error": 0.0, "measured": True}]
        self.assertAlmostEqual(accuracy.reband({"parts": other, "gpu": "H200"},
                                               {("H200", "gpu", "measured"): 0.03}), 3.0)

    def test_a_saved_cell_is_banded_with_the_table_given(self):
        with tempfile.TemporaryDirectory() as tmp:
            cell = {"step_ms": 48.337636, "peak_allocated_bytes": 7802713600, "peak_reserved_bytes": 1,
                    "step_ms_all": [48.337636], "measured_share": 100.0, "band_pct": 1.0,
                    "band_parts": self.PARTS, "band_gpu": "H200"}
            gpt_ref = {"scenario": "scenarios/h200x4-nvlink-profiled.toml", "time_scale": None, "steps": 8,
                       "warmup": 3, "reps": 1, "cells": {"217m/fsdp/4": cell}}
            path = os.path.join(tmp, "sim.json")
            with open(path, "w") as f:
                json.dump({"suites": {"gpt_ref": gpt_ref}}, f)
            p = run_accuracy("--sim-results", path, "--cells", "gpt_ref/fsdp/4")
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn("0 of 1 cells within their own band", p.stdout)  # +10.0 % against ±1.0
            bands = os.path.join(tmp, "bands.tsv")
            with open(bands, "w") as f:
                f.write("gpu\tpart\tclass\tcount\tmean_abs_error_pct\n"
                        "H200\tgpu\tdefault\t3\t50\nH200\thost\tmodel\t3\t10\n")
            p = run_accuracy("--sim-results", path, "--cells", "gpt_ref/fsdp/4", "--rebands", bands)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertRegex(p.stdout, r"217m fsdp 4 .* \+10\.0 .* 17\.5\n")
            self.assertIn("1 of 1 cells within their own band", p.stdout)


class LeftOut(unittest.TestCase):
    """The left-out tables: program names, the scenario's profile, the held-out copies and
    the saved results that carry both tables."""

    def test_program_names_as_the_profile_files_them(self):
        # profile::ProgramName's cases (tests/unit/profile_cache_test.cc) for `python ARGS`
        for args, name in [(["examples/torch/train_gpt.py", "--mode", "fsdp"], "train_gpt.py"),
                           (["-u", "/x/y/gpt_ref.py"], "gpt_ref.py"),
                           (["-m", "torchtitan.train", "--job.config_file", "a.toml"], "torchtitan.train"),
                           (["-W", "ignore", "train_cnn.py"], "train_cnn.py"),
                           (["-m", "torch.distributed.run", "--nproc_per_node", "2", "gpt.py"], "gpt.py"),
                           (["-m", "torch.distributed.run", "-m", "mymod"], "mymod"),
                           (["-c", "print(1)"], "python")]:
            self.assertEqual(left_out.program_name(args), name, args)

    def test_every_measured_cell_names_a_program_its_profile_recorded(self):
        # the harness's names are those gpu_profiler filed the recordings under (the runs table);
        # the zoo suite's programs are the ones the profile must not hold (never recorded into it)
        import sqlite3
        for name, suite in accuracy.SUITES.items():
            profile = left_out.scenario_profile(suite.scenario)
            self.assertTrue(os.path.isfile(profile), (name, profile))
            db = sqlite3.connect(f"file:{profile}?mode=ro", uri=True)
            try:
                programs = {row[0] for row in db.execute("SELECT DISTINCT program FROM runs")}
            finally:
                db.close()
            cells = accuracy.measured_cells(accuracy.read_matrix(suite.matrix), accuracy.load_real(suite.real))
            self.assertTrue(cells, name)
            for cell, program in accuracy.cell_programs(suite, cells, 8, 3).items():
                if name in UNSEEN_SUITES:
                    self.assertNotIn(program, programs, f"{name}/{cell}: recorded into {profile}: the suite's "
                                                        f"table is no longer the left-out one")
                else:
                    self.assertIn(program, programs, f"{name}/{cell}")
        # Megatron's and DeepSpeed's examples share train_gpt.py's name: one leave-out, all three
        frameworks = accuracy.SUITES["frameworks_h100"]
        programs = accuracy.cell_programs(frameworks, accuracy.read_matrix(frameworks.matrix), 8, 3)
        self.assertEqual(programs, {"megatron/dense/1": "train_gpt.py", "deepspeed/zero1/1": "train_gpt.py",
                                    "deepspeed/zero2/1": "train_gpt.py", "torchtitan/debug/1": "torchtitan.train"})
        self.assertEqual(accuracy.left_out_title(programs),
                         "left out: the profile holds no recording of each cell's program: torchtitan.train "
                         "(torchtitan/debug/1), train_gpt.py (megatron/dense/1, deepspeed/zero1/1, "
                         "deepspeed/zero2/1)")

    def test_the_scenario_profile_follows_extends_and_relative_paths(self):
        self.assertEqual(left_out.scenario_profile(os.path.join(accuracy.ROOT, "scenarios",
                                                                "h200x4-nvlink-profiled.toml")),
                         os.path.join(accuracy.ROOT, "profiles", "H200.sqlite"))
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "sub"))
            files = {"sub/b.toml": '[kernels]\nprofile = "../p/B.sqlite"\n', "c.toml": "[cpu]\ntime_scale = 1\n",
                     "a.toml": 'extends = ["sub/b.toml", "c.toml"]\n',
                     "own.toml": 'extends = "sub/b.toml"\n[kernels]\nprofile = "/abs/O.sqlite"\n',
                     "none.toml": 'extends = "c.toml"\n', "loop.toml": 'extends = "loop.toml"\n'}
            for rel_path, text in files.items():
                with open(os.path.join(tmp, rel_path), "w") as f:
                    f.write(text)
            at = lambda p: os.path.join(tmp, p)  # noqa: E731
            self.assertEqual(left_out.scenario_profile(at("a.toml")), at("p/B.sqlite"))  # relative to b
            self.assertEqual(left_out.scenario_profile(at("own.toml")), "/abs/O.sqlite")
            self.assertIsNone(left_out.scenario_profile(at("none.toml")))
            with self.assertRaisesRegex(ValueError, "loop.toml: 'extends' makes a cycle"):
                left_out.scenario_profile(at("loop.toml"))
            # the copy the left-out pass simulates extends the scenario with the held-out profile
            copy = left_out.profile_scenario(at("a.toml"), tmp, "x.toml", at("held.sqlite"))
            self.assertEqual(left_out.scenario_profile(copy), at("held.sqlite"))

    def fake_gpu_profiler(self, tmp, script):
        path = os.path.join(tmp, "gpu_profiler")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(path, 0o755)
        return path

    def test_held_out_profiles_are_made_once_and_summarised(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "calls")
            tool = self.fake_gpu_profiler(tmp, f'echo "$@" >> {log}\n'
                                               'echo "a.tsv (x.py): removed 3 kernel samples"\n'
                                               'echo "left out x.py: 1 runs, 3 kernel samples, 2 host gaps"\n'
                                               'echo "ops: 1 dropped, 2 kept"\n'
                                               'case "$*" in *gone.py*) echo \'no run of program "gone.py"\'; '
                                               'exit 1;; *bad.py*) echo broken; exit 1;; esac\n')
            held = left_out.HeldOutProfiles(tool, tmp)
            path, words = held.get("/p/H200.sqlite", "x.py")
            self.assertEqual(path, os.path.join(tmp, "H200-without-x.py.sqlite"))
            self.assertEqual(words, "1 runs, 3 kernel samples, 2 host gaps; ops: 1 dropped, 2 kept")
            self.assertEqual(held.get("/p/H200.sqlite", "x.py"), (path, words))
            with open(log) as f:
                self.assertEqual(f.read().splitlines(), [f"leave-out --db /p/H200.sqlite --out {path} "
                                                         "--program x.py"])
            # a program the profile never recorded: its own profile is already held out
            self.assertEqual(held.get("/p/H200.sqlite", "gone.py"),
                             ("/p/H200.sqlite", "it holds no recording of it already"))
            with self.assertRaisesRegex(RuntimeError, "--program bad.py failed \\(exit 1\\):\n(.|\n)*broken"):
                held.get("/p/H200.sqlite", "bad.py")

    def saved(self, tmp, suites):
        path = os.path.join(tmp, "sim.json")
        with open(path, "w") as f:
            json.dump({"suites": suites}, f)
        return path

    def test_saved_results_carry_both_tables(self):
        recorded = accuracy.load_sim_results(os.path.join(HERE, "sim", "h200-profile.json"))["train_gpt"]
        cell = dict(recorded["cells"]["default/single/1"], step_ms=25.0, step_ms_all=[24.0, 25.0, 26.0],
                    host_off_step_ms=20.0)
        train = dict(recorded, left_out={
            "profile": "profiles/H200.sqlite", "programs": {"default/single/1": "train_gpt.py"},
            "removed": {"train_gpt.py": "23 runs, 54975 kernel samples; ops: 216 dropped"},
            "cells": {"default/single/1": cell}})
        real_step = next(c["step_ms"] for c in accuracy.load_real(accuracy.SUITES["train_gpt"].real)["cells"]
                         if accuracy.key(c) == "default/single/1")
        err = f"{accuracy.pct(25.0, real_step):+.1f}"
        with tempfile.TemporaryDirectory() as tmp:
            path = self.saved(tmp, {"train_gpt": train})
            p = run_accuracy("--sim-results", path)
            self.assertEqual(p.returncode, 0, p.stdout)
            recorded_at = p.stdout.index("recorded: the profile holds the program's own recordings")
            left_at = p.stdout.index("left out: the profile holds no recording of train_gpt.py\n"
                                     "profiles/H200.sqlite without train_gpt.py: 23 runs, 54975 kernel "
                                     "samples; ops: 216 dropped\n")
            self.assertLess(recorded_at, left_at)
            left = p.stdout[left_at:]
            self.assertRegex(left, r"default single 1 +[0-9.]+ +[0-9.-]+ +25\.000 +24\.00-26\.00 +"
                                   + re.escape(err) + r" +20\.000 ")
            self.assertRegex(left, r"step time: mean \|error\| [0-9.]+ %, max \|error\| [0-9.]+ % over 1 "
                                   r"measured cells")
            self.assertEqual(p.stdout.count("over 7 measured cells"), 1)  # the recorded table's
            only = run_accuracy("--sim-results", path, "--profile-knows", "left-out")
            self.assertEqual(only.returncode, 0, only.stdout)
            self.assertNotIn("recorded:", only.stdout)
            self.assertNotIn("over 7 measured cells", only.stdout)
            self.assertIn("over 1 measured cells", only.stdout)
            plain = run_accuracy("--sim-results", path, "--profile-knows", "recorded")
            self.assertEqual(plain.returncode, 0, plain.stdout)
            self.assertNotIn("left out", plain.stdout)
            self.assertNotIn("recorded:", plain.stdout)
            # --max-step-error looks at every table shown: the left-out cell's +191 % counts
            limit = str(float(re.search(r"max \|error\| ([0-9.]+) % over 7", p.stdout).group(1)) + 1)
            self.assertEqual(run_accuracy("--sim-results", path, "--max-step-error", limit).returncode, 1)
            self.assertEqual(run_accuracy("--sim-results", path, "--max-step-error", limit, "--profile-knows",
                                          "recorded").returncode, 0)

            # a left-out pass alone saves no recorded cells, and reads back; two suites, two overall lines
            gpt_ref = {"scenario": "scenarios/h200x4-nvlink-profiled.toml", "steps": 8, "warmup": 3, "reps": 1,
                       "left_out": {"profile": "profiles/H200.sqlite", "programs": {"217m/fsdp/4": "gpt_ref.py"},
                                    "removed": {}, "cells": {"217m/fsdp/4": SavedResults.sim_cell(None, 48.3)}}}
            path = self.saved(tmp, {"train_gpt": train, "gpt_ref": gpt_ref})
            p = run_accuracy("--sim-results", path)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn("left out: the profile holds no recording of gpt_ref.py", p.stdout)
            self.assertIn("all suites (train_gpt 7 measured cells): ", p.stdout)
            self.assertIn("all suites, left out (train_gpt 1, gpt_ref 1 measured cells): ", p.stdout)
            p = run_accuracy("--sim-results", path, "--profile-knows", "recorded")
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn("suite 'gpt_ref' holds no recorded results (--profile-knows recorded)", p.stdout)

    def test_malformed_left_out_results_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            for entry, message in [({"left_out": {"cells": {}}}, "'left_out' has no 'cells' and 'programs'"),
                                   ({"scenario": "x"}, "suite 'gpt_ref' has no 'cells' object")]:
                p = run_accuracy("--sim-results", self.saved(tmp, {"gpt_ref": entry}))
                self.assertEqual(p.returncode, 1, p.stdout)
                self.assertIn(message, p.stdout)
                self.assertNotIn("Traceback", p.stdout)


class GpuOnly(unittest.TestCase):
    def test_committed_figures_are_the_converter_output_of_the_logs(self):
        suite = accuracy.SUITES["gpt_ref"]
        committed = accuracy.load_json(suite.gpu_only)
        folder = os.path.dirname(suite.gpu_only)
        logs = [os.path.join(folder, path) for path in committed["sources"]]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "g.json")
            subprocess.run([sys.executable, os.path.join(HERE, "collect_gpu_only.py"), "--size", "217m",
                            "-o", out, *logs], check=True)
            self.assertEqual(accuracy.load_json(out)["cells"], committed["cells"])
        self.assertTrue(all(os.path.exists(log) for log in logs))
        measured = {accuracy.key(c) for c in committed["cells"]}
        self.assertEqual(measured, {accuracy.key(c) for c in accuracy.read_matrix(suite.matrix)})

    def test_held_and_unheld_runs_of_rank_0_shared_lines_included(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "ahead.log")
            with open(log, "w") as f:
                f.write('== ddp 2 ahead=0 21:28:30 load 0.7\n'
                        'PHASES {"rank": 1, "step_ms": 34.0}\n'
                        'PHASES {"rank": 0, "step_ms": 34.5}\n'
                        '== ddp 2 ahead=80 21:28:47 load 0.9\n'
                        'PHASES {"rank": 1, "step_ms": 33.0}PHASES {"rank": 0, "step_ms": 33.4}\n'
                        '== trace ddp 2 ahead=80 21:44:11\n'
                        'PHASES {"rank": 0, "step_ms": 99.0}\n')
            cells = collect_gpu_only.read_log(log)
        self.assertEqual(cells, {("ddp", 2): {"held": [33.4], "unheld": [34.5]}})

    def test_the_table_sets_the_gpu_figures_side_by_side(self):
        real = {"cells": [{"size": "217m", "mode": "ddp", "gpus": 2, "step_ms": 34.378,
                           "peak_allocated_bytes": 100}]}
        gpu_only = {"cells": [{"size": "217m", "mode": "ddp", "gpus": 2, "gpu_only_step_ms": 33.385}]}
        sim = {"217m/ddp/2": {"step_ms": 32.2, "peak_allocated_bytes": 100, "step_ms_all": [32.2],
                              "host_off_step_ms": 31.776}}
        matrix = [{"size": "217m", "mode": "ddp", "gpus": 2, "flags": []}]
        out = io.StringIO()
        accuracy.table(matrix, real, sim, out=out, gpu_only=gpu_only)
        text = out.getvalue()
        self.assertRegex(text, r"217m ddp 2 .* -6\.3 +31\.776 +33\.385 +-4\.8 ")
        self.assertIn("GPU timeline alone (simulated with host time off, real with the GPU held until "
                      "the host is ahead): mean |error| 4.8 %, max |error| 4.8 % over 1 cells", text)


class SideBySide(unittest.TestCase):
    def test_each_measured_cell_shows_its_recorded_and_left_out_steps_and_errors(self):
        real = {"cells": [{"size": "debug", "mode": "compile", "gpus": 1, "step_ms": 40.0},
                          {"size": "llama", "mode": "graph", "gpus": 1, "step_ms": 20.0}]}
        matrix = [{"size": s, "mode": m, "gpus": 1, "flags": []}
                  for s, m in (("debug", "compile"), ("llama", "graph"), ("gpt2", "compile"))]
        recorded = {"debug/compile/1": {"step_ms": 42.0}, "llama/graph/1": {"step_ms": 19.0}}
        held_out = {"debug/compile/1": {"step_ms": 30.0}, "llama/graph/1": {"failed": "boom"}}
        out = io.StringIO()
        accuracy.side_by_side(matrix, real, recorded, held_out, out=out)
        text = out.getvalue()
        self.assertRegex(text, r"debug compile 1 +40\.000 +42\.000 \(\+5\.0 %\) +30\.000 \(-25\.0 %\)")
        self.assertRegex(text, r"llama graph 1 +20\.000 +19\.000 \(-5\.0 %\) +\(failed\)")
        self.assertNotIn("gpt2", text)  # no real data: not a row


class ZooSuite(unittest.TestCase):
    """The public-model zoo: its matrix, the collector of its real data, and the harness with
    a stand-in build (a phantora-cluster that prints a RESULT line): one simulation a cell."""

    def results_jsonl(self, tmp, rows):
        path = os.path.join(tmp, "results.jsonl")
        with open(path, "w") as f:
            for cell, rep, iters, peak in rows:
                f.write(json.dumps({"cell": cell, "rep": rep, "result": {
                    "mode": "single", "world": 1, "steps": len(iters), "iter_s": iters,
                    "step_ms_median": 1e3 * sorted(iters)[len(iters) // 2],
                    "iter_gpu_s_median": sorted(iters)[len(iters) // 2], "peak_mem_gib": peak,
                    "peak_reserved_gib": peak + 1, "params": 7, "arch": "transformers.X"}}) + "\n")
        return path

    def test_every_matrix_cell_has_real_data_from_the_collector(self):
        suite = accuracy.SUITES["zoo"]
        real = accuracy.load_real(suite.real)
        self.assertEqual(real["suite"], "zoo")
        self.assertEqual(collect_zoo.collect(), real)  # the committed file is the collector's output
        matrix = accuracy.read_matrix(suite.matrix)
        self.assertEqual(len(matrix), 26)
        self.assertEqual(sorted({c["lease"] for c in real["cells"]}),
                         ["zoo-2026-12-01T2154", "zoo-2026-12-02T1349"])
        self.assertEqual([accuracy.key(c) for c in accuracy.measured_cells(matrix, real)],
                         [accuracy.key(c) for c in matrix])
        for c in matrix:
            args, parse = suite.program(c, 8, 3)
            self.assertIs(parse, accuracy.parse_gpt_ref)
            self.assertEqual(args[0], "bench/accuracy/workloads/zoo.py")
            self.assertEqual(args[-4:], ["--steps", "10", "--warmup", "3"])  # the real runs' own
            self.assertEqual(c["gpus"], 1)
            self.assertEqual(args[args.index("--mode") + 1] if "--mode" in args else "single", c["mode"])
            self.assertEqual(left_out.program_name(args), "zoo.py")
        cells = {accuracy.key(c): c for c in real["cells"]}
        # pooled median of both plain runs' 20 steps; range: the two runs' medians
        llama = cells["llama_s_bf16_fused/single/1"]
        self.assertAlmostEqual(llama["step_ms"], 59.966, places=3)
        self.assertEqual((llama["step_ms_min"], llama["step_ms_max"]), (56.36423, 62.445449))
        self.assertEqual([len(r["steps_ms"]) for r in llama["runs"]], [10, 10])
        ddp = cells["gpt2_m_bf16_fused_ddp/ddp/1"]
        self.assertEqual(ddp["command"].split(" bench/")[0], "torchrun --standalone --nproc_per_node 1")
        self.assertEqual(ddp["peak_allocated_bytes"], min(r["peak_allocated_bytes"] for r in ddp["runs"]))

    def test_record_runs_are_left_out_and_missing_runs_named(self):
        row = {"size": "a", "mode": "single", "gpus": 1, "flags": ["result", "zoo.py"]}
        with tempfile.TemporaryDirectory() as tmp:
            path = self.results_jsonl(tmp, [("a", "1", [0.010, 0.030, 0.020], 2.0),
                                            ("a", "record", [0.090, 0.090, 0.090], 9.0),
                                            ("a", "2", [0.012, 0.014, 0.016], 1.0),
                                            ("a", "record", [0.080, 0.080, 0.080], 9.0),
                                            ("b", "1", [0.010], 1.0), ("b", "record", [0.01], 1.0)])
            runs = collect_zoo.read_runs(path)
            cell = collect_zoo.collect_cell(row, runs["a"], "r")
            self.assertEqual(cell["step_ms"], 15.0)  # median of 10 12 14 16 20 30 ms
            self.assertEqual((cell["step_ms_min"], cell["step_ms_max"]), (14.0, 20.0))
            self.assertEqual(cell["peak_allocated_bytes"], 2**30)  # the lower of 1 and 2 GiB
            with self.assertRaisesRegex(ValueError, "cell b has no plain run 2 \\(reps: 1, record\\)"):
                collect_zoo.collect_cell(dict(row, size="b"), runs["b"], "r")
            with self.assertRaisesRegex(ValueError, "cell a rep 1 ran mode single on 1 GPUs, the matrix "
                                                    "says ddp on 1"):
                collect_zoo.collect_cell(dict(row, mode="ddp"), runs["a"], "r")
            with open(path, "a") as f:
                f.write('{"cell": "a", "rep": "1", "result": {}}\n')
            with self.assertRaisesRegex(ValueError, "results.jsonl:7: cell a rep 1 twice"):
                collect_zoo.read_runs(path)
            # the matrix's command is the one the cell's log ran
            with open(os.path.join(tmp, "a.log"), "w") as f:
                f.write("# python3 zoo.py --x\n")
            with self.assertRaisesRegex(ValueError, "its header '# python3 zoo.py --x' is not the matrix's "
                                                    "command 'python3 zoo.py'"):
                collect_zoo.check_command(row, tmp)
            self.assertEqual(collect_zoo.check_command(dict(row, flags=["result", "zoo.py", "--x"]), tmp),
                             "python3 zoo.py --x")

    def fake_build(self, tmp, python_fails=False):
        """A build whose phantora-cluster logs its call and prints zoo.py's RESULT (step 50 ms),
        whose gpu_profiler imports recordings (logging the call) but finds no run of the program
        to leave out, and whose venv python imports or not."""
        build = os.path.join(tmp, "build")
        for d in ("bridge", "venv/bin", "gpu_profiler"):
            os.makedirs(os.path.join(build, d))
        files = {
            "bridge/phantora-cluster": f'echo "$@" >> {tmp}/calls\n'
                                       'echo "RESULT {\\"iter_s_median\\": 0.05, \\"iter_s_min\\": 0.05, '
                                       '\\"iter_s_max\\": 0.05, \\"peak_mem_gib\\": 1.0, '
                                       '\\"peak_reserved_gib\\": 2.0}"\n',
            "venv/bin/python": ("echo \"ModuleNotFoundError: No module named 'transformers'\"; exit 1\n"
                                if python_fails else f'echo "$@" >> {tmp}/imports\n'),
            "gpu_profiler/gpu_profiler": f'if [ "$1" = import ]; then echo "$@" >> {tmp}/import; exit 0; fi\n'
                                         f'echo "$@" >> {tmp}/leave-out\n'
                                         'echo \'profile x: no run of program "zoo.py"\'; exit 1\n'}
        for rel_path, text in files.items():
            path = os.path.join(build, rel_path)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + text)
            os.chmod(path, 0o755)
        return build

    def lines(self, path):
        with open(path) as f:
            return f.read().splitlines()

    def test_the_compiled_suite_is_its_collectors_output(self):
        suite = accuracy.SUITES["compiled"]
        real = accuracy.load_real(suite.real)
        self.assertEqual(collect_compiled.collect(), real)
        matrix = accuracy.read_matrix(suite.matrix)
        self.assertEqual([accuracy.key(c) for c in accuracy.measured_cells(matrix, real)],
                         [accuracy.key(c) for c in matrix])
        steps = {accuracy.key(c): c["step_ms"] for c in real["cells"]}
        # each compiled or captured program beside its own eager twin, so the suite can fail
        # when compiled steps are simulated as eager ones
        self.assertNotAlmostEqual(steps["torchtitan/debug/1"], steps["torchtitan/debug_compile/1"], delta=1.0)
        for c in matrix:
            args, parse = suite.program(c, 8, 3)
            if args[0].endswith("zoo.py"):
                self.assertTrue("--compile" in args or "--cuda-graph" in args, args)

    def test_a_suite_the_profile_never_recorded_is_simulated_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = self.fake_build(tmp)
            saved = os.path.join(tmp, "sim.json")
            p = run_accuracy("--build", build, "--cells", "zoo/llama_s_bf16_fused,zoo/resnet50_fp32_sgd",
                             "--sim-reps", "1", "--no-host-off", "--save-sim", saved)
            self.assertEqual(p.returncode, 0, p.stdout)
            calls = self.lines(os.path.join(tmp, "calls"))
            self.assertEqual(len(calls), 2, calls)  # one simulation a cell, not one a pass
            # each simulation writes a report: its error band's sources are saved with the cell
            self.assertRegex(calls[0], r"--nproc 1 --report \S+/report\.json --connect-timeout 1800 -- ")
            self.assertIn("-- " + os.path.join(build, "venv", "bin", "python") +
                          " bench/accuracy/workloads/zoo.py --model llama --size s", calls[0])
            self.assertEqual(self.lines(os.path.join(tmp, "imports")), ["-c import transformers, torchvision, timm"])
            self.assertEqual(len(self.lines(os.path.join(tmp, "leave-out"))), 1)
            # the second lease's recordings, kept as raw logs, go into the suite's profile copy
            imported = self.lines(os.path.join(tmp, "import"))
            self.assertEqual(len(imported), 1, imported)
            self.assertRegex(imported[0], r"^import --db \S+/zoo-H200\.sqlite ")
            self.assertEqual(imported[0].count("zoo-2026-12-02T1349/zoo_"), 13, imported[0])
            self.assertIn("left out: the profile holds no recording of these programs (zoo.py)", p.stdout)
            self.assertNotIn("recorded: the profile holds", p.stdout)
            self.assertEqual(p.stdout.count("workload (size, mode, GPUs)"), 1)  # one table
            self.assertRegex(p.stdout, r"llama_s_bf16_fused single 1 +59\.966 +56\.36-62\.45 +50\.000 ")
            # the two cells count in the overall lines... which print when suites > 1; the file
            # keeps one copy and reads back as the same one table
            suites = accuracy.load_sim_results(saved)
            self.assertTrue(suites["zoo"]["left_out"]["same_as_recorded"])
            self.assertNotIn("cells", suites["zoo"]["left_out"])
            for knows in ("both", "recorded", "left-out"):
                q = run_accuracy("--sim-results", saved, "--profile-knows", knows)
                self.assertEqual(q.returncode, 0, q.stdout)
                self.assertEqual(q.stdout.count("workload (size, mode, GPUs)"), 1, knows)
                self.assertIn("over 2 measured cells", q.stdout)
            # beside another suite: the zoo's cells count in the left-out overall line, not in the
            # recorded one (the profile holds no recording of them)
            train = accuracy.load_sim_results(os.path.join(HERE, "sim", "h200-profile.json"))["train_gpt"]
            both = dict(accuracy.load_json(saved))
            both["suites"]["train_gpt"] = train
            with open(saved, "w") as f:
                json.dump(both, f)
            q = run_accuracy("--sim-results", saved)
            self.assertEqual(q.returncode, 0, q.stdout)
            self.assertIn("all suites (train_gpt 7 measured cells)", q.stdout)
            self.assertIn("all suites, left out (zoo 2 measured cells)", q.stdout)

    def test_missing_imports_say_how_to_install_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = self.fake_build(tmp, python_fails=True)
            p = run_accuracy("--build", build, "--cells", "zoo/llama_s_bf16_fused,zoo/resnet50_fp32_sgd",
                             "--sim-reps", "1", "--no-host-off")
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertFalse(os.path.exists(os.path.join(tmp, "calls")))  # nothing simulated
            self.assertIn("cannot import transformers, torchvision, timm (ModuleNotFoundError: No module named "
                          "'transformers'); the suite's programs need them, installed with:\n  ", p.stdout)
            self.assertIn(" -m pip install --no-deps transformers==5.17.0 timm==1.0.29 torchvision==0.26.0 ",
                          p.stdout)
            self.assertIn("zoo/resnet50_fp32_sgd/single/1: not simulated (above)", p.stdout)
            self.assertIn("accuracy.py: 2 simulation(s) failed", p.stdout)

    def test_left_out_cells_of_a_program_never_recorded_reuse_the_recorded_result(self):
        cells = [{"size": "a", "mode": "single", "gpus": 1, "flags": []},
                 {"size": "b", "mode": "single", "gpus": 1, "flags": []}]
        plan = ({"profile": "p", "programs": {"a/single/1": "seen.py", "b/single/1": "new.py"},
                 "removed": {"seen.py": "1 runs", "new.py": "it holds no recording of it already"}},
                {"seen.py": ("s1", None), "new.py": ("s2", None)}, {"new.py"})
        simulated = []

        def fake(args, suite, todo, scenario_of, blocked=None):
            simulated.extend((accuracy.key(c), scenario_of(c)[0]) for c in todo)
            return {accuracy.key(c): {"step_ms": 2.0} for c in todo}

        real_simulate, accuracy.simulate_cells = accuracy.simulate_cells, fake
        try:
            with unittest.mock.patch("sys.stdout", new_callable=io.StringIO):
                out = accuracy.run_left_out(None, None, cells, plan, {"a/single/1": {"step_ms": 1.0},
                                                                     "b/single/1": {"step_ms": 1.5}})
                failed = accuracy.run_left_out(None, None, cells, plan, {"b/single/1": {"failed": "x"}})
        finally:
            accuracy.simulate_cells = real_simulate
        self.assertEqual(out["cells"], {"a/single/1": {"step_ms": 2.0}, "b/single/1": {"step_ms": 1.5}})
        self.assertEqual(failed["cells"]["b/single/1"], {"step_ms": 2.0})  # a failed one runs again
        self.assertEqual(simulated, [("a/single/1", "s1"), ("a/single/1", "s1"), ("b/single/1", "s2")])


class UserErrors(unittest.TestCase):
    def assertFails(self, args, message):
        p = run_accuracy(*args)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn(message, p.stdout)
        self.assertNotIn("Traceback", p.stdout)

    def test_messages_not_tracebacks(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                f.write("{")
            self.assertFails(["--sim-results", bad], "not valid JSON")
            self.assertFails(["--sim-results", os.path.join(tmp, "none.json")], "No such file")
            matrix = os.path.join(tmp, "m.tsv")
            with open(matrix, "w") as f:
                f.write("217m fsdp four\n")
            self.assertFails(["--cells", "gpt_ref", "--matrix", matrix], "m.tsv:1: expected")
        self.assertFails(["--cells", "gpt_ref/fsdp/8"], "no such cell; the cells are: train_gpt/default/single/1")
        self.assertFails(["--scenario", "x.toml"],
                         f"{len(accuracy.SUITES)} suites run ({', '.join(accuracy.SUITES)})")
        self.assertFails(["--scenario", "gpt=x.toml"], "unknown suite 'gpt'")
        self.assertFails(["--cells", "frameworks_h100", "--script", "x.py"],
                         "suite 'frameworks_h100' takes its commands from its matrix")
        self.assertFails(["--build", "/nonexistent", "--cells", "gpt_ref/single"],
                         "/nonexistent/bridge/phantora-cluster does not exist")


if __name__ == "__main__":
    unittest.main()
