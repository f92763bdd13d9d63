#!/usr/bin/env bash
# Writes nvml_functions.txt: every function nvml.h declares, which is what libnvidia-ml.so
# exports (the versioned names and, in its NVML_NO_UNVERSIONED_FUNC_DEFS block, the older
# unversioned ones).  NVML ships with the driver, not the toolkit, so no library is here to
# read with nm, as check_exports.sh reads the others; the header of the toolkit's NVML is a
# PyPI wheel:
#   pip download --no-deps nvidia-nvml-dev==13.0.87 && unzip -o nvidia_nvml_dev-*.whl
#   interposer/list_nvml_functions.sh nvidia/cu13/include/nvml.h > interposer/nvml_functions.txt
#
# usage: list_nvml_functions.sh NVML_H
set -euo pipefail
header="$1"
version="$(sed -n 's/^#define NVML_API_VERSION_STR *"\([0-9]*\)".*/\1/p' "$header")"
echo "# Every function nvml.h declares (NVML API version ${version:-?}, nvidia-nvml-dev 13.0.87),"
echo "# one a line: written by list_nvml_functions.sh; read by check_exports.sh and"
echo "# generate_stubs.sh as the exports of libnvidia-ml.so."
grep 'DECLDIR' "$header" | grep -o 'nvml[A-Za-z0-9_]*[[:space:]]*(' | tr -d ' (' | sort -u
