#!/usr/bin/env python3
"""Writes GEMMs whose leading dimensions are not multiples of 8 elements (16 bytes) as a
missing-ops file for `gpu_profiler replay`: cuBLAS cannot give those its Hopper kernels
(TMA needs 16-byte-aligned strides) and falls back to slower ones, by how far the
alignment drops (4, 2 or 1 elements).  A language model's head over an odd vocabulary is
the common case (GPT-2's 50257, BERT's 30522: the zoo measured them at 96 and 237 TFLOP/s
on an H200 against 740 for aligned GEMMs of their size).  The zoo's own vocabularies are
left out on purpose, so that the zoo stays a held-out check of what these teach the
estimator.  nn.Linear in cuBLAS terms as make_transformer_gemms.py: forward m=out n=T k=in
op=TN; input gradient m=in n=T k=out op=NN; weight gradient m=in n=out k=T op=NT.

    python3 profiles/replay/make_unaligned_gemms.py > profiles/replay/unaligned_gemms.json
"""
import json

TOKENS = 8192
# (in, out): vocabulary heads and a hidden-size projection, each at alignment 1, 2, 4, 8
LINEARS = [(i, o + d) for i in (768, 2048) for o in (32000,) for d in (1, 2, 4, 0)] + \
          [(1024, 4096 + d) for d in (1, 2, 4, 0)]


def gemms():
    for (i, o) in LINEARS:
        for (m, n, k, op) in ((o, TOKENS, i, "TN"), (i, TOKENS, o, "NN"), (i, o, TOKENS, "NT")):
            for dtype in ("bf16", "f16"):
                yield {"kind": "gemm",
                       "name": f"cublasGemmEx(m={m},n={n},k={k},op={op},a={dtype},b={dtype},c={dtype},batch=1)"}


if __name__ == "__main__":
    ops = list(gemms())
    print('{"ops": [')
    print(",\n".join(" " + json.dumps(o) for o in ops))
    print("]}")
