"""The achieved bandwidth of memory-bound kernels by working-set size, on a real GPU: what a
GPU predicted from another's profile scales its memory-bound kernels by
(gpu_model/gpu_prediction.h: the HBM datasheet ratio).  Between the H100 and the H200 the
measured profiles show such kernels sped up by about 1.2 where the datasheets say 1.43
(docs/predicted-gpus.md); this tells whether the L2 explains it (working sets under the
L2's 50 MB served from it, at a rate HBM does not change) or the HBM's reachable share.

    python3 bench/predict/memory_bound_sizes.py [--reps 50]      (one GPU, torch)

Prints one JSON line per size and kernel: bytes moved, median time (CUDA events over --reps
back-to-back launches, after warm-up), GB/s; for a copy (read + write), an in-place
multiply, and a copy whose source was just written by the multiply (its bytes warm in L2).
"""
import argparse
import json
import statistics

import torch


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # us
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=50)
    args = p.parse_args()
    props = torch.cuda.get_device_properties(0)
    print(json.dumps({"gpu": props.name, "sms": props.multi_processor_count,
                      "l2_bytes": getattr(props, "L2_cache_size", None), "torch": torch.__version__}))
    for mib in (1, 4, 8, 16, 24, 32, 48, 64, 128, 256, 1024, 4096):
        n = mib * 2**20 // 2  # bf16 elements of one tensor
        x = torch.empty(n, dtype=torch.bfloat16, device="cuda").normal_()
        y = torch.empty_like(x)
        cases = {
            "copy": (lambda: y.copy_(x), 2 * x.nbytes),
            "mul_inplace": (lambda: x.mul_(1.0001), 2 * x.nbytes),
            "copy_after_write": (lambda: (x.mul_(1.0001), y.copy_(x)), 4 * x.nbytes),
        }
        for name, (fn, moved) in cases.items():
            us = timed(fn, args.reps)
            print(json.dumps({"tensor_mib": mib, "kernel": name, "bytes": moved, "median_us": round(us, 3),
                              "gb_per_s": round(moved / us / 1e3, 1)}), flush=True)
        del x, y
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
