#!/usr/bin/env bash
# Adds TorchTitan to the project's Python environment (build/venv, made by
# setup_torch_venv.sh) for the examples in examples/torchtitan/.  Each TorchTitan
# release is written against a torch nightly: 0.3.0 does not import on torch 2.11.0
# (`from torch.distributed.fsdp import DataParallelMeshDims` fails, and it wants
# spmd_types), so 0.2.2, the newest that imports, is installed.  pip's download cache
# (~/.cache/pip) is used, so a rebuild does not download again.
#
# usage: setup_torchtitan.sh VENV_DIR STAMP
set -euo pipefail
venv="$1"
stamp="$2"

# torchtitan 0.2.2's requirements and theirs, pinned for repeatable builds; torch,
# numpy, filelock and fsspec (already in the venv) stay as they are.  --no-deps keeps
# the metadata from pulling anything not listed here (torchdata's would pull another
# torch with the NVIDIA wheels).
#  - triton: `import torchtitan` imports its MoE kernels, written in Triton (3.6.0 is
#    the version torch 2.11.0 pins);
#  - tensorboard, protobuf, absl-py: its metrics module imports torch.utils.tensorboard
#    (grpcio, werkzeug and markdown serve only the TensorBoard server: left out);
#  - datasets (pyarrow, pandas, ...): every dataset loader, c4_test included;
#  - tokenizers, huggingface-hub (httpx2, anyio, ...): its tokenizer;
#  - tyro, docstring-parser, typeguard: its command line and TOML config;
#  - anyio 4.14.2, not 4.16: the newest that accepts the venv's typing-extensions 4.15.0.
packages=(
    torchtitan==0.2.2
    triton==3.6.0
    tyro==1.0.17 docstring-parser==0.18.0 typeguard==4.6.1
    tokenizers==0.23.3 huggingface-hub==2.4.0 hf-xet==1.8.0 click==8.5.1
    httpx2==2.16.2 httpcore2==2.16.2 h11==0.16.0 anyio==4.14.2 idna==3.20 truststore==0.10.5
    datasets==5.2.0 pyarrow==26.0.1 pandas==3.1.1 python-dateutil==4.0.0 dill==0.4.1
    multiprocess==0.70.19 xxhash==4.1.0 pyyaml==6.0.4 tqdm==4.70.1
    torchdata==0.11.0 requests==2.34.2 urllib3==2.8.0 charset-normalizer==3.5.3
    certifi==2026.10.19.post1
    tensorboard==2.21.0 protobuf==7.36.2 absl-py==2.5.1
    einops==0.8.2 pillow==13.0.0 packaging==25.0
)

"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --no-deps "${packages[@]}"
# Every module a run imports must be there.  Only found, not imported: importing torch
# here would need the interposer's stub libraries for the NVIDIA wheels torch links
# (libcufile.so.0, ...), which the build makes later (a fresh build failed on that).
modules="torchtitan triton tyro typeguard docstring_parser tokenizers huggingface_hub datasets pyarrow torchdata tensorboard google.protobuf absl einops"
if ! "$venv/bin/python" - $modules <<'PY'
import importlib.util, os, sys
# Top-level specs only: finding a submodule would import its package, and torchtitan's
# imports torch.
missing = [m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]
spec = importlib.util.find_spec("torchtitan")
if spec and not any(os.path.exists(os.path.join(d, "train.py"))
                    for d in spec.submodule_search_locations or []):
    missing.append("torchtitan.train")
if missing:
    sys.exit("missing: " + " ".join(missing))
PY
then
    echo "setup_torchtitan.sh: modules TorchTitan needs are missing from $venv (above)" >&2
    exit 1
fi
touch "$stamp"
