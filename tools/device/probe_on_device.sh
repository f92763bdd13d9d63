#!/bin/bash
# Usage: [OUT=DIR] [MODES="single ddp fsdp"] [FLAGS="--layers 4 ..."]
#        bash tools/device/probe_on_device.sh
# Host-side diagnosis of the one-GPU cells on the GPU machine: bench/accuracy/host_probe.py
# for each default-size mode (single, ddp, fsdp), plain (timers only), under torch.profiler
# with CPU activity only, and with CUDA activity too (the GPU's kernel time per step, and a
# Chrome trace).  Writes under $OUT: probe_<mode>.log, trace_<mode>.json.gz.
# Run from the repository root on the GPU machine.
set -u
OUT=${OUT:-/tmp/probe-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
FLAGS=${FLAGS:-"--layers 4 --width 512 --heads 8 --seq 512 --batch 8"}
P=bench/accuracy/host_probe.py
for mode in ${MODES:-single ddp fsdp}; do
  if [ "$mode" = single ]; then run="python3 $P"; else run="torchrun --standalone --nproc_per_node 1 $P"; fi
  {
    echo "### $mode plain";   $run $FLAGS --mode $mode --steps 25 --warmup 5 </dev/null 2>&1 | grep -v '^step '
    echo "### $mode cpu";     $run $FLAGS --mode $mode --steps 10 --warmup 5 --profile-steps 5 --profile-rows 60 </dev/null 2>&1 | grep -v '^step '
    echo "### $mode cuda";    $run $FLAGS --mode $mode --steps 10 --warmup 5 --profile-steps 3 --profile-rows 60 --profile-cuda --profile-trace "$OUT/trace_$mode.json" </dev/null 2>&1 | grep -v '^step '
  } > "$OUT/probe_$mode.log" 2>&1
  gzip -f "$OUT/trace_$mode.json" 2>/dev/null
  grep -E '^(probe|profile: (under|thread|gpu))' "$OUT/probe_$mode.log" | sed "s/^/$mode: /"
done
