#!/bin/bash
# Usage: OUT=DIR [RANKS="2 4"] [SUITES="gpt_ref train_gpt"] [STEPS=6] [WARMUP=2]
#        bash tools/device/record_multirank_on_device.sh
# Host time of the multi-rank code paths: the accuracy harness's DDP and FSDP cells recorded
# at world size 2 and 4 with `gpu_profiler record --host-time-only` (one run, no GPU op
# durations: those come from the one-GPU recordings; here kernels share SMs with
# collectives).  On one GPU FSDP2 never all-gathers, so a one-rank recording holds no host
# time for its copy-in/out, split and process-group work (bench/accuracy/README.md, "Why
# FSDP on 2 and 4 GPUs is short"); a simulation of N ranks takes the recording at the world
# size nearest N (bridge/host_time_profile.h).  Needs as many GPUs as the largest world size.
# Binaries built here are in build-devbin/ (gpu_profiler, libphantora_recorder.so, lib/).
# Writes $OUT/<suite>_<mode>[_<size>]_x<N>.tsv and $OUT/record_multirank.log.
# Environment: RANKS ("2 4"), SUITES ("gpt_ref train_gpt"), STEPS (6), WARMUP (2).
set -u
. "$(dirname "$0")/device_env.sh"
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 # multicast off beyond NCCL too
STEPS=${STEPS:-6}
WARMUP=${WARMUP:-2}
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
record() { # name, world size, script and its arguments
  local name=$1 n=$2
  shift 2
  if [ "$n" -gt "$NGPU" ]; then
    echo "== skip $name: needs $n GPUs, $NGPU here"
    return
  fi
  echo "== $name"
  $G record --host-time-only --raw "$OUT/$name.tsv" -- \
    torchrun --standalone --nproc_per_node "$n" "$@" </dev/null || echo "record $name FAILED"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  for n in ${RANKS:-2 4}; do
    for suite in ${SUITES:-gpt_ref train_gpt}; do
      case $suite in
        gpt_ref)
          for mode in fsdp ddp; do
            record "gpt_ref_${mode}_x$n" "$n" bench/accuracy/workloads/gpt_ref.py --layers 12 \
              --dim 1024 --heads 16 --batch 8 --mode "$mode" --steps "$STEPS" --warmup "$WARMUP"
          done ;;
        train_gpt)
          # the FSDP cells of bench/accuracy/matrix.tsv (its DDP cells' host path is the
          # one-rank one but for the gradient all-reduce hook)
          grep -v '^#' bench/accuracy/matrix.tsv | while read -r size mode gpus flags; do
            [ "$mode" = fsdp ] && [ "$gpus" = "$n" ] || continue
            record "torch_train_gpt_fsdp_${size}_x$n" "$n" examples/torch/train_gpt.py $flags \
              --mode fsdp --steps "$STEPS"
          done ;;
        *) echo "record_multirank_on_device.sh: SUITES: unknown suite $suite" ;;
      esac
    done
  done
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in "$OUT"/*_x[0-9]*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$f"; done
  wc -l "$OUT"/*.tsv
  date -u
} > "$OUT/record_multirank.log" 2>&1
tail -40 "$OUT/record_multirank.log"
