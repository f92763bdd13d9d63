#!/bin/bash
# Usage: [OUT=DIR] [REPS=3] [PIN=4] [SUMMARY=REGEX] [PY=python3]
#        bash tools/device/pinned_runs_on_device.sh CMD ARGS...
# The same command run unpinned and pinned to the host's fastest CPUs, interleaved, on the
# GPU machine: how much of a host-bound step's real time is the CPU the launcher landed on
# (bench/accuracy/README.md, "the host's two states").  bench/accuracy/cpu_speed.py ranks
# the CPUs first (median ns per iteration of host_speed.py's Python workload on each) and
# again at the end.
#
#   OUT=DIR REPS=3 PIN=4 bash tools/device/pinned_runs_on_device.sh CMD ARGS...
#
# Writes DIR/cpu_speed_start.txt, DIR/cpu_speed_end.txt, DIR/runs.log (each run's output
# tail under a "== run K unpinned|pinned CPUS" header) and DIR/summary.txt (the lines of
# each run matching SUMMARY, a grep -E pattern; default "mean step|iter_s_median").
set -u
OUT=${OUT:-/tmp/pinned-out}
REPS=${REPS:-3}
PIN=${PIN:-4}
SUMMARY=${SUMMARY:-"mean step|iter_s_median"}
PY=${PY:-python3}
HERE=$(cd "$(dirname "$0")/../../bench/accuracy" && pwd)  # cpu_speed.py
mkdir -p "$OUT"
[ $# -gt 0 ] || { echo "usage: $0 CMD ARGS..." >&2; exit 2; }

$PY "$HERE/cpu_speed.py" --n 200000 --reps 3 > "$OUT/cpu_speed_start.txt"
FAST=$(sort -k4 -n "$OUT/cpu_speed_start.txt" | head -n "$PIN" | awk '{print $2}' | paste -sd, -)
echo "fastest $PIN CPUs: $FAST" | tee "$OUT/summary.txt"
: > "$OUT/runs.log"
for k in $(seq 1 "$REPS"); do
  for mode in unpinned pinned; do
    if [ "$mode" = pinned ]; then run=(taskset -c "$FAST" "$@"); else run=("$@"); fi
    echo "== run $k $mode ${FAST}" >> "$OUT/runs.log"
    "${run[@]}" > "$OUT/run.tmp" 2>&1
    echo "exit $?" >> "$OUT/run.tmp"
    tail -n 40 "$OUT/run.tmp" >> "$OUT/runs.log"
    echo "run $k $mode: $(grep -E "$SUMMARY" "$OUT/run.tmp" | tail -n 1)" | tee -a "$OUT/summary.txt"
  done
done
$PY "$HERE/cpu_speed.py" --n 200000 --reps 3 > "$OUT/cpu_speed_end.txt"
rm -f "$OUT/run.tmp"
