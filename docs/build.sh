#!/usr/bin/env bash
# Builds the documentation site (docs/ and every folder's README) with Sphinx and MyST,
# warnings as errors (an unresolved link, a page in no table of contents, a bad anchor).
#   docs/build.sh [BUILD_DIR]     the site in BUILD_DIR/docs/html (BUILD_DIR: build/)
# Sphinx lives in BUILD_DIR/docs-venv, installed once at the versions below (pip's cache
# keeps the download); `./ns3 docs` and the ctest `phantora-docs` run this.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(mkdir -p "${1:-$ROOT/build}" && cd "${1:-$ROOT/build}" && pwd)"
VENV="$BUILD/docs-venv"
PINS="sphinx==8.1.3 myst-parser==4.0.1"
if [ ! -x "$VENV/bin/sphinx-build" ] || [ "$(cat "$VENV/.pins" 2>/dev/null)" != "$PINS" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q $PINS
    echo "$PINS" > "$VENV/.pins"
fi
"$VENV/bin/sphinx-build" -q -W --keep-going -c "$ROOT/docs" -d "$BUILD/docs/doctrees" -b html \
    "$ROOT" "$BUILD/docs/html"
echo "docs: $BUILD/docs/html/docs/index.html"
