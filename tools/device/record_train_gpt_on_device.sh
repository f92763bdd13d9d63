#!/bin/bash
# Usage: OUT=DIR [STEPS=6] [ONLY="SIZE_MODE..."]
#        bash tools/device/record_train_gpt_on_device.sh
# examples/torch/train_gpt.py recorded for real on one GPU, once per one-GPU cell of
# bench/accuracy/matrix.tsv, with the binaries built here copied to build-devbin/
# (gpu_profiler, gpu_profiler_gpu, libphantora_recorder.so).  Since the recorder keys each
# kernel launch by its scalar arguments (cuda_abi/kernel_params.h), a simulation
# of each size takes the durations of its own kernels' arguments.
# Writes $OUT/torch_train_gpt_<size>.tsv (one process) or torch_train_gpt_<mode>_<size>.tsv
# (torchrun, one worker) and $OUT/record_train_gpt.log.  ONLY="w1024_single ddp_default..."
# (<size>_<mode>) records just those cells.
set -u
. "$(dirname "$0")/device_env.sh"
STEPS=${STEPS:-6}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  while read -r size mode gpus flags; do
    [ "$gpus" = 1 ] || continue
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" ${size}_$mode "* ]] || continue
    if [ "$mode" = single ]; then
      name=torch_train_gpt_$size
      cmd=(python3 examples/torch/train_gpt.py $flags --mode single --steps "$STEPS")
    else
      name=torch_train_gpt_${mode}_$size
      cmd=(torchrun --standalone --nproc_per_node 1 examples/torch/train_gpt.py $flags
           --mode "$mode" --steps "$STEPS")
    fi
    echo "== $name: ${cmd[*]}"
    $G record --raw "$OUT/$name.tsv" -- "${cmd[@]}" </dev/null || echo "$name FAILED"
  done < <(grep -v '^#' bench/accuracy/matrix.tsv | grep -v '^[[:space:]]*$')
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in "$OUT"/torch_train_gpt_*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$f"; done
  wc -l "$OUT"/*.tsv
  date -u
} > "$OUT/record_train_gpt.log" 2>&1
tail -40 "$OUT/record_train_gpt.log"
