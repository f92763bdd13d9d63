#!/bin/bash
# Usage: [OUT=DIR] [REPS=3] [FLAGS=--layer-events] [NO_EXTRA=1]
#        bash tools/device/phases_on_device.sh
# On a machine with 2 GPUs: gpt_ref.py's step cut into phases
# (bench/accuracy/workloads/phase_times.py), on one GPU and on two with DDP (and FSDP2
# once), runs interleaved so that the host's drift (bench/accuracy/README.md: "The GPU
# machine's own CPUs move the real FSDP2 step") falls on all cells alike; then NCCL's
# all-reduce alone on the two GPUs (bench/collectives/nccl_perf.py, graph mode), to set
# the simulated collective against this card's.  Writes $OUT/phases.log and
# $OUT/nccl_perf_graph_2gpu.csv.  REPS (default 3) rounds; FLAGS (e.g. --layer-events) go to
# phase_times.py; NO_EXTRA=1 leaves out gpt_ref.py, FSDP2 and nccl_perf.
set -u
OUT=${OUT:-/tmp/phases-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
W=bench/accuracy/workloads
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  for r in $(seq "${REPS:-3}"); do
    echo "== round $r $(date -u +%T)"
    torchrun --standalone --nproc_per_node 1 $W/phase_times.py --mode single ${FLAGS:-} 2>&1 | grep PHASES
    torchrun --standalone --nproc_per_node 2 $W/phase_times.py --mode ddp ${FLAGS:-} 2>&1 | grep PHASES
    [ -n "${NO_EXTRA:-}" ] && continue
    torchrun --standalone --nproc_per_node 2 $W/gpt_ref.py --mode ddp 2>&1 | grep RESULT
    torchrun --standalone --nproc_per_node 1 $W/gpt_ref.py --mode single 2>&1 | grep RESULT
  done
  if [ -z "${NO_EXTRA:-}" ]; then
    echo "== fsdp $(date -u +%T)"
    torchrun --standalone --nproc_per_node 2 $W/phase_times.py --mode fsdp 2>&1 | grep PHASES
    echo "== nccl_perf $(date -u +%T)"
    timeout 200 torchrun --standalone --nproc_per_node 2 bench/collectives/nccl_perf.py \
      --out "$OUT" --mode graph --ops all_reduce,all_gather,reduce_scatter --min-bytes 64K \
      --max-bytes 1G --factor 2 2>&1 | grep -v '^NCCL INFO' | tail -40
  fi
  date -u
} > "$OUT/phases.log" 2>&1
cat "$OUT/phases.log"
