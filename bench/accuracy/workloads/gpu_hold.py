"""Holding a real GPU's stream so that the host gets ahead of it: `torch.cuda._sleep` takes
clock cycles, and how many make a millisecond depends on the GPU and its clocks."""

import torch


def sleep_cycles(ms, probe=50_000_000):
    """The `torch.cuda._sleep` argument that holds the current stream about \\p ms."""
    t = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    t[0].record()
    torch.cuda._sleep(probe)
    t[1].record()
    torch.cuda.synchronize()
    return int(probe / t[0].elapsed_time(t[1]) * ms)
