#!/bin/bash
# Usage: OUT=DIR bash tools/device/measure_kernels_on_device.sh
# Runs on the GPU machine from the repository root, with the x86-64 binaries built
# here copied to build-devbin/ (gpu_profiler, gpu_profiler_gpu, libphantora_recorder.so,
# the example programs, and lib/ with libfmt, libsqlite3 and CUPTI).  Writes raw logs
# (raw_log.h format) and a log to $OUT; import them here with `gpu_profiler import`.
set -u
B=$PWD/build-devbin
NCCL=$(dirname "$(find / -xdev -name 'libnccl.so.2' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:$NCCL:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
G=$B/gpu_profiler
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  echo "nccl from $NCCL"
  $G record --raw $OUT/train_step.tsv -- $B/phantora-cuda-train-step 16777216 20 || echo "train_step FAILED"
  $G record --raw $OUT/cublas_program.tsv -- $B/phantora-test-cublas || echo "cublas FAILED"
  $G record --raw $OUT/torch_gpt_h768.tsv -- python3 profiles/workloads/torch_gpt_probe.py --hidden 768 --layers 2 --heads 12 --seq 1024 --batch 8 --steps 4 || echo "torch 768 FAILED"
  $G record --raw $OUT/torch_gpt_h2048.tsv -- python3 profiles/workloads/torch_gpt_probe.py --hidden 2048 --layers 2 --heads 16 --seq 2048 --batch 4 --steps 4 || echo "torch 2048 FAILED"
  $G replay --missing profiles/replay/e2e_gemms.json --raw $OUT/replay_e2e_gemms.tsv --warmup 5 --iterations 20 || echo "replay e2e FAILED"
  time $G replay --missing profiles/replay/transformer_gemms.json --raw $OUT/replay_transformer_gemms.tsv --warmup 3 --iterations 10 || echo "replay FAILED"
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in $OUT/*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> $f; done
  wc -l $OUT/*.tsv
  date -u
} > $OUT/measure.log 2>&1
tail -40 $OUT/measure.log
