#!/bin/bash
# Usage: [OUT=DIR] [STEPS=12] [WARMUP=4] [REPS=2] [PY=python3] [ONLY="NAME..."]
#        bash tools/device/record_frameworks_on_device.sh
# DeepSpeed and TorchTitan examples recorded for real on one GPU, and their real step times
# measured on the same lease, for issue 16's check (each framework's one-GPU configuration
# simulated within 5 % of the real one).  The GPU machine has torch but neither framework:
# their wheels (and those of their requirements the machine lacks) travel in .whl-device/
# (cp312, made on the development machine with `pip download --python-version 3.12
# --only-binary=:all:` and, for DeepSpeed's sdist, `DS_BUILD_OPS=0 pip wheel --no-deps`)
# and are installed with --no-deps --no-index.
# Run from the repository root with build-devbin/ as tools/device/record_train_gpt_on_device.sh
# says.  Writes under $OUT:
#   <name>.tsv        raw logs (gpu_profiler record; import them with gpu_profiler import)
#   real_steps.log    REPS plain runs (no recorder) of every workload, interleaved
#   env.txt           GPU, driver, versions
# STEPS (12), WARMUP (4), REPS (2), ONLY (names of the workloads to run; default all).
set -u
. "$(dirname "$0")/device_env.sh"
OUT=${OUT:-/tmp/frameworks-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
STEPS=${STEPS:-12}
WARMUP=${WARMUP:-4}
REPS=${REPS:-2}

if ! $PY -c "import torchtitan" 2>/dev/null; then
  $PY -m pip install -q --no-deps --no-index .whl-device/*.whl > "$OUT/pip.log" 2>&1 ||
    { echo "installing .whl-device failed:"; tail -20 "$OUT/pip.log"; exit 1; }
fi

# TorchTitan's tokenizer and c4_test text, written offline (examples/torchtitan/README.md)
[ -d build/torchtitan-assets ] || $PY examples/torchtitan/make_assets.py build/torchtitan-assets > "$OUT/assets.log" 2>&1

TORCHRUN="torchrun --standalone --nproc_per_node 1"
# name | command (the same on the recorded and the plain runs)
WORKLOADS=(
  "deepspeed_zero1|$TORCHRUN examples/deepspeed/train_gpt.py --deepspeed_config examples/deepspeed/zero1.json --steps $STEPS --warmup $WARMUP"
  "deepspeed_zero2|$TORCHRUN examples/deepspeed/train_gpt.py --deepspeed_config examples/deepspeed/zero2.json --steps $STEPS --warmup $WARMUP"
  "titan_debug|$TORCHRUN -m torchtitan.train --job.config_file examples/torchtitan/llama3_debug.toml --training.steps $STEPS"
  # issue 34: the same model compiled (TorchTitan's [compile]: model and loss, Inductor)
  "titan_debug_compile|$TORCHRUN -m torchtitan.train --job.config_file examples/torchtitan/llama3_debug.toml --training.steps $STEPS --compile.enable"
)

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  $PY -c 'import torch, torchtitan; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  $PY -c 'import deepspeed; print("deepspeed", deepspeed.__version__)'
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
} > "$OUT/env.txt" 2>&1

selected() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

for w in "${WORKLOADS[@]}"; do
  name=${w%%|*}
  cmd=${w#*|}
  selected "$name" || continue
  echo "== record $name: $cmd"
  $G record --raw "$OUT/$name.tsv" -- $cmd </dev/null > "$OUT/record_$name.log" 2>&1 ||
    { echo "record $name failed:"; tail -30 "$OUT/record_$name.log"; }
  grep -E "mean step|step: *[0-9]+" "$OUT/record_$name.log" | tail -2
done

{
  date -u
  for ((r = 1; r <= REPS; r++)); do
    for w in "${WORKLOADS[@]}"; do
      name=${w%%|*}
      cmd=${w#*|}
      selected "$name" || continue
      echo "== rep $r $name: $cmd"
      $cmd </dev/null 2>&1 | grep -v "^\[W" | tail -40
    done
  done
} > "$OUT/real_steps.log" 2>&1
grep -E "^== |mean step|step: *$((STEPS))" "$OUT/real_steps.log"
