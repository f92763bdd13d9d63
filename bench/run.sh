#!/usr/bin/env bash
# Prints the project's speed figures on this machine:
#   1. interposer overhead per kernel launch (one rank, real host time per launch);
#   2. wall time per simulated step of the CUDA example at 8, 32 and 64 ranks;
#   3. the ns-3 module's transport benchmarks (packet- and flow-level all-reduce);
#   4. network simulation speed on the shipped multi-node scenarios: packet-level 256 MiB
#      all-reduce over 2 nodes x 8 GPUs, flow-level 1 GiB ring all-reduce over 128 x 8.
# Usage: bench/run.sh [build-dir]   (builds first with ./ns3 build)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
PHANTORA_BUILD_DIR="$BUILD" "$ROOT/ns3" build >/dev/null
CLUSTER="$BUILD/bridge/phantora-cluster"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

scenario() { # gpus -> a one-switch scenario file
    sed -e "s/^gpus = .*/gpus = $1/" "$ROOT/scenarios/default.toml" >"$TMP/s$1.toml"
    echo "$TMP/s$1.toml"
}

echo "== interposer overhead per kernel launch (1 rank) =="
"$CLUSTER" --scenario "$(scenario 1)" --nproc 1 -- "$BUILD/bench/phantora-bench-launch-overhead" 200 500 |
    grep -o 'launch overhead.*'

echo "== wall time per simulated step, CUDA example (4M floats all-reduced per step) =="
for n in 8 32 64; do
    steps=20
    PHANTORA_EXAMPLE_ID_FILE="$TMP/id$n" "$CLUSTER" --scenario "$(scenario $n)" --nproc "$n" \
        --report "$TMP/r$n.json" -- "$BUILD/examples/cuda/phantora-cuda-train-step" 4194304 "$steps" >"$TMP/log$n" 2>&1 ||
        { tail -20 "$TMP/log$n"; exit 1; }
    wall="$(grep -o '"wall_time_s": [0-9.e+-]*' "$TMP/r$n.json" | awk '{print $2}')"
    step="$(grep -o "\[rank 0\] rank 0 step $((steps - 1)) time [0-9.]* us" "$TMP/log$n" | awk '{print $8}')"
    awk -v n="$n" -v w="$wall" -v s="$steps" -v st="$step" \
        'BEGIN { printf "%3d ranks: %.3f s wall for %d steps (incl. start-up): %.1f ms wall per step; simulated step %s us\n", n, w, s, 1000 * w / s, st }'
done

echo "== ns-3 transports =="
"$BUILD/ns3-module/examples/phantora-packet-transfer-example" --bytes=268435456 --gpus=16 | grep -E "simulated|wall time"
"$BUILD/ns3-module/examples/phantora-flow-scale-example" | grep -E "^ring|simulated time|wall time|events"

echo "== network simulation speed on shipped scenarios (wall time, events/s) =="
BENCH_NET="$BUILD/bench/phantora-bench-network"
echo "-- packet-level all-reduce, 256 MiB over 16 GPUs on 2 nodes (InfiniBand NDR) --"
"$BENCH_NET" --scenario "$ROOT/scenarios/cluster-2x8-h100-ib.toml" --bytes 256MiB --transport packet --algo tree
echo "-- flow-level ring all-reduce, 1 GiB over 1024 GPUs = 128 nodes (InfiniBand NDR), one channel --"
"$BENCH_NET" --scenario "$ROOT/scenarios/cluster-128x8-h100-ib.toml" --bytes 1GiB --transport flow \
    --algo ring --channels 1
