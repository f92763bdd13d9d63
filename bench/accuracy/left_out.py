"""The left-out tables of accuracy.py: each cell simulated with a copy of its scenario's
profile that holds no recording of the cell's program (`gpu_profiler leave-out`), as a user
who recorded nothing of their own program gets it. Standard library only (tomllib: Python
3.11).
"""

import json
import os
import re
import subprocess

# profile::ProgramName's launchers (gpu_model/profile/program_name.cc): a launcher module
# names the program it starts.
LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch", "mpirun", "mpiexec", "srun",
             "deepspeed")
NO_RUN_RE = re.compile(r'no run of program "')
SUMMARY_RE = re.compile(r"^left out [^:]*: (.*)$", re.M)
OPS_RE = re.compile(r"^ops: (.*)$", re.M)


def program_name(args):
    """profile::ProgramName of `python ARGS...` (the commands the harness simulates): the
    module after -m (or what a launcher module starts), else the first script's file name;
    the recordings of a program are filed under this name in the runs table."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m" and i + 1 < len(args):
            module = args[i + 1]
            if module in LAUNCHERS:
                launched = launched_program(args[i + 2:])
                if launched:
                    return launched
            return module
        if a == "-c":
            return "python"
        if a in ("-W", "-X"):
            i += 2
            continue
        if a and not a.startswith("-"):
            return os.path.basename(a)
        i += 1
    return "python"


def launched_program(args):
    """What a launcher's arguments start: the first `-m MODULE`, `*.py` or `python ...`."""
    for i, a in enumerate(args):
        if a in ("-m", "--module") and i + 1 < len(args):
            return args[i + 1]
        if a.endswith(".py"):
            return os.path.basename(a)
        if os.path.basename(a).startswith("python"):
            return program_name(args[i + 1:])
    return ""


def read_toml(path):
    try:
        import tomllib
    except ImportError as e:
        raise RuntimeError(f"{path}: reading a scenario needs Python 3.11 or later (tomllib); run the "
                           f"recorded tables alone with --profile-knows recorded") from e
    with open(path, "rb") as f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: not valid TOML: {e}") from e


def scenario_profile(path, chain=()):
    """The profile database \\p path's scenario times kernels with ([kernels] profile, after
    its `extends`, as the simulator composes them: the file's own key, else the last file
    it extends that has one; paths relative to the file that writes them); None if none."""
    path = os.path.abspath(path)
    if path in chain:
        raise ValueError(f"{path}: 'extends' makes a cycle")
    data = read_toml(path)
    profile = data.get("kernels", {}).get("profile")
    if profile is not None:
        return os.path.normpath(os.path.join(os.path.dirname(path), profile))
    extends = data.get("extends", [])
    for base in reversed([extends] if isinstance(extends, str) else extends):
        found = scenario_profile(os.path.join(os.path.dirname(path), base), chain + (path,))
        if found:
            return found
    return None


def profile_scenario(scenario, tmpdir, name, profile):
    """A scenario that extends \\p scenario with [kernels] profile = \\p profile."""
    path = os.path.join(tmpdir, name)
    with open(path, "w") as f:
        f.write(f"extends = {json.dumps(os.path.abspath(scenario))}\n[kernels]\n"
                f"profile = {json.dumps(os.path.abspath(profile))}\n")
    return path


class HeldOutProfiles:
    """The profiles without one program's recordings, each made once (in \\p tmpdir) with
    \\p gpu_profiler's leave-out."""

    def __init__(self, gpu_profiler, tmpdir, verbose=False):
        self.gpu_profiler = gpu_profiler
        self.tmpdir = tmpdir
        self.verbose = verbose
        self.made = {}

    def get(self, profile, program):
        """(the held-out copy of \\p profile, what leave-out removed, in words); the profile
        itself where it holds no recording of \\p program already."""
        k = (profile, program)
        if k not in self.made:
            self.made[k] = self.make(profile, program)
        return self.made[k]

    def make(self, profile, program):
        stem = os.path.splitext(os.path.basename(profile))[0]
        out = os.path.join(self.tmpdir, f"{stem}-without-{re.sub(r'[^A-Za-z0-9_.-]', '_', program)}.sqlite")
        cmd = [self.gpu_profiler, "leave-out", "--db", profile, "--out", out, "--program", program]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError as e:
            raise RuntimeError(f"{self.gpu_profiler}: cannot run it ({e}); build gpu_profiler or pass "
                               f"--gpu-profiler") from e
        if p.returncode != 0 and NO_RUN_RE.search(p.stdout):
            return profile, "it holds no recording of it already"
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout.strip()}")
        if self.verbose:
            print(p.stdout, end="", flush=True)
        removed, ops = SUMMARY_RE.search(p.stdout), OPS_RE.search(p.stdout)
        words = f"{removed.group(1)}; ops: {ops.group(1)}" if removed and ops else p.stdout.strip()
        return out, words
