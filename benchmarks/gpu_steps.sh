# Sourced by the GPU scripts (gpu_figures.sh, gpu_training.sh): the wheels gathered in .whl/
# (gpu_carry.sh) installed into /tmp/site, and `step`, which runs one command under a time limit.
# Expects PY and OUT; DEADLINE_SECONDS (on bash's SECONDS) cuts each step to what is left;
# STEP_FLOOR_SECONDS (default 10) skips a step with less left; TAIL_LINES (default 40) of
# each log are printed.
if compgen -G ".whl/*.whl" >/dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
summary=()

step() {  # step NAME SECONDS COMMAND...: run it under a time limit, log to $OUT/NAME.log
    local name=$1 limit=$2 start=$SECONDS
    shift 2
    if [ -n "${DEADLINE_SECONDS:-}" ]; then
        local left=$((DEADLINE_SECONDS - SECONDS))
        if [ "$left" -lt "${STEP_FLOOR_SECONDS:-10}" ]; then summary+=("$name: not run, the deadline is near"); return; fi
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    echo "=== $name: $*"
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    tail -n "${TAIL_LINES:-40}" "$OUT/$name.log"
    summary+=("$name: exit $rc after $((SECONDS - start)) s")
}
