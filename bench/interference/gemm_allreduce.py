"""Compute-communication interference on real GPUs: a GEMM stream (or a memory-bound stream)
beside a concurrent NCCL all-reduce, each timed alone and together.

    torchrun --standalone --nproc_per_node N bench/interference/gemm_allreduce.py [--out DIR]
        [--computes A,B] [--comms MIB,MIB] [--cover X] [--tag T]

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
    p.add_argument("--computes", default="gemm_bf16_4096,gemm_bf16_8192,add_fp32_256MiB",
                   help="comma-separated; also add_fp32_8MiB, add_fp32_64MiB, gemm_bf16_ddp "
                        "(8192x4096 by 4096x1024, a DDP backward GEMM of gpt_ref.py) and "
                        "ddp_mix (that GEMM, a 32 MiB and an 8 MiB add, a 1024-deep GEMM: "
                        "a backward's alternation of short GEMMs and memory-bound kernels)")
    p.add_argument("--comms", default="16,256", help="all-reduce sizes in MiB, comma-separated")
    p.add_argument("--tag", default="", help="suffix of the CSV's name")
    p.add_argument("--cover", type=float, default=0.0,
                   help="issue at least this many times the all-reduce batch's time of compute "
                        "beside it, so every all-reduce runs wholly beside compute")
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
    for mib in (8, 64, 256):
        x = torch.randn(mib << 18, device=dev)
        y = torch.randn(mib << 18, device=dev)
        z = torch.empty_like(x)
        computes[f"add_fp32_{mib}MiB"] = (lambda x=x, y=y, z=z: torch.add(x, y, out=z))
    ga = torch.randn(8192, 4096, dtype=torch.bfloat16, device=dev)
    gb = torch.randn(4096, 1024, dtype=torch.bfloat16, device=dev)
    gc = torch.empty(8192, 1024, dtype=torch.bfloat16, device=dev)
    gd = torch.randn(1024, 1024, dtype=torch.bfloat16, device=dev)
    computes["gemm_bf16_ddp"] = lambda: torch.mm(ga, gb, out=gc)
    x8, y8 = torch.randn(8 << 18, device=dev), torch.randn(8 << 18, device=dev)
    x32, y32 = torch.randn(32 << 18, device=dev), torch.randn(32 << 18, device=dev)
    z8, z32, ge = torch.empty_like(x8), torch.empty_like(x32), torch.empty_like(gc)

    def ddp_mix():
        torch.mm(ga, gb, out=gc)
        torch.add(x32, y32, out=z32)
        torch.add(x8, y8, out=z8)
        torch.mm(gc, gd, out=ge)
    computes["ddp_mix"] = ddp_mix
    wanted = args.computes.split(",")
    unknown = [c for c in wanted if c not in computes]
    if unknown:
        raise SystemExit(f"--computes: unknown {unknown}; expected some of {sorted(computes)}")
    computes = {c: computes[c] for c in wanted}
    comms = {}
    for mib in (int(v) for v in args.comms.split(",")):
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
            creps = args.reps
            if args.cover > 0:  # enough compute to run beside the whole all-reduce batch
                dist.barrier(); torch.cuda.synchronize()
                s, e = batch(cfn, args.reps, s_comp); e.synchronize()
                per_c = s.elapsed_time(e) / args.reps
                s, e = batch(kfn, args.reps, s_comm); e.synchronize()
                need = torch.tensor([args.cover * s.elapsed_time(e) / per_c], device=dev)
                dist.all_reduce(need, op=dist.ReduceOp.MAX)
                creps = max(args.reps, int(need.item()) + 1)
            for _ in range(3):
                dist.barrier(); torch.cuda.synchronize()
                s, e = batch(cfn, creps, s_comp); e.synchronize()
                alone_c.append(s.elapsed_time(e) / creps)
                dist.barrier(); torch.cuda.synchronize()
                s, e = batch(kfn, args.reps, s_comm); e.synchronize()
                alone_k.append(s.elapsed_time(e) / args.reps)
                dist.barrier(); torch.cuda.synchronize()
                sk, ek = batch(kfn, args.reps, s_comm)
                sc, ec = batch(cfn, creps, s_comp)
                torch.cuda.synchronize()
                tc, tk = sc.elapsed_time(ec), sk.elapsed_time(ek)
                tog_c.append(tc / creps)
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
        with open(os.path.join(args.out, f"interference_{n}gpu{args.tag}.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["compute", "comm", "world", "compute_alone_us", "compute_together_us",
                        "compute_slowdown", "comm_alone_us", "comm_together_us", "comm_slowdown",
                        "overlap"])
            w.writerows(rows)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
