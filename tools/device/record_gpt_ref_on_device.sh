#!/bin/bash
# Usage: OUT=DIR [MODES="single ddp fsdp"] [NO_REAL=1]
#        bash tools/device/record_gpt_ref_on_device.sh
# The accuracy harness's multi-GPU reference script (bench/accuracy/workloads/gpt_ref.py,
# 12 layers, width 1024, batch 8: 217.7 M parameters) recorded for real on one GPU, as a
# user records their own script before simulating it on many: `single` as one process,
# `ddp` and `fsdp` under `torchrun --nproc_per_node 1`, each with gpu_profiler's host-time
# pass (gpu_profiler/README.md), then its real step time without the recorder on the
# same lease (RESULT lines), so the simulated one-GPU step can be checked against a run of
# the very host the host time was recorded on.  Binaries built here are in build-devbin/
# (gpu_profiler, gpu_profiler_gpu, libphantora_recorder.so, lib/).
# Writes $OUT/gpt_ref_<mode>.tsv and $OUT/record_gpt_ref.log.  MODES (single ddp fsdp);
# NO_REAL=1 skips the real runs.
set -u
. "$(dirname "$0")/device_env.sh"
S=bench/accuracy/workloads/gpt_ref.py
SIZE=(--layers 12 --dim 1024 --heads 16 --batch 8)
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  for mode in ${MODES:-single ddp fsdp}; do
    if [ "$mode" = single ]; then
      launch=(python3)
    else
      launch=(torchrun --standalone --nproc_per_node 1)
    fi
    echo "== record $mode"
    $G record --raw "$OUT/gpt_ref_$mode.tsv" -- "${launch[@]}" $S --mode "$mode" "${SIZE[@]}" \
      --steps 6 --warmup 2 </dev/null || echo "record $mode FAILED"
    if [ -z "${NO_REAL:-}" ]; then
      echo "== real $mode"
      "${launch[@]}" $S --mode "$mode" "${SIZE[@]}" --steps 20 --warmup 5 --tag real </dev/null \
        || echo "real $mode FAILED"
    fi
  done
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in "$OUT"/gpt_ref_*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$f"; done
  wc -l "$OUT"/*.tsv
  date -u
} > "$OUT/record_gpt_ref.log" 2>&1
tail -30 "$OUT/record_gpt_ref.log"
