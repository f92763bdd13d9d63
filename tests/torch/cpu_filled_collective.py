"""A collective on a device buffer filled from a CPU tensor that PyTorch built with its
intra-op (OpenMP) thread pool: the pool's workers park on futexes the interposer cannot
intercept (idle_thread_watch.h).  Before the watch, the bridge waited for those threads
forever and the synchronize after the collective never returned.

argv[1]: elements (more than torch's grain size, 32768, to start the pool's workers);
argv[2]: "destroy" to call dist.destroy_process_group() at the end, "keep" to exit
without it (real NCCL then only warns)."""
import os
import sys

import torch
import torch.distributed as dist

# Two intra-op threads whatever the host's cores: libgomp starts one worker.
torch.set_num_threads(2)
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group("nccl")
n = int(sys.argv[1])
t = torch.zeros(n, dtype=torch.bfloat16).to("cuda")
dist.all_reduce(t)
dist.broadcast(t, 0)
torch.cuda.synchronize()
print(f"synced={n}", flush=True)
if sys.argv[2] == "destroy":
    dist.destroy_process_group()
print("done", flush=True)
