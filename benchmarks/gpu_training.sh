#!/usr/bin/env bash
# Training through the fused Triton kernels on one CUDA GPU, beside the blocked schedule in
# the same run, within DEADLINE_SECONDS (default 470) from the start: each step runs under
# its own limit, cut to what is left.
#
#   tests          tests/objective and tests/training/test_fused_training.py with the engine
#                  taking the fused kernels (NCA_FUSED=1): the compiled kernels and training
#                  through them against the float64 reference, and through the interpreter
#   mnist_epoch    one exact epoch on MNIST, fused and blocked, the pair floor and the bound
#   million_epoch  the same on a million points, one repeat
#   mnist_fit      NCA(n_components=32).fit on all of MNIST, fused and blocked
#   network        the app's MNIST network run, Train to 90% test 5-NN, fused and blocked
#   million_fit    NCA(n_components=32).fit on a million points with the defaults, fused
#
# benchmarks/gpu_training.py says what each measures. Each step's log goes to $OUT (default
# /tmp/gpu-training) and its last lines are printed; the tables go to
# benchmarks/results/gpu_training.json, copied to $OUT at the end, and a summary of exit codes
# and seconds is printed last. NCA_DATA_DIR is the folder with MNIST (on a GPU machine without
# network access, benchmarks/gpu_carry.sh gathers a copy of the data and the wheels its
# Python lacks beforehand; they are installed to /tmp/site as gpu_figures.sh does):
#
#   NCA_DATA_DIR=/path/to/data bash benchmarks/gpu_training.sh
#
# --dry-run runs each step's quick mode on whatever device there is, collects the tests
# without running them, and keeps nothing: a check that the script starts, on any machine.
#
#   NCA_DATA_DIR=/path/to/data PYTHON=.venv/bin/python bash benchmarks/gpu_training.sh --dry-run
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-training}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
DEADLINE_SECONDS=${DEADLINE_SECONDS:-470}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
quick=()
tests=(-n 8)
if [ "${1:-}" = "--dry-run" ]; then
    quick=(--quick)
    tests=(--collect-only)
fi
STEP_FLOOR_SECONDS=20 TAIL_LINES=25
source "$(dirname "$0")/gpu_steps.sh"  # the wheels in .whl/, and step

$PY -c 'import torch; print("device:", torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU", "| torch", torch.__version__)'
step tests 120 env NCA_FUSED=1 $PY -m pytest -q -p no:cacheprovider "${tests[@]}" tests/objective tests/training/test_fused_training.py
step mnist_epoch 60 $PY benchmarks/gpu_training.py epoch --n 60000 --repeats 3 "${quick[@]}"
step million_epoch 150 $PY benchmarks/gpu_training.py epoch --n 1000000 --repeats 1 "${quick[@]}"
step mnist_fit 60 $PY benchmarks/gpu_training.py fit "${quick[@]}"
step network 60 $PY benchmarks/gpu_training.py network "${quick[@]}"
step million_fit 170 $PY benchmarks/gpu_training.py million "${quick[@]}"
[ -f benchmarks/results/gpu_training.json ] && cp benchmarks/results/gpu_training.json "$OUT/"
printf '%s\n' "${summary[@]}"
