#!/usr/bin/env python3
"""A small GPT trained for a few steps in bf16 autocast, for `gpu_profiler record`:
it makes PyTorch launch the kernels a GPT training step uses (embedding, layer norm,
fused attention, GELU, cross-entropy, AdamW, ...) and issue its cuBLAS/cuBLASLt
GEMMs, so their names and launch shapes reach the profile.  Sizes come from the
command line: --hidden H --layers L --heads N --seq S --batch B --steps K."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
        q, k, v = (z.view(b, t, self.heads, h // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, seq, h, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, h)
        self.pos = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--steps", type=int, default=5)
    a = p.parse_args()
    torch.manual_seed(0)
    model = Gpt(a.vocab, a.seq, a.hidden, a.layers, a.heads).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda")
    for step in range(a.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(data[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, a.vocab), data[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"hidden {a.hidden} layers {a.layers}: loss {loss.item():.3f} after {a.steps} steps")


if __name__ == "__main__":
    main()
