#!/bin/bash
# Usage: OUT=DIR [STEPS=6] [ONLY="dense moe"] [NO_REAL=1] [WHEELS=device-wheels]
#        bash tools/device/record_megatron_on_device.sh
# examples/megatron/train_gpt.py (Megatron-core 0.16.1, local layer spec, bf16) recorded for
# real on one GPU under `torchrun --nproc_per_node 1` (TP = PP = 1): the dense default size
# and the smallest MoE (4 experts, top-2, EP = 1), each with gpu_profiler's host-time pass,
# then each run for real without the recorder on the same lease (its "mean step" and
# "median step" are the numbers to compare with the simulation of the same command: the
# MoE's under a scenario with `[workload] moe_routing = "balanced"`; at EP = 1 every
# token-expert pair is this GPU's, so only the split between its experts differs).
# Binaries built here are in build-devbin/ (gpu_profiler, gpu_profiler_gpu, libphantora_recorder.so, lib/), as for
# record_train_gpt_on_device.sh.
#
# The device cannot reach PyPI: megatron-core's wheel (and packaging's) must travel with
# the working tree in WHEELS (default device-wheels/, an untracked folder), e.g.
#   mkdir -p device-wheels && build/venv/bin/python -m pip download --no-deps \
#       megatron-core==0.16.1 packaging==25.0 -d device-wheels
#
# Writes $OUT/megatron_<cell>.tsv and $OUT/record_megatron.log.  ONLY="dense moe" picks cells.
#
# The host-time pass keeps the bytes of every device-to-host copy of at most 64 bytes
# ("readback" lines, host_time/readback_table.h): the gradient norm Megatron's
# clipping reads, so that a simulation clips as the real run does.  A recorder built before
# them writes none; the log says how many each cell has ("readback lines"), and the norm's
# values ("norm reads": the float32 read three calls before each step's first `grad * coeff`
# kernel).  Only the dense recording, no real runs:  ONLY=dense NO_REAL=1
set -u
. "$(dirname "$0")/device_env.sh"
STEPS=${STEPS:-6}
declare -A CELLS=(
  [dense]=""
  [moe]="--experts 4 --topk 2"
)
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  python3 -m pip install --disable-pip-version-check -q --no-deps --no-index \
    --find-links "${WHEELS:-device-wheels}" megatron-core==0.16.1 packaging==25.0 \
    || echo "megatron-core install FAILED"
  python3 -c "import megatron.core, torch; print('megatron-core', megatron.core.__version__, 'torch', torch.__version__)"
  for cell in ${ONLY:-dense moe}; do
    cmd=(torchrun --standalone --nproc_per_node 1 examples/megatron/train_gpt.py ${CELLS[$cell]})
    echo "== record $cell: ${cmd[*]} --steps $STEPS"
    $G record --raw "$OUT/megatron_$cell.tsv" -- "${cmd[@]}" --steps "$STEPS" </dev/null \
      || echo "record $cell FAILED"
    echo "readback lines $cell: $(grep -c '^readback' "$OUT/megatron_$cell.tsv" || true)"
    python3 - "$OUT/megatron_$cell.tsv" <<'PY' || echo "norm reads $cell: could not read"
import struct, sys
gaps, reads = {}, {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "gap":
        gaps.setdefault(f[1], []).append(f[3])
    elif f[0] == "readback":
        reads[(f[1], int(f[2]))] = bytes.fromhex(f[3])
norms = []
for thread, labels in gaps.items():
    for i in range(3, len(labels)):
        if ("MulFunctor" in labels[i] and "FillFunctor<int>" in labels[i - 1]
                and (thread, i - 3) in reads and len(reads[(thread, i - 3)]) == 4):
            norms.append(struct.unpack("<f", reads[(thread, i - 3)])[0])
print(f"norm reads {sys.argv[1].rsplit('/', 1)[-1]}: {norms}")
PY
    if [ -z "${NO_REAL:-}" ]; then
      echo "== real $cell: ${cmd[*]} --steps 20 --warmup 5"
      "${cmd[@]}" --steps 20 --warmup 5 </dev/null || echo "real $cell FAILED"
    fi
  done
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  for f in "$OUT"/megatron_*.tsv; do printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$f"; done
  wc -l "$OUT"/*.tsv
  date -u
} > "$OUT/record_megatron.log" 2>&1
tail -30 "$OUT/record_megatron.log"
# Both cells' real step times (and the MoE's expert rows), whatever the tail above holds.
echo "== summary"
grep -E '^== |mean step|expert rows per step|FAILED|readback lines|norm reads' "$OUT/record_megatron.log"
