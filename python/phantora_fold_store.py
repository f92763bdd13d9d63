"""The c10d store of a folded run (docs/folding.md): `python phantora_fold_store.py PORT WORLD`.

Folded, only one rank per model-parallel coordinate runs, so rank 0 cannot host torch's
TCPStore as it does under plain env:// rendezvous: its server waits for all WORLD ranks
to connect.  This process serves the same store (torch's own TCPStore, libuv daemon) for
the live ranks, which phantora-cluster starts as clients of an agent's store
(TORCHELASTIC_USE_AGENT_STORE=True, as under torchrun).  It serves until the launcher
ends it (it dies with it: PR_SET_PDEATHSIG).
"""

import signal
import sys
from datetime import timedelta


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: phantora_fold_store.py PORT WORLD_SIZE")
    port, world = int(sys.argv[1]), int(sys.argv[2])
    from torch.distributed import TCPStore

    # Bound to a name: the store serves while the object lives.
    store = TCPStore(
        "127.0.0.1",
        port,
        world,
        is_master=True,
        wait_for_workers=False,
        timeout=timedelta(hours=24),
        use_libuv=True,
    )
    while store is not None:
        signal.pause()


if __name__ == "__main__":
    main()
