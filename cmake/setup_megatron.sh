#!/usr/bin/env bash
# Adds Megatron-core to the project's Python environment (build/venv, made by
# setup_torch_venv.sh) for the examples in examples/megatron/.  The PyPI wheel is
# pure Python plus one compiled dataset helper; Transformer Engine and Apex are
# left out on purpose (Megatron-core's "local" layer spec runs on plain PyTorch).
# pip's download cache (~/.cache/pip) is used, so a rebuild does not download again.
#
# usage: setup_megatron.sh VENV_DIR STAMP
set -euo pipefail
venv="$1"
stamp="$2"

# megatron-core 0.16.1 is the newest wheel for Python 3.11; its run-time
# requirements besides torch and numpy (already in the venv) are packaging and,
# for the MoE token dispatcher's permutation helpers, nothing else.  --no-deps
# keeps its metadata from pulling anything not listed here.
packages=(
    megatron-core==0.16.1
    packaging==25.0
)

"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --no-deps "${packages[@]}"
"$venv/bin/python" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('megatron.core') else 1)"
touch "$stamp"
