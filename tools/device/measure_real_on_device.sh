#!/bin/bash
# Usage: [KIND=nvidia-h200] [OUT=DIR] [SUITE=train_gpt|gpt_ref|cudnn_gpt|cudnn_cnn] [REPS=5]
#        [STEPS=25] [WARMUP=5] [ONLY_GPUS="2 4"] [ONLY_MODES="ddp fsdp"] [PY=python3]
#        [RUN_TIMEOUT=240] bash tools/device/measure_real_on_device.sh
# Real side of the accuracy harness: runs every cell of bench/accuracy/matrix.tsv that
# this machine has enough GPUs for, REPS times each (one process, or one torchrun, per
# repetition), plus the host-speed benchmark (host_speed.py) and the host-time probe
# (bench/accuracy/host_probe.py, one-GPU cells), and writes under $OUT:
#   env.txt          date, nvidia-smi (full and --query-gpu), torch/CUDA/NCCL versions, CPU;
#   runs.log         every run's command and output, between '### ...' markers;
#   probe.log        host_probe.py's output (one-GPU cells);
#   host_speed.json, host_speed_end.json  host_speed.py's output before and after the runs;
#   real.json        all of it parsed (collect_real.py): commit it as bench/accuracy/real/<KIND>.json.
# Run from the repository root on the GPU machine, e.g.
#   KIND=nvidia-h200 OUT=/some/dir bash tools/device/measure_real_on_device.sh
# Environment: REPS (5), STEPS (25), WARMUP (5), KIND (a label for the device kind),
# ONLY_GPUS (measure only cells of these many GPUs, e.g. "2 4"), ONLY_MODES (e.g. "ddp fsdp"),
# SUITE (train_gpt: examples/torch/train_gpt.py over bench/accuracy/matrix.tsv; gpt_ref:
# bench/accuracy/workloads/gpt_ref.py over matrix-gpt_ref.tsv, whose RESULT lines
# collect_real.py --results reads;
# cudnn_gpt, cudnn_cnn: matrix-cudnn_gpt.tsv with train_gpt.py, matrix-cudnn_cnn.tsv with
# examples/torch/train_cnn.py).
# DDP and FSDP cells (one GPU included: init_process_group needs a rendezvous) run
# under torchrun --standalone --nproc_per_node N with the cell's --mode. NVLink multicast stays off (the device notes ask for it).
set -u
HERE=bench/accuracy
OUT=${OUT:-/tmp/accuracy-out}
mkdir -p "$OUT"
REPS=${REPS:-5}
STEPS=${STEPS:-25}
WARMUP=${WARMUP:-5}
KIND=${KIND:-unknown}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
PY=${PY:-python3}
case "${SUITE:-train_gpt}" in
  train_gpt) MATRIX=$HERE/matrix.tsv; SCRIPT=examples/torch/train_gpt.py ;;
  gpt_ref) MATRIX=$HERE/matrix-gpt_ref.tsv; SCRIPT=$HERE/workloads/gpt_ref.py ;;
  cudnn_gpt) MATRIX=$HERE/matrix-cudnn_gpt.tsv; SCRIPT=examples/torch/train_gpt.py ;;
  cudnn_cnn) MATRIX=$HERE/matrix-cudnn_cnn.tsv; SCRIPT=examples/torch/train_cnn.py ;;
  *) echo "measure_real_on_device.sh: SUITE=$SUITE: expected train_gpt, gpt_ref, cudnn_gpt or cudnn_cnn" >&2; exit 2 ;;
esac

{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "device_kind: $KIND"
  echo "gpus_visible: $NGPU"
  echo "reps: $REPS steps: $STEPS warmup: $WARMUP"
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "query: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader | head -1)"
  $PY -c 'import torch, sys, platform; print("python:", platform.python_version()); print("torch:", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "nccl", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-")'
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "kernel: $(uname -r)"
  echo "--- nvidia-smi"
  nvidia-smi
} > "$OUT/env.txt" 2>&1

$PY $HERE/host_speed.py > "$OUT/host_speed.json" 2>&1 || echo "host_speed.py FAILED" >> "$OUT/host_speed.json"

# Repetitions are the outer loop, so that a slow spell of the host (these machines are
# shared, and their host speed was seen to differ by 1.5x from one lease to the next)
# falls on every cell alike rather than on one cell's repetitions.
cells() {
  grep -v '^#' "$MATRIX" | while read -r size mode gpus flags; do
    [ -n "$size" ] || continue
    if [ -n "${ONLY_GPUS:-}" ] && ! [[ " $ONLY_GPUS " == *" $gpus "* ]]; then continue; fi
    if [ -n "${ONLY_MODES:-}" ] && ! [[ " $ONLY_MODES " == *" $mode "* ]]; then continue; fi
    echo "$size $mode $gpus $flags"
  done
}
launcher() { # the command that starts SCRIPT for a cell of $2 GPUs in mode $1
  if [ "$2" = 1 ] && [ "$1" = single ]; then echo "$PY"; else echo "torchrun --standalone --nproc_per_node $2"; fi
}

: > "$OUT/runs.log"
: > "$OUT/probe.log"
for rep in $(seq 1 "$REPS"); do
  cells | while read -r size mode gpus flags; do
    if [ "$gpus" -gt "$NGPU" ]; then
      [ "$rep" = 1 ] && echo "### skip $size $mode $gpus: needs $gpus GPUs, $NGPU here" >> "$OUT/runs.log"
      continue
    fi
    cmd="$(launcher "$mode" "$gpus") $SCRIPT $flags --mode $mode --steps $STEPS --warmup $WARMUP"
    {
      echo "### cell $size $mode $gpus rep $rep"
      echo "### command $cmd"
      timeout "${RUN_TIMEOUT:-240}" $cmd 2>&1 < /dev/null
      echo "### rc $?"
    } >> "$OUT/runs.log"
  done
done
cells | while read -r size mode gpus flags; do
  [ "$gpus" = 1 ] && [ "$MATRIX" = "$HERE/matrix.tsv" ] || continue  # the probe takes train_gpt's flags
  {
    echo "### cell $size $mode $gpus probe"
    $(launcher "$mode" "$gpus") $HERE/host_probe.py $flags --mode "$mode" --steps "$STEPS" --warmup "$WARMUP" 2>&1 < /dev/null | grep -v '^step '
    echo "### rc ${PIPESTATUS[0]}"
  } >> "$OUT/probe.log"
done
$PY $HERE/host_speed.py > "$OUT/host_speed_end.json" 2>&1 || echo "host_speed.py FAILED" >> "$OUT/host_speed_end.json"

if [ "${SUITE:-train_gpt}" = gpt_ref ]; then
  $PY $HERE/collect_real.py --results "$OUT/runs.log" --suite gpt_ref --size 217m -o "$OUT/real.json"
else
  $PY $HERE/collect_real.py --dir "$OUT" -o "$OUT/real.json"
fi
grep -E '^### (cell|rc|skip)|mean step|^probe' "$OUT/runs.log" "$OUT/probe.log" | tail -60
