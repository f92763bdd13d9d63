#!/bin/bash
# Usage: [OUT=DIR] [STEPS=12] [WARMUP=4] [REPS=3] [PY=python3] [ONLY="NAME..."]
#        [MISSING=file.json] bash tools/device/record_cudnn_on_device.sh
# cuDNN workloads recorded for real on one GPU, and their real step times measured on the
# same lease, for issue 13's check (one-GPU simulated step within 5 % of the real one):
#   - examples/torch/train_gpt.py --attention auto (PyTorch's own SDPA choice: cuDNN's fused
#     attention on Hopper) at the default and w1024 sizes of bench/accuracy/matrix.tsv;
#   - examples/torch/train_cnn.py, ResNet-18 shape: bf16 autocast channels_last (cuDNN
#     convolutions, PyTorch's batch norm) and float32 NCHW (cuDNN convolutions and batch
#     norm), 224x224 images, batch 32.
# Run from the repository root with the binaries built here copied to build-devbin/
# (gpu_profiler, gpu_profiler_gpu, libphantora_recorder.so, replay_cudnn.py, lib/ with
# libfmt, libsqlite3 and CUPTI), as record_train_gpt_on_device.sh is.  Writes under $OUT:
#   cudnn_<name>.tsv    raw logs (gpu_profiler record; import them with gpu_profiler import)
#   record_cudnn.log    the recorder's console: one line per cuDNN signature with the
#                       engine cuDNN ran and the workspace it was given (the simulator's
#                       workspace model, gpu_model/profile/cudnn_call_signature.h, to compare)
#   real_steps.log      REPS plain runs (no recorder) of every workload, interleaved: each
#                       prints "mean step X ms ... peak memory allocated N bytes"
#   env.txt             GPU, driver, torch/CUDA/cuDNN versions
# MISSING=file.json additionally replays the cuDNN ops (and GEMMs, copies) a simulation
# reported missing: gpu_profiler replay --python python3 (raw log replay_missing.tsv and
# replay_missing.cudnn.tsv).  STEPS (12), WARMUP (4), REPS (3), PY (python3), ONLY (names of
# the workloads to run, e.g. "gpt_auto_default gpt_auto_w1024"; default all).
set -u
. "$(dirname "$0")/device_env.sh"
OUT=${OUT:-/tmp/cudnn-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
STEPS=${STEPS:-12}
WARMUP=${WARMUP:-4}
REPS=${REPS:-3}
[ -f "$B/replay_cudnn.py" ] || cp gpu_profiler/replay_cudnn.py "$B/"

# name | script and flags (the same on the recorded and the plain runs)
WORKLOADS=(
  "gpt_auto_default|examples/torch/train_gpt.py --attention auto --layers 4 --width 512 --heads 8 --seq 512 --batch 8"
  "gpt_auto_w1024|examples/torch/train_gpt.py --attention auto --layers 4 --width 1024 --heads 16 --seq 1024 --batch 8"
  "cnn_bf16_nhwc|examples/torch/train_cnn.py --dtype bf16 --channels-last --image-size 224 --batch 32"
  "cnn_fp32_nchw|examples/torch/train_cnn.py --dtype fp32 --image-size 224 --batch 32"
)

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
} > "$OUT/env.txt" 2>&1

{
  date -u
  for w in "${WORKLOADS[@]}"; do
    name=${w%%|*}
    args=${w#*|}
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || continue
    echo "== $name: $PY $args --steps $STEPS --warmup $WARMUP"
    $G record --raw "$OUT/cudnn_$name.tsv" -- $PY $args --steps "$STEPS" --warmup "$WARMUP" </dev/null ||
      echo "$name FAILED"
  done
  if [ -n "${MISSING:-}" ]; then
    echo "== replay $MISSING"
    $G replay --missing "$MISSING" --raw "$OUT/replay_missing.tsv" --python "$PY" --warmup 5 --iterations 20 ||
      echo "replay FAILED"
  fi
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in "$OUT"/cudnn_*.tsv "$OUT"/replay_missing*.tsv; do
    [ -f "$f" ] && printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$f"
  done
  wc -l "$OUT"/*.tsv
  date -u
} > "$OUT/record_cudnn.log" 2>&1

# Plain runs, repetitions outermost so a slow spell of the (shared) host falls on every
# workload alike.
{
  for rep in $(seq 1 "$REPS"); do
    for w in "${WORKLOADS[@]}"; do
      name=${w%%|*}
      args=${w#*|}
      [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || continue
      echo "### $name rep $rep: $PY $args --steps $STEPS --warmup $WARMUP"
      $PY $args --steps "$STEPS" --warmup "$WARMUP" </dev/null 2>&1 | grep -E "^model:|mean step|Error" ||
        echo "$name FAILED"
    done
  done
} > "$OUT/real_steps.log" 2>&1

grep -E "cuDNN|FAILED|recorder:" "$OUT/record_cudnn.log" | head -60
grep -E "###|mean step" "$OUT/real_steps.log"
