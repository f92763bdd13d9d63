#!/bin/bash
# Usage: [OUT=DIR] [GPUS="2 4"] [MODES="graph eager"] [MAX_BYTES=4G] [FACTOR=2]
#        bash tools/device/measure_collectives_on_device.sh
# Real collectives and compute-communication interference on the GPUs of this machine, for
# tests/data/<machine>/ (see its README). Run from the repository root on the GPU machine:
#   OUT=/some/dir bash tools/device/measure_collectives_on_device.sh
# Environment: GPUS ("2 4": the world sizes to measure, each at most the GPUs here), MODES
# ("graph eager"), MAX_BYTES (4G), FACTOR (2). Writes under $OUT: env.txt (nvidia-smi,
# topology, versions), nccl_perf_<mode>_<N>gpu.csv, nccl_debug_<mode>_<N>gpu.<pid>.log (each
# rank's NCCL_DEBUG=INFO log, subsystems INIT,TUNING,COLL,GRAPH: the algorithm, protocol and
# channels NCCL chose), interference_<N>gpu.csv and the console output (console.log).
# NVLink multicast (NVLS) stays off, as the device notes ask.
set -u
OUT=${OUT:-/tmp/collectives-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
GPUS=${GPUS:-"2 4"}
MODES=${MODES:-"graph eager"}
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpus_visible: $NGPU"
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "--- nvidia-smi"; nvidia-smi
  echo "--- nvidia-smi topo -m"; nvidia-smi topo -m
  echo "--- nvidia-smi nvlink -s -i 0"; nvidia-smi nvlink -s -i 0
} > "$OUT/env.txt" 2>&1
for n in $GPUS; do
  [ "$n" -le "$NGPU" ] || { echo "skip $n GPUs: $NGPU here" | tee -a "$OUT/console.log"; continue; }
  for mode in $MODES; do
    # one log a process; every rank makes the same choices (nccl_tuning.py reads one)
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,COLL,GRAPH \
    NCCL_DEBUG_FILE="$OUT/nccl_debug_${mode}_${n}gpu.%p.log" \
      timeout 300 torchrun --standalone --nproc_per_node "$n" bench/collectives/nccl_perf.py \
        --out "$OUT" --mode "$mode" --max-bytes "${MAX_BYTES:-4G}" --factor "${FACTOR:-2}" \
        2>&1 | grep -v '^NCCL INFO' | tee -a "$OUT/console.log"
    echo "rc nccl_perf $mode $n: ${PIPESTATUS[0]}" | tee -a "$OUT/console.log"
  done
  timeout 120 torchrun --standalone --nproc_per_node "$n" bench/interference/gemm_allreduce.py \
    --out "$OUT" 2>&1 | tee -a "$OUT/console.log"
  echo "rc interference $n: ${PIPESTATUS[0]}" | tee -a "$OUT/console.log"
done
