"""For tests/torch/fork_server_test.cc: a program whose own top-level import (a module in
its folder, fork_server_import_helper.py) counts the GPUs when imported.  It prints what the
import saw (the GPUs, sys.argv), whether the fork server made it, and then uses the GPU and NCCL."""

import os

import fork_server_import_helper as helper
import torch
import torch.distributed as dist

print(f"at_import: available={helper.AVAILABLE} count={helper.COUNT}")
print(f"imported_by_the_server={helper.PID != os.getpid()}")
print(f"argv_at_import={helper.ARGV_AT_IMPORT}")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.ones(16, device="cuda")
dist.init_process_group("nccl")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"all_reduce done, count_now={torch.cuda.device_count()}", flush=True)
dist.destroy_process_group()
