#!/bin/bash
# Usage: OUT=DIR [REPS=50] bash tools/device/graph_launch_on_device.sh
# CUDA graphs on a real GPU: bench/cuda_graphs/graph_launch_cost.cu (built here with the machine's nvcc)
# for the GPU time per graph node against per kernel issued directly and the launch call's
# host time ([gpu] graph_node_gap = stream_gap + the difference of the two slopes), then
# examples/cuda/graph_step.cu graph and --eager, and examples/torch/train_cuda_graph.py on 1
# and 2 GPUs (the real side of the simulated runs in the top README's "CUDA graphs").
set -u
REPS=${REPS:-50}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  nvcc -O2 -std=c++17 -arch=native bench/cuda_graphs/graph_launch_cost.cu -o $OUT/graph_launch_cost &&
    $OUT/graph_launch_cost $REPS || echo "graph_launch_cost FAILED"
  nvcc -O2 -std=c++17 -arch=native examples/cuda/graph_step.cu -o $OUT/graph_step &&
    { $OUT/graph_step 20; $OUT/graph_step 20 --eager; } || echo "graph_step FAILED"
  python3 examples/torch/train_cuda_graph.py --steps 20 --no-allreduce || echo "torch 1 GPU FAILED"
  torchrun --nproc-per-node 2 examples/torch/train_cuda_graph.py --steps 20 || echo "torch 2 GPUs FAILED"
  date -u
} > $OUT/graph_launch.log 2>&1
cat $OUT/graph_launch.log
