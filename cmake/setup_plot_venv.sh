#!/usr/bin/env bash
# Adds matplotlib to the project's Python environment (build/venv, the one torch is
# installed into) for phantora-sweep's charts. Pinned for repeatable builds; numpy is the
# torch environment's own pin. pip's download cache is used, so a rebuild does not
# download again.
#
# usage: setup_plot_venv.sh PYTHON VENV_DIR STAMP
set -euo pipefail
python="$1"
venv="$2"
stamp="$3"

packages=(
    matplotlib==3.11.2 contourpy==1.3.3 cycler==0.12.1 fonttools==4.68.0 kiwisolver==1.5.1
    packaging==26.4 pillow==13.0.0 pyparsing==3.3.3 python-dateutil==4.0.0 numpy==2.3.4
)

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --no-deps "${packages[@]}"
"$venv/bin/python" -c "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot"
touch "$stamp"
