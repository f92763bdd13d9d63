#!/usr/bin/env bash
# Creates the project's Python environment for simulated PyTorch runs: the stock
# PyPI torch wheel and only the pure-Python packages it imports.  The NVIDIA
# wheels torch lists (multi-GB) are left out on purpose: the CUDA 13.0 toolkit in
# /usr/local/cuda provides the libraries torch links against, and the interposer
# builds stub sonames for the few it lacks (see interposer/torch_stub_sonames.cmake).
# pip's download cache (~/.cache/pip) is used, so a rebuild does not download again.
#
# usage: setup_torch_venv.sh PYTHON VENV_DIR STAMP
set -euo pipefail
python="$1"
venv="$2"
stamp="$3"

# torch 2.11.0 is the version on the GPU machines: profiles measured there match.
# The rest are torch's own pure-Python requirements, pinned for repeatable builds.
packages=(
    torch==2.11.0
    filelock==3.20.0 typing-extensions==4.15.0 "setuptools==80.9.0" sympy==1.14.0 mpmath==1.3.0
    networkx==3.5 jinja2==3.1.6 MarkupSafe==3.0.3 fsspec==2025.9.0
    # optional for torch, but without it every import warns and scripts that use it fail
    numpy==2.3.4
)

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
# --no-deps: torch's metadata pulls the nvidia-*, cuda-toolkit and triton wheels.
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --no-deps "${packages[@]}"
"$venv/bin/python" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 1)"
touch "$stamp"
