#!/usr/bin/env bash
# Fails, naming each one, when a function that one of the real libraries exports (strong,
# weak or indirect) is not defined by the interposer: a program's call to it would reach
# the real library, which finds no driver or quietly answers for hardware nobody
# simulates.  It compares the built library's own exports, so a hook added anywhere (or a
# generated stub) counts, whoever added it.
#
# A LIBRARY named *.txt is a list of its exports, one a line ('#' lines are comments):
# NVML's (nvml_functions.txt), whose library comes with the driver, not the toolkit.
#
# usage: check_exports.sh INTERPOSER.so -- LIBRARY...
set -euo pipefail
interposer="$1"
shift
[ "$1" = "--" ] || { echo "usage: check_exports.sh INTERPOSER.so -- LIBRARY..." >&2; exit 2; }
shift

functions() {
    case "$1" in
    *.txt) grep -v '^#' "$1" | sort -u ;;
    *) nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" || $2 == "i" { print $3 }' |
        sed 's/@.*//' | sort -u ;;
    esac
}

defined="$(functions "$interposer")"
missing=0
checked=0
for lib in "$@"; do
    [ -e "$lib" ] || { echo "check_exports.sh: $lib does not exist" >&2; exit 2; }
    exported="$(functions "$lib")"
    checked=$((checked + $(wc -l <<<"$exported")))
    while read -r name; do
        [ -n "$name" ] || continue
        echo "$(basename "$lib") exports $name, which $(basename "$interposer") does not define:" \
            "a call to it would reach the real library" >&2
        missing=$((missing + 1))
    done < <(comm -23 <(echo "$exported") <(echo "$defined"))
done
if [ "$missing" -gt 0 ]; then
    echo "check_exports.sh: $missing of $checked real exports are not interposed" \
        "(implement them, or widen generate_stubs.sh's pattern so each gets a loud stub)" >&2
    exit 1
fi
echo "check_exports.sh: all $checked exports of $# libraries are defined by $(basename "$interposer")"
