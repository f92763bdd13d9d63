"""Re-runs the cuDNN ops of a missing-ops file (phantora-cluster --missing) through PyTorch
on the GPU, so that libphantora_recorder.so records them under their signatures
(gpu_model/profile/cudnn_signature.h).  `gpu_profiler replay --python PY` runs it under the
recorder; on its own it only runs the ops.

A signature holds all PyTorch needs to rebuild the call: attention is
F.scaled_dot_product_attention on the cuDNN backend with q, k, v laid out as the
signature's layout says; a convolution is aten.convolution (forward) or
aten.convolution_backward (data or filter gradient) in the signature's memory format;
batch norm is F.batch_norm.  Backward passes run on this thread
(torch.autograd.set_multithreading_enabled(False)) so that the recorder's warm-up switch,
which is per thread, covers them.  What PyTorch cannot be made to call (a graph with a
fused epilogue, sequence-length padding, a batch-norm mode it does not pick) is skipped,
saying why; an op PyTorch runs under another signature than asked is recorded under the
one it ran, and reported.
"""

import argparse
import ctypes
import json
import sys

import torch
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
          "f64": torch.float64}


class Skip(Exception):
    pass


def parse(name):
    api, rest = name.split("(", 1)
    fields = dict(kv.split("=", 1) for kv in rest[:-1].split(","))
    return api, fields


def dims(text):
    return [int(d) for d in text.split("x")]


def dtype_of(fields):
    t = fields["type"]
    if t not in DTYPES:
        raise Skip(f"data type {t}")
    return DTYPES[t]


def attention(api, f, device):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b, h, hkv, sq, skv, dqk, dv = (int(f[k]) for k in ("b", "h", "h_kv", "s_q", "s_kv", "d_qk", "d_v"))
    if f["padding"] == "1":
        raise Skip("sequence-length padding (nested tensors)")
    dtype = dtype_of(f)
    layout = f["layout"]
    if sorted(layout) != sorted("bhsd"):
        raise Skip(f"layout {layout}")

    def make(heads, seq, d, grad):
        size = {"b": b, "h": heads, "s": seq, "d": d}
        t = torch.randn([size[c] for c in layout], device=device, dtype=dtype)
        t = t.permute([layout.index(c) for c in "bhsd"])  # logical (b, h, s, d)
        return t.requires_grad_(grad)

    backward = api == "cudnnSdpaBprop"
    grad = backward or f.get("stats") == "1"  # training keeps the softmax statistics
    q, k, v = make(h, sq, dqk, grad), make(hkv, skv, dqk, grad), make(hkv, skv, dv, grad)
    mask = None
    if f["bias"] == "1":
        mask = torch.randn(b, h, sq, skv, device=device, dtype=dtype)
    kwargs = dict(attn_mask=mask, dropout_p=0.1 if f["dropout"] == "1" else 0.0,
                  is_causal=f["causal"] == "1", enable_gqa=h != hkv)

    def forward():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, **kwargs)

    if not backward:
        if grad:
            return forward
        def inference():
            with torch.no_grad():
                return forward()
        return inference
    out = forward()  # once, in the warm-up: the backward pass is what is measured
    grad_out = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, (q, k, v), grad_out, retain_graph=True)


def convolution(api, f, device):
    if f["epilogue"] != "none":
        raise Skip(f"a fused epilogue ({f['epilogue']})")
    x, w, y = dims(f["x"]), dims(f["w"]), dims(f["y"])
    pad, stride, dilation = dims(f["pad"]), dims(f["stride"]), dims(f["dilation"])
    dtype = dtype_of(f)
    fmt = {"nhwc": torch.channels_last, "ndhwc": torch.channels_last_3d}.get(
        f["layout"], torch.contiguous_format)
    groups = x[1] // w[1]

    def make(shape):
        return torch.randn(shape, device=device, dtype=dtype).contiguous(memory_format=fmt)

    X, W, Y = make(x), make(w), make(y)
    zeros = [0] * len(pad)
    if api == "cudnnConvFprop":
        return lambda: torch.ops.aten.convolution(X, W, None, stride, pad, dilation, False,
                                                  zeros, groups)
    mask = [True, False, False] if api == "cudnnConvDgrad" else [False, True, False]
    return lambda: torch.ops.aten.convolution_backward(Y, X, W, None, stride, pad, dilation,
                                                       False, zeros, groups, mask)


def batch_norm(api, f, device):
    x = dims(f["x"])
    dtype = dtype_of(f)
    fmt = {"nhwc": torch.channels_last, "ndhwc": torch.channels_last_3d}.get(
        f["layout"], torch.contiguous_format)
    c = x[1]
    X = torch.randn(x, device=device, dtype=dtype).contiguous(memory_format=fmt)
    weight = torch.randn(c, device=device, requires_grad=True)
    bias = torch.randn(c, device=device, requires_grad=True)
    mean, var = torch.zeros(c, device=device), torch.ones(c, device=device)
    if api == "cudnnBatchNormFwdInference":
        return lambda: F.batch_norm(X, mean, var, weight, bias, training=False)
    if api == "cudnnBatchNormFwdTraining":
        return lambda: F.batch_norm(X, mean, var, weight, bias, training=True)
    X.requires_grad_(True)
    out = F.batch_norm(X, mean, var, weight, bias, training=True)
    grad_out = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, (X, weight, bias), grad_out, retain_graph=True)


BUILDERS = {"cudnnSdpaFprop": attention, "cudnnSdpaBprop": attention,
            "cudnnConvFprop": convolution, "cudnnConvDgrad": convolution,
            "cudnnConvWgrad": convolution, "cudnnBatchNormFwdTraining": batch_norm,
            "cudnnBatchNormFwdInference": batch_norm, "cudnnBatchNormBwd": batch_norm}


def recorder_discard():
    """The recorder's warm-up switch (absent when not recording): while on, what this
    thread puts on the GPU runs but is not saved."""
    try:
        return ctypes.CDLL(None).phantora_recorder_discard
    except AttributeError:
        return lambda on: None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("missing", help="missing-ops JSON (phantora-cluster --missing)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=20)
    a = p.parse_args(argv)
    with open(a.missing) as f:
        ops = [op for op in json.load(f)["ops"] if op.get("kind") == "cudnn"]
    device = torch.device("cuda")
    discard = recorder_discard()
    torch.autograd.set_multithreading_enabled(False)
    done = skipped = 0
    for op in ops:
        name = op["name"]
        try:
            api, fields = parse(name)
            if api not in BUILDERS:
                raise Skip(f"no way to run {api}")
            discard(1)
            try:
                run = BUILDERS[api](api, fields, device)
                for _ in range(a.warmup):
                    run()
                torch.cuda.synchronize()
            finally:
                discard(0)
            for _ in range(a.iterations):
                run()
            torch.cuda.synchronize()
            done += 1
        except (Skip, KeyError, ValueError, RuntimeError) as e:
            print(f"{name}: skipped: {e}", file=sys.stderr)
            skipped += 1
    print(f"replayed {done} cuDNN ops x {a.iterations} (after {a.warmup} warm-ups), "
          f"skipped {skipped}", file=sys.stderr)


if __name__ == "__main__":
    main()
