#!/usr/bin/env bash
# The GPU figures of benchmarks/RESULTS.md, on a machine with an NVIDIA GPU and a Python
# that has a CUDA build of torch. Each step's log goes to $OUT (default /tmp/gpu-figures);
# a summary of exit codes and seconds is printed last.
#
#   NCA_DATA_DIR=/path/to/data bash benchmarks/gpu_figures.sh env tests exact scaling torchrun
#
# NCA_DATA_DIR is the folder with the real datasets (MNIST and USPS). Each step runs under its
# own time limit; with DEADLINE_SECONDS set, no step runs past that many seconds from the
# script's start (each step's limit is cut to what is left), so a job with a wall-clock limit
# still ends with every log written.
#
# Steps: env (GPU, driver, versions), profile (torch.profiler's table of one exact epoch),
# small (iris, wine, digits fitted on the CPU and the GPU), nearest (one approximate epoch
# at 250k and its candidate search, profiled), tests (the whole suite but the browser tests, where
# "auto" is the GPU but for small L-BFGS fits), engine_tests (the objective's, training's and
# estimator's tests alone), exact (benchmarks/exact_epoch.py on the GPU), scaling (benchmarks/scaling.py
# on the GPU, 60k to 1M), torchrun (the CLI's data-parallel training, one process on the GPU),
# torchrun2 (two processes on a machine with fewer GPUs than that), exact_tf32 (the exact
# epoch with TF32 products), exact1m and exact1m_tf32 (one exact epoch on a million
# mnist-deformed points, float32 or TF32; each in its own step, as one takes minutes), far
# (block_shapes.py --far at 250k: the far anchors' pass sizes), tf32 (the float32-against-float64 tests with TF32 products), knn
# (benchmarks/knn_search.py with the library's exact search on the GPU beside FAISS on the CPU),
# defaults (benchmarks/defaults.py: NCA(n_components=32).fit on all of MNIST, "auto" device),
# network (benchmarks/network_defaults.py: NCA(encoder="mlp") defaults, MNIST 30-D, seed 0),
# scaling1m (benchmarks/scaling.py on the GPU at a million points, approximate neighbours),
# app (benchmarks/app_device.py: the Train page's MNIST job on the GPU, then on the CPU),
# variants and variants1m (benchmarks/gpu_step_variants.py: the exact step as the library
# writes it, with one masked product instead of the per-class ones, and that captured as a
# CUDA graph; MNIST, or a million mnist-deformed points), variants_compiled (the same with
# the masked step through torch.compile as well), fused (benchmarks/fused_epoch.py: the fused
# Triton schedule's exact epoch at 60k and 1M beside GaussianSchedule, the pair floor and the
# arithmetic bound; fused_quick: 60k, one repeat), fused_tests (tests/objective/test_fused.py,
# the compiled kernels against the float64 reference on the GPU as well as the interpreter)
# and engine_tests_fused (the engine's, training's and estimator's tests with the engine
# taking the fused kernels: NCA_FUSED=1).
# On a GPU machine without network access, wheels for the packages its Python lacks
# (faiss-cpu, plotly, streamlit and what it needs) may lie in .whl/; they are installed to
# /tmp/site. benchmarks/gpu_carry.sh gathers them and a copy of the data beforehand.
set -u
OUT=${OUT:-/tmp/gpu-figures}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
source "$(dirname "$0")/gpu_steps.sh"  # the wheels in .whl/, and step

for name in "$@"; do
    case $name in
        env) step env 60 bash -c "nvidia-smi; $PY -c 'import torch, sklearn, numpy, faiss; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(), sklearn.__version__, numpy.__version__, faiss.__version__)'" ;;
        tests) step tests 250 $PY -m pytest -q -p no:cacheprovider -n 12 -m "not e2e" --ignore tests/e2e tests ;;
        engine_tests) step engine_tests 120 $PY -m pytest -q -p no:cacheprovider -n 12 tests/objective tests/training tests/estimator ;;
        engine_tests_fused) step engine_tests_fused 150 env NCA_FUSED=1 $PY -m pytest -q -p no:cacheprovider -n 12 tests/objective tests/training tests/estimator ;;
        fused) step fused 400 $PY benchmarks/fused_epoch.py ;;
        fused_quick) step fused_quick 120 $PY benchmarks/fused_epoch.py --quick ;;
        fused_tests) step fused_tests 150 env NCA_FUSED=1 $PY -m pytest -q -p no:cacheprovider tests/objective/test_fused.py ;;
        variants) step variants 120 $PY benchmarks/gpu_step_variants.py --device cuda ;;
        variants_compiled) step variants_compiled 200 $PY benchmarks/gpu_step_variants.py --device cuda --compile ;;
        variants1m) step variants1m 400 $PY benchmarks/gpu_step_variants.py --device cuda --n 1000000 --repeats 1 ;;
        app) step app 150 $PY benchmarks/app_device.py --devices cuda cpu --watch 8 ;;
        exact) step exact 120 $PY benchmarks/exact_epoch.py --device cuda --repeats 5 --count-recomputed ;;
        exact_tf32) step exact_tf32 120 $PY benchmarks/exact_epoch.py --device cuda --repeats 5 --tf32 ;;
        defaults) step defaults 60 $PY benchmarks/defaults.py ;;
        network) step network 100 $PY benchmarks/network_defaults.py --dataset mnist --dims 30 --seeds 0 --candidates defaults ;;
        scaling1m) step scaling1m 230 $PY benchmarks/scaling.py --device cuda --sizes 1000000 ;;
        exact1m) step exact1m 400 $PY benchmarks/exact_epoch.py --device cuda --repeats 1 --n 1000000 --count-recomputed ;;
        exact1m_tf32) step exact1m_tf32 400 $PY benchmarks/exact_epoch.py --device cuda --repeats 1 --n 1000000 --tf32 ;;
        far) step far 300 bash -c "cd benchmarks && $PY block_shapes.py --far --n 250000" ;;
        tf32) step tf32 200 env NCA_TEST_TF32=1 $PY -m pytest -q -p no:cacheprovider -n 8 -m "not e2e" -k "float32 or far or origin or float64" \
            tests/objective tests/training tests/search tests/estimator ;;
        knn) step knn 300 $PY benchmarks/knn_search.py --repeats 3 ;;
        profile) step profile 60 $PY benchmarks/exact_epoch.py --device cuda --profile ;;
        small) step small 120 $PY benchmarks/small_fits.py --devices cpu cuda ;;
        nearest) step nearest 150 $PY benchmarks/nearest_epoch.py --n 250000 --device cuda --profile ;;
        scaling) step scaling 500 $PY benchmarks/scaling.py --device cuda ;;
        torchrun) step torchrun 90 $PY -m torch.distributed.run --standalone --nproc_per_node 1 -m nca_core train \
            --dataset mnist --out "$OUT/torchrun" --no-download --max-iter 2 --n-components 32 --optimizer adam ;;
        torchrun2) step torchrun2 90 $PY -m torch.distributed.run --standalone --nproc_per_node 2 -m nca_core train \
            --dataset usps --out "$OUT/torchrun2" --no-download --max-iter 10 --n-components 10 --optimizer lbfgs ;;
        *) echo "unknown step $name" >&2 ;;
    esac
done
printf '%s\n' "${summary[@]}"
