"""PyTorch's send_object_list between two ranks, as pipeline parallelism exchanges its
stages' shapes, received as recv_object_list does it: the sender sends the pickle's size
(an int64 copied to the device) and then the pickle over NCCL send/recv; the receiver
sums the sizes it received with an int64 reduce kernel, reads the sum, receives that many
bytes, slices them at `offset + size` (an int64 add) and unpickles them.  Without values
carried through send/recv and those kernels computed, the receiver read 0 and the run
ended on the size mismatch (rank 0 sends N bytes but rank 1 receives 0 bytes)."""
import os
import pickle

import torch
import torch.distributed as dist

torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group("nccl")
rank = dist.get_rank()
cuda = torch.device("cuda")


def recv(t, use_batch):
    if use_batch:
        dist.batch_isend_irecv([dist.P2POp(dist.irecv, t, 0)]).pop().wait()
    else:
        dist.recv(t, src=0)


for use_batch in (True, False):
    if rank == 0:
        sent = [("shapes", (8, 2048, 256), use_batch, {"dtype": "bfloat16"})]
        dist.send_object_list(sent, dst=1, device=cuda, use_batch=use_batch)
    else:
        sizes = torch.empty(1, dtype=torch.long, device=cuda)
        recv(sizes, use_batch)
        n = torch.sum(sizes).item()
        data = torch.empty(n, dtype=torch.uint8, device=cuda)
        recv(data, use_batch)
        print(f"got={pickle.loads(data.cpu().numpy().tobytes())}", flush=True)
    # and recv_object_list itself, which slices the bytes at `offset + size`
    if rank == 0:
        dist.send_object_list([("again", use_batch)], dst=1, device=cuda, use_batch=use_batch)
    else:
        got = [None]
        dist.recv_object_list(got, src=0, device=cuda, use_batch=use_batch)
        print(f"listed={got}", flush=True)
torch.cuda.synchronize()
dist.destroy_process_group()
print("done", flush=True)
