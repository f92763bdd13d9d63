"""A training step captured in a CUDA graph and replayed: an MLP's forward, backward and
SGD step, with a data-parallel all-reduce of the gradients inside the capture.

Runs as is on a real GPU (torchrun --nproc-per-node N, or python for one rank) and under
phantora-cluster; it prints one line per step, "step S: T ms" (rank 0), then the mean.
The capture follows PyTorch's recipe (docs: "CUDA Graphs", whole-network capture): a few
eager warm-up iterations on a side stream, static input and target tensors, then
torch.cuda.graph(g) around one step, and g.replay() per step after copying the batch in.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width", type=int, default=1024, help="hidden size")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=1, help="replays left out of the mean")
    p.add_argument("--no-allreduce", action="store_true",
                   help="leave the gradient all-reduce out (one rank without NCCL)")
    return p.parse_args()


def main():
    args = parse_args()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    allreduce = not args.no_allreduce
    if allreduce:
        dist.init_process_group("nccl", device_id=device)

    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    loss_fn = torch.nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    static_input = torch.randn(args.batch, args.width, device=device)
    static_target = torch.randn(args.batch, args.width, device=device)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(static_input), static_target)
        loss.backward()
        if allreduce:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad.div_(world)
        opt.step()
        return loss

    # Warm-up on a side stream, as PyTorch's docs show: the allocator, cuBLAS workspaces
    # and NCCL's communicator are set up before the capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step()

    batches = [(torch.randn(args.batch, args.width, device=device),
                torch.randn(args.batch, args.width, device=device)) for _ in range(2)]
    times = []
    for s in range(args.steps):
        x, y = batches[s % len(batches)]
        torch.cuda.synchronize()
        start = time.perf_counter()
        static_input.copy_(x)
        static_target.copy_(y)
        graph.replay()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if rank == 0:
            print(f"step {s}: {elapsed * 1e3:.3f} ms", flush=True)
    kept = times[args.warmup:] or times
    mean = sum(kept) / len(kept)
    print(f"rank {rank}: mean step {mean * 1e3:.3f} ms over {len(kept)} replays, "
          f"loss {static_loss.item():.4f}", flush=True)
    if allreduce:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
