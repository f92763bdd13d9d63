"""Loaded by Python at start-up: phantora-cluster puts this folder on every rank's
PYTHONPATH.  Installs the workload support the scenario names (its [workload] table)
the DeepSpeed guard (phantora_deepspeed.py: a JIT-compiled op fails at once, naming
it), the folding guard (phantora_fold_guard.py: a gloo group with absent ranks fails at
once) and the advice after a missing module's traceback (phantora_missing_module.py: the
venv and the pip line).  Nothing here runs unless phantora-cluster set the variables.
A sitecustomize of the program's own, later on the path, is still loaded."""

import importlib.util
import os
import sys

if os.environ.get("PHANTORA_MOE_ROUTING"):
    import phantora_moe_routing

    phantora_moe_routing.install()

if os.environ.get("PHANTORA_BRIDGE"):
    import phantora_deepspeed
    import phantora_missing_module

    phantora_deepspeed.install()
    phantora_missing_module.install()

if os.environ.get("PHANTORA_FOLD"):
    import phantora_fold_guard

    phantora_fold_guard.install()

# Python imports only the first sitecustomize on the path: hand over to the next one.
_here = os.path.dirname(os.path.abspath(__file__))
for _entry in sys.path:
    if not _entry or os.path.abspath(_entry) == _here:
        continue
    _candidate = os.path.join(_entry, "sitecustomize.py")
    if os.path.isfile(_candidate):
        _spec = importlib.util.spec_from_file_location("_phantora_next_sitecustomize", _candidate)
        _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
        break
