#!/bin/bash
# Usage: [OUT=DIR] [REPS=3] [ONLY="CELL..."] [CPU_TRACE=1]
#        bash tools/device/record_host_interleaved_on_device.sh
# Host-bound cells of issues 15 and 16 (Megatron dense, DeepSpeed ZeRO-1 and ZeRO-2 on one
# GPU) and of issue 12 (gpt_ref.py's FSDP2 on two), each recorded for host time and run for real in turns on one lease: record,
# real, record, real, ... REPS times.  The GPU machine's CPUs change speed within minutes
# (bench/accuracy/README.md, "The GPU machine's own CPUs move the real FSDP2 step"),
# so a recording made minutes before or after the real runs stands for another host; taken
# in turns, the recordings' median gaps and the real runs' median step come from the same
# stretch of time.  Every recording runs exactly the command the real run and the
# simulation run (same steps and warm-up), so the simulation finds "runs with the same
# arguments".  Kernels are not recorded (--host-time-only): the committed profile has
# these programs' kernels.
# Run from the repository root with build-devbin/ (tools/device/device_env.sh), the
# megatron-core wheel in .whl-megatron/, DeepSpeed's in .whl-ds/ (or both frameworks and TorchTitan
# in .whl-device/, as for record_frameworks_on_device.sh).  Writes under $OUT:
#   <cell>_host<r>.tsv   raw host-time logs (gpu_profiler import them)
#   <cell>.log           the recorder's and the real runs' output, in order, each run
#                        followed by `# host:` (the machine's busy and steal CPU shares
#                        over it, /proc/stat)
#   <cell>.tgz           the cell's log and raw logs (the .tsv files are removed once archived)
# REPS (3), ONLY (cells; default "megatron_dense deepspeed_zero1 deepspeed_zero2").
# CPU_TRACE=1: while each run goes, the busiest thread's CPU every half second (`# cpus:
# tid@cpu ...`, ps's lifetime %CPU picks the thread: the program's main one), and after it
# every CPU's speed (`# cpu speed:`, bench/accuracy/cpu_speed.py, ns per iteration):
# does a run's step follow the speed of the CPU its main thread sat on?
set -u
. "$(dirname "$0")/device_env.sh"
OUT=${OUT:-/tmp/interleaved-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
T="torchrun --standalone --nproc_per_node 1"
declare -A CMD=(
  [megatron_dense]="$T examples/megatron/train_gpt.py --steps 20 --warmup 5"
  [deepspeed_zero1]="$T examples/deepspeed/train_gpt.py --deepspeed_config examples/deepspeed/zero1.json --steps 12 --warmup 4"
  [deepspeed_zero2]="$T examples/deepspeed/train_gpt.py --deepspeed_config examples/deepspeed/zero2.json --steps 12 --warmup 4"
  # TorchTitan's debug model (its wheels in .whl-device/, as record_frameworks_on_device.sh)
  [titan_debug]="$T -m torchtitan.train --job.config_file examples/torchtitan/llama3_debug.toml --training.steps 12"
  # gpt_ref's FSDP2 cell on 2 GPUs (host-bound; bench/accuracy's gpt_ref_h100 suite): the
  # host time of 2 real ranks, as tools/device/record_multirank_on_device.sh records it
  [gpt_ref_fsdp_x2]="torchrun --standalone --nproc_per_node 2 bench/accuracy/workloads/gpt_ref.py --layers 12 --dim 1024 --heads 16 --batch 8 --mode fsdp --steps 20 --warmup 5"
)
for cell in ${ONLY:-megatron_dense deepspeed_zero1 deepspeed_zero2}; do
  [ -n "${CMD[$cell]+x}" ] || { echo "record_host_interleaved_on_device.sh: ONLY: unknown cell '$cell' (known: ${!CMD[*]})"; exit 2; }
done
if [ -d .whl-device ]; then # TorchTitan and its requirements (DeepSpeed's too), as for
  # record_frameworks_on_device.sh
  python3 -m pip install --disable-pip-version-check -q --no-deps --no-index .whl-device/*.whl \
    > "$OUT/pip.log" 2>&1 || { echo "pip install failed"; tail -5 "$OUT/pip.log"; }
  [ -d build/torchtitan-assets ] || python3 examples/torchtitan/make_assets.py build/torchtitan-assets \
    > "$OUT/assets.log" 2>&1
  export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
fi
if [ -d .whl-megatron ] || [ -d .whl-ds ]; then
  python3 -m pip install --disable-pip-version-check -q --no-deps --no-index \
    --find-links .whl-megatron --find-links .whl-ds megatron-core==0.16.1 packaging==25.0 \
    deepspeed hjson pydantic pydantic_core annotated_types typing_inspection >> "$OUT/pip.log" 2>&1 \
    || { echo "pip install failed"; tail -5 "$OUT/pip.log"; }
fi
# The machine's CPUs since the /proc/stat line $1: busy and steal shares.
host_share() {
  printf '%s\n%s\n' "$1" "$(head -1 /proc/stat)" | awk '{i=$5+$6; s=$9; t=0; for(k=2;k<=9;k++) t+=$k;
    if (NR==1) {i0=i; s0=s; t0=t} else printf "busy %.1f %%, steal %.1f %%", 100*(1-(i-i0)/(t-t0)), 100*(s-s0)/(t-t0)}'
}
# Runs "$@" (a command and its arguments) with CPU_TRACE's lines after its output.
traced() {
  if [ "${CPU_TRACE:-0}" != 1 ]; then "$@"; return; fi
  touch "$OUT/.tracing"
  ( while [ -e "$OUT/.tracing" ]; do
      ps -eLo tid=,psr=,pcpu=,comm= --sort=-pcpu | awk 'NR==1{printf "%s@%s ", $1, $2}'; sleep 0.5
    done > "$OUT/cpus.txt" ) &
  "$@"; local rc=$?
  rm -f "$OUT/.tracing"; wait $!
  echo "# cpus: $(cat "$OUT/cpus.txt")"; rm -f "$OUT/cpus.txt"
  echo "# cpu speed: $(python3 bench/accuracy/cpu_speed.py --reps 2 | awk '{printf "%s:%s ", $2, $4}')"
  return $rc
}
# The lines of a run's output the log keeps.
keep() { grep -E "^step|mean step|median step|rank 0: |^RESULT| tps: |local batch size|Error|FAILED|^# cpu" | tail -32; }
for cell in ${ONLY:-megatron_dense deepspeed_zero1 deepspeed_zero2}; do
  cmd=${CMD[$cell]}
  {
    echo "# $cmd"
    for r in $(seq "${REPS:-3}"); do
      echo "== record $r $(date -u +%T)"; s0=$(head -1 /proc/stat)
      traced timeout 200 $G record --host-time-only --raw "$OUT/${cell}_host$r.tsv" -- $cmd </dev/null 2>&1 | keep
      echo "# host: $(host_share "$s0")"
      echo "== real $r $(date -u +%T)"; s0=$(head -1 /proc/stat)
      traced timeout 150 $cmd </dev/null 2>&1 | keep
      echo "# host: $(host_share "$s0")"
    done
  } > "$OUT/$cell.log" 2>&1
  echo "#### $cell"; cat "$OUT/$cell.log"
  for f in "$OUT/${cell}"_host*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$f"; done
  # One archive a cell: a call brings back a few files only.
  (cd "$OUT" && tar -czf "$cell.tgz" "$cell".log "$cell"_host*.tsv && rm -f "$cell"_host*.tsv)
done
ls -la "$OUT"
