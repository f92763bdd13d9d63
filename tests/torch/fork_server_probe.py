"""What a rank sees of how it was started, for the fork server's tests
(tests/torch/fork_server_test.cc): its argv, __main__, sys.path[0] and rank variables,
then a CUDA call and a barrier.  `--die RANK` kills that rank with SIGKILL after its
first CUDA call, as a crash would."""

import argparse
import os
import signal
import sys

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--die", type=int, default=-1)
args = p.parse_args()
rank = int(os.environ["RANK"])
print(f"argv={sys.argv}")
print(f"main_file={__file__}")
print(f"main_names={sorted(n for n in dir(sys.modules['__main__']) if not n.startswith('__'))[:4]}")
print(f"path0={sys.path[0]}")
print(f"rank_env={os.environ['RANK']},{os.environ['LOCAL_RANK']},{os.environ['WORLD_SIZE']}")
print(f"spec_env={os.environ.get('PHANTORA_FORK_SERVER_SPEC', '')}", flush=True)
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
if rank == args.die:
    os.kill(os.getpid(), signal.SIGKILL)
dist.init_process_group("nccl")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"sum={int(x[0].item())}", flush=True)
dist.destroy_process_group()
