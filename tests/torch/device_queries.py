"""What an unmodified script sees of the simulated GPU, printed as key=value lines
for torch_test.cc to compare with the scenario."""
import time

import torch

props = torch.cuda.get_device_properties(0)
free, total = torch.cuda.mem_get_info()
print(f"available={torch.cuda.is_available()}")
print(f"device_count={torch.cuda.device_count()}")
print(f"name={props.name}")
print(f"total_memory={props.total_memory}")
print(f"sm_count={props.multi_processor_count}")
print(f"capability={props.major}.{props.minor}")
print(f"mem_get_info_total={total}")

# A timed matmul: events on the stream and the host clock around a synchronize.
a = torch.ones(4096, 4096, device="cuda", dtype=torch.bfloat16)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.synchronize()
t0 = time.perf_counter()
start.record()
for _ in range(10):
    b = a @ a
end.record()
torch.cuda.synchronize()
t1 = time.perf_counter()
print(f"event_ms={start.elapsed_time(end)}")
print(f"perf_counter_ms={(t1 - t0) * 1e3}")
print(f"item={b.sum().item()}")
print(f"allocated={torch.cuda.memory_allocated()}")
print(f"max_allocated={torch.cuda.max_memory_allocated()}")
