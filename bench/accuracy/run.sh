#!/usr/bin/env bash
# The accuracy tables: real H200 runs (committed data) of every suite's script
# (examples/torch/train_gpt.py on one GPU, workloads/gpt_ref.py on 1, 2 and 4 GPUs) against
# their simulation on this machine, with the profile as it is and without the program's own
# recordings (accuracy.py --profile-knows). Usage: bench/accuracy/run.sh [build-dir] [accuracy.py flags]
# (the build dir needs bridge/phantora-cluster and venv/, as `./ns3 build` or
# `cmake --build` make them).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="${1:-$HERE/../../build}"
shift || true
exec python3 "$HERE/accuracy.py" --build "$BUILD" "$@"
