"""The fork server of the ranks `phantora-rank` wraps on one host (multi-host runs).

A launcher that execs each rank itself (torchrun's agent, srun, a Kubernetes pod's
entrypoint) gives each one its own interpreter importing torch: ~0.36 GB a rank, the
same pages in all of them.  Under `phantora-rank` a rank's interpreter is preloaded with
libphantora_rank_fork.so (bridge/launch/rank_fork_relay.cc), which, before Python starts, asks
this host's fork server for the program to fork the rank instead, and stays behind as
the rank's stand-in for the launcher: its pid, its signals, its exit status.  The first
rank of a program on a host starts the server (this module, in a session of its own);
it imports what phantora_fork_server.py's _preload imports (torch, torch._dynamo, the
program's top-level imports) once, then forks one child per request, which becomes the
rank exactly as phantora-cluster's forked ranks do (phantora_fork_server._rank_main).

Protocol (a SOCK_SEQPACKET Unix socket, one per program, network namespace and bridge;
the relay makes its path):
  PHANTORA_HOST_FORK_SERVER  JSON: "listen" (the socket's path), "ready" (an fd: one
                             line once the socket listens; the relay reads EOF if the
                             preload failed), "argv" (the program after the
                             interpreter, its script's path absolute), "preload",
                             "idle" (seconds without ranks before the server exits);
  request                    JSON {"argv", "cwd", "env"} with the relay's fds 0, 1, 2;
  answers                    "forked PID SERVER_PID WHAT_WAS_IMPORTED", then, when the
                             rank ends, "exit WAITSTATUS".
A relay that goes away (killed by its launcher) has its rank's process group killed;
the server's end kills its ranks (PR_SET_PDEATHSIG), and each relay then says so.
"""

import gc
import importlib.util
import json
import os
import selectors
import signal
import socket
import sys

PR_SET_PDEATHSIG = 1


def _fork_server_module():
    """phantora_fork_server.py from this file's folder (no sys.path change: the ranks'
    sys.path is the program's)."""
    name = "phantora_fork_server"
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _Rank:
    """A relay's connection and, once forked, its rank."""

    def __init__(self, conn):
        self.conn = conn
        self.pid = None
        self.pidfd = None


def _become_rank(request, fds, server_pid, close):
    """In the forked child: the server's files closed (\p close), the relay's stdio,
    folder, environment, its own process group, and death with the server."""
    import ctypes

    close()
    os.setpgid(0, 0)
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if os.isatty(1) and not sys.flags.unbuffered:
        sys.stdout.reconfigure(line_buffering=True)  # as the interpreter does for a terminal
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != server_pid:
        os._exit(127)


def serve(config, log=print):
    """Preloads, listens and forks ranks until idle.  Returns only in a forked rank: the
    argv of the program it is to run."""
    fork_server = _fork_server_module()
    imported = fork_server._preload({"argv": config["argv"], "preload": config["preload"]})
    server_pid = os.getpid()
    path = config["listen"]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        os.unlink(path)  # a server that died left it (the relay holds the lock)
    except FileNotFoundError:
        pass
    listener.bind(path)
    listener.listen(1024)
    said = f"imported {imported} ({fork_server._cpu_seconds():.1f} s of CPU)"
    log(f"fork server {server_pid}: {said}; serving {path}", flush=True)
    os.write(config["ready"], b"ready\n")
    os.close(config["ready"])
    # As in phantora_fork_server._fork_ranks: no collection may write to what ranks share.
    gc.collect()
    gc.freeze()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    ranks = {}  # connection fd -> _Rank
    idle = float(config["idle"])
    while True:
        events = selector.select(timeout=None if ranks else idle)
        if not events and not ranks and _exit_when_unasked(config, listener):
            return None
        for key, _ in events:
            if key.fileobj is listener:
                conn, _ = listener.accept()
                ranks[conn.fileno()] = _Rank(conn)
                selector.register(conn, selectors.EVENT_READ, ("request", conn.fileno()))
                continue
            kind, fd = key.data
            rank = ranks.get(fd)
            # An event of this batch for a connection an earlier one forgot (its number
            # maybe taken by a new one since).
            stale = rank is None or (rank.pidfd != key.fd if kind == "exit"
                                     else rank.conn is not key.fileobj)
            if stale:
                continue
            if kind == "exit":  # the rank ended
                _, status = os.waitpid(rank.pid, 0)
                try:
                    rank.conn.send(f"exit {status}".encode())
                except OSError:
                    pass  # its relay went away first
                _forget(selector, ranks, rank)
                continue
            try:
                message, fds, _, _ = socket.recv_fds(rank.conn, 1 << 20, 3)
            except OSError:
                message, fds = b"", []
            if not message:  # the relay is gone: so goes its rank
                if rank.pid is None:
                    _forget(selector, ranks, rank)
                else:
                    try:
                        os.killpg(rank.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    selector.unregister(rank.conn)
                continue
            if rank.pid is not None or len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                continue
            request = json.loads(message)

            def close():
                # Through their objects: closing only the numbers would leave the objects
                # to close them again when collected, by then the rank's own files (a
                # ZeroMQ signaler's socket: the rank aborted).
                selector.close()
                listener.close()
                for r in ranks.values():
                    r.conn.close()
                    if r.pidfd is not None:
                        os.close(r.pidfd)
                        r.pidfd = None

            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    _become_rank(request, fds, server_pid, close)
                except BaseException as e:  # noqa: BLE001 - the rank cannot start: say why
                    os.write(2, f"phantora fork server: rank: {e!r}\n".encode())
                    os._exit(127)
                return request["argv"]
            for fd in fds:
                os.close(fd)
            try:
                os.setpgid(pid, pid)  # as the child does: killpg must not miss it
            except OSError:
                pass
            rank.pid = pid
            rank.pidfd = os.pidfd_open(pid)
            selector.register(rank.pidfd, selectors.EVENT_READ, ("exit", rank.conn.fileno()))
            try:
                rank.conn.send(f"forked {pid} {server_pid} {said}".encode())
            except OSError:
                pass  # the relay went away: its end, read next, kills the rank


def _exit_when_unasked(config, listener):
    """Removes socket, log and lock and says True, unless a relay connected meanwhile.
    Relays connect only while holding the lock (RankForkRelay::Run): under it, nothing
    arrives that this look misses, and a relay waiting for it finds the lock file gone
    and starts again."""
    import fcntl
    import select

    try:
        lock = open(config["lock"], "a")
    except OSError:  # the folder is gone (a test's scratch folder): nothing to keep
        listener.close()
        return True
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if select.select([listener], [], [], 0)[0]:
            return False
        for path in (config["listen"], config["log"], config["lock"]):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    listener.close()
    return True


def _forget(selector, ranks, rank):
    for obj in (rank.conn, rank.pidfd):
        if obj is None:
            continue
        try:
            selector.unregister(obj)
        except (KeyError, ValueError):
            pass
    if rank.pidfd is not None:
        os.close(rank.pidfd)
    ranks.pop(rank.conn.fileno(), None)
    rank.conn.close()


def main():
    config = json.loads(os.environ.pop("PHANTORA_HOST_FORK_SERVER"))
    # A signal for its session (a terminal's ^C) is not one for the ranks it forked.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    argv = serve(config)
    if argv is None:
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    _fork_server_module()._rank_main(argv)
