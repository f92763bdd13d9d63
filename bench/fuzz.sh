#!/usr/bin/env bash
# A longer run of the libFuzzer targets than ctest's few seconds (tests/fuzz/): the wire
# decoder from a seed of every message kind, the scenario reader from the shipped scenarios,
# the raw-log reader and the profile reader from phantora-profile-seeds' raw log and the
# profile it imports to.  Prints libFuzzer's final figures (executions, coverage, corpus) for
# each and exits non-zero on a crash, whose input libFuzzer saves as crash-* (or timeout-*,
# oom-*) in a kept folder it names.
#
# usage: bench/fuzz.sh [BUILD_DIR] [SECONDS]     (defaults: build, 600; seconds per target)
set -euo pipefail
build="$(cd "${1:-build}" && pwd)"
seconds="${2:-600}"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
cd "$work"

fuzz() { # NAME FUZZER CORPUS [OPTIONS...]
    local name="$1" fuzzer="$2" corpus="$3"
    shift 3
    echo "$name: $seconds s from $(ls "$corpus" | wc -l) seeds"
    if ! "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/" "$@" "$corpus" >"$name.log" 2>&1; then
        grep -E '^(==|SUMMARY|artifact_prefix|Test unit written)' "$name.log" || tail -20 "$name.log"
        echo "$name: CRASHED; the input and the log are kept in $work" >&2
        exit 1
    fi
    grep -E '^(#[0-9]+[[:space:]]+DONE|stat::)' "$name.log"
    echo "$name: no crash in $seconds s"
}

"$build/tests/phantora-wire-seeds" wire-corpus
fuzz "wire decoder" "$build/tests/fuzz-wire/wire_decoder_fuzzer" wire-corpus
mkdir scenario-corpus
cp "$src"/scenarios/*.toml scenario-corpus/
fuzz "scenario reader" "$build/tests/fuzz-scenario/scenario_reader_fuzzer" scenario-corpus
"$build/tests/phantora-profile-seeds" raw-corpus profile-corpus >/dev/null
fuzz "raw-log reader" "$build/tests/fuzz-profile/raw_log_fuzzer" raw-corpus
fuzz "profile reader" "$build/tests/fuzz-profile/profile_reader_fuzzer" profile-corpus -timeout=20
rm -rf "$work"
