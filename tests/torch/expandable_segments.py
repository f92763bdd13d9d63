"""The caching allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: its
segments grow through the driver's virtual memory calls (cuMemCreate / cuMemMap)."""
import torch

mib = 1 << 20
x = [torch.empty(256 * mib, dtype=torch.uint8, device="cuda") for _ in range(4)]
del x[1]
y = torch.empty(512 * mib, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
segments = torch.cuda.memory_snapshot()
print(f"segments={len(segments)}")
print(f"expandable={all(s['is_expandable'] for s in segments)}")
print(f"allocated={torch.cuda.memory_allocated()}")
print(f"max_allocated={torch.cuda.max_memory_allocated()}")
print(f"reserved={torch.cuda.memory_reserved()}")
print(f"max_reserved={torch.cuda.max_memory_reserved()}")
free, total = torch.cuda.mem_get_info()
print(f"used={total - free}")
