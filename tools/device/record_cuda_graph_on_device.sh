#!/bin/bash
# Usage: OUT=DIR bash tools/device/record_cuda_graph_on_device.sh
# examples/torch/train_cuda_graph.py (an MLP's forward, backward, gradient all-reduce and
# SGD step captured in one torch.cuda.CUDAGraph, replayed each step) on one GPU under
# `torchrun --standalone --nproc_per_node 1`, at its default size and a large one: each run
# twice for real, then recorded (gpu_profiler record --raw, with build-devbin/ as
# device_env.sh says).  Writes under $OUT: graph_<cell>.log (the command, both runs' last
# steps and means, the recorder's run) and graph_<cell>.tsv.gz (the raw recorder log, ending
# in `meta nvidia_driver`; recompress to .zst and `gpu_profiler import` it).
# Cost on an H200 (2026-12-02): 149 s for both cells.
set -u
. "$(dirname "$0")/device_env.sh"
: "${OUT:?set OUT}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
T="torchrun --standalone --nproc_per_node 1"
CELLS=("small|--steps 30 --warmup 5" "large|--width 4096 --layers 8 --batch 256 --steps 30 --warmup 5")
for c in "${CELLS[@]}"; do
  name=${c%%|*}; args=${c#*|}
  cmd="$T examples/torch/train_cuda_graph.py $args"
  { echo "# $cmd"
    for r in 1 2; do echo "== rep $r"; $cmd </dev/null 2>&1 | grep -v "^\[W" | tail -8; done
    echo "== record"; $G record --raw /tmp/graph_$name.tsv -- $cmd </dev/null 2>&1 | grep -v "^\[W" | tail -12
  } > "$OUT/graph_$name.log" 2>&1
  printf 'meta\tnvidia_driver\t%s\n' "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" >> /tmp/graph_$name.tsv
  gzip -9 -c /tmp/graph_$name.tsv > "$OUT/graph_$name.tsv.gz"
  grep -E "^==|mean" "$OUT/graph_$name.log"
done
