"""The fork server of phantora-cluster's Python ranks (bridge/launch/launcher.cc starts it
for a `python SCRIPT` or `python -m MODULE` command unless --no-fork-server is given).

Every simulated GPU is a live Python process, and each one importing torch on its own
holds ~0.3 GB of private memory that is the same in all of them (torch's dispatcher
tables, the interposer's kernel registry, Python's module objects).  This process
imports the framework once, with the interposer preloaded, and forks one child per
rank: the children share those pages copy-on-write.  Each child then becomes what the
launcher would have exec'd, `python SCRIPT ARGS` or `python -m MODULE ARGS`: the rank's
environment, its own stdout/stderr pipes, its own process group, the script run in the
real `__main__` module.

Protocol with the launcher (bridge/launch/launcher.cc, Launcher::StartForkServer):
  PHANTORA_FORK_SERVER_SPEC  an fd (a memfd) holding the JSON spec: "argv" (the command
                             after the interpreter), "preload" (modules to import;
                             "+imports": the program's own top-level imports),
                             "control" (an fd), "launcher_pid", and "ranks", each with
                             "rank", "out", "err" (pipe fds) and "env" (what differs from
                             this process's environment); "fallback": the launcher execs
                             the ranks if this process ends before forking them, so a
                             preloaded module that fails is left to the ranks and a reason
                             not to fork (CannotFork) is one line on stderr;
  control fd                 one "RANK PID" line per forked rank, written as it is forked.
Once every rank is forked the server exits: the launcher is a child subreaper, so the
ranks become its children and it waits for them as for exec'd ones (their exit status
names a crashed rank as usual).  A rank starts the program only after that, and then
asks to be killed with the launcher, as exec'd ranks do.

Nothing here touches CUDA: the interposer connects to the bridge at a process's first
CUDA call, so each child connects as its own rank.  A rank ends as multiprocessing's
forked children do, without the interpreter's teardown (_finish says why).
"""

import ast
import gc
import importlib
import importlib.util
import json
import os
import sys

# In "preload": the modules the program's own top-level import statements name.
PROGRAM_IMPORTS = "+imports"

PR_SET_PDEATHSIG = 1
SIGKILL = 9


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _die_with_launcher(launcher_pid):
    """Asks the kernel to kill this rank when the launcher ends (exec'd ranks set the
    same in launcher.cc); a launcher already gone ends the rank now."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != launcher_pid:
        os._exit(127)


def _become_rank(rank, spec, server_pid, server_gone, inherited):
    """In the forked child: the rank's process group, output, environment and parent."""
    os.setpgid(0, 0)
    os.dup2(rank["out"], 1)
    os.dup2(rank["err"], 2)
    for fd in inherited:
        if fd > 2:
            os.close(fd)
    os.environ.pop("PHANTORA_FORK_SERVER_SPEC", None)
    os.environ.pop("PHANTORA_FORK_SERVER_DEVICES", None)  # the interposer: a rank now
    os.environ.update(rank["env"])
    # Wait until the server has forked every rank and exited: its end of the pipe closes
    # then.  Its exit closes its files before the kernel hands its children to the
    # launcher, so the new parent may show a moment later.
    while os.read(server_gone, 1):
        pass
    os.close(server_gone)
    while os.getppid() == server_pid:
        os.sched_yield()
    _die_with_launcher(spec["launcher_pid"])


def _fork_ranks(spec):
    """Forks every rank; returns in each child (its spec entry), never in the server."""
    control = spec["control"]
    inherited = [control]
    for rank in spec["ranks"]:
        inherited += [rank["out"], rank["err"]]
    gone_r, gone_w = os.pipe()
    server_pid = os.getpid()
    # Objects that exist now are never collected again: a collection would write to every
    # one of them and so copy, in every rank, the pages the ranks are meant to share.
    gc.collect()
    gc.freeze()
    for rank in spec["ranks"]:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(gone_w)
            try:
                _become_rank(rank, spec, server_pid, gone_r, inherited)
            except BaseException as e:  # noqa: BLE001 - the rank cannot start: say why
                os.write(2, f"phantora fork server: rank {rank['rank']}: {e!r}\n".encode())
                os._exit(127)
            return rank
        os.write(control, f"{rank['rank']} {pid}\n".encode())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run_program(argv):
    """Runs `python ARGV...` in this process, as the interpreter would have."""
    main = sys.modules["__main__"]
    # The names the launcher's `-c` line bound (sys, u, s, m): the program's __main__
    # starts with the interpreter's own names only.
    for name in [n for n in main.__dict__ if not n.startswith("__")]:
        del main.__dict__[name]
    if argv[0] == "-m":
        # What `python -m MODULE ARGS` does; runpy puts the module's path in sys.argv[0].
        import runpy

        sys.argv = ["-m", *argv[2:]]
        sys.path[0] = os.getcwd()
        runpy._run_module_as_main(argv[1])  # noqa: SLF001 - the -m entry point itself
        return
    script = argv[0]
    sys.argv = list(argv)
    # `python SCRIPT` puts the script's folder (symbolic links resolved) first on the path.
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    with open(script, "rb") as f:
        source = f.read()
    from importlib.machinery import SourceFileLoader

    main.__dict__.update(__file__=script, __cached__=None,
                         __loader__=SourceFileLoader("__main__", script))
    exec(compile(source, script, "exec"), main.__dict__)  # noqa: S102 - the rank's program


def _program_source(argv):
    """(path, text) of what `python ARGV...` runs; for `-m MODULE` the module's source (its
    parent packages are imported to find it, as runpy would), None if it has none."""
    if argv[0] == "-m":
        found = importlib.util.find_spec(argv[1])
        if found is not None and found.submodule_search_locations is not None:
            found = importlib.util.find_spec(argv[1] + ".__main__")  # `-m PACKAGE`
        if found is None or not found.has_location or not found.origin.endswith(".py"):
            return None
        path = found.origin
    else:
        path = argv[0]
    with open(path, "rb") as f:
        return path, f.read()


def program_imports(path, source):
    """The absolute imports among the source's top-level statements (and the top-level
    try/except and if blocks around them), in order, as (module, names) pairs: `import a.b`
    gives ("a.b", ()), `from a import b, c` gives ("a", ("b", "c")).  Imports inside
    functions, and relative ones, are left to the program."""
    out = []

    def visit(body):
        for node in body:
            if isinstance(node, ast.Import):
                out.extend((alias.name, ()) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.append((node.module,
                            tuple(alias.name for alias in node.names if alias.name != "*")))
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif isinstance(node, ast.If):
                # `if TYPE_CHECKING:` or a version test: either branch may run in the rank;
                # what fails to import here is only left to it.
                visit(node.body)
                visit(node.orelse)

    visit(ast.parse(source, path).body)
    return out


class _DeviceCountWithoutCuda:
    """While the server imports: torch's device count answered in Python.

    Modules ask torch.cuda.is_available() or device_count() when imported (Megatron-core's
    version checks do).  torch's C++ answer to that marks every process forked afterwards
    as a "bad fork" that may never use CUDA, so the ranks could not; this answers with the
    count the bridge gives every rank (the scenario's GPUs per node, from the launcher),
    which torch then caches and the ranks inherit.  The original is put back before the
    ranks are forked.  The interposer answers the same count to C++ and NVML callers and
    ends the server at any other CUDA call (RankClient::IsForkServer)."""

    def __init__(self):
        self.original = None
        self.count = int(os.environ.get("PHANTORA_FORK_SERVER_DEVICES") or 0)

    def install(self):
        """Once torch is imported (call after every import: torch may come with any)."""
        torch_c = sys.modules.get("torch._C")
        if self.original is None and hasattr(torch_c, "_cuda_getDeviceCount"):
            self.original = torch_c._cuda_getDeviceCount
            torch_c._cuda_getDeviceCount = lambda: self.count

    def restore(self):
        if self.original is not None:
            sys.modules["torch._C"]._cuda_getDeviceCount = self.original
            self.original = None


def _import_program_imports(argv, after_each):
    """Imports the program's top-level imports with the program's folder first on the path
    (as the rank will have it).  One that fails is left to the ranks, which then fail or
    not as an exec'd rank would; returns (imported, [(module, why)] left)."""
    program = _program_source(argv)
    if program is None:
        return [], []
    path, source = program
    saved = sys.path[0]
    if argv[0] != "-m":
        sys.path[0] = os.path.dirname(os.path.realpath(path))
    else:
        sys.argv[0] = path  # runpy's, before the module's own code runs
    imported, left = [], []
    try:
        for module, names in program_imports(path, source):
            try:
                __import__(module, fromlist=names)
                imported.append(module)
                after_each()
            except Exception as e:  # noqa: BLE001 - the rank imports it and says why
                left.append((module, f"{type(e).__name__}: {e}"))
    finally:
        sys.path[0] = saved
    return imported, left


class CannotFork(Exception):
    """Forked ranks would not be what exec'd ones are: the launcher execs them instead
    (phantora-cluster's default launch) or the run ends (--fork-server)."""


def _threads_started():
    """Python threads besides this one: a forked child has none of them, so a rank would
    run without what its imports started (a monitor, a prefetcher)."""
    import threading

    return [t.name for t in threading.enumerate() if t is not threading.current_thread()]


def _preload(spec):
    """Imports spec["preload"]; returns the line that says what was imported.

    They import with sys.argv as the program's interpreter would have it: modules read it
    when imported (TorchTitan's ConfigManager.parse_args takes `args=sys.argv[1:]` as a
    default argument, fixed at import), and the ranks inherit what they read.  For
    `-m MODULE` that is "-m" and the arguments until the module is found, as in CPython,
    then the module's file (_import_program_imports)."""
    sys.argv = list(spec["argv"]) if spec["argv"][0] != "-m" else ["-m", *spec["argv"][2:]]
    said = []
    # phantora-cluster's default launch: a module that does not import is the ranks' to
    # import (and fail on, as an exec'd rank would), not a reason to end the run.
    lenient = spec.get("fallback", False)
    devices = _DeviceCountWithoutCuda()
    try:
        for name in spec["preload"]:
            if name != PROGRAM_IMPORTS:
                try:
                    importlib.import_module(name)
                except Exception as e:  # noqa: BLE001 - left to the ranks, said below
                    if not lenient:
                        raise
                    said.append(f"not {name} ({type(e).__name__}: {e}: left to the ranks)")
                    continue
                devices.install()
                said.append(name)
                continue
            imported, left = _import_program_imports(spec["argv"], devices.install)
            what = f"the program's {len(imported)} imports"
            if left:
                what += " (left to the ranks: " + "; ".join(f"{m}: {why}" for m, why in left)
                what += ")"
            said.append(what)
    finally:
        devices.restore()
    bad_fork = getattr(sys.modules.get("torch._C"), "_cuda_isInBadFork", None)
    if bad_fork is not None and _forks_poisoned():
        raise CannotFork("a preloaded module initialised CUDA in the fork server (torch would "
                         "refuse CUDA in every forked rank); leave it to the ranks")
    threads = _threads_started()
    if threads:
        why = (f"the program's imports started threads ({', '.join(threads)}) that forked "
               "ranks would not have")
        if lenient:
            raise CannotFork(why)
        print(f"warning: {why}", file=sys.stderr, flush=True)  # --fork-server: as asked
    return ", ".join(said) or "nothing"


def _forks_poisoned():
    """Whether torch would call a child forked now a bad fork: tried in a child."""
    pid = os.fork()
    if pid == 0:
        os._exit(1 if sys.modules["torch._C"]._cuda_isInBadFork() else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) != 0


def main():
    spec_fd = int(os.environ["PHANTORA_FORK_SERVER_SPEC"])
    spec = json.loads(_read_all(spec_fd))
    os.close(spec_fd)
    try:
        imported = _preload(spec)
    except CannotFork as e:
        if not spec.get("fallback", False):
            raise
        # One line: the launcher quotes the last one as the reason it execs the ranks.
        print(f"cannot fork the ranks: {e}", file=sys.stderr, flush=True)
        os._exit(3)
    print(f"imported {imported} ({_cpu_seconds():.1f} s of CPU); forking "
          f"{len(spec['ranks'])} ranks", flush=True)
    _fork_ranks(spec)
    _rank_main(spec["argv"])


def _cpu_seconds():
    """CPU time, not the clock: the interposer answers clock reads with simulated time."""
    cpu = os.times()
    return cpu.user + cpu.system


def _rank_main(argv):
    """In a forked rank: runs `python ARGV...` and ends as the interpreter would (also
    phantora_host_fork_server.py's ranks)."""
    # The rank is this process: what it starts is not (interposer/process_role.h).  Set
    # before the program runs, so that environments it builds from os.environ carry it.
    os.environ["PHANTORA_RANK_PID"] = str(os.getpid())
    # A rank: fresh seeds, as a process of its own would have drawn.
    import random

    random.seed()
    # numpy's global generator, if imported, was seeded once in the server: reseed it, or
    # every rank would draw the same numbers where exec'd ranks each draw their own.
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
    try:
        _run_program(argv)
        code = 0
    except SystemExit as e:
        code = _exit_code(e)
    except KeyboardInterrupt:
        sys.excepthook(*_program_exc_info())
        _finish(None)  # as the interpreter does: end by the signal
    except BaseException:  # noqa: BLE001 - the program's uncaught exception
        sys.excepthook(*_program_exc_info())
        code = 1
    _finish(code)


def _program_exc_info():
    """sys.exc_info() without this file's frames at the top of the traceback: what the
    program's exec'd interpreter would have printed."""
    kind, value, tb = sys.exc_info()
    here = os.path.realpath(__file__)
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) == here:
        tb = tb.tb_next
    if value is not None:
        value = value.with_traceback(tb)  # printed from the exception's own traceback
    return kind, value, tb


def _exit_code(e):
    """The exit status the interpreter gives an uncaught SystemExit."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def _finish(code):
    """Ends the rank as multiprocessing ends a forked child: non-daemon threads joined,
    atexit handlers run, output flushed, then _exit.  The interpreter's own exit would then
    tear its modules down, dropping a reference to every object: each rank would write to,
    and copy, every page it shares (128 ranks ending at once ran a 24 GB machine out of
    memory).  _exit also skips the C++ static destructors, which with no teardown before
    them would destroy the framework's objects while its threads run (a process group left
    undestroyed aborted the rank); the interposer's goodbye, said there for exec'd ranks,
    is said explicitly.  \p code None: end by SIGINT (an uncaught KeyboardInterrupt)."""
    import atexit
    import ctypes
    import signal
    import threading

    try:
        threading._shutdown()  # noqa: SLF001 - what the interpreter's own exit calls
    except Exception:  # noqa: BLE001 - as at exit: nothing left to report it to
        pass
    atexit._run_exitfuncs()  # noqa: SLF001
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # noqa: BLE001
            pass
    process = ctypes.CDLL(None)
    process.fflush(None)  # C stdio of the libraries (NCCL_DEBUG lines, logs)
    goodbye = getattr(process, "phantora_interposer_goodbye", None)
    if goodbye is not None:
        goodbye()
    if code is None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    os._exit(code & 0xFF)
