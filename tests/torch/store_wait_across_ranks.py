"""Rank 1 waits in the TCPStore (on its first thread, polling a socket) for a key that
rank 0 sets only once an all-reduce of both has completed.  PyTorch passes the NCCL id of
a communicator it creates at its first collective this way, and TorchTitan's FSDP2 + TP
run hit it: rank 1's first thread held simulated time at its clock while it polled, that
clock was before the all-reduce's end, so rank 0's synchronize was never answered and
rank 1 waited for a key that never came (the run hung)."""
import os

import torch
import torch.distributed as dist

torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group("nccl")
rank = dist.get_rank()
warm = torch.zeros(1024, device="cuda")
dist.all_reduce(warm)  # creates the communicator (through the store, both ranks at once)
torch.cuda.synchronize()

t = torch.zeros(1 << 22, device="cuda")  # 16 MiB: ends well after rank 1 issued it
dist.all_reduce(t)
store = dist.distributed_c10d._get_default_store()
if rank == 0:
    torch.cuda.synchronize()  # until the all-reduce ends
    store.set("after_all_reduce", "ready")
else:
    print(f"got={store.get('after_all_reduce').decode()}", flush=True)
torch.cuda.synchronize()
dist.destroy_process_group()
print("done", flush=True)
