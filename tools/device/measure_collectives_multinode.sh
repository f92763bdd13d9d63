#!/bin/bash
# Usage: NNODES=2 NODE_RANK=<0..NNODES-1> MASTER_ADDR=<node 0's address> [MASTER_PORT=29500]
#        [OUT=DIR] [GPUS_PER_NODE=8] [ALGOS="default Ring Tree NVLSTree PAT"] [MODES=graph]
#        [MAX_BYTES=4G] [FACTOR=2] bash tools/device/measure_collectives_multinode.sh
# The collectives across nodes, for the NCCL model's multi-node rules (nccl/README.md, "Across
# nodes"): run it on every node of a multi-node lease at once, from the repository root, each
# with its NODE_RANK. For each NCCL_ALGO in ALGOS ("default": NCCL's own choice) it runs
# bench/collectives/nccl_perf.py (nccl-tests' method: 20 back-to-back calls, CUDA-graph
# replay in graph mode) on all NNODES x GPUS_PER_NODE GPUs under torchrun, with NCCL's
# INIT, GRAPH, TUNING and NET log per rank: the algorithm (ring, tree, NVLSTree, PAT),
# protocol and channels NCCL picks across nodes, the rings and trees its graph search
# built, the NICs it uses, and send/recv between nodes (p2p channels per net peer). A
# forced algorithm NCCL cannot run for a collective makes that call fail: the CSV then
# lacks the row and console.log says why. Node 0 writes the CSVs.
# Writes under $OUT/<algo>/: nccl_perf_<mode>_<N>gpu.csv, nccl_debug_<mode>_<N>gpu.<pid>.log;
# $OUT/env_node<NODE_RANK>.txt (nvidia-smi, topology, ibstat), $OUT/console_node<R>.log.
# Then, here: python3 bench/collectives/nccl_tuning.py --dir OUT/<algo> -o
# tests/data/<machine>/nccl_perf_<algo>.csv for each algorithm.
set -u
: "${NNODES:?set NNODES}" "${NODE_RANK:?set NODE_RANK}" "${MASTER_ADDR:?set MASTER_ADDR}"
OUT=${OUT:-/tmp/collectives-multinode}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
ALGOS=${ALGOS:-"default Ring Tree NVLSTree PAT"}
MODES=${MODES:-graph}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ) node_rank: $NODE_RANK of $NNODES"
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  python3 -c 'import torch; print("torch:", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
  echo "--- nvidia-smi"; nvidia-smi
  echo "--- nvidia-smi topo -m"; nvidia-smi topo -m
  echo "--- ibstat"; ibstat 2>&1 || echo "no ibstat"
} > "$OUT/env_node${NODE_RANK}.txt" 2>&1
N=$((NNODES * GPUS_PER_NODE))
for algo in $ALGOS; do
  dir="$OUT/$algo"
  mkdir -p "$dir"
  for mode in $MODES; do
    (
      [ "$algo" = default ] || export NCCL_ALGO="$algo"
      NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,COLL,GRAPH,NET \
      NCCL_DEBUG_FILE="$dir/nccl_debug_${mode}_${N}gpu.%p.log" \
        timeout 900 torchrun --nnodes "$NNODES" --node_rank "$NODE_RANK" \
          --nproc_per_node "$GPUS_PER_NODE" --master_addr "$MASTER_ADDR" \
          --master_port "${MASTER_PORT:-29500}" bench/collectives/nccl_perf.py \
          --out "$dir" --mode "$mode" --max-bytes "${MAX_BYTES:-4G}" --factor "${FACTOR:-2}" \
          2>&1 | grep -v '^NCCL INFO' | tee -a "$OUT/console_node${NODE_RANK}.log"
      echo "rc nccl_perf $algo $mode $N: ${PIPESTATUS[0]}" | tee -a "$OUT/console_node${NODE_RANK}.log"
    )
  done
done
