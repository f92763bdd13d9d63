"""torch.profiler around simulated GPU work: the script must run on and the profile
complete with its CPU-side ops (CUPTI cannot start on a simulated GPU, so there is no GPU
activity).  Prints key=value lines for torch_test.cc."""
import torch
from torch.profiler import ProfilerActivity, profile

a = torch.ones(1024, 1024, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        b = a @ a
    torch.cuda.synchronize()
events = {e.key: e for e in prof.key_averages()}
print(f"mm_calls={events['aten::mm'].count if 'aten::mm' in events else 0}")
gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print(f"gpu_events={len(gpu)}")
