#!/usr/bin/env bash
# The whole test suite in about the wall time of its browser tests.
#
# The browser tests spend much of their time waiting on pages in real time, and leave part of
# the CPU idle. So the unit tests run beside them, at the lowest priority, filling that idle
# CPU without taking it from the pages they watch. Tests that time the training job against
# the wall clock (marked wall_clock) run at normal priority, one at a time, before the
# browser tests. Every test runs; the unit tests' report is printed when they end.
#
# Usage: tests/run_suite.sh PYTHON WORKERS   (WORKERS: pytest-xdist processes, 0 for one)
set -uo pipefail
py=$1
workers=$2
cd "$(dirname "$0")/.."

unit_log=$(mktemp)
unit_pid=
trap '[ -n "$unit_pid" ] && kill -- -"$unit_pid" 2>/dev/null; rm -f "$unit_log"' EXIT
trap 'exit 130' INT TERM  # pytest exits 2 on Ctrl+C, which alone would not stop this script
echo "== unit tests: $workers workers at nice 19, in the background (report below)"
set -m  # the background job gets a process group of its own, so an interrupt stops all of it
nice -n 19 "$py" -m pytest -n "$workers" -m "not e2e and not wall_clock" >"$unit_log" 2>&1 &
unit_pid=$!
set +m

echo "== wall-clock tests: one at a time, at normal priority"
"$py" -m pytest -m "wall_clock and not e2e"
paced=$?
echo "== browser tests: one at a time, at normal priority"
"$py" -m pytest -m e2e tests/e2e
browser=$?

wait "$unit_pid"
unit=$?
echo "== unit tests (ran in the background)"
cat "$unit_log"

echo "== exit codes: unit $unit, wall-clock $paced, browser $browser"
[ "$unit" -eq 0 ] && [ "$paced" -eq 0 ] && [ "$browser" -eq 0 ]
