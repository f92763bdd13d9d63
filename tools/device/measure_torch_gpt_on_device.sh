#!/bin/bash
# Usage: OUT=DIR bash tools/device/measure_torch_gpt_on_device.sh
# Second measuring run (after measure_kernels_on_device.sh, same binaries in build-devbin/):
# examples/torch/train_gpt.py for real on one GPU at two sizes, and a replay of the
# GEMMs a simulation of it reported missing (phantora-cluster --missing).
set -u
B=$PWD/build-devbin
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
G=$B/gpu_profiler
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  $G record --raw $OUT/torch_train_gpt_default.tsv -- python3 examples/torch/train_gpt.py --steps 6 || echo "train_gpt default FAILED"
  $G record --raw $OUT/torch_train_gpt_w1024.tsv -- python3 examples/torch/train_gpt.py --steps 6 --width 1024 --heads 16 --layers 4 --seq 1024 || echo "train_gpt w1024 FAILED"
  $G replay --missing profiles/replay/torch_train_gpt_h200_missing.json --raw $OUT/replay_torch_train_gpt_missing.tsv --warmup 5 --iterations 20 || echo "replay FAILED"
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in $OUT/*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> $f; done
  wc -l $OUT/*.tsv
  date -u
} > $OUT/measure_torch.log 2>&1
tail -30 $OUT/measure_torch.log
