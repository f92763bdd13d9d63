#!/bin/bash
# Usage: [OUT=DIR] [STEPS=12] [REPS=2] [PY=python3] [ONLY="NAME..."]
#        bash tools/device/record_compiled_on_device.sh
#        bash tools/device/record_compiled_on_device.sh --list
# torch.compile on one GPU (issue 34, item 4): a compiled TorchTitan debug model
# ([compile] enable = true) and a compiled Hugging Face model (bench/accuracy/workloads/zoo.py
# --compile default), each beside its eager twin, recorded with gpu_profiler (kernels, Triton's
# included: the recorder tags driver-API launches with their argument facts, then host time)
# and run for real REPS times on the same lease, so that the accuracy harness can add
# compiled cells (real and simulated, with the left-out estimate beside them).
# Every run compiles from an empty cache of its own (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR
# under $WORK): its first step holds a whole compilation, as a first run on a new machine does.
# Run from the repository root with build-devbin/ as tools/device/record_train_gpt_on_device.sh
# says (built from a tree with the recorder's driver-API tags, gpu_profiler/README.md), and
# .whl-device/ as tools/device/record_frameworks_on_device.sh carries it.  Writes under $OUT:
#   <name>.tsv        raw logs (gpu_profiler record; import them with gpu_profiler import)
#   real_steps.log    REPS plain runs (no recorder) of every workload, interleaved: TorchTitan's
#                     "step: N ... tps: X" lines, zoo.py's RESULT json (step_ms_median,
#                     compile_s: the first step's excess over the median, the compilation)
#   env.txt           GPU, driver, versions
set -u
. "$(dirname "$0")/device_env.sh"
OUT=${OUT:-/tmp/compiled-out}
WORK=${WORK:-/tmp/compiled-work}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
PY=${PY:-python3}
STEPS=${STEPS:-12}
REPS=${REPS:-2}
TORCHRUN="torchrun --standalone --nproc_per_node 1"
TITAN="$TORCHRUN -m torchtitan.train --job.config_file examples/torchtitan/llama3_debug.toml --training.steps $STEPS"
ZOO="$PY bench/accuracy/workloads/zoo.py --model llama --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024 --steps 10 --warmup 3"
# name | command (the same on the recorded and the plain runs)
WORKLOADS=(
  "titan_debug_compiled|$TITAN --compile.enable"
  "titan_debug|$TITAN"
  "zoo_llama_s_bf16_compiled|$ZOO --compile default"
  "zoo_llama_s_bf16|$ZOO"
)
if [ "${1:-}" = --list ]; then
  for w in "${WORKLOADS[@]}"; do echo "${w%%|*}: ${w#*|}"; done
  exit 0
fi
mkdir -p "$OUT" "$WORK"
# TorchTitan from the wheels record_frameworks_on_device.sh installs (.whl-device/, carried);
# transformers is on the GPU machine already (record_zoo_on_device.sh needs it too).
if ! $PY -c "import torchtitan" 2>/dev/null; then
  $PY -m pip install -q --no-deps --no-index .whl-device/*.whl > "$OUT/pip.log" 2>&1 ||
    { echo "installing .whl-device failed:"; tail -20 "$OUT/pip.log"; exit 1; }
fi
# TorchTitan's tokenizer and c4_test text, written offline (examples/torchtitan/README.md)
[ -d build/torchtitan-assets ] || $PY examples/torchtitan/make_assets.py build/torchtitan-assets > "$OUT/assets.log" 2>&1

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  $PY -c 'import torch, triton, torchtitan, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, "transformers", transformers.__version__)'
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
} > "$OUT/env.txt" 2>&1

selected() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
# A run with empty compile caches of its own (\$1: a name for them).
fresh() {
  local d="$WORK/cache-$1"
  rm -rf "$d"; mkdir -p "$d"
  TORCHINDUCTOR_CACHE_DIR="$d/inductor" TRITON_CACHE_DIR="$d/triton" "${@:2}"
}

for w in "${WORKLOADS[@]}"; do
  name=${w%%|*}
  cmd=${w#*|}
  selected "$name" || continue
  echo "== record $name: $cmd"
  s=$(date +%s)
  fresh "record-$name" $G record --raw "$OUT/$name.tsv" -- $cmd </dev/null > "$OUT/record_$name.log" 2>&1 ||
    { echo "record $name failed:"; tail -30 "$OUT/record_$name.log"; }
  grep -E "^RESULT|step: *[0-9]+" "$OUT/record_$name.log" | tail -2 | cut -c1-300
  echo "# $name recorded in $(( $(date +%s) - s )) s"
done

{
  date -u
  for ((r = 1; r <= REPS; r++)); do
    for w in "${WORKLOADS[@]}"; do
      name=${w%%|*}
      cmd=${w#*|}
      selected "$name" || continue
      echo "== rep $r $name: $cmd"
      s=$(date +%s)
      fresh "real-$r-$name" $cmd </dev/null 2>&1 | grep -v "^\[W" | grep -E "^RESULT|step: *[0-9]+|rror|Traceback" | tail -40
      echo "# wall $(( $(date +%s) - s )) s"
    done
  done
} > "$OUT/real_steps.log" 2>&1
grep -E "^== |^# wall|step: *$((STEPS)) " "$OUT/real_steps.log"
grep -c "^RESULT" "$OUT/real_steps.log"
