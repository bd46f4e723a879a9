#!/usr/bin/env bash
# Gathers, on a machine with network access, what a GPU machine without it needs beside a
# checkout of the code to run gpu_figures.sh or gpu_training.sh:
#   .whl/      wheels for Python 3.12 of the packages a plain CUDA torch install lacks, at
#              the versions this checkout's .venv has: faiss-cpu, plotly, pooch, and
#              Streamlit with what it needs (pydeck left out: nothing imports it)
#   .whl/source-manifest  the commit and its files' ids, by which a copy without git keeps
#              its tables (_results.py); written only from a clean checkout
#   .gpudata/  MNIST and USPS copied from the data folder (Fashion-MNIST left out to keep the
#              copy small; its loading test skips without it)
# Both stay out of git (.git/info/exclude); gpu_steps.sh installs the wheels on the GPU
# machine. Copy the checkout with both folders there, then point NCA_DATA_DIR at the
# copied data folder:
#   NCA_DATA_DIR=/path/to/data bash benchmarks/gpu_figures.sh env tests ...
#
#   NCA_DATA_DIR=/path/to/data bash benchmarks/gpu_carry.sh   # or: bash benchmarks/gpu_carry.sh /path/to/data
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-${NCA_DATA_DIR:?set NCA_DATA_DIR to the data folder, or pass it as the first argument}}
PACKAGES=(faiss-cpu plotly pooch platformdirs streamlit altair jsonschema jsonschema-specifications
          referencing rpds-py itsdangerous python-multipart starlette uvicorn watchdog websockets)
for folder in .whl .gpudata; do
    grep -qx "/$folder/" .git/info/exclude 2>/dev/null || echo "/$folder/" >>.git/info/exclude
done
pins=()
for name in "${PACKAGES[@]}"; do
    version=$(.venv/bin/python -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')
    [ -n "$version" ] || { echo "$name is not in .venv: run make test first" >&2; exit 1; }
    pins+=("$name==$version")
done
rm -rf .whl && mkdir .whl
.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any -d .whl "${pins[@]}"
.venv/bin/python benchmarks/_results.py --manifest \
    || echo "no manifest: a copy of this checkout will measure but keep no table" >&2
rm -rf .gpudata && mkdir .gpudata
cp -r "$DATA/mnist" "$DATA/usps" .gpudata/
chmod -R u+w .gpudata
du -sh .whl .gpudata
