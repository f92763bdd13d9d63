#!/bin/bash
# Usage: OUT=DIR bash tools/device/measure_copies_on_device.sh
# Third measuring run: copies and memsets of common sizes (profiles/replay/copies.json:
# HtoD and DtoH with pinned host memory, DtoD, memset; 4 B to 256 MiB) and, as a check
# against the first run, the 4096^3 bf16 GEMM; 5 warm-ups, 20 measured runs each.
set -u
B=$PWD/build-devbin
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{
  date -u
  $B/gpu_profiler replay --missing profiles/replay/copies.json --raw $OUT/replay_copies.tsv --warmup 5 --iterations 20 || echo "replay FAILED"
  printf 'meta\tnvidia_driver\t%s\n' "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" >> $OUT/replay_copies.tsv
  cut -f2,3,11 $OUT/replay_copies.tsv | grep -v "^\(cupti\|source\|dropped\|command\|gpu\|comp\|sm_\|memory_bytes\|l2\|cuda\|cublas\|nvidia\)" | sort | uniq -c | head -40
} > $OUT/measure_copies.log 2>&1
cat $OUT/measure_copies.log
