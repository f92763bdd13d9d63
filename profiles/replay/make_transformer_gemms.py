#!/usr/bin/env python3
"""Writes the GEMM signatures of GPT-style training (forward, input-gradient and
weight-gradient GEMMs of the QKV, attention-output and MLP projections) as a
missing-ops file for `gpu_profiler replay`, named exactly as the interposer names
cuBLAS/cuBLASLt calls.  PyTorch's nn.Linear y = x W^T (+ b) in column-major cuBLAS
terms: forward m=out n=T k=in op=TN; input gradient m=in n=T k=out op=NN; weight
gradient m=in n=out k=T op=NT (T = batch x sequence tokens)."""
import json
import sys

HIDDEN = [768, 1024, 1536, 2048, 2560, 4096, 5120, 8192]
TOKENS = [2048, 8192]
TP = [1, 2, 4, 8]  # tensor-parallel shards of the column/row-parallel layers


def linears(h, tp):
    """(in, out) of each projection of one block, sharded tp ways (Megatron style)."""
    return {(h, 3 * h // tp), (h // tp, h), (h, 4 * h // tp), (4 * h // tp, h)}


def gemms():
    seen = set()
    for h in HIDDEN:
        for t in TOKENS:
            for tp in TP:
                if h // tp < 256:
                    continue
                for (i, o) in linears(h, tp):
                    for (m, n, k, op) in ((o, t, i, "TN"), (i, t, o, "NN"), (i, o, t, "NT")):
                        for dtype in ("bf16", "f16"):
                            seen.add(("cublasGemmEx", m, n, k, op, dtype, None))
                            if dtype == "bf16":
                                seen.add(("cublasLtMatmul", m, n, k, op, dtype, 1))
                                if op == "TN":
                                    seen.add(("cublasLtMatmul", m, n, k, op, dtype, 4))
    for (api, m, n, k, op, dt, epi) in sorted(seen, key=lambda g: (g[0], g[5], g[1], g[2], g[3], g[4], g[6] or 0)):
        name = f"{api}(m={m},n={n},k={k},op={op},a={dt},b={dt},c={dt},batch=1"
        name += f",epilogue={epi})" if epi is not None else ")"
        yield {"kind": "gemm", "name": name}


ops = list(gemms())
json.dump({"ops": ops}, sys.stdout, indent=1)
print(f"{len(ops)} GEMMs", file=sys.stderr)
