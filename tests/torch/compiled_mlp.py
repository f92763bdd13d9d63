"""torch.compile (Inductor -> Triton, default mode) of a small MLP trained with AdamW in
bf16 autocast, on one rank or several (DDP when WORLD_SIZE > 1).  Prints one
`step N ms X` line per step, timed on the simulated clock, for torch_test.cc."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--width", type=int, default=256)
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--mode", default="default")
args = parser.parse_args()

world = int(os.environ.get("WORLD_SIZE", "1"))
rank = int(os.environ.get("RANK", "0"))
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
if world > 1:
    dist.init_process_group("nccl")

torch.manual_seed(0)
model = nn.Sequential(
    *[nn.Sequential(nn.Linear(args.width, args.width), nn.GELU()) for _ in range(4)]
).cuda()
# Compiled, then wrapped: torch.compile(DDP(model)) breaks the graph at DDP's logger
# (torch 2.11) and leaves the module it wraps uncompiled.
compiled = torch.compile(model, mode=args.mode)
if world > 1:
    compiled = nn.parallel.DistributedDataParallel(compiled)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(args.batch, args.width, device="cuda")


def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = compiled(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


for i in range(args.steps):
    torch.cuda.synchronize()
    start = time.perf_counter()
    step()
    torch.cuda.synchronize()
    print(f"step {i} ms {(time.perf_counter() - start) * 1e3:.3f}", flush=True)
if world > 1:
    dist.destroy_process_group()
