#!/bin/bash
# Usage: [OUT=DIR] [REPS=3] [FREE_REPS=N] [TRACE_FLAGS=--cuda-only] [TRACE_MODES="ddp fsdp"]
#        [SKIP_TRACES=1] [SKIP_FSDP_RUNS=1] bash tools/device/ddp_trace_on_device.sh
# Issue 12 diagnostics on the GPU machine (2 or 4 GPUs), output packed in $OUT/out.tgz:
#  1. torch.profiler traces of gpt_ref.py single, DDP on 2 (and 4) GPUs (profile_steps.py,
#     both in bench/accuracy/workloads/);
#  2. the host: lscpu, NUMA, GPU affinity, and cpu_speed.py (each CPU's speed);
#  3. FSDP2 on 2 GPUs unpinned and pinned (taskset) REPS times each, with the CPU every
#     rank thread ran on sampled once a second (ps psr), to see whether the two step-time
#     states of FSDP2 follow where the ranks land.
# From the repository root, as the usage line says.
set -u
# A device call returns only a few files: everything is written to a scratch folder and
# only out.tgz goes to $OUT.
DEST=${OUT:-/tmp/ddp-trace}
OUT=$(mktemp -d)
mkdir -p "$DEST"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
W=bench/accuracy/workloads/gpt_ref.py
P=bench/accuracy/workloads/profile_steps.py
NGPU=$(nvidia-smi -L | grep -c '^GPU')
REPS=${REPS:-3}
{ date -u; nvidia-smi -L; lscpu; lscpu -e; numactl -H; nvidia-smi topo -m; cat /proc/loadavg; } > "$OUT/machine.txt" 2>&1
python3 bench/accuracy/cpu_speed.py > "$OUT/cpu_speed.txt" 2>&1
# TRACE_FLAGS=--cuda-only: GPU activity only (the host is barely slowed, so the GPU
# timeline is the unprofiled one); by default CPU ops too (the host-bound step slows).
TF=${TRACE_FLAGS:-}
if [ -z "${SKIP_TRACES:-}" ]; then
  python3 $P $TF --out "$OUT/single" -- $W --mode single --steps 12 --warmup 3 > "$OUT/single.log" 2>&1
  for n in 2 4; do
    [ "$n" -le "$NGPU" ] || continue
    for mode in ${TRACE_MODES:-ddp}; do
      torchrun --standalone --nproc_per_node $n $P $TF --out "$OUT/$mode$n" -- $W --mode $mode --steps 12 --warmup 3 > "$OUT/$mode$n.log" 2>&1
    done
  done
fi
[ -n "${SKIP_FSDP_RUNS:-}" ] && { tar czf "$DEST/out.tgz" -C "$OUT" .; ls -la "$DEST"; exit 0; }
sample() {  # $1: log; samples every python thread's CPU until the run ends
  while sleep 1; do ps -eLo pid,tid,psr,pcpu,comm | awk '$5 ~ /python|pt_/' >> "$1"; echo "--" >> "$1"; done
}
run_fsdp() {  # $1: label, rest: prefix command
  local label=$1; shift
  sample "$OUT/psr_$label.log" & local s=$!
  "$@" torchrun --standalone --nproc_per_node 2 $W --mode fsdp > "$OUT/fsdp_$label.log" 2>&1
  kill $s 2>/dev/null
  echo "$label $(grep -o '"iter_s_median": [0-9.]*' "$OUT/fsdp_$label.log")" >> "$OUT/fsdp_summary.txt"
}
for i in $(seq ${FREE_REPS:-$REPS}); do run_fsdp free$i env; done
# the four CPUs that ran cpu_speed.py fastest, and the four slowest
FAST=$(awk '{print $4, $2}' "$OUT/cpu_speed.txt" | sort -n | head -4 | cut -d" " -f2 | paste -sd,)
SLOW=$(awk '{print $4, $2}' "$OUT/cpu_speed.txt" | sort -n | tail -4 | cut -d" " -f2 | paste -sd,)
echo "fast CPUs $FAST, slow CPUs $SLOW" >> "$OUT/fsdp_summary.txt"
for i in $(seq $REPS); do run_fsdp fast_$i taskset -c $FAST; done
for i in $(seq $REPS); do run_fsdp slow_$i taskset -c $SLOW; done
python3 bench/accuracy/cpu_speed.py > "$OUT/cpu_speed_end.txt" 2>&1
cat "$OUT/fsdp_summary.txt"
cat "$OUT/cpu_speed.txt"
tar czf "$DEST/out.tgz" -C "$OUT" .
ls -la "$DEST"
