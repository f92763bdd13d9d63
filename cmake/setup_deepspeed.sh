#!/usr/bin/env bash
# Adds DeepSpeed to the project's Python environment (build/venv, made by
# setup_torch_venv.sh) for the examples in examples/deepspeed/.  DeepSpeed is an
# sdist on PyPI; it is built here with DS_BUILD_OPS=0, so no C++/CUDA op is
# compiled at install time, and the examples use only what needs none (torch's
# optimizers as DeepSpeed's client optimizer, ZeRO 1/2/3, bf16).  Ops that would be
# JIT-compiled at run time (FusedAdam, CPU Adam, ...) are not served: DeepSpeed
# raises when one is asked for.  pip's caches (~/.cache/pip: the sdist and the
# wheel built from it) are used, so a rebuild neither downloads nor builds again.
#
# usage: setup_deepspeed.sh VENV_DIR STAMP
set -euo pipefail
venv="$1"
stamp="$2"

# deepspeed 0.19.8's requirements/requirements.txt, pinned for repeatable builds
# (torch and numpy already in the venv stay as they are).  pydantic 2.12 is the newest
# that accepts the venv's typing-extensions 4.15.0 (2.13 and later want 4.16).
packages=(
    deepspeed==0.19.8
    einops==0.8.2 hjson==3.1.0 msgpack==1.2.4 ninja==1.13.2 psutil==7.2.2
    py-cpuinfo==9.0.0 tqdm==4.70.1 packaging==25.0
    pydantic==2.12.5 pydantic-core==2.41.5 annotated-types==0.8.0 typing-inspection==0.4.5
)

# --no-build-isolation: DeepSpeed's setup.py imports torch (the venv's) to write its
# build info; --no-deps keeps its metadata from pulling another torch.
DS_BUILD_OPS=0 DS_BUILD_AIO=0 DS_BUILD_GDS=0 \
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --no-deps \
    --no-build-isolation "${packages[@]}"
"$venv/bin/python" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('deepspeed') else 1)"
touch "$stamp"
