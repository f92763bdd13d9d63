#!/bin/bash
# Usage: [OUT=DIR] [REPS=2] [GPUS="2 4"|none] [AHEAD=80] [STEPS=15] [WARMUP=5] [TRACE=1]
#        [TRACE_CELLS="single:1 ddp:2"] bash tools/device/gpu_ahead_on_device.sh
# On a machine with 2 or 4 GPUs: how much of gpt_ref.py's real step is the GPU's own work.
# Each cell of bench/accuracy/workloads/phase_times.py runs twice in a row, as is and with
# the GPU held for AHEAD ms (torch.cuda._sleep) at every step's start: in the second run the
# host has issued most of the step before the GPU starts it, so the phases time the GPU alone
# (ranks then start together too, since every rank's host is far ahead).  Where the two
# runs agree the step is the GPU's; where the held run is shorter, the host set the pace
# by that much.  Per-block CUDA events from gradient hooks (--grad-events) cut the
# backward.  Before every FSDP2 run the script logs what else runs on the CPUs (FSDP2's
# real step moves between about 44 and 91 ms from run to run, bench/accuracy/README.md
# "The GPU machine's own CPUs move the real FSDP2 step").
# Environment: REPS rounds (2), GPUS world sizes (2 4, those the machine has; none: the
# one-GPU cell alone), AHEAD ms
# (80), STEPS (15), WARMUP (5), OUT.  Writes $OUT/ahead.log.  TRACE=1 then also runs the
# cells of TRACE_CELLS ("single:1 ddp:2" unless set; MODE:WORLD) with the GPU held and
# torch.profiler on the last steps (GPU activity only: with the host far ahead, the
# profiler's own cost cannot reach the GPU's timeline) and writes $OUT/trace_MODEWORLD.tgz,
# for bench/accuracy/step_trace.py.  REPS=0 runs the traces alone.
set -u
OUT=${OUT:-/tmp/ahead-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
W=bench/accuracy/workloads
NGPU=$(nvidia-smi -L | wc -l)
AHEAD=${AHEAD:-80}
run() { # mode world ahead
  local launch="torchrun --standalone --nproc_per_node $2"
  echo "== $1 $2 ahead=$3 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$1" = fsdp ]; then ps -eo pcpu,comm --sort=-pcpu | sed -n 2,4p | tr '\n' ';'; echo; fi
  timeout 240 $launch $W/phase_times.py --mode "$1" --grad-events --gpu-ahead-ms "$3" \
    --steps "${STEPS:-15}" --warmup "${WARMUP:-5}" 2>&1 < /dev/null | grep -E 'PHASES|Error'
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.draw --format=csv
  echo "THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  echo "CPUs $(nproc), $(grep -m1 'model name' /proc/cpuinfo)"
  for r in $(seq "${REPS:-2}"); do
    echo "=== round $r"
    run single 1 0
    run single 1 "$AHEAD"
    for n in ${GPUS:-2 4}; do
      [ "$n" != none ] && [ "$n" -le "$NGPU" ] || continue
      for mode in ddp fsdp; do
        run "$mode" "$n" 0
        run "$mode" "$n" "$AHEAD"
      done
    done
  done
  if [ -n "${TRACE:-}" ]; then
    for cell in ${TRACE_CELLS:-single:1 ddp:2}; do
      set -- ${cell/:/ }
      [ "$2" -le "$NGPU" ] || continue
      echo "== trace $1 $2 ahead=$AHEAD $(date -u +%T)"
      mkdir -p "$OUT/t_$1"
      timeout 240 torchrun --standalone --nproc_per_node "$2" $W/phase_times.py --mode "$1" \
        --gpu-ahead-ms "$AHEAD" --steps 8 --warmup 5 --trace "$OUT/t_$1/trace" 2>&1 < /dev/null | grep -E 'PHASES|Error'
      tar -C "$OUT/t_$1" -czf "$OUT/trace_$1$2.tgz" . && rm -r "$OUT/t_$1"
    done
  fi
  nvidia-smi -q -d PERFORMANCE | grep -A12 'Clocks Event Reasons' | head -14
  date -u
} > "$OUT/ahead.log" 2>&1
cat "$OUT/ahead.log"
