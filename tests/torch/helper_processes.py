"""A rank's helper processes under the simulator (interposer/process_role.h).  The rank
uses the GPU, then starts `python -c` probes, as Inductor starts its compile workers: a
spawned one and a forked one query the device and print what they got; with `--use`, a
spawned probe then allocates device memory, which must end the run naming it and the
call.  Prints key=value lines for compile_test.cc."""
import os
import subprocess
import sys

import torch

x = torch.ones(4, device="cuda")
torch.cuda.synchronize()
probe = (
    "import torch; p = torch.cuda.get_device_properties(0); "
    "print(f'{torch.cuda.device_count()};{p.name};{p.multi_processor_count};"
    "{p.major}.{p.minor};{p.total_memory}', flush=True)"
)
# An environment built from os.environ, as Inductor's SubprocPool builds its workers'.
spawned = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ),
                         capture_output=True, text=True)
print(f"spawned_status={spawned.returncode}")
print(f"spawned={spawned.stdout.strip()}")
if spawned.returncode != 0:
    print(spawned.stderr, file=sys.stderr)
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read)
    # cudaGetDeviceCount in a process forked from the rank: answered where it runs
    count = torch.cuda.device_count()
    os.write(write, f"{count}".encode())
    os._exit(0)
os.close(write)
print(f"forked={os.read(read, 64).decode()}")
os.waitpid(pid, 0)
if "--use" in sys.argv:
    subprocess.run([sys.executable, "-c", "import torch; torch.zeros(1, device='cuda')"])
print("done=1", flush=True)
