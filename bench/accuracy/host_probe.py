"""examples/torch/train_gpt.py's single-GPU training step with host-side timers (a
diagnostic for bench/accuracy: where a step's time goes, on a real GPU or simulated).

Builds the same model with the same flags (it imports train_gpt.py) and runs the same
step, and also reads, per step:
  issue_wall_ms  wall (under the simulator: simulated) time from the step's start until
                 loss.item() is called, i.e. while the host thread issues the step's work;
  issue_cpu_ms   the thread CPU time spent over that interval (time.thread_time: real CPU
                 time of this machine, also under the simulator);
  step_ms        the whole step, as train_gpt.py times it.
On a real GPU, issue_wall ~ issue_cpu when the host never waits for the GPU (CPU-bound),
and step ~ issue_wall + the GPU's remaining tail.  Prints one line per step and a
summary line 'probe: ...' with the means over the steps after --warmup.
Flags: train_gpt.py's (single mode only).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "torch"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import train_gpt  # noqa: E402


def main():
    args = train_gpt.parse_args()
    if args.mode != "single":
        sys.exit("host_probe.py: --mode single only")
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    torch.manual_seed(1234)
    model = train_gpt.GPT(args).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    amp = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    rows = []
    for step in range(args.steps):
        idx = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        cpu0 = time.thread_time()
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
        rows.append((elapsed, issue_wall, issue_cpu))
        print(f"step {step}: step {elapsed * 1e3:.3f} ms, issue wall {issue_wall * 1e3:.3f} ms, "
              f"issue cpu {issue_cpu * 1e3:.3f} ms", flush=True)
    m = rows[args.warmup:] or rows
    mean = [sum(r[i] for r in m) / len(m) * 1e3 for i in range(3)]
    print(f"probe: step_ms {mean[0]:.3f} issue_wall_ms {mean[1]:.3f} issue_cpu_ms {mean[2]:.3f} "
          f"steps {len(m)}", flush=True)


if __name__ == "__main__":
    main()
