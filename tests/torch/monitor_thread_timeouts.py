"""A helper thread waits in threading.Event.wait(0.2) over and over (tqdm's monitor thread,
which `datasets` starts, waits so for 10 s) while the main thread runs Python and holds the
GIL, so each time the helper's wait times out it takes the GIL from the main thread and
hands it back (CPython's GIL: condition variables).  Event.wait is a sem_clockwait whose
timeout expires in real time; it used to move the helper's clock by the 0.2 s asked for,
and the main thread took that clock up with the GIL: its simulated time went on by 0.2 s
at every 0.2 s of real time, however little it did (TorchTitan's Llama3-8B step took 9.1 s
instead of 1.18 s when the monitor's 10 s wait expired in it).  Run with CPU work free:
the main thread's loop then takes no simulated time at all."""
import os
import threading
import time

import torch

torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
x = torch.ones(1024, device="cuda")  # connects: the helper below is a thread the bridge knows
torch.cuda.synchronize()

stop = threading.Event()
timeouts = 0


def monitor():
    global timeouts
    while not stop.wait(0.2):
        timeouts += 1


helper = threading.Thread(target=monitor)
helper.start()
start = time.perf_counter()
spins = 0
while timeouts < 5:  # real time passes: five of the helper's timeouts
    spins += 1
elapsed = time.perf_counter() - start
x += 1
torch.cuda.synchronize()
stop.set()
helper.join()
print(f"timeouts={timeouts}", flush=True)
print(f"elapsed_ms={elapsed * 1e3:.3f}", flush=True)
print("done", flush=True)
