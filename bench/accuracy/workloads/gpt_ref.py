# Reference script of the multi-GPU accuracy measurements (bench/accuracy, suite gpt_ref).
# Copied unchanged, apart from this header, from the project's shared reference data
# (h200x4-nvlink/training/gpt_ref.py, measured 2026-11-22 on 4 x H200 with NVLink):
# bench/accuracy/real/H200x4-gpt_ref.json holds what it printed there. Keep it unchanged,
# so that the simulated runs execute exactly the program the real numbers come from.
"""Ground-truth workload: a plain-PyTorch GPT trained with DDP or FSDP2.

Run with torchrun. Prints one JSON line per run with the steady-state
iteration time measured with CUDA events and wall clock, and peak memory.
Used to compare a simulator's estimate against a real multi-GPU run.
"""
import argparse, json, math, os, time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, h, ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)
        self.h = h

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.h, d // self.h).transpose(1, 2)
        k = k.view(b, t, self.h, d // self.h).transpose(1, 2)
        v = v.view(b, t, self.h, d // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x


class GPT(nn.Module):
    def __init__(self, vocab, d, h, layers, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList([Block(d, h, 4 * d) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ddp", "fsdp", "single"], default="ddp")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--tag", default="")
    a = p.parse_args()

    distributed = a.mode != "single"
    if distributed:
        dist.init_process_group("nccl")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    torch.manual_seed(0)
    model = GPT(a.vocab, a.dim, a.heads, a.layers, a.seq).cuda()
    nparams = sum(p.numel() for p in model.parameters())
    if a.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local])
    elif a.mode == "fsdp":
        from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for blk in model.blocks:
            fully_shard(blk, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    y = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")

    times = []
    ev = []
    for step in range(a.warmup + a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(a.mode != "fsdp")):
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, a.vocab).float(), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        e.record()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        if step >= a.warmup:
            times.append(t1 - t0)
            ev.append(s.elapsed_time(e) / 1e3)
    times.sort()
    ev.sort()
    tokens = a.batch * a.seq * world
    res = dict(
        tag=a.tag, mode=a.mode, world=world, layers=a.layers, d=a.dim, heads=a.heads,
        vocab=a.vocab, seq=a.seq, batch=a.batch, params=nparams,
        iter_s_median=times[len(times) // 2], iter_s_min=times[0], iter_s_max=times[-1],
        iter_gpu_s_median=ev[len(ev) // 2],
        tokens_per_s=tokens / times[len(times) // 2],
        peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30,
        peak_reserved_gib=torch.cuda.max_memory_reserved() / 2**30,
        gpu=torch.cuda.get_device_name(), torch=torch.__version__,
        nccl=".".join(map(str, torch.cuda.nccl.version())) if distributed else "",
    )
    if rank == 0:
        print("RESULT " + json.dumps(res), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
