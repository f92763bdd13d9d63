"""NCCL collectives timed the way nccl-tests times them, through torch.distributed.

    torchrun --standalone --nproc_per_node N bench/collectives/nccl_perf.py \
        --out DIR [--ops all_reduce,all_gather,...] [--min-bytes 8] [--max-bytes 4G] \
        [--factor 2] [--iters 20] [--warmup 5] [--mode graph|eager]

For each operation and size: `--warmup` calls, then `--iters` back-to-back calls on one
stream between two CUDA events (nccl-tests' method), three times; the row keeps the median
of the three per-call averages, the slowest rank's (the collective ends when its last rank
does).

--mode graph captures the `--iters` calls in one CUDA graph and times its replay, so that
no host time sits between two calls: what NCCL itself takes, the number a simulator that
models the host's time separately must reproduce. --mode eager times the plain calls
(torch.distributed's host cost per call included, the way a training script sees them).

Sizes follow nccl-tests: `bytes` is the whole buffer (all_gather's output,
reduce_scatter's input, all_to_all's per-rank buffer, send_recv's message, each rank
sending to the next and receiving from the previous). fp32 elements (sum for the
reductions); a size is rounded down to a whole number of elements per rank (at least one).
algbw = bytes / time; busbw as nccl-tests defines it.

Rank 0 writes DIR/nccl_perf_<mode>_<N>gpu.csv. Set NCCL_DEBUG=INFO
NCCL_DEBUG_SUBSYS=INIT,TUNING (and NCCL_DEBUG_FILE) in the environment to keep NCCL's
choice of algorithm, protocol and channels per call: nccl_tuning.py summarises that log.
"""

import argparse
import csv
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv"]


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B").rstrip("I")
    suffix = t[-1] if t and t[-1] in units else ""
    return int(float(t[: len(t) - len(suffix)]) * units[suffix])


def bus_factor(op, n):
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0  # broadcast, send_recv


def elements(op, nbytes, n):
    """Elements of the op's whole buffer (nbytes rounded to whole fp32 elements per rank)."""
    per = nbytes // 4
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return max(per // n, 1) * n
    return max(per, 1)


class Op:
    """Buffers for one (op, size) and the call that issues it once."""

    def __init__(self, op, count, rank, n, dev):
        self.op, self.rank, self.n = op, rank, n
        f = lambda c: torch.ones(c, dtype=torch.float32, device=dev)  # noqa: E731
        if op == "all_reduce":
            self.a = f(count)
        elif op == "all_gather":
            self.out, self.a = f(count), f(count // n)
        elif op == "reduce_scatter":
            self.a, self.out = f(count), f(count // n)
        elif op == "broadcast":
            self.a = f(count)
        elif op == "all_to_all":
            self.a, self.out = f(count), f(count)
        elif op == "send_recv":
            self.a, self.out = f(count), f(count)
        self.bytes = count * 4

    def __call__(self):
        op = self.op
        if op == "all_reduce":
            dist.all_reduce(self.a)
        elif op == "all_gather":
            dist.all_gather_into_tensor(self.out, self.a)
        elif op == "reduce_scatter":
            dist.reduce_scatter_tensor(self.out, self.a)
        elif op == "broadcast":
            dist.broadcast(self.a, 0)
        elif op == "all_to_all":
            dist.all_to_all_single(self.out, self.a)
        elif op == "send_recv":
            nxt, prv = (self.rank + 1) % self.n, (self.rank - 1) % self.n
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, self.a, nxt),
                                           dist.P2POp(dist.irecv, self.out, prv)])
            for r in reqs:
                r.wait()


def time_one(call, mode, iters, warmup):
    """Per-call microseconds on this rank: three timed batches of `iters` calls."""
    stream = torch.cuda.current_stream()
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    graph = None
    if mode == "graph":
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(iters):
                call()
        graph.replay()
        torch.cuda.synchronize()
    samples = []
    for _ in range(3):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        if graph is not None:
            graph.replay()
        else:
            for _ in range(iters):
                call()
        end.record(stream)
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / iters)
    del graph
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--min-bytes", default="8")
    p.add_argument("--max-bytes", default="4G")
    p.add_argument("--factor", type=int, default=2)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--mode", choices=["graph", "eager"], default="graph")
    args = p.parse_args()

    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    ops = [o for o in args.ops.split(",") if o]
    unknown = [o for o in ops if o not in OPS]
    if unknown:
        sys.exit(f"nccl_perf.py: --ops: unknown {unknown}; expected some of {OPS}")
    sizes, s = [], parse_size(args.min_bytes)
    while s <= parse_size(args.max_bytes):
        sizes.append(s)
        s *= args.factor

    writer, f = None, None
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        f = open(os.path.join(args.out, f"nccl_perf_{args.mode}_{n}gpu.csv"), "w", newline="")
        writer = csv.writer(f)
        writer.writerow(["op", "world", "mode", "bytes", "time_us", "algbw_GBps", "busbw_GBps",
                         "rank_min_us", "iters"])
    t0 = time.time()
    for op in ops:
        for size in sizes:
            count = elements(op, size, n)
            o = Op(op, count, rank, n, dev)
            us = time_one(o, args.mode, args.iters, args.warmup)
            t = torch.tensor([us, -us], device=dev)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            slow, fast = t[0].item(), -t[1].item()
            if rank == 0:
                algbw = o.bytes / (slow * 1e-6) / 1e9
                writer.writerow([op, n, args.mode, o.bytes, f"{slow:.3f}", f"{algbw:.3f}",
                                 f"{algbw * bus_factor(op, n):.3f}", f"{fast:.3f}", args.iters])
                f.flush()
                print(f"{op:>15} {n} {args.mode} {o.bytes:>12} B {slow:10.2f} us "
                      f"busbw {algbw * bus_factor(op, n):8.2f} GB/s", flush=True)
            del o
            torch.cuda.empty_cache()
    if rank == 0:
        f.close()
        print(f"nccl_perf.py: {args.mode} {n} GPUs done in {time.time() - t0:.0f} s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
