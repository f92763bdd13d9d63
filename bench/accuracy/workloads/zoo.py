# The public-model kernel zoo (issue 33, item 3): training steps of model code people
# actually run, built from a config with random weights (nothing is downloaded), on random
# data: Hugging Face transformers decoders (Llama, GPT-2, Qwen2, Mistral), an encoder
# (BERT, masked LM) and an encoder-decoder (T5), torchvision (ResNet, ViT) and timm
# (ConvNeXt, ViT) models, at several sizes, in bf16 / fp16 autocast (fp16 with a
# GradScaler), pure bf16 weights or fp32, with AdamW (foreach or fused) or SGD, as one
# process or under `torchrun --standalone --nproc_per_node N` with DDP or FSDP2.
#
# Recorded on a real GPU and timed for real by tools/device/record_zoo_on_device.sh; the
# same command simulates unmodified (it uses torch.cuda APIs only and reads nothing from
# disk or the network).  Prints one line `RESULT {json}` (rank 0), with the conventions of
# gpt_ref.py beside it: each step timed from a torch.cuda.synchronize() to the next with
# time.perf_counter (iter_s_*), and with CUDA events (iter_gpu_s_median); the peak of
# torch.cuda.max_memory_allocated(); the arguments.
#
#   python3 bench/accuracy/workloads/zoo.py --model llama --size s --dtype bf16 \
#       --optim adamw_fused --batch 8 --seq 1024 --steps 10 --warmup 3
#   torchrun --standalone --nproc_per_node 1 bench/accuracy/workloads/zoo.py --mode fsdp ...
#   python3 bench/accuracy/workloads/zoo.py --list          # the models and sizes
#   python3 bench/accuracy/workloads/zoo.py --device cpu --model t5 --size xs ...  # debug
"""Public-model training steps from configs, for profiling and whole-program accuracy."""
import argparse, json, os, time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

# Hugging Face models: family -> (config class, model class, {size: config kwargs}).
# Sizes follow published configurations where one exists (gpt2, gpt2-medium, gpt2-large,
# bert-base/large, t5-small/base, Qwen2-0.5B/1.5B); `xs` is a tiny one for CPU checks.
HF = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {
        "xs": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512),
        # ~134 M parameters
        "s": dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                  num_attention_heads=12, num_key_value_heads=12, vocab_size=32000),
        # ~0.5 B, grouped-query attention (head 128, 4 KV heads)
        "m": dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=16,
                  num_attention_heads=12, num_key_value_heads=4, vocab_size=32000),
        # ~0.89 B (head 128, 8 KV heads)
        "l": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                  num_attention_heads=16, num_key_value_heads=8, vocab_size=32000),
    }),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", {
        "xs": dict(n_embd=64, n_layer=2, n_head=4, vocab_size=512, bos_token_id=511,
                   eos_token_id=511),
        "s": dict(n_embd=768, n_layer=12, n_head=12),      # gpt2, 124 M
        "m": dict(n_embd=1024, n_layer=24, n_head=16),     # gpt2-medium, 355 M
        "l": dict(n_embd=1280, n_layer=36, n_head=20),     # gpt2-large, 774 M
    }),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {
        "xs": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512),
        # Qwen2-0.5B's shape (vocabulary 151936, tied embeddings)
        "s": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                  num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                  tie_word_embeddings=True),
        # Qwen2-1.5B's shape
        "m": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                  num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                  tie_word_embeddings=True),
    }),
    "mistral": ("MistralConfig", "MistralForCausalLM", {
        "xs": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512),
        # Mistral-7B's layer shape at a quarter of its width: 175 M (m: 785 M)
        "s": dict(hidden_size=1024, intermediate_size=3584, num_hidden_layers=8,
                  num_attention_heads=8, num_key_value_heads=2, vocab_size=32000),
        "m": dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=12,
                  num_attention_heads=16, num_key_value_heads=4, vocab_size=32000),
    }),
    "bert": ("BertConfig", "BertForMaskedLM", {
        "xs": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, vocab_size=512),
        "s": dict(),                                                  # bert-base, 110 M
        "m": dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                  num_attention_heads=16),                            # bert-large, 335 M
    }),
    "t5": ("T5Config", "T5ForConditionalGeneration", {
        "xs": dict(d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4, vocab_size=512),
        "s": dict(d_model=512, d_ff=2048, d_kv=64, num_layers=6, num_heads=8),    # t5-small
        "m": dict(d_model=768, d_ff=3072, d_kv=64, num_layers=12, num_heads=12),  # t5-base
    }),
}
# Vision models: family -> {size: (library, constructor name)}.
VISION = {
    "resnet": {"xs": ("torchvision", "resnet18"), "s": ("torchvision", "resnet18"),
               "m": ("torchvision", "resnet50"), "l": ("torchvision", "resnet101")},
    "vit": {"xs": ("torchvision", "vit_b_32"), "s": ("torchvision", "vit_b_16"),
            "m": ("torchvision", "vit_l_16")},
    "convnext": {"xs": ("timm", "convnext_atto"), "s": ("timm", "convnext_tiny"),
                 "m": ("timm", "convnext_small"), "l": ("timm", "convnext_base")},
    "timm_vit": {"xs": ("timm", "vit_tiny_patch16_224"), "s": ("timm", "vit_small_patch16_224"),
                 "m": ("timm", "vit_base_patch16_224")},
}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "bf16w": torch.bfloat16,
          "fp32": torch.float32}


def build_hf(family, size, args):
    import transformers
    cfg_name, model_name, sizes = HF[family]
    kw = dict(sizes[size])
    if family in ("llama", "qwen2", "mistral"):
        kw.setdefault("max_position_embeddings", max(args.seq, 2048))
    if family == "gpt2":
        kw.setdefault("n_positions", max(args.seq, 1024))
    if family == "bert":
        kw.setdefault("max_position_embeddings", max(args.seq, 512))
    if family == "t5":  # the published T5 tokens (labels shift right from the pad token)
        kw.update(decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    if args.attn:
        kw["attn_implementation"] = args.attn
    cfg = getattr(transformers, cfg_name)(**kw)
    model = getattr(transformers, model_name)(cfg)
    return model, f"transformers.{model_name}", cfg._attn_implementation


def build_vision(family, size, image):
    lib, name = VISION[family][size]
    kw = {}
    if lib == "torchvision":
        import torchvision
        if family == "vit":  # a ViT's position table is sized for one image side
            kw["image_size"] = image
        return getattr(torchvision.models, name)(weights=None, **kw), f"torchvision.{name}", ""
    import timm
    if family == "timm_vit":
        kw["img_size"] = image
    return timm.create_model(name, pretrained=False, **kw), f"timm.{name}", ""


def blocks(model):
    """The repeated blocks FSDP2 shards one by one (then the whole model): the members of
    the outermost ModuleLists (a T5 block's own list of layers is not one of them), else
    the Sequential stages of torchvision (ResNet's layer1..4, ViT's encoder.layers) and
    timm (a ViT's blocks, a ConvNeXt's stages)."""
    found, outer = [], []
    for name, m in model.named_modules():
        if isinstance(m, nn.ModuleList) and len(m) > 1 and \
                not any(name.startswith(o + ".") for o in outer):
            outer.append(name)
            found.extend(m)
    if not found:
        for name, m in model.named_modules():
            if isinstance(m, nn.Sequential) and (
                    (name.startswith("layer") and "." not in name) or
                    name in ("encoder.layers", "blocks", "stages")):
                found.extend(m)
    return found


def make_batch(family, args, dev, vocab):
    b, L = args.batch, args.seq
    g = torch.Generator(device=dev).manual_seed(0)
    if family in VISION:
        x = torch.randn(b, 3, L, L, device=dev, generator=g)
        if args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (b,), device=dev, generator=g)
        return dict(x=x, y=y)
    ids = torch.randint(0, vocab, (b, L), device=dev, generator=g)
    if family == "bert":  # masked LM: 15 % of the positions carry a label
        keep = torch.rand(b, L, device=dev, generator=g) < 0.15
        return dict(input_ids=ids, labels=torch.where(keep, ids, torch.full_like(ids, -100)))
    if family == "t5":  # a summary a quarter of the input's length
        tgt = torch.randint(0, vocab, (b, max(L // 4, 8)), device=dev, generator=g)
        return dict(input_ids=ids, labels=tgt)
    return dict(input_ids=ids, labels=ids)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="llama", choices=sorted(HF) + sorted(VISION))
    p.add_argument("--size", default="s", help="xs s m l (--list)")
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES),
                   help="bf16/fp16: autocast over fp32 weights (fp16 with a GradScaler); "
                        "bf16w: the model's weights in bf16, no autocast; fp32")
    p.add_argument("--optim", default="adamw_fused", choices=["adamw_foreach", "adamw_fused", "sgd"])
    p.add_argument("--mode", default="single", choices=["single", "ddp", "fsdp"])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=None,
                   help="tokens per sample (language models, default 1024) or image side "
                        "(vision, default 224)")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--channels-last", action="store_true", help="vision: NHWC model and input")
    p.add_argument("--attn", default="", help="transformers attn_implementation (default: theirs)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a debug run")
    p.add_argument("--list", action="store_true")
    p.add_argument("--tag", default="")
    p.add_argument("--compile", default="", choices=["", "default", "max-autotune"],
                   help="torch.compile the model in this mode (before DDP or FSDP wrap it)")
    a = p.parse_args()
    if a.list:
        for fam, (_, cls, sizes) in HF.items():
            print(fam, cls, " ".join(sizes))
        for fam, sizes in VISION.items():
            print(fam, " ".join(f"{s}={lib}.{n}" for s, (lib, n) in sizes.items()))
        return
    family = a.model
    sizes = HF[family][2] if family in HF else VISION[family]
    if a.size not in sizes:
        p.error(f"--model {family}: sizes are {' '.join(sizes)}")
    if a.seq is None:
        a.seq = 224 if family in VISION else 1024
    if a.mode == "fsdp" and a.dtype == "fp16":
        p.error("--mode fsdp: bf16, bf16w or fp32 (fp16 needs a sharded grad scaler)")
    cuda = a.device == "cuda"

    distributed = a.mode != "single"
    if distributed:
        dist.init_process_group("nccl" if cuda else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    local = int(os.environ.get("LOCAL_RANK", 0))
    if cuda:
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    torch.manual_seed(0)
    dt = DTYPES[a.dtype]
    with dev:  # weights made (and initialised) where they train
        if family in HF:
            model, arch, attn = build_hf(family, a.size, a)
        else:
            model, arch, attn = build_vision(family, a.size, a.seq)
    model.train()
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if a.dtype == "bf16w":
        model = model.to(torch.bfloat16)
    nparams = sum(q.numel() for q in model.parameters())
    vocab = getattr(getattr(model, "config", None), "vocab_size", 1000)
    if a.compile:
        # torch.compile(DDP(model)) breaks the graph at DDP's logger (torch 2.11) and leaves
        # the wrapped module uncompiled: compiled first, wrapped after (the blocks FSDP2
        # shards are the compiled module's own).
        model = torch.compile(model, mode=a.compile)
    if a.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local] if cuda else None)
    elif a.mode == "fsdp":
        # Checked on CPU (gloo, 2 ranks) for every transformers family, torchvision's ViT
        # and timm's models; a torchvision ResNet in bf16 fails there ("expected scalar
        # type BFloat16 but found Float"), untried on a GPU: no zoo cell runs one.
        from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
        mp = (MixedPrecisionPolicy(param_dtype=dt, reduce_dtype=torch.float32)
              if a.dtype == "bf16" else MixedPrecisionPolicy())
        for blk in blocks(model):
            fully_shard(blk, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    params = [q for q in model.parameters() if q.requires_grad]
    if a.optim == "sgd":
        opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    else:
        opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01,
                                foreach=(a.optim == "adamw_foreach"),
                                fused=(a.optim == "adamw_fused"))
    # Autocast over fp32 weights for bf16 and fp16 (FSDP2 casts through its policy instead)
    autocast = a.dtype in ("bf16", "fp16") and a.mode != "fsdp"
    scaler = torch.amp.GradScaler(dev.type) if a.dtype == "fp16" else None
    batch = make_batch(family, a, dev, vocab)

    def step():
        with torch.autocast(dev.type, dtype=dt, enabled=autocast):
            if family in VISION:
                loss = F.cross_entropy(model(batch["x"]).float(), batch["y"])
            else:
                loss = model(**batch).loss
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=True)

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    times, ev, warm = [], [], []
    for i in range(a.warmup + a.steps):
        sync()
        t0 = time.perf_counter()
        if cuda:
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
        step()
        if cuda:
            e.record()
        sync()
        t1 = time.perf_counter()
        if i < a.warmup:
            warm.append(t1 - t0)  # the first holds a compiled model's compilation
        else:
            times.append(t1 - t0)
            ev.append(s.elapsed_time(e) / 1e3 if cuda else 0.0)
    order = sorted(times)
    ev.sort()
    med = order[len(order) // 2]

    def version(mod):
        try:
            return __import__(mod).__version__
        except Exception:
            return ""

    res = dict(
        tag=a.tag, program="zoo.py", model=family, size=a.size, arch=arch, attn=attn,
        dtype=a.dtype, optim=a.optim, mode=a.mode, world=world, batch=a.batch, seq=a.seq,
        channels_last=a.channels_last, steps=a.steps, warmup=a.warmup, params=nparams,
        compile=a.compile, warmup_s=warm,
        step_ms_median=med * 1e3,
        iter_s_median=med, iter_s_min=order[0], iter_s_max=order[-1],
        iter_gpu_s_median=ev[len(ev) // 2], iter_s=times,
        tokens_per_s=(a.batch * world * (1 if family in VISION else a.seq)) / med,
        peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30 if cuda else 0.0,
        peak_reserved_gib=torch.cuda.max_memory_reserved() / 2**30 if cuda else 0.0,
        gpu=torch.cuda.get_device_name() if cuda else "cpu", torch=torch.__version__,
        transformers=version("transformers") if family in HF else "",
        vision=version(VISION[family][a.size][0]) if family in VISION else "",
        nccl=".".join(map(str, torch.cuda.nccl.version())) if distributed and cuda else "",
    )
    if rank == 0:
        print("RESULT " + json.dumps(res), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
