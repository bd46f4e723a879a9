#!/usr/bin/env bash
# What a GPU machine without network access needs beside the code, gathered here before
# the code is copied to it (it reaches no package index and has no ../shared):
#   .whl/      wheels of what its Python 3.12 lacks, at the versions our venv has: faiss-cpu,
#              plotly, pooch, and Streamlit with what it needs (pydeck left out: nothing
#              imports it, and what is copied there is kept under 64 MiB)
#   .gpudata/  MNIST and USPS from the data folder (Fashion-MNIST does not fit; its loading
#              test skips there)
# Both folders are copied with the code and stay out of git (.git/info/exclude). Then, there:
#   NCA_DATA_DIR=$PWD/.gpudata DEADLINE_SECONDS=525 bash benchmarks/gpu_figures.sh env tests ...
#
#   bash benchmarks/gpu_carry.sh [DATA_DIR]      # default ../shared/data
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/data}
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
rm -rf .gpudata && mkdir .gpudata
cp -r "$DATA/mnist" "$DATA/usps" .gpudata/
chmod -R u+w .gpudata
du -sh .whl .gpudata
