"""A self-contained ResNet-style CNN training script: random images, no downloads.

Runs as it would on real GPUs (python train_cnn.py, or torchrun for several ranks),
and unchanged under the simulator:

    phantora-cluster --scenario scenarios/h200x4-nvlink.toml --nproc 4 -- \
        build/venv/bin/python examples/torch/train_cnn.py --mode ddp --channels-last

Convolutions go through cuDNN's graph API, batch norm through cuDNN's batch-norm calls,
ReLU, pooling and the head through PyTorch's own kernels and cuBLAS.  Every number it
prints comes from the program's own timers and torch's allocator statistics, so under
the simulator they describe the simulated cluster.
"""

import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width", type=int, default=64, help="channels of the first stage")
    p.add_argument("--blocks", type=int, nargs="+", default=[2, 2, 2, 2],
                   help="residual blocks per stage (each stage halves the resolution and "
                        "doubles the channels)")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--batch", type=int, default=32, help="micro-batch per rank")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1, help="steps left out of the averages")
    p.add_argument("--mode", choices=["single", "ddp"], default="single")
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16",
                   help="autocast dtype of the forward and backward (parameters stay fp32)")
    p.add_argument("--channels-last", action="store_true",
                   help="NHWC activations and weights (torch.channels_last)")
    p.add_argument("--benchmark", action="store_true",
                   help="torch.backends.cudnn.benchmark: time cuDNN's candidate engines first")
    return p.parse_args(argv)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    def __init__(self, args):
        super().__init__()
        w = args.width
        self.stem = nn.Sequential(nn.Conv2d(3, w, 7, stride=2, padding=3, bias=False),
                                  nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        stages, cin = [], w
        for i, n in enumerate(args.blocks):
            cout = w * 2**i
            for j in range(n):
                stages.append(BasicBlock(cin, cout, 2 if (j == 0 and i > 0) else 1))
                cin = cout
        self.stages = nn.Sequential(*stages)
        self.head = nn.Linear(cin, args.classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def distributed_setup(mode):
    """init_process_group("nccl") from the launcher's environment (torchrun or
    phantora-cluster set RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)."""
    if mode == "single":
        return 0, 1, 0
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    return dist.get_rank(), dist.get_world_size(), local_rank


def main(argv=None):
    args = parse_args(argv)
    if args.image_size < 32:
        sys.exit("--image-size must be at least 32")
    torch.backends.cudnn.benchmark = args.benchmark
    rank, world, local_rank = distributed_setup(args.mode)
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    torch.manual_seed(1234 + rank)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format

    model = ResNet(args).to(device, memory_format=memory_format)
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model, device_ids=[local_rank])
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    amp = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    images_per_step = args.batch * world
    if rank == 0:
        props = torch.cuda.get_device_properties(device)
        print(f"model: ResNet blocks {args.blocks}, width {args.width}, "
              f"{args.image_size}x{args.image_size} images, batch {args.batch}/rank, "
              f"{params / 1e6:.1f} M parameters/rank, {args.dtype}, "
              f"{'channels_last' if args.channels_last else 'NCHW'}, mode {args.mode}, "
              f"{world} ranks on {props.name}", flush=True)

    times = []
    for step in range(args.steps):
        images = torch.randn(args.batch, 3, args.image_size, args.image_size, device=device)
        images = images.contiguous(memory_format=memory_format)
        labels = torch.randint(0, args.classes, (args.batch,), device=device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=amp, enabled=amp != torch.float32):
            loss = F.cross_entropy(model(images).float(), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss_value = loss.item()  # a device-to-host read, as real scripts log it
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if rank == 0:
            print(f"step {step}: {elapsed * 1e3:.3f} ms, {images_per_step / elapsed:,.0f} images/s, "
                  f"loss {loss_value:.4f}", flush=True)

    measured = times[args.warmup:] or times
    mean = sum(measured) / len(measured)
    peak_allocated = torch.cuda.max_memory_allocated(device)
    peak_reserved = torch.cuda.max_memory_reserved(device)
    print(f"rank {rank}: mean step {mean * 1e3:.3f} ms, {images_per_step / mean:,.0f} images/s, "
          f"peak memory allocated {peak_allocated} bytes ({peak_allocated / 2**20:.1f} MiB), "
          f"reserved {peak_reserved} bytes ({peak_reserved / 2**20:.1f} MiB)", flush=True)
    if args.mode != "single":
        import torch.distributed as dist

        dist.destroy_process_group()
    assert math.isfinite(mean)


if __name__ == "__main__":
    main()
