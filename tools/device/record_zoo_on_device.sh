#!/bin/bash
# usage: OUT=DIR [ONLY="cell ..."] [BUDGET=seconds] [REPS=2] tools/device/record_zoo_on_device.sh
#        tools/device/record_zoo_on_device.sh --list      # the cells and their commands
# The public-model kernel zoo (issue 33, item 3), on one GPU: for each cell, a training
# program of bench/accuracy/workloads/zoo.py (Hugging Face transformers, torchvision and
# timm models built from configs, random weights and data), first run for real REPS times
# (its RESULT lines: median step, GPU time, peak memory), then recorded with
# `gpu_profiler record --raw` (kernels, then host time) running exactly the same command,
# so a simulation of that command finds "runs with the same arguments" and a whole-program
# leave-one-out harness can compare it with the real runs.
# Run from the repository root, with the binaries built on the development machine in
# build-devbin/ (gpu_profiler, gpu_profiler_gpu, libphantora_recorder.so, lib/: see
# device_env.sh).  Writes under $OUT (at most 8 files come back from a device call):
#   env.txt        nvidia-smi, driver, torch / CUDA / cuDNN / NCCL / transformers / timm /
#                  torchvision versions, the recorder's libraries
#   zoo.log        one summary line a cell (its real steps, the recorder's exit, seconds)
#   results.jsonl  {"cell", "rep" (1..REPS, or "record"), "result": RESULT json}, as they come
#   zoo-logs.tar   <cell>.log: the command, each run's kept output (`# host:` after each:
#                  the machine's busy and steal CPU shares over it, /proc/stat)
#   zoo-raw.tar    zoo_<cell>.tsv.zst (or .tsv.gz where the machine has no zstd): the raw
#                  recorder logs, each ending in `meta nvidia_driver`; gpu_profiler import
#                  them (a .gz recompressed to .zst first)
# The tars are appended to cell by cell, so a call cut short still brings back what ran.
# BUDGET (seconds from the start, default 530): a cell is started only while the time so
# far plus the longest cell so far fits.  ONLY: cells, in the order given.
# Cost measured on an H200 (2026-12-01): 49-98 s a cell (two real runs and both recorder
# passes; 13 cells in two calls of 493 and 444 s).  That lease's data, with the commands:
# data/raw/profiles/H200/zoo-2026-12-01T2154/ and data/raw/accuracy/H200/zoo-2026-12-01T2154/.
set -u
D=$(dirname "$0")
if [ -f "$D/device_env.sh" ]; then . "$D/device_env.sh"; else . profiles/device_env.sh; fi
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
Z=bench/accuracy/workloads/zoo.py
T="torchrun --standalone --nproc_per_node 1"
P=python3
# name | launcher | zoo.py arguments.  Language models at sequence 1024 (BERT and T5 512),
# vision at 224x224; 3 warm-up and 10 timed steps everywhere.
CELLS=(
  "llama_s_bf16_fused|$P|--model llama --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024"
  "resnet50_bf16_sgd_cl|$P|--model resnet --size m --dtype bf16 --optim sgd --batch 128 --seq 224 --channels-last"
  "bert_s_bf16_fused|$P|--model bert --size s --dtype bf16 --optim adamw_fused --batch 32 --seq 512"
  "gpt2_s_fp16_foreach|$P|--model gpt2 --size s --dtype fp16 --optim adamw_foreach --batch 8 --seq 1024"
  "t5_s_bf16_fused|$P|--model t5 --size s --dtype bf16 --optim adamw_fused --batch 32 --seq 512"
  "vit_b16_bf16_fused|$P|--model vit --size s --dtype bf16 --optim adamw_fused --batch 64 --seq 224"
  "llama_m_bf16_foreach|$P|--model llama --size m --dtype bf16 --optim adamw_foreach --batch 8 --seq 1024"
  "qwen2_s_bf16_fused|$P|--model qwen2 --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024"
  "convnext_t_bf16_foreach_cl|$P|--model convnext --size s --dtype bf16 --optim adamw_foreach --batch 64 --seq 224 --channels-last"
  "llama_m_bf16_fused_fsdp|$T|--model llama --size m --dtype bf16 --optim adamw_fused --mode fsdp --batch 8 --seq 1024"
  "gpt2_m_bf16_fused_ddp|$T|--model gpt2 --size m --dtype bf16 --optim adamw_fused --mode ddp --batch 8 --seq 1024"
  "mistral_s_bf16_sgd|$P|--model mistral --size s --dtype bf16 --optim sgd --batch 8 --seq 1024"
  "resnet50_fp32_sgd|$P|--model resnet --size m --dtype fp32 --optim sgd --batch 64 --seq 224"
  "llama_l_bf16w_fused|$P|--model llama --size l --dtype bf16w --optim adamw_fused --batch 8 --seq 1024"
  "bert_m_fp16_foreach|$P|--model bert --size m --dtype fp16 --optim adamw_foreach --batch 16 --seq 512"
  "t5_m_fp32_foreach|$P|--model t5 --size m --dtype fp32 --optim adamw_foreach --batch 8 --seq 512"
  "timm_vit_s_fp16_fused|$P|--model timm_vit --size s --dtype fp16 --optim adamw_fused --batch 128 --seq 224"
  "gpt2_s_fp32_foreach|$P|--model gpt2 --size s --dtype fp32 --optim adamw_foreach --batch 4 --seq 1024"
  "resnet18_fp16_sgd_ddp_cl|$T|--model resnet --size s --dtype fp16 --optim sgd --mode ddp --batch 128 --seq 224 --channels-last"
  "llama_s_fp16_sgd_ddp|$T|--model llama --size s --dtype fp16 --optim sgd --mode ddp --batch 8 --seq 1024"
  "gpt2_l_bf16_fused|$P|--model gpt2 --size l --dtype bf16 --optim adamw_fused --batch 8 --seq 1024"
  "qwen2_m_bf16w_foreach|$P|--model qwen2 --size m --dtype bf16w --optim adamw_foreach --batch 4 --seq 1024"
  "mistral_m_bf16_fused_fsdp|$T|--model mistral --size m --dtype bf16 --optim adamw_fused --mode fsdp --batch 4 --seq 1024"
  "resnet101_bf16_fused_cl|$P|--model resnet --size l --dtype bf16 --optim adamw_fused --batch 64 --seq 224 --channels-last"
  "vit_l16_bf16_foreach|$P|--model vit --size m --dtype bf16 --optim adamw_foreach --batch 32 --seq 224"
  "convnext_s_fp32_sgd|$P|--model convnext --size m --dtype fp32 --optim sgd --batch 32 --seq 224"
  # issue 34: the same programs compiled (torch.compile: Inductor's Triton kernels) and
  # captured whole in a CUDA graph, beside their eager cells above
  "llama_s_bf16_fused_compile|$P|--model llama --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024 --compile default"
  "gpt2_s_bf16_fused_compile|$P|--model gpt2 --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024 --compile default"
  "resnet50_bf16_sgd_cl_graph|$P|--model resnet --size m --dtype bf16 --optim sgd --batch 128 --seq 224 --channels-last --cuda-graph"
  "llama_s_bf16_fused_graph|$P|--model llama --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024 --cuda-graph"
  "llama_s_bf16_fused_compile_ro|$P|--model llama --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024 --compile reduce-overhead"
  "llama_s_bf16_fused_compile_mat|$P|--model llama --size s --dtype bf16 --optim adamw_fused --batch 8 --seq 1024 --compile max-autotune"
)
STEPS="--steps 10 --warmup 3"
declare -A LAUNCH ARGS
ORDER=()
for c in "${CELLS[@]}"; do
  IFS='|' read -r name launch args <<<"$c"
  LAUNCH[$name]=$launch; ARGS[$name]="$args $STEPS"; ORDER+=("$name")
done
if [ "${1:-}" = --list ]; then
  for n in "${ORDER[@]}"; do echo "$n: ${LAUNCH[$n]} $Z ${ARGS[$n]}"; done
  exit 0
fi
SEL=(${ONLY:-${ORDER[*]}})
for n in "${SEL[@]}"; do
  [ -n "${ARGS[$n]+x}" ] || { echo "record_zoo_on_device.sh: ONLY: unknown cell '$n' (--list)"; exit 2; }
done
: "${OUT:?set OUT}"
mkdir -p "$OUT"
W=${WORK:-/tmp/zoo-work}
rm -rf "$W"; mkdir -p "$W"
START=$(date +%s)
BUDGET=${BUDGET:-530}
if command -v zstd >/dev/null; then PACK="zstd -q -19 --rm"; EXT=zst; else PACK="gzip -9"; EXT=gz; fi
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
{
  date -u; uname -r; nproc
  nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  python3 - <<'EOF'
import torch, torchvision, transformers, timm
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
      "nccl", ".".join(map(str, torch.cuda.nccl.version())), "gpu", torch.cuda.get_device_name())
print("transformers", transformers.__version__, "timm", timm.__version__,
      "torchvision", torchvision.__version__)
EOF
  echo "pack: $PACK"
  for f in "$G" "$B/gpu_profiler_gpu" "$B/libphantora_recorder.so"; do
    echo "ldd $f:"; ldd "$f" | grep -E "not found|cupti|fmt|sqlite|zstd"
  done
} > "$OUT/env.txt" 2>&1
# The machine's CPUs since the /proc/stat line $1: busy and steal shares.
host_share() {
  printf '%s\n%s\n' "$1" "$(head -1 /proc/stat)" | awk '{i=$5+$6; s=$9; t=0; for(k=2;k<=9;k++) t+=$k;
    if (NR==1) {i0=i; s0=s; t0=t} else printf "busy %.1f %%, steal %.1f %%", 100*(1-(i-i0)/(t-t0)), 100*(s-s0)/(t-t0)}'
}
# The lines of a run's output the log keeps (a failed run's last lines too).
keep() { grep -v -E "UserWarning|warnings.warn|^\s*$" | grep -E "^RESULT|rror|FAILED|Traceback|gpu_profiler|recorder|phantora|^#|Killed|exit" | tail -60; }
results() { # cell rep log: the RESULT lines of log into results.jsonl
  grep '^RESULT ' "$3" | sed "s/^RESULT //" | while read -r j; do
    printf '{"cell": "%s", "rep": "%s", "result": %s}\n' "$1" "$2" "$j"; done >> "$OUT/results.jsonl"
}
LONGEST=60
for n in "${SEL[@]}"; do
  now=$(date +%s)
  if [ $((now - START + LONGEST)) -gt "$BUDGET" ]; then
    echo "$n: skipped (budget: $((now - START)) s gone, longest cell $LONGEST s)" | tee -a "$OUT/zoo.log"
    continue
  fi
  cmd="${LAUNCH[$n]} $Z ${ARGS[$n]}"
  t0=$now; real=""
  {
    echo "# $cmd"
    for r in $(seq "${REPS:-2}"); do
      echo "== real $r $(date -u +%T)"; s0=$(head -1 /proc/stat)
      timeout 150 $cmd </dev/null > "$W/run.txt" 2>&1; rc=$?
      keep < "$W/run.txt"; [ $rc = 0 ] || { echo "# real $r FAILED rc=$rc"; tail -15 "$W/run.txt"; }
      echo "# host: $(host_share "$s0")"
      results "$n" "$r" "$W/run.txt"
      real="$real $(grep '^RESULT' "$W/run.txt" | sed 's/.*"step_ms_median": \([0-9.]*\).*/\1/' | cut -c1-7)"
    done
    echo "== record $(date -u +%T)"; s0=$(head -1 /proc/stat)
    timeout 300 $G record --raw "$W/zoo_$n.tsv" -- $cmd </dev/null > "$W/run.txt" 2>&1; rc=$?
    keep < "$W/run.txt"; [ $rc = 0 ] || { echo "# record FAILED rc=$rc"; tail -25 "$W/run.txt"; }
    echo "# host: $(host_share "$s0")"
    results "$n" record "$W/run.txt"
    echo "# record rc=$rc"
  } > "$W/$n.log" 2>&1
  rrc=$(sed -n 's/^# record rc=//p' "$W/$n.log")
  if [ -f "$W/zoo_$n.tsv" ]; then
    printf 'meta\tnvidia_driver\t%s\n' "$DRIVER" >> "$W/zoo_$n.tsv"
    lines=$(wc -l < "$W/zoo_$n.tsv")
    $PACK "$W/zoo_$n.tsv" && (cd "$W" && tar -rf "$OUT/zoo-raw.tar" "zoo_$n.tsv.$EXT")
  else
    lines=0
  fi
  (cd "$W" && tar -rf "$OUT/zoo-logs.tar" "$n.log")
  dt=$(( $(date +%s) - t0 )); [ $dt -gt $LONGEST ] && LONGEST=$dt
  echo "$n: real ms$real; record rc=$rrc, $lines raw lines; $dt s" | tee -a "$OUT/zoo.log"
done
echo "total $(( $(date +%s) - START )) s" | tee -a "$OUT/zoo.log"
ls -la "$OUT"
