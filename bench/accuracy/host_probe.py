"""examples/torch/train_gpt.py's training step with host-side timers and, optionally, the
PyTorch profiler (a diagnostic for bench/accuracy: where a step's time goes, on a real GPU
or simulated).

Builds the same model with the same flags (it imports train_gpt.py; --mode single, ddp or
fsdp, the last two under torchrun or phantora-cluster) and runs the same step, and also
reads, per step:
  issue_wall_ms  wall (under the simulator: simulated) time from the step's start until
                 loss.item() is called, i.e. while the host thread issues the step's work;
  issue_cpu_ms   the main thread's CPU time over that interval (time.thread_time: real CPU
                 time of this machine, also under the simulator);
  proc_cpu_ms    the CPU time of all the process's threads over the whole step
                 (time.process_time): autograd's device thread runs the backward pass, and
                 NCCL and ProcessGroupNCCL keep threads of their own;
  step_ms        the whole step, as train_gpt.py times it.
On a real GPU, issue_wall ~ issue_cpu when the host never waits for the GPU (CPU-bound),
and step ~ issue_wall + the GPU's remaining tail.  Prints one line per step and a
summary line 'probe: ...' with the means over the steps after --warmup.

--profile-steps K: after those steps, K more steps run under torch.profiler (CPU
activity, plus CUDA with --profile-cuda) and the probe prints the ops' self CPU time per
step (top --profile-rows), the CPU time per thread, and with CUDA the GPU kernel time per
step; --profile-trace FILE writes the Chrome trace too.
"""

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "torch"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import train_gpt  # noqa: E402


def probe_args():
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--profile-steps", type=int, default=0)
    p.add_argument("--profile-cuda", action="store_true")
    p.add_argument("--profile-rows", type=int, default=40)
    p.add_argument("--profile-trace", default="")
    return p.parse_known_args()


def run_step(model, optimizer, args, device, amp):
    idx = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device)
    torch.cuda.synchronize()
    start = time.perf_counter()
    cpu0 = time.thread_time()
    proc0 = time.process_time()
    with torch.autocast("cuda", dtype=amp, enabled=amp != torch.float32), \
            train_gpt.attention_backend(args.attention):
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), idx[:, 1:].reshape(-1))
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    issue_wall = time.perf_counter() - start
    issue_cpu = time.thread_time() - cpu0
    loss.item()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    proc_cpu = time.process_time() - proc0
    return elapsed, issue_wall, issue_cpu, proc_cpu


def print_profile(prof, steps, rows, cuda):
    per = 1e3 * steps  # profiler times are us; print ms per step
    events = prof.key_averages()
    print(f"profile: {steps} steps; ops by self CPU time, ms per step")
    print(f"{'self_cpu_ms':>11} {'calls':>7}  op")
    for e in sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:rows]:
        print(f"{e.self_cpu_time_total / per:11.4f} {e.count / steps:7.1f}  {e.key[:110]}")
    by_thread = collections.Counter()
    for e in prof.events():
        by_thread[e.thread] += e.self_cpu_time_total
    for tid, us in by_thread.most_common():
        print(f"profile: thread {tid} self_cpu_ms_per_step {us / per:.3f}")
    if cuda:
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        total = sum(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
                    for e in kernels)
        print(f"profile: gpu_ops_per_step {len(kernels) / steps:.1f} gpu_ms_per_step {total / per:.3f}")


def main():
    pargs, rest = probe_args()
    args = train_gpt.parse_args(rest)
    rank, world, local_rank = train_gpt.distributed_setup(args.mode)
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    torch.manual_seed(1234 + rank)
    model = train_gpt.wrap(train_gpt.GPT(args).to(device), args.mode, local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    amp = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    rows = []
    for step in range(args.steps):
        r = run_step(model, optimizer, args, device, amp)
        rows.append(r)
        if rank == 0:
            print(f"step {step}: step {r[0] * 1e3:.3f} ms, issue wall {r[1] * 1e3:.3f} ms, "
                  f"issue cpu {r[2] * 1e3:.3f} ms, process cpu {r[3] * 1e3:.3f} ms", flush=True)
    m = rows[args.warmup:] or rows
    mean = [sum(r[i] for r in m) / len(m) * 1e3 for i in range(4)]
    if rank == 0:
        print(f"probe: step_ms {mean[0]:.3f} issue_wall_ms {mean[1]:.3f} issue_cpu_ms {mean[2]:.3f} "
              f"steps {len(m)} proc_cpu_ms {mean[3]:.3f} mode {args.mode}", flush=True)
    if pargs.profile_steps > 0:
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if pargs.profile_cuda else [])
        with profile(activities=acts) as prof:
            prow = [run_step(model, optimizer, args, device, amp) for _ in range(pargs.profile_steps)]
        if rank == 0:
            pm = [sum(r[i] for r in prow) / len(prow) * 1e3 for i in range(4)]
            print(f"profile: under the profiler step_ms {pm[0]:.3f} issue_wall_ms {pm[1]:.3f} "
                  f"issue_cpu_ms {pm[2]:.3f} proc_cpu_ms {pm[3]:.3f}", flush=True)
            print_profile(prof, pargs.profile_steps, pargs.profile_rows, pargs.profile_cuda)
            if pargs.profile_trace:
                prof.export_chrome_trace(pargs.profile_trace)
    if args.mode != "single":
        import torch.distributed as dist

        dist.destroy_process_group()


if __name__ == "__main__":
    main()
