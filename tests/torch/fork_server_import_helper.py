"""Imported at the top of fork_server_import_probe.py, so the fork server imports it (its
+imports preload): it asks for the GPUs as Megatron-core's modules do when imported, keeps
the sys.argv it was imported with (as TorchTitan's config manager does, in a default
argument), and with FORK_PROBE_USE_CUDA=1 it uses the GPU, which no preloaded module may."""

import os
import sys

import torch

PID = os.getpid()
ARGV_AT_IMPORT = list(sys.argv)
AVAILABLE = torch.cuda.is_available()
COUNT = torch.cuda.device_count()
if os.environ.get("FORK_PROBE_USE_CUDA") == "1":
    torch.zeros(1, device="cuda")
