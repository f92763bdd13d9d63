#!/usr/bin/env bash
# examples/slurm/phantora.sbatch on the Slurm cluster this machine reaches (registered
# only where `scontrol ping` answered when the build was configured): 4 tasks on one
# node, the small GPT model with DDP; the job must complete and every rank report.
#
# usage: slurm_batch_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
SRC=$1 BUILD=$2
OUT=$(mktemp -d "${TMPDIR:-/tmp}/phantora-slurm.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
export PHANTORA_BUILD=$BUILD
export PHANTORA_KEYS_DIR=$OUT/keys
export PHANTORA_SCRIPT="$SRC/examples/torch/train_gpt.py --layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096 --steps 3 --mode ddp"
cd "$SRC" || exit 1
timeout 600 sbatch --wait --nodes=1 --ntasks=4 --ntasks-per-node=4 --time=10 \
    --output="$OUT/job.out" examples/slurm/phantora.sbatch
status=$?
cat "$OUT/job.out"
rm -f "$SRC"/phantora-*.json
[ "$status" = 0 ] || { echo "FAIL: the batch job ended with $status"; exit 1; }
for r in 0 1 2 3; do
    grep -q "rank $r: mean step" "$OUT/job.out" || { echo "FAIL: rank $r did not report"; exit 1; }
done
grep -q "serving on tcp://" "$OUT/job.out" || { echo "FAIL: no bridge"; exit 1; }
echo PASS
