#!/bin/bash
# Usage: OUT=DIR [REPS=50] bash tools/device/memory_bound_sizes_on_device.sh
# Memory-bound kernels' achieved bandwidth by working-set size (1 MiB to 4 GiB tensors, below
# and above the 50 MB L2), on one GPU: bench/predict/memory_bound_sizes.py.  What the GPU
# prediction's memory class (gpu_model/gpu_prediction.h) would need to scale by the L2 as well
# as HBM; run on an H200 (and an H100 when one is lent) and keep the logs side by side.
set -u
REPS=${REPS:-50}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  python3 bench/predict/memory_bound_sizes.py --reps $REPS || echo "memory_bound_sizes FAILED"
  date -u
} > $OUT/memory_bound_sizes.log 2>&1
cat $OUT/memory_bound_sizes.log
