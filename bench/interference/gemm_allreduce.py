"""Compute-communication interference on real GPUs: a GEMM stream (or a memory-bound stream)
beside a concurrent NCCL all-reduce, each timed alone and together.

    torchrun --standalone --nproc_per_node N bench/interference/gemm_allreduce.py [--out DIR]

For each pair (compute kernel, all-reduce size): `--reps` back-to-back compute kernels on
one stream and `--reps` back-to-back all-reduces on another, first each alone, then both
issued together so that they overlap. Times are CUDA events around each stream's batch
(the median of three batches), per kernel or per call, the slowest rank. The slowdown of
each is its time together over its time alone; "overlap" is how much of the shorter batch
ran beside the other (1.0: all of it).

Compute kernels: bf16 GEMMs (tensor cores, little HBM traffic per FLOP) and a fp32 add of
two 256 MiB tensors (HBM-bound: the resource NCCL's copies share). Rank 0 prints one line
per pair and writes DIR/interference_<N>gpu.csv.
"""

import argparse
import csv
import os
import statistics

import torch
import torch.distributed as dist


def batch(fn, reps, stream):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record(stream)
        for _ in range(reps):
            fn()
        end.record(stream)
    return start, end


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=".")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)

    computes = {}
    for m in (4096, 8192):
        a = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
        b = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
        c = torch.empty(m, m, dtype=torch.bfloat16, device=dev)
        computes[f"gemm_bf16_{m}"] = (lambda a=a, b=b, c=c: torch.mm(a, b, out=c))
    x = torch.randn(64 << 20, device=dev)
    y = torch.randn(64 << 20, device=dev)
    z = torch.empty_like(x)
    computes["add_fp32_256MiB"] = lambda: torch.add(x, y, out=z)
    comms = {}
    for mib in (16, 256):
        t = torch.ones(mib << 18, device=dev)
        comms[f"all_reduce_{mib}MiB"] = (lambda t=t: dist.all_reduce(t))

    s_comp, s_comm = torch.cuda.Stream(), torch.cuda.Stream()
    rows = []
    for cname, cfn in computes.items():
        for kname, kfn in comms.items():
            for _ in range(3):  # warm-up of both
                cfn(); kfn()
            torch.cuda.synchronize()
            alone_c, alone_k, tog_c, tog_k, overlap = [], [], [], [], []
            for _ in range(3):
                dist.barrier(); torch.cuda.synchronize()
                s, e = batch(cfn, args.reps, s_comp); e.synchronize()
                alone_c.append(s.elapsed_time(e) / args.reps)
                dist.barrier(); torch.cuda.synchronize()
                s, e = batch(kfn, args.reps, s_comm); e.synchronize()
                alone_k.append(s.elapsed_time(e) / args.reps)
                dist.barrier(); torch.cuda.synchronize()
                sk, ek = batch(kfn, args.reps, s_comm)
                sc, ec = batch(cfn, args.reps, s_comp)
                torch.cuda.synchronize()
                tc, tk = sc.elapsed_time(ec), sk.elapsed_time(ek)
                tog_c.append(tc / args.reps)
                tog_k.append(tk / args.reps)
                # the compute batch starts after the comm batch was issued: the span both ran
                lag = sk.elapsed_time(sc)  # ms from comm start to compute start
                both = max(0.0, min(tk, lag + tc) - max(0.0, lag))
                overlap.append(both / min(tc, tk))
            vals = torch.tensor([statistics.median(v) for v in (alone_c, alone_k, tog_c, tog_k)]
                                + [-statistics.median(overlap)], device=dev)
            dist.all_reduce(vals, op=dist.ReduceOp.MAX)
            ac, ak, tc, tk, ov = vals.tolist()
            row = [cname, kname, n, f"{ac * 1e3:.1f}", f"{tc * 1e3:.1f}", f"{tc / ac:.3f}",
                   f"{ak * 1e3:.1f}", f"{tk * 1e3:.1f}", f"{tk / ak:.3f}", f"{-ov:.2f}"]
            rows.append(row)
            if rank == 0:
                print(f"{cname:>16} beside {kname:>16} on {n} GPUs: compute {ac*1e3:8.1f} -> "
                      f"{tc*1e3:8.1f} us (x{tc/ac:.3f}), all-reduce {ak*1e3:8.1f} -> {tk*1e3:8.1f} us "
                      f"(x{tk/ak:.3f}), overlap {-ov:.2f}", flush=True)
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"interference_{n}gpu.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["compute", "comm", "world", "compute_alone_us", "compute_together_us",
                        "compute_slowdown", "comm_alone_us", "comm_together_us", "comm_slowdown",
                        "overlap"])
            w.writerows(rows)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
