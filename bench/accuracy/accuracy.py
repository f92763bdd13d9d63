"""Accuracy harness: training scripts on real GPUs against Phantora's simulation.

    python3 bench/accuracy/accuracy.py --build build        (or bench/accuracy/run.sh [build])

It runs every suite (a training script, its matrix of cells, the committed real measurements
of those cells and the scenario that simulates them):

  train_gpt  examples/torch/train_gpt.py, matrix.tsv, real/H200.json (one H200, written on the
             GPU machine by tools/device/measure_real_on_device.sh and collect_real.py),
             scenarios/h200-profile.toml;
  train_gpt_x4  the same script and matrix, real/H200x4-train_gpt.json (its 2- and 4-GPU cells
             on one host of 4 H200s with NVLink), scenarios/h200x4-nvlink-profiled.toml;
  cudnn_gpt  train_gpt.py --attention auto (cuDNN's fused attention), matrix-cudnn_gpt.tsv,
             real/H200-cudnn_gpt.json, scenarios/h200-profile.toml;
  cudnn_cnn  examples/torch/train_cnn.py (cuDNN convolutions), matrix-cudnn_cnn.tsv,
             real/H200-cudnn_cnn.json, scenarios/h200-profile.toml;
  gpt_ref    workloads/gpt_ref.py (the reference script of the multi-GPU measurements),
             matrix-gpt_ref.tsv, real/H200x4-gpt_ref.json (1, 2 and 4 H200s with NVLink),
             scenarios/h200x4-nvlink-profiled.toml;
  gpt_ref_h100  the same cells on 4 H100s, real/H100x4-gpt_ref-2026-11-26T1029.json,
             scenarios/h100x4-nvlink-profiled.toml;
  frameworks_h100  Megatron-core, DeepSpeed ZeRO-1 / ZeRO-2 and TorchTitan's debug model on
             one H100: matrix-frameworks_h100.tsv gives each cell's whole command and metric,
             real/H100-frameworks.json (collect_frameworks.py from the device logs),
             scenarios/h100-profile.toml;
  zoo        public models of workloads/zoo.py (Hugging Face transformers, torchvision, timm,
             from configs) on one H200: matrix-zoo.tsv gives each cell's zoo.py arguments,
             real/H200-zoo.json (collect_zoo.py from the device results), scenarios/h200-
             profile.toml. Needs transformers, timm and torchvision in the build's venv
             (ZOO_INSTALL below; the harness says so when they do not import);
  compiled   zoo.py under torch.compile or captured in a CUDA graph, and TorchTitan's debug
             model eager and compiled, on one H200: matrix-compiled.tsv,
             real/H200-compiled.json (collect_compiled.py), scenarios/h200-profile.toml.
A suite whose programs the profile holds no recording of has one table, recorded and left
out alike (simulated once).

For every cell (size, mode, GPUs) with real data it runs the same command under
phantora-cluster on this machine (no GPU) and prints, suite by suite,

  real step time, simulated step time, error %, peak memory allocated real vs simulated
  (torch.cuda.max_memory_allocated, bytes and error %), the range of the real runs and of the
  simulations (--sim-reps, 3 by default; both sides give their median), and a diagnostic column: the
  simulated step with host time off ([cpu] time_scale = 0, call_overhead = 0: the GPU
  timeline alone);

then the mean and max absolute step-time and memory errors over the suite's measured cells,
and at the end over all of them. Each suite's table comes twice (--profile-knows, default
both): with the scenario's profile as it is ("recorded": it holds recordings of the very
program simulated), then "left out": with a copy of it that holds no recording of the cell's
program (gpu_profiler leave-out, left_out.py), as a user gets for a program never recorded.
Cells the real data lacks are listed as not measured and not simulated. --cells picks cells
(e.g. gpt_ref/fsdp/4). Standard library only (tomllib, Python 3.11, for the left-out tables).
--sim-results FILE prints the tables from saved simulated results (--save-sim writes them)
instead of running the simulator: the CTests use that.
"""

import argparse
import dataclasses
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import left_out

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MEAN_RE = re.compile(r"rank 0: mean step ([0-9.]+) ms, .*peak memory allocated (\d+) bytes .*reserved (\d+) bytes")
RESULT_RE = re.compile(r"RESULT (\{.*\})\s*$")
COVERAGE_RE = re.compile(r"([0-9.]+)% of the GPU time measured")
# phantora-cluster's error band (bridge/error_band.h): the measured errors of the sources
# that priced the run, weighted by the time each priced
BAND_RE = re.compile(r"error band: ±([0-9.]+)%")
# where the run's host time came from (bridge/host_time_profile.cc): "recorded", "model of N
# recorded programs", "measured on this machine"
HOST_TIME_RE = re.compile(r"^host time: ([^;(]*)", re.M)
# every rank's mean step, as the training scripts print it: determinism.py compares them all
RANK_MEAN_RE = re.compile(r"rank \d+: mean step [0-9.]+ ms")
NOT_MEASURED = "not measured (needs a multi-GPU machine)"
# phantora-cluster --connect-timeout for every simulation (None: its default); determinism.py
# sets it, since its busy run slows the ranks' imports on a small machine
CONNECT_TIMEOUT = None
PROFILE_KNOWS = ("recorded", "left-out", "both")


def rel(path):
    """A path as the tables show it: from the repository root where it lies inside."""
    r = os.path.relpath(path, ROOT)
    return os.path.abspath(path) if r == ".." or r.startswith(".." + os.sep) else r


def parse_train_gpt(stdout):
    """train_gpt.py's rank-0 summary line: mean step and peak memory; None if absent."""
    m = MEAN_RE.search(stdout)
    if not m:
        return None
    return {"step_ms": float(m.group(1)), "peak_allocated_bytes": int(m.group(2)),
            "peak_reserved_bytes": int(m.group(3))}


MEGATRON_RE = re.compile(r"rank 0: mean step [0-9.]+ ms, .*peak memory allocated (\d+) bytes .*reserved (\d+) "
                         r"bytes .*; median step ([0-9.]+) ms")
DEEPSPEED_MEAN_RE = re.compile(r"mean step over steps \d+-\d+: ([0-9.]+) ms")
DEEPSPEED_PEAK_RE = re.compile(r"step \d+: [0-9.]+ ms, .*peak memory ([0-9.]+) GiB")
STEP_RE = re.compile(r"^(?:\[rank 0\] )?step (\d+): ([0-9.]+) ms", re.M)
TITAN_STEP_RE = re.compile(r"step:\s*(\d+)\s.*?memory:\s*([0-9.]+)GiB.*?tps:\s*([0-9,]+)")
TITAN_TOKENS_RE = re.compile(r"local batch size (\d+), .*sequence length (\d+)")
TITAN_FIRST_STEP = 5  # TorchTitan counts steps from 1; 1-4 are its warm-up in the comparison


def step_times(stdout):
    """{step: ms} from the `step N: X ms` lines of the Megatron and DeepSpeed examples."""
    return {int(m.group(1)): float(m.group(2)) for m in STEP_RE.finditer(stdout)}


def titan_steps(stdout):
    """TorchTitan's log as {step: (ms, peak GiB)}: a step's time is the tokens of one step
    (local batch size x sequence length, from the trainer's start-up line) over its tps."""
    tokens = TITAN_TOKENS_RE.search(stdout)
    if not tokens:
        return {}
    per_step = int(tokens.group(1)) * int(tokens.group(2))
    out = {}
    for m in TITAN_STEP_RE.finditer(stdout):
        tps = int(m.group(3).replace(",", ""))
        if tps > 0:
            out[int(m.group(1))] = (1e3 * per_step / tps, float(m.group(2)))
    return out


def parse_megatron(stdout):
    """examples/megatron/train_gpt.py's rank-0 summary: its median step and peak memory."""
    m = MEGATRON_RE.search(stdout)
    if not m:
        return None
    return {"step_ms": float(m.group(3)), "peak_allocated_bytes": int(m.group(1)),
            "peak_reserved_bytes": int(m.group(2))}


def parse_deepspeed(stdout):
    """examples/deepspeed/train_gpt.py: `mean step over steps A-B: X ms`, and the last step
    line's `peak memory X GiB` (max_memory_allocated, printed to 0.01 GiB) in bytes."""
    m = DEEPSPEED_MEAN_RE.search(stdout)
    peaks = DEEPSPEED_PEAK_RE.findall(stdout)
    if not m or not peaks:
        return None
    return {"step_ms": float(m.group(1)), "peak_allocated_bytes": round(float(peaks[-1]) * 2**30)}


def parse_titan(stdout, first_step=TITAN_FIRST_STEP):
    """TorchTitan's `tps:` lines: the median step time over steps first_step.. and the last
    step's `memory:` (TorchTitan's peak reserved, printed to 0.01 GiB) in bytes."""
    steps = titan_steps(stdout)
    window = [ms for step, (ms, _) in sorted(steps.items()) if step >= first_step]
    if not window:
        return None
    return {"step_ms": round(statistics.median(window), 6),
            "peak_allocated_bytes": round(steps[max(steps)][1] * 2**30)}


def gpt_ref_numbers(r):
    """gpt_ref.py's RESULT in the table's units: its median step (iter_s_median) and the
    fastest / slowest timed step in ms, its peaks (GiB of 2^30 bytes) back in bytes."""
    def ms(seconds):
        return round(seconds * 1e3, 6)  # to the ns: no binary-fraction noise in the files

    return {"step_ms": ms(r["iter_s_median"]), "step_ms_min": ms(r["iter_s_min"]),
            "step_ms_max": ms(r["iter_s_max"]),
            "peak_allocated_bytes": round(r["peak_mem_gib"] * 2**30),
            "peak_reserved_bytes": round(r["peak_reserved_gib"] * 2**30)}


def parse_gpt_ref(stdout):
    """gpt_ref.py's `RESULT {json}` line (rank 0); None if absent or not JSON."""
    for line in reversed(stdout.splitlines()):
        m = RESULT_RE.search(line)
        if m:
            try:
                n = gpt_ref_numbers(json.loads(m.group(1)))
            except (ValueError, KeyError, TypeError):
                return None
            # the simulated step's range is that of the simulations, as for train_gpt
            return {k: v for k, v in n.items() if k not in ("step_ms_min", "step_ms_max")}
    return None


# The frameworks and zoo suites' matrices name one of these per cell (their 4th column);
# "result": a `RESULT {json}` line with gpt_ref.py's fields (workloads/zoo.py prints one).
METRICS = {"megatron_median": parse_megatron, "deepspeed_mean": parse_deepspeed, "titan_tps": parse_titan,
           "result": parse_gpt_ref}


def read_result_lines(path):
    """(where, payload) for each `RESULT {json}` line of a log, or each line of a JSON-lines
    file of such payloads; `where` is path:line for messages."""
    out = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            s = line.strip()
            m = RESULT_RE.search(s)
            payload = m.group(1) if m else s if s.startswith("{") else None
            if payload is None:
                continue
            try:
                out.append((f"{path}:{number}", json.loads(payload)))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{number}: a RESULT that is not valid JSON: {e}") from e
    return out


@dataclasses.dataclass
class Suite:
    """One workload compared real vs simulated: what to run, on which cells, against what."""
    name: str
    script: str        # run as `python SCRIPT <cell flags> --mode M --steps S --warmup W`
    matrix: str
    real: str
    scenario: str
    parse: object      # stdout -> {"step_ms", "peak_allocated_bytes", "peak_reserved_bytes"} or None
    steps_words: str   # how the script counts --steps / --warmup, for the header ({s}, {w})
    real_range: str    # what the real range column spans
    # A suite whose matrix rows hold whole commands (script "" and commands_in_matrix): a
    # row is `size mode gpus METRIC ARGS...`, run as `python ARGS...` from the repository
    # root, its output read by METRICS[METRIC]; --steps / --warmup do not apply (the rows
    # carry the real runs' own).
    commands_in_matrix: bool = False
    env: dict = dataclasses.field(default_factory=dict)  # added to the simulation's environment
    # The real GPU's own step per cell (collect_gpu_only.py), set beside the simulated step
    # with host time off; "" where none was measured.
    gpu_only: str = ""
    # Python modules the suite's programs import beyond torch, tried once in the build's venv
    # before its cells simulate, and the command that installs them (said when they fail).
    imports: tuple = ()
    install: str = ""
    # Recordings of the suite's programs kept as raw logs, not in the shipped profile (they
    # would grow it past what a repository should carry): globs relative to the repository
    # root, imported into a copy of the scenario's profile that the suite simulates with.
    recordings: tuple = ()

    def describe_steps(self, steps, warmup):
        return self.steps_words.format(s=steps, w=warmup)

    def label(self):
        """What runs, for the headers: the script, or where the commands are."""
        return rel(self.script) if self.script else f"the commands of {rel(self.matrix)}"

    def program(self, cell, steps, warmup):
        """The arguments after `python` for \\p cell, and the parser of its output."""
        if not self.commands_in_matrix:
            return ([self.script, *cell["flags"], "--mode", cell["mode"], "--steps", str(steps),
                     "--warmup", str(warmup)], self.parse)
        metric, *args = cell["flags"] or [""]
        if metric not in METRICS or not args:
            raise ValueError(f"{self.matrix}: cell {key(cell)}: expected 'size mode gpus METRIC "
                             f"ARGS...' with METRIC one of {', '.join(METRICS)}, got "
                             f"'{' '.join(cell['flags'])}'")
        return args, METRICS[metric]


def mean_step_suite(name, script, matrix, real, scenario):
    """A suite of an example that prints `rank 0: mean step ...` (train_gpt.py, train_cnn.py)."""
    return Suite(name, os.path.join(ROOT, "examples", "torch", script), os.path.join(HERE, matrix),
                 os.path.join(HERE, "real", real), os.path.join(ROOT, "scenarios", scenario),
                 parse_train_gpt, "{s} steps, warm-up {w}", "the repetitions' mean steps")


def commands_suite(name, matrix, real, scenario, env=None, real_range="the runs' own figures", **kw):
    """A suite whose matrix rows give each cell's whole command and metric (frameworks, zoo)."""
    return Suite(name, "", os.path.join(HERE, matrix), os.path.join(HERE, "real", real),
                 os.path.join(ROOT, "scenarios", scenario), None,
                 "each cell's steps as its matrix row gives them (the real runs' own)",
                 real_range, commands_in_matrix=True, env=dict(env or {}), **kw)


# What the zoo suite's programs need in the build's venv: the versions of its real runs
# (data/raw/accuracy/H200/zoo-2026-12-01T2154/), without dependencies, so that torch and
# the venv's stub NVIDIA libraries stay as they are (huggingface-hub 1.x: transformers 5
# refuses 2.x; httpx: its hub client).
ZOO_INSTALL = ("{python} -m pip install --no-deps transformers==5.17.0 timm==1.0.29 "
               "torchvision==0.26.0 huggingface-hub==1.33.0 httpx==0.28.1 httpcore==1.0.9 "
               "safetensors==0.8.0 regex==2026.11.19")


def gpt_ref_suite(name, real, scenario, gpu_only=""):
    """A suite of workloads/gpt_ref.py over matrix-gpt_ref.tsv (its RESULT lines)."""
    return Suite(name, os.path.join(HERE, "workloads", "gpt_ref.py"), os.path.join(HERE, "matrix-gpt_ref.tsv"),
                 os.path.join(HERE, "real", real), os.path.join(ROOT, "scenarios", scenario), parse_gpt_ref,
                 "{s} timed steps after {w} warm-up (median step)", "the fastest and slowest timed step",
                 gpu_only=os.path.join(HERE, "real", gpu_only) if gpu_only else "")


SUITES = {
    "train_gpt": mean_step_suite("train_gpt", "train_gpt.py", "matrix.tsv", "H200.json",
                                 "h200-profile.toml"),
    "train_gpt_x4": mean_step_suite("train_gpt_x4", "train_gpt.py", "matrix.tsv",
                                    "H200x4-train_gpt.json", "h200x4-nvlink-profiled.toml"),
    "cudnn_gpt": mean_step_suite("cudnn_gpt", "train_gpt.py", "matrix-cudnn_gpt.tsv",
                                 "H200-cudnn_gpt.json", "h200-profile.toml"),
    "cudnn_cnn": mean_step_suite("cudnn_cnn", "train_cnn.py", "matrix-cudnn_cnn.tsv",
                                 "H200-cudnn_cnn.json", "h200-profile.toml"),
    # The GPU-only figures: three leases of 4 x H200, 2026-11-26 (tools/device/gpu_ahead_on_device.sh).
    "gpt_ref": gpt_ref_suite("gpt_ref", "H200x4-gpt_ref.json", "h200x4-nvlink-profiled.toml",
                             gpu_only="H200x4-gpt_ref-gpu-only.json"),
    # The same cells on 4 H100s: one lease held the one-GPU recordings, the world-size 2 and
    # 4 host-time recordings and the real runs (profiles/README.md).
    "gpt_ref_h100": gpt_ref_suite("gpt_ref_h100", "H100x4-gpt_ref-2026-11-26T1029.json",
                                  "h100x4-nvlink-profiled.toml"),
    # Megatron-core, DeepSpeed ZeRO-1 / ZeRO-2 and TorchTitan's debug model on one H100, each
    # with its own metric (matrix-frameworks_h100.tsv; issues 15 and 16).
    "frameworks_h100": commands_suite("frameworks_h100", "matrix-frameworks_h100.tsv",
                                      "H100-frameworks.json", "h100-profile.toml",
                                      env={"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}),
    # Public models (workloads/zoo.py: transformers, torchvision, timm) on one H200
    # (matrix-zoo.tsv, collect_zoo.py); the first 13 cells' recordings are in the shipped
    # profile, the next 13's (2026-12-02T1349: 47 MB more in the database) are imported into
    # the suite's copy.
    "zoo": commands_suite("zoo", "matrix-zoo.tsv", "H200-zoo.json", "h200-profile.toml",
                          env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                               "TOKENIZERS_PARALLELISM": "false"},
                          real_range="the two real runs' median steps",
                          imports=("transformers", "torchvision", "timm"), install=ZOO_INSTALL,
                          recordings=("data/raw/profiles/H200/zoo-2026-12-02T1349/*.tsv.zst",)),
    # Issue 34: zoo.py programs under torch.compile or captured in a CUDA graph, and
    # TorchTitan's debug model eager and compiled, on one H200 (matrix-compiled.tsv,
    # collect_compiled.py).
    "compiled": commands_suite("compiled", "matrix-compiled.tsv", "H200-compiled.json",
                               "h200-profile.toml",
                               env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                                    "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
                               imports=("transformers", "torchvision"), install=ZOO_INSTALL),
}
SUITES_DEFAULT_SCRIPTS = {name: s.script for name, s in SUITES.items()}
DEFAULT_SUITE = "train_gpt"  # what results files without a suite key hold (saved before suites)


def read_matrix(path):
    cells = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            if len(words) < 3 or not words[2].isdigit():
                raise ValueError(f"{path}:{number}: expected 'size mode gpus [script flags]', "
                                 f"got '{line}'")
            size, mode, gpus, *flags = words
            cells.append({"size": size, "mode": mode, "gpus": int(gpus), "flags": flags})
    return cells


def key(c):
    return f"{c['size']}/{c['mode']}/{c['gpus']}"


def cell_matches(pattern, name):
    """True if the '/'-separated parts of \\p pattern appear in this order among those of
    \\p name (suite/size/mode/gpus): 'gpt_ref/fsdp/4', 'fsdp', 'train_gpt/w1024' all pick
    cells without spelling every part."""
    parts = iter(name.split("/"))
    return all(part in parts for part in pattern.split("/"))


def scenario_copy(scenario, tmpdir, name, time_scale, overheads=True):
    """A scenario that extends \\p scenario (scenarios/README.md, "Composing scenarios") with
    [cpu] time_scale replaced (and, unless \\p overheads, no call overheads): the base's own
    paths (its profile, the files it extends) stay relative to the base."""
    lines = [f"extends = {json.dumps(os.path.abspath(scenario))}", "[cpu]",
             f"time_scale = {time_scale}"]
    if not overheads:
        lines += ['call_overhead = "0us"', 'query_overhead = "0us"']
    path = os.path.join(tmpdir, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def host_off_scenario(scenario, tmpdir, name="host-off.toml"):
    """The scenario with [cpu] time_scale = 0 and no call overheads (GPU timeline alone)."""
    return scenario_copy(scenario, tmpdir, name, 0.0, overheads=False)


class SimulationFailed(RuntimeError):
    """One cell's simulation ended without the script's result: the table marks the cell."""


def check_build(build):
    for path in (os.path.join(build, "bridge", "phantora-cluster"), os.path.join(build, "venv", "bin", "python")):
        if not os.path.exists(path):
            raise RuntimeError(f"{path} does not exist: build the tree first (./ns3 build) or pass --build")


# phantora-cluster options every simulation takes (main sets them from the command line,
# cross_gpu.py its own --connect-timeout)
CLUSTER_OPTIONS = []


def run_simulated(build, scenario, nproc, script, args, verbose, timeout=None, env=None, report=None):
    """`phantora-cluster --scenario S --nproc N -- <build's venv python> SCRIPT ARGS...`
    (\\p env added to this process's environment; `--report REPORT` where given); the
    finished process, stdout and stderr together."""
    # The run's own bound is --sim-timeout: a rank slow to make its first CUDA call (the
    # fork server importing transformers or TorchTitan on a loaded 2-core machine takes
    # minutes) is no failure before it, unless --connect-timeout (or determinism.py's
    # CONNECT_TIMEOUT) says otherwise.
    options = CLUSTER_OPTIONS if "--connect-timeout" in CLUSTER_OPTIONS else \
        ["--connect-timeout", str(CONNECT_TIMEOUT or timeout or 1800), *CLUSTER_OPTIONS]
    cmd = [os.path.join(build, "bridge", "phantora-cluster"), "--scenario", scenario,
           "--nproc", str(nproc), *(["--report", report] if report else []), *options, "--",
           os.path.join(build, "venv", "bin", "python"), script, *args]
    if verbose:
        print("+", " ".join(f"{k}={v}" for k, v in (env or {}).items()), " ".join(cmd), file=sys.stderr,
              flush=True)
    try:
        return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired as e:
        raise SimulationFailed(f"{' '.join(cmd)}: no result after {timeout} s (--sim-timeout)") from e


def simulate(build, suite, scenario, cell, steps, warmup, verbose, timeout=None):
    (program, *args), parse = suite.program(cell, steps, warmup)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        p = run_simulated(build, scenario, cell["gpus"], program, args, verbose, timeout, suite.env, report)
        try:
            with open(report) as f:
                band_inputs = band_inputs_of(json.load(f))
        except (OSError, ValueError):
            band_inputs = {}
    result = parse(p.stdout)
    if p.returncode != 0 or result is None:
        # phantora-cluster's own verdict where it gave one (else the last lines), each line cut
        # short: the interposer's call stacks run to pages
        lines = p.stdout.splitlines()
        verdicts = [i for i, ln in enumerate(lines) if ln.startswith("phantora-cluster: simulation failed")]
        shown = lines[verdicts[-1]:][:8] if verdicts else lines[-15:]
        tail = "\n".join(ln if len(ln) <= 300 else ln[:300] + " ..." for ln in shown)
        raise SimulationFailed(f"simulation of {suite.name}/{key(cell)} failed (exit {p.returncode}):\n{tail}")
    cov = COVERAGE_RE.search(p.stdout)
    band = BAND_RE.search(p.stdout)
    host = HOST_TIME_RE.search(p.stdout)
    # the band's sources and their shares too (the report's error_band parts): --rebands
    # bands the saved cells with another table of errors without simulating them again
    return dict(result, measured_share=float(cov.group(1)) if cov else None,
                band_pct=float(band.group(1)) if band else None, **band_inputs,
                host_time=host.group(1).strip() if host else None,
                rank_means=sorted(set(RANK_MEAN_RE.findall(p.stdout))))


def simulate_reps(build, suite, scenario, cell, steps, warmup, reps, verbose, timeout=None):
    """The median of `reps` simulations: the simulated host time is this machine's real
    CPU time, which varies from run to run as the real host's does."""
    runs = [simulate(build, suite, scenario, cell, steps, warmup, verbose, timeout) for _ in range(reps)]
    med = statistics.median(r["step_ms"] for r in runs)
    best = min(runs, key=lambda r: abs(r["step_ms"] - med))
    return dict(best, step_ms=med, step_ms_all=[r["step_ms"] for r in runs])


HOST_WORKLOADS = ("python", "dispatch", "autograd")


def host_scale(build, scenario, real, verbose):
    """[cpu] time_scale from host_speed.py on both sides: the real GPU machine's figures
    (real["host_speed"], and real["host_speed_end"] where measured, averaged) over what the
    simulator charges for the same workloads here (host_speed.py --clock monotonic as a rank
    of phantora-cluster, so its own interposition counts).  The geometric mean of the three
    workloads' ratios; the workloads are not the validated ones (no training step in them)."""
    runs = [real.get(k) for k in ("host_speed", "host_speed_end") if real.get(k)]
    if not runs:
        raise RuntimeError("the real data has no host_speed.py figures (host_speed / host_speed_end)")
    p = run_simulated(build, scenario, 1, os.path.join(HERE, "host_speed.py"),
                      ["--clock", "monotonic", "--reps", "7"], verbose)
    m = re.search(r"^\[rank 0\] (\{.*\})$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        raise RuntimeError("host_speed.py under phantora-cluster failed:\n" + p.stdout[-2000:])
    here = json.loads(m.group(1))
    ratios = {}
    for w in HOST_WORKLOADS:
        ratios[w] = statistics.mean(r[w] for r in runs) / here[w]
    scale = statistics.geometric_mean(ratios.values())
    return scale, ratios, here


def pct(sim, real):
    return 100.0 * (sim - real) / real


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from e


def load_real(path):
    """A real-data file: {"suite"?, "env", "cells": [{size, mode, gpus, step_ms, ...}]}."""
    real = load_json(path)
    if not isinstance(real, dict) or not isinstance(real.get("cells"), list):
        raise ValueError(f"{path}: not real data (a JSON object with a 'cells' list)")
    return real


def load_sim_results(path):
    """Saved simulated results by suite: {"suites": {name: saved}}, or one suite's saved
    results with its cells at the top (files saved before suites: train_gpt's)."""
    saved = load_json(path)
    if isinstance(saved, dict) and isinstance(saved.get("suites"), dict):
        suites = saved["suites"]
    elif isinstance(saved, dict) and isinstance(saved.get("cells"), dict):
        suites = {saved.get("suite", DEFAULT_SUITE): saved}
    else:
        raise ValueError(f"{path}: not saved simulated results (a 'suites' or 'cells' object)")
    for name, s in suites.items():
        if name not in SUITES:
            raise ValueError(f"{path}: unknown suite '{name}' (known: {', '.join(SUITES)})")
        if not isinstance(s, dict):
            raise ValueError(f"{path}: suite '{name}' is not an object")
        out = s.get("left_out")
        # a suite whose programs the profile never held saves its one table as "cells", and
        # "left_out" says so (same_as_recorded) without a copy of them
        same = isinstance(out, dict) and out.get("same_as_recorded") and isinstance(s.get("cells"), dict)
        if out is not None and not (isinstance(out, dict) and (same or isinstance(out.get("cells"), dict))
                                    and isinstance(out.get("programs"), dict)):
            raise ValueError(f"{path}: suite '{name}': 'left_out' has no 'cells' and 'programs' objects")
        if not isinstance(s.get("cells"), dict) and out is None:
            raise ValueError(f"{path}: suite '{name}' has no 'cells' object")
    return suites


def check_saved_passes(path, name, saved, knows):
    """A pass --profile-knows asks for alone must be in the saved results (\p knows "both"
    shows what they hold: files saved before left-out tables hold only the recorded)."""
    field = {"recorded": "cells", "left-out": "left_out"}.get(knows)
    if field and field not in saved:
        raise ValueError(f"{path}: suite '{name}' holds no {knows} results (--profile-knows {knows})")


def minmax(values):
    return (min(values), max(values)) if values else (None, None)


def spread(lo, hi):
    return f"{lo:.2f}-{hi:.2f}" if lo is not None and hi is not None else "-"


def side_by_side(matrix, real, recorded, held_out, out=sys.stdout):
    """One line per measured cell: the real step, the step simulated with the program's own
    recordings and the one without them (left out), each with its error: what a user who
    recorded the program gets beside what one who did not gets."""
    real_cells = {key(c): c for c in real["cells"] if "step_ms" in c}

    def cell(s, r):
        if s is None:
            return "(not simulated)"
        if "failed" in s:
            return "(failed)"
        return f"{s['step_ms']:.3f} ({pct(s['step_ms'], r['step_ms']):+.1f} %)"

    rows = []
    for c in matrix:
        r = real_cells.get(key(c))
        if r is not None:
            rows.append([f"{c['size']} {c['mode']} {c['gpus']}", f"{r['step_ms']:.3f}",
                         cell(recorded.get(key(c)), r), cell(held_out.get(key(c)), r)])
    if not rows:
        return
    head = ["workload (size, mode, GPUs)", "real ms", "recorded ms (err)", "left out ms (err)"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    print("recorded and left out, side by side:", file=out)
    print(line, file=out)
    print("-" * len(line), file=out)
    for r in rows:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))),
              file=out)


def read_band_errors(path):
    """profiles/error_bands.tsv (bench/error_bands.py) as {(gpu, part, class): error}."""
    errors = {}
    with open(path) as f:
        for line in f:
            row = line.rstrip("\n").split("\t")
            if line.startswith("#") or row[0] == "gpu" or len(row) < 5:
                continue
            errors[(row[0], row[1], row[2])] = float(row[4]) / 100
    return errors


def band_inputs_of(report):
    """What a run's band was computed from, from its report: the sources and their shares
    (error_band) and the GPU model whose errors they took."""
    band = report.get("error_band", {})
    return {"band_parts": band.get("parts"), "band_gpu": band.get("gpu")}


def reband(band, errors):
    """The band bridge/error_band.cc ComputeErrorBand gives a run whose sources priced the
    shares in \p band (a report's error_band: parts and gpu) with the errors \p errors:
    within the GPU's and the host's time each source's error weighted by its share, then
    how far the longer of the two moves (the same arithmetic, kept beside it)."""
    share = {"gpu": 0.0, "host": 0.0}
    weighted = {"gpu": 0.0, "host": 0.0}
    for p in band["parts"]:
        e = 0.0 if p["source"] == "table" else errors.get((band["gpu"], p["part"], p["source"]))
        if e is None and p["source"] == "measured_other":
            e = errors.get((band["gpu"], p["part"], "measured"))
        share[p["part"]] += p["share"]
        weighted[p["part"]] += p["share"] * (1.0 if e is None else e)
    g, h = share["gpu"], share["host"]
    eg = weighted["gpu"] / g if g else 0.0
    eh = weighted["host"] / h if h else 0.0
    upper = max(g * (1 + eg), h * (1 + eh))
    lower = max(g * max(0.0, 1 - eg), h * max(0.0, 1 - eh))
    return 100.0 * (upper - lower) / 2 / max(g, h) if max(g, h) > 0 else 0.0


def table(matrix, real, sim, out=sys.stdout, gpu_only=None, band_errors=None):
    """Prints the suite's table; \p gpu_only (collect_gpu_only.py's data) adds the real GPU's
    own step beside the simulated one with host time off; \p band_errors (read_band_errors)
    bands each cell whose run saved its band's sources again with those errors."""
    real_cells = {key(c): c for c in real["cells"] if "step_ms" in c}
    gpu_cells = {key(c): c for c in (gpu_only or {}).get("cells", []) if "gpu_only_step_ms" in c}
    head = ["workload (size, mode, GPUs)", "real ms", "real range", "sim ms", "sim range", "err %",
            "sim GPU-only ms"]
    if gpu_only is not None:
        head += ["real GPU-only ms", "GPU-only err %"]
    head += ["real peak alloc B", "sim peak alloc B", "mem err %"]
    # The error band each simulation printed, where they did (saved results from before the
    # band have none): the cell is within it when |err| is at most the band.
    banded = any(isinstance(v, dict) and v.get("band_pct") is not None for v in sim.values())
    if banded:
        head += ["band ±%"]
    rows, step_err, mem_err, failed, gpu_err = [], [], [], [], []
    within, within_err = [], []
    for c in matrix:
        k = key(c)
        name = f"{c['size']} {c['mode']} {c['gpus']}"
        r = real_cells.get(k)
        s = sim.get(k)
        if r is None:
            rows.append([name, NOT_MEASURED])
            continue
        if s is None:
            rows.append([name, f"{r['step_ms']:.3f}", "(not simulated)"])
            continue
        if "failed" in s:
            rows.append([name, f"{r['step_ms']:.3f}", "(simulation failed: below)"])
            failed.append(s["failed"])
            continue
        e = pct(s["step_ms"], r["step_ms"])
        me = pct(s["peak_allocated_bytes"], r["peak_allocated_bytes"])
        step_err.append(abs(e))
        mem_err.append(abs(me))
        gpu = s.get("host_off_step_ms")
        row = [name, f"{r['step_ms']:.3f}", spread(r.get("step_ms_min"), r.get("step_ms_max")),
               f"{s['step_ms']:.3f}", spread(*minmax(s.get("step_ms_all"))), f"{e:+.1f}",
               f"{gpu:.3f}" if gpu is not None else "-"]
        if gpu_only is not None:
            g = gpu_cells.get(k)
            if g is not None and gpu is not None:
                ge = pct(gpu, g["gpu_only_step_ms"])
                gpu_err.append(abs(ge))
                row += [f"{g['gpu_only_step_ms']:.3f}", f"{ge:+.1f}"]
            else:
                row += [f"{g['gpu_only_step_ms']:.3f}" if g else "-", "-"]
        row += [str(r["peak_allocated_bytes"]), str(s["peak_allocated_bytes"]), f"{me:+.2f}"]
        if banded:
            band = s.get("band_pct")
            if band_errors is not None and s.get("band_parts") is not None and s.get("band_gpu"):
                band = reband({"parts": s["band_parts"], "gpu": s["band_gpu"]}, band_errors)
            row.append(f"{band:.1f}" if band is not None else "-")
            if band is not None:
                # the band is a share of the simulated time: the real one within S(1 ± band)
                within.append(abs(s["step_ms"] - r["step_ms"]) <= band / 100 * s["step_ms"])
                within_err.append(abs(e) <= band)
        rows.append(row)
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
            print(r[0].ljust(widths[0]) + "  " + "  ".join(r[1:]), file=out)
    print("-" * len(line), file=out)
    if step_err:
        print(f"step time: mean |error| {sum(step_err) / len(step_err):.1f} %, max |error| {max(step_err):.1f} % "
              f"over {len(step_err)} measured cells", file=out)
        print(f"peak memory allocated: mean |error| {sum(mem_err) / len(mem_err):.2f} %, "
              f"max |error| {max(mem_err):.2f} %", file=out)
    if within:
        print(f"error band: {sum(within)} of {len(within)} cells within their own band "
              f"({100.0 * sum(within) / len(within):.0f} %: real within simulated ± band; "
              f"{sum(within_err)} with |error| at most the band)", file=out)
    if gpu_err:
        print(f"GPU timeline alone (simulated with host time off, real with the GPU held until the "
              f"host is ahead): mean |error| {sum(gpu_err) / len(gpu_err):.1f} %, "
              f"max |error| {max(gpu_err):.1f} % over {len(gpu_err)} cells", file=out)
    missing = sum(1 for r in rows if r[1] == NOT_MEASURED)
    if missing:
        print(f"{missing} cells not measured: they need a multi-GPU machine "
              f"(tools/device/measure_real_on_device.sh runs them where the GPUs exist)", file=out)
    for message in failed:
        print(message, file=out)
    return step_err, mem_err, len(failed), within


def split_suite_value(value, option):
    """'SUITE=VALUE' -> (SUITE, VALUE); a plain VALUE -> (None, VALUE)."""
    name, sep, rest = value.partition("=")
    if sep and name in SUITES:
        return name, rest
    if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and not os.path.exists(value):
        raise ValueError(f"{option} {value}: unknown suite '{name}' (known: {', '.join(SUITES)})")
    return None, value


def apply_overrides(suites, selected, values, field, option):
    """--scenario / --matrix / --script [SUITE=]FILE: a plain FILE is for the one selected suite."""
    for value in values or []:
        name, path = split_suite_value(value, option)
        if name is None:
            if len(selected) != 1:
                raise ValueError(f"{option} {value}: {len(selected)} suites run "
                                 f"({', '.join(selected)}); write {option} SUITE={value} "
                                 f"or pick one suite with --cells")
            name = selected[0]
        if field == "script" and suites[name].commands_in_matrix:
            raise ValueError(f"{option} {value}: suite '{name}' takes its commands from its matrix "
                             f"({rel(suites[name].matrix)}); give another with --matrix")
        setattr(suites[name], field, os.path.abspath(path))


def select(args, suites, only=None, strict=True):
    """The suites to show and each one's cells (matrix rows), after --cells; \\p only limits
    the suites (those of --sim-results); \\p strict: a pattern that picks no cell is an error."""
    patterns = [p for item in args.cells or [] for p in item.split(",") if p]
    chosen, used = {}, set()
    for name, suite in suites.items():
        if only is not None and name not in only:
            continue
        cells = read_matrix(suite.matrix)
        if patterns:
            picked = []
            for c in cells:
                hits = [p for p in patterns if cell_matches(p, f"{name}/{key(c)}")]
                used.update(hits)
                if hits:
                    picked.append(c)
            cells = picked
        if cells:
            chosen[name] = cells
    unused = [p for p in patterns if p not in used]
    if unused and strict:
        every = [f"{n}/{key(c)}" for n, s in suites.items() if only is None or n in only
                 for c in read_matrix(s.matrix)]
        raise ValueError(f"--cells {', '.join(unused)}: no such cell; the cells are: {', '.join(every)}")
    return chosen


def print_real_header(path, real):
    env = real.get("env", {})
    print(f"real: {rel(path)}: {env.get('query', '?')}; {env.get('torch', '?')}; "
          f"{env.get('date_utc', '?')}; reps {env.get('reps', '?')}")


def with_recordings(args, suite, scenario, tmp):
    """\p scenario, or where \p suite keeps recordings outside the shipped profile, a scenario
    whose profile is a copy of its own with them imported (gpu_profiler import)."""
    if not suite.recordings:
        return scenario
    logs = sorted(f for g in suite.recordings for f in glob.glob(os.path.join(ROOT, g)))
    if not logs:
        raise ValueError(f"suite '{suite.name}': no raw log matches {', '.join(suite.recordings)}")
    profile = left_out.scenario_profile(scenario)
    if profile is None:
        raise ValueError(f"{rel(scenario)}: no [kernels] profile to add the suite's recordings to")
    copy = os.path.join(tmp, f"{suite.name}-{os.path.basename(profile)}")
    shutil.copyfile(profile, copy)
    gpu_profiler = args.gpu_profiler or os.path.join(args.build, "gpu_profiler", "gpu_profiler")
    done = subprocess.run([gpu_profiler, "import", "--db", copy, *logs], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"gpu_profiler import of suite '{suite.name}''s recordings failed: "
                           f"{done.stderr.strip() or done.stdout.strip()}")
    print(f"profile: {rel(profile)} with {len(logs)} recordings kept beside it imported "
          f"({', '.join(suite.recordings)})", flush=True)
    return left_out.profile_scenario(scenario, tmp, f"{suite.name}-recordings.toml", copy)


def prepare_suite(args, suite, real, tmp):
    """Prints how the suite is simulated; (its saved-results object without cells, the
    scenario to simulate)."""
    scenario = with_recordings(args, suite, suite.scenario, tmp)
    scenario_name = rel(suite.scenario)
    print(f"simulated: {scenario_name}, {suite.describe_steps(args.steps, args.warmup)}, "
          f"median of {args.sim_reps} runs, build {args.build}", flush=True)
    time_scale = args.time_scale
    if args.host_scale:
        if not (real.get("host_speed") or real.get("host_speed_end")):
            print(f"--host-scale: {rel(suite.real)} has no host_speed.py figures of "
                  f"its machine; simulated at the scenario's time_scale", flush=True)
        else:
            time_scale, ratios, here = host_scale(args.build, scenario, real, args.verbose)
            print("host_speed.py, real GPU machine / simulated here: " +
                  ", ".join(f"{w} {ratios[w]:.3f}" for w in HOST_WORKLOADS) +
                  f" (here: " + ", ".join(f"{w} {here[w]:.0f} ns" for w in HOST_WORKLOADS) + ")"
                  f"; time_scale = their geometric mean {time_scale:.3f}", flush=True)
            time_scale = round(time_scale, 3)
    if time_scale is not None:
        scenario = scenario_copy(scenario, tmp, f"{suite.name}-scaled.toml", time_scale)
        print(f"simulated with [cpu] time_scale = {time_scale}", flush=True)
    if suite.script != SUITES_DEFAULT_SCRIPTS[suite.name]:
        print(f"script: {rel(suite.script)} instead of the suite's "
              f"{rel(SUITES_DEFAULT_SCRIPTS[suite.name])} (--script)", flush=True)
    return ({"scenario": scenario_name, "time_scale": time_scale, "steps": args.steps,
             "warmup": args.warmup, "reps": args.sim_reps, "real": rel(suite.real),
             "script": rel(suite.script) if suite.script else None}, scenario)


def measured_cells(matrix, real):
    """The cells of \p matrix that \p real measured."""
    measured = {key(c) for c in real["cells"] if "step_ms" in c}
    return [c for c in matrix if key(c) in measured]


def check_imports(build, suite):
    """None when the build's venv imports every module of \\p suite.imports (with the
    suite's environment); else why not, and the command that installs them."""
    if not suite.imports:
        return None
    python = os.path.join(build, "venv", "bin", "python")
    try:
        p = subprocess.run([python, "-c", "import " + ", ".join(suite.imports)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
                           env=dict(os.environ, **suite.env))
    except (OSError, subprocess.TimeoutExpired) as e:
        why = str(e)
    else:
        if p.returncode == 0:
            return None
        errors = [ln.strip() for ln in p.stdout.splitlines() if re.match(r"\w*(Error|Exception)\b", ln.strip())]
        why = (errors or p.stdout.strip().splitlines()[-1:] or [f"exit {p.returncode}"])[-1]
    return (f"{suite.name}: {rel(python)} cannot import {', '.join(suite.imports)} ({why}); the "
            f"suite's programs need them, installed with:\n  {suite.install.format(python=rel(python))}")


def simulate_cells(args, suite, cells, scenario_of, blocked=None):
    """Each cell simulated (--sim-reps times, and once with host time off unless
    --no-host-off) with the scenarios \\p scenario_of(cell) gives: (scenario, host-off
    scenario or None); {cell key: result}, or {"failed": why} where a simulation failed.
    \\p blocked (check_imports's message): no cell can run; each fails with it (said once)."""
    if blocked:
        return {key(c): {"failed": blocked if i == 0 else f"{suite.name}/{key(c)}: not simulated (above)"}
                for i, c in enumerate(cells)}
    sim = {}
    for c in cells:
        scenario, off = scenario_of(c)
        try:
            s = simulate_reps(args.build, suite, scenario, c, args.steps, args.warmup, args.sim_reps,
                              args.verbose, args.sim_timeout)
            if off:
                s["host_off_step_ms"] = simulate(args.build, suite, off, c, args.steps, args.warmup,
                                                 args.verbose, args.sim_timeout)["step_ms"]
        except SimulationFailed as e:  # the other cells still run; the table says which failed
            s = {"failed": str(e)}
        sim[key(c)] = s
        if args.cell_log:
            # each cell as it finishes: a long run stopped early keeps what it simulated
            with open(args.cell_log, "a") as f:
                f.write(json.dumps({"suite": suite.name, "cell": key(c), "scenario": scenario, "result": s}) + "\n")
    return sim


def run_recorded(args, suite, cells, scenario, tmp, blocked=None):
    """The suite's cells simulated with the scenario's profile as it is."""
    off = None if args.no_host_off else host_off_scenario(scenario, tmp, f"{suite.name}-host-off.toml")
    return simulate_cells(args, suite, cells, lambda c: (scenario, off), blocked)


def cell_programs(suite, cells, steps, warmup):
    """{cell key: the program its command runs, as the profile's runs table names it}."""
    return {key(c): left_out.program_name(suite.program(c, steps, warmup)[0]) for c in cells}


def left_out_title(programs):
    """The left-out table's heading: the program its profile holds no recording of, or each
    cell's where they differ (the frameworks suite)."""
    names = sorted(set(programs.values()))
    if len(names) == 1:
        return f"left out: the profile holds no recording of {names[0]}"
    return ("left out: the profile holds no recording of each cell's program: " +
            ", ".join(f"{n} ({', '.join(k for k, p in programs.items() if p == n)})" for n in names))


def print_left_out_header(saved):
    if saved.get("same_as_recorded"):
        print_unseen_header(saved)
        return
    print(left_out_title(saved["programs"]))
    for program, words in saved.get("removed", {}).items():
        print(f"{saved.get('profile', '?')} without {program}: {words}")


def print_unseen_header(saved):
    """The heading of a suite whose programs the profile holds no recording of: its one
    table is both the recorded and the left-out one."""
    names = ", ".join(sorted(set(saved["programs"].values())))
    print(f"left out: the profile holds no recording of these programs ({names}): the profile as it "
          f"is leaves them out, so the one table below is both the recorded and the left-out one")
    print(f"{saved.get('profile', '?')}: no run of {names} (gpu_profiler leave-out had nothing to remove)")


def plan_left_out(args, suite, cells, scenario, tmp, held_out):
    """The left-out pass of \\p cells, before it runs: (its saved-results object without cells,
    {program: (scenario, host-off scenario or None)}, the programs the profile holds no
    recording of already: simulating theirs again would repeat the recorded pass)."""
    profile = left_out.scenario_profile(scenario)
    if profile is None:
        raise ValueError(f"{rel(suite.scenario)}: no [kernels] profile, so nothing to leave out; "
                         f"run with --profile-knows recorded")
    programs = cell_programs(suite, cells, args.steps, args.warmup)
    saved = {"profile": rel(profile), "programs": programs, "removed": {}}
    scenarios, unseen = {}, set()
    for program in sorted(set(programs.values())):
        copy, saved["removed"][program] = held_out.get(profile, program)
        if copy == profile:
            unseen.add(program)
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", program)
        base = left_out.profile_scenario(scenario, tmp, f"{suite.name}-without-{tag}.toml", copy)
        off = None if args.no_host_off else host_off_scenario(base, tmp,
                                                              f"{suite.name}-without-{tag}-host-off.toml")
        scenarios[program] = (base, off)
    return saved, scenarios, unseen


def run_left_out(args, suite, cells, plan, recorded=None, blocked=None):
    """The suite's cells simulated, each with a copy of the scenario's profile that holds no
    recording of the cell's program (plan_left_out's \\p plan); a cell whose program the
    profile never held takes its \\p recorded result instead of simulating again. The
    saved-results object of the pass."""
    saved, scenarios, unseen = plan
    saved = dict(saved)
    programs = saved["programs"]
    print()
    print_left_out_header(saved)
    sys.stdout.flush()
    reuse = {key(c): recorded[key(c)] for c in cells
             if programs[key(c)] in unseen and "failed" not in (recorded or {}).get(key(c), {"failed": 1})}
    sim = simulate_cells(args, suite, [c for c in cells if key(c) not in reuse],
                         lambda c: scenarios[programs[key(c)]], blocked)
    saved["cells"] = {key(c): reuse.get(key(c)) or sim[key(c)] for c in cells}
    return saved


def print_saved_header(path, saved, suite):
    scaled = f", time_scale {saved['time_scale']}" if saved.get("time_scale") is not None else ""
    steps = suite.describe_steps(saved.get("steps", "?"), saved.get("warmup", "?"))
    script = saved.get("script")
    other = (f"; script {script}" if script and os.path.abspath(os.path.join(ROOT, script))
             != SUITES_DEFAULT_SCRIPTS[suite.name] else "")
    print(f"simulated: saved results {rel(path)} "
          f"({saved.get('scenario', '?')}{scaled}, {steps}, median of {saved.get('reps', 1)} runs{other})")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("PHANTORA_BUILD_DIR", os.path.join(ROOT, "build")),
                   help="a built tree (phantora-cluster and venv/)")
    p.add_argument("--cells", action="append", metavar="PATTERN[,PATTERN]",
                   help="only the cells whose suite/size/mode/gpus hold these parts in this order, "
                        "e.g. gpt_ref, gpt_ref/fsdp/4, train_gpt/w1024, fsdp (default: every cell)")
    p.add_argument("--real", action="append", metavar="[SUITE=]FILE",
                   help="real measurements for a suite (default: the one its file's 'suite' key "
                        f"names, else {DEFAULT_SUITE}); each suite has its own by default")
    p.add_argument("--matrix", action="append", metavar="[SUITE=]FILE",
                   help="another matrix of cells (without SUITE=: when one suite runs)")
    p.add_argument("--scenario", action="append", metavar="[SUITE=]FILE",
                   help="another scenario (without SUITE=: when one suite runs)")
    p.add_argument("--script", action="append", metavar="[SUITE=]FILE",
                   help="run this script instead of the suite's (a modified copy, to debug; the "
                        "header says so)")
    p.add_argument("--steps", type=int, default=8, help="simulated steps per cell")
    p.add_argument("--warmup", type=int, default=3, help="simulated steps left out of the mean")
    p.add_argument("--host-scale", action="store_true",
                   help="simulate with the [cpu] time_scale host_speed.py gives (the real data's "
                        "figures over what the simulator charges here for the same work)")
    p.add_argument("--time-scale", type=float,
                   help="simulate with this [cpu] time_scale instead of the scenario's (the real "
                        "host's speed relative to this one, e.g. from host_speed.py run on both)")
    p.add_argument("--sim-reps", type=int, default=3,
                   help="simulations per cell; the table gives their median, as it does the real runs'")
    p.add_argument("--sim-timeout", type=int, default=1800, help="seconds one simulation may take")
    p.add_argument("--no-host-off", action="store_true", help="skip the GPU-only diagnostic runs")
    p.add_argument("--sim-results", action="append", metavar="FILE",
                   help="print from these saved simulated results (their suites only) instead of simulating")
    p.add_argument("--save-sim", help="write the simulated results here (JSON, by suite)")
    p.add_argument("--profile-knows", choices=PROFILE_KNOWS, default="both",
                   help="recorded: simulate with the profile as it is (it holds recordings of the "
                        "simulated program); left-out: with a copy holding none of them (gpu_profiler "
                        "leave-out), as a user who recorded nothing of their own program; both "
                        "(default): a table of each")
    p.add_argument("--gpu-profiler", metavar="PATH",
                   help="the gpu_profiler that writes the left-out profiles (default: "
                        "BUILD/gpu_profiler/gpu_profiler)")
    p.add_argument("--connect-timeout", type=int, metavar="S",
                   help="phantora-cluster --connect-timeout: how long a rank may take to its first CUDA call (on "
                        "a loaded machine importing torch takes minutes)")
    p.add_argument("--cell-log", metavar="FILE",
                   help="append each simulated cell's result to FILE (JSON lines: suite, cell, scenario, result) "
                        "as it finishes")
    p.add_argument("--rebands", metavar="TSV",
                   help="band the cells with this table of errors (bench/error_bands.py's) instead of the one "
                        "their runs read, where the saved results hold their band's sources")
    p.add_argument("--max-step-error", type=float,
                   help="exit 1 if the max |step-time error| of any table shown exceeds this many percent")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.steps <= args.warmup or args.warmup < 0:
        p.error("--steps must exceed --warmup >= 0")
    if args.sim_reps < 1:
        p.error("--sim-reps must be at least 1")
    band_errors = read_band_errors(args.rebands) if args.rebands else None
    CLUSTER_OPTIONS[:] = ["--connect-timeout", str(args.connect_timeout)] if args.connect_timeout else []

    suites = {name: dataclasses.replace(s) for name, s in SUITES.items()}
    saved = {}
    for path in args.sim_results or []:
        for name, s in load_sim_results(path).items():
            if name in saved:
                raise ValueError(f"--sim-results: suite '{name}' is in {saved[name][0]} and {path}")
            saved[name] = (path, s)

    reals = {}
    for value in args.real or []:
        name, path = split_suite_value(value, "--real")
        data = load_real(path)
        name = name or data.get("suite", DEFAULT_SUITE)
        if name not in suites:
            raise ValueError(f"{path}: unknown suite '{name}' (known: {', '.join(SUITES)})")
        suites[name].real = os.path.abspath(path)
        reals[name] = data

    # which suites run decides what a plain --scenario FILE is for; then the cells of the
    # matrices that run (a --matrix may replace one)
    only = set(saved) if args.sim_results else None
    chosen = select(args, suites, only, strict=False)
    for option, field in (("--scenario", "scenario"), ("--matrix", "matrix"), ("--script", "script")):
        apply_overrides(suites, list(chosen), getattr(args, option[2:]), field, option)
    chosen = select(args, suites, only)
    if not chosen:
        raise ValueError("no cells to show")

    passes = [k for k in ("recorded", "left-out") if args.profile_knows in (k, "both")]
    gpu_profiler = args.gpu_profiler or os.path.join(args.build, "gpu_profiler", "gpu_profiler")
    if not args.sim_results:
        check_build(args.build)
        if "left-out" in passes and not os.path.exists(gpu_profiler):
            raise RuntimeError(f"{gpu_profiler} does not exist: build it (the left-out tables need "
                               f"gpu_profiler leave-out), pass --gpu-profiler, or --profile-knows recorded")
    results, failed = {}, 0
    errors = {k: {"step": [], "mem": [], "band": [], "counts": {}} for k in passes}
    with tempfile.TemporaryDirectory() as tmp:
        held_out = left_out.HeldOutProfiles(gpu_profiler, tmp, args.verbose)
        for i, (name, matrix) in enumerate(chosen.items()):
            suite = suites[name]
            if len(chosen) > 1:
                print(("\n" if i else "") + f"== {name}: {suite.label()} "
                      f"({rel(suite.matrix)}), real range: {suite.real_range} ==")
            real = reals.get(name) or load_real(suite.real)
            print_real_header(suite.real, real)
            cells = measured_cells(matrix, real)
            if name in saved:
                path, entry = saved[name]
                print_saved_header(path, entry, suite)
                check_saved_passes(path, name, entry, args.profile_knows)
            else:
                entry, scenario = prepare_suite(args, suite, real, tmp)
                results[name] = entry
                blocked = check_imports(args.build, suite)
                plan = None
                if "left-out" in passes:
                    plan = plan_left_out(args, suite, cells, scenario, tmp, held_out)
                    if plan[2] and all(p in plan[2] for p in plan[0]["programs"].values()):
                        # the profile holds no recording of any of the suite's programs: the
                        # profile as it is leaves them out already, one pass is both tables
                        print()
                        print_unseen_header(plan[0])
                        sys.stdout.flush()
                        entry["cells"] = run_recorded(args, suite, cells, scenario, tmp, blocked)
                        entry["left_out"] = dict(plan[0], same_as_recorded=True)
            gpu_only = load_json(suite.gpu_only) if suite.gpu_only else None
            if entry.get("left_out", {}).get("same_as_recorded"):
                # one table, counted in the left-out overall line (in the recorded one only
                # when it is the one shown: the recorded line is of programs the profile holds)
                if name in saved:
                    print()
                    print_unseen_header(entry["left_out"])
                print()
                step_err, mem_err, failures, within = table(matrix, real, entry["cells"], gpu_only=gpu_only,
                                                    band_errors=band_errors)
                failed += failures
                for kind in passes:
                    if kind == "recorded" and "left-out" in passes:
                        continue
                    errors[kind]["step"] += step_err
                    errors[kind]["mem"] += mem_err
                    errors[kind]["band"] += within
                    errors[kind]["counts"][name] = len(step_err)
                continue
            for kind in passes:
                if kind == "recorded":
                    if name not in saved:
                        entry["cells"] = run_recorded(args, suite, cells, scenario, tmp, blocked)
                    sim = entry.get("cells")
                    if sim is not None and "left-out" in passes and (name not in saved or "left_out" in entry):
                        print("recorded: the profile holds the program's own recordings")
                else:
                    if name not in saved:
                        entry["left_out"] = run_left_out(args, suite, cells, plan, entry.get("cells"), blocked)
                    elif "left_out" in entry:
                        print()
                        print_left_out_header(entry["left_out"])
                    sim = entry.get("left_out", {}).get("cells")
                if sim is None:
                    continue
                print()
                step_err, mem_err, failures, within = table(matrix, real, sim, gpu_only=gpu_only, band_errors=band_errors)
                failed += failures
                errors[kind]["step"] += step_err
                errors[kind]["mem"] += mem_err
                errors[kind]["band"] += within
                errors[kind]["counts"][name] = len(step_err)
            if (len(passes) == 2 and entry.get("cells") is not None
                    and entry.get("left_out", {}).get("cells") is not None):
                print()
                side_by_side(matrix, real, entry["cells"], entry["left_out"]["cells"])
    for kind in passes:
        e = errors[kind]
        if len(chosen) > 1 and e["step"]:
            print()
            print(f"all suites{', left out' if kind == 'left-out' else ''} "
                  f"({', '.join(f'{n} {k}' for n, k in e['counts'].items())} measured cells): "
                  f"step time mean |error| {statistics.mean(e['step']):.1f} %, "
                  f"max |error| {max(e['step']):.1f} %; "
                  f"peak memory allocated mean |error| {statistics.mean(e['mem']):.2f} %, "
                  f"max |error| {max(e['mem']):.2f} %")
            if e["band"]:
                print(f"error band, all suites{', left out' if kind == 'left-out' else ''}: "
                      f"{sum(e['band'])} of {len(e['band'])} cells within their own band "
                      f"({100.0 * sum(e['band']) / len(e['band']):.0f} %)")
    if args.save_sim and results:
        with open(args.save_sim, "w") as f:
            json.dump({"suites": results}, f, indent=1)
            f.write("\n")
    if failed:
        sys.exit(f"accuracy.py: {failed} simulation(s) failed (above)")
    all_step = [v for kind in passes for v in errors[kind]["step"]]
    if args.max_step_error is not None and (not all_step or max(all_step) > args.max_step_error):
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        # a missing or malformed data file, or a failed simulation: say which, not a traceback
        sys.exit(f"accuracy.py: {e}")
