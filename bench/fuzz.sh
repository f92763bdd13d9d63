#!/usr/bin/env bash
# A longer run of the libFuzzer targets than ctest's five seconds (tests/fuzz/), from the
# seed corpus of every message kind (and the shipped scenarios); prints libFuzzer's final figures (executions,
# coverage, corpus) and exits non-zero on a crash, whose input libFuzzer saves as crash-*.
#
# usage: bench/fuzz.sh [BUILD_DIR] [SECONDS]     (defaults: build, 600)
set -euo pipefail
build="$(cd "${1:-build}" && pwd)"
seconds="${2:-600}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/tests/phantora-wire-seeds" corpus
echo "wire decoder: $seconds s from $(ls corpus | wc -l) seeds"
"$build/tests/fuzz-wire/wire_decoder_fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$PWD/" corpus 2>&1 | grep -E '^(#[0-9]+[[:space:]]+DONE|stat::)'
echo "wire decoder: no crash in $seconds s"
mkdir scenario-corpus
cp "$(dirname "$build")"/scenarios/*.toml scenario-corpus/ 2>/dev/null ||
    cp "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"/scenarios/*.toml scenario-corpus/
echo "scenario reader: $seconds s from $(ls scenario-corpus | wc -l) seeds"
"$build/tests/fuzz-scenario/scenario_reader_fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$PWD/" scenario-corpus 2>&1 | grep -E '^(#[0-9]+[[:space:]]+DONE|stat::)'
echo "scenario reader: no crash in $seconds s"
