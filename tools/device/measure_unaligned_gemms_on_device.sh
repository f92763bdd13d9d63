#!/bin/bash
# Usage: OUT=DIR bash tools/device/measure_unaligned_gemms_on_device.sh
# GEMMs whose leading dimensions are not multiples of 8 elements (vocabulary heads of
# 32001/32002/32004 against 32000, a 4097/4098/4100-wide projection against 4096; bf16 and
# f16; profiles/replay/unaligned_gemms.json, make_unaligned_gemms.py says why), replayed
# by gpu_profiler (5 warm-ups, 20 measured runs each).  Import the raw log into the
# profile of the GPU it ran on (`gpu_profiler import --db profiles/H200.sqlite
# $OUT/replay_unaligned_gemms.tsv`) so the GEMM estimator has measured rates for each
# alignment from a program that is not the zoo.
set -u
B=$PWD/build-devbin
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  $B/gpu_profiler replay --missing profiles/replay/unaligned_gemms.json --raw $OUT/replay_unaligned_gemms.tsv \
      --warmup 5 --iterations 20 || echo "replay FAILED"
  printf 'meta\tnvidia_driver\t%s\n' "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" \
      >> $OUT/replay_unaligned_gemms.tsv
  grep -c "cublasGemmEx" $OUT/replay_unaligned_gemms.tsv
} > $OUT/measure_unaligned_gemms.log 2>&1
cat $OUT/measure_unaligned_gemms.log
