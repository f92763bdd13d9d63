#!/bin/bash
# Usage: OUT=DIR bash tools/device/graph_node_gap_on_device.sh
# The idle time between two nodes of a replayed CUDA graph and between two queued eager
# kernels, from CUPTI's own kernel times (bench/cuda_graphs/graph_node_gap.py under
# torch.profiler), for one-element adds and for 1M-element adds: checks [gpu] graph_node_gap
# (0.20 us, inferred from graph_launch_cost.py's slope less the kernel's profiled duration).
set -u
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  python3 bench/cuda_graphs/graph_node_gap.py --nodes 100 --reps 20 --width 1 || echo "width 1 FAILED"
  python3 bench/cuda_graphs/graph_node_gap.py --nodes 100 --reps 20 --width 1048576 || echo "width 1M FAILED"
  date -u
} > $OUT/graph_node_gap.log 2>&1
cat $OUT/graph_node_gap.log
