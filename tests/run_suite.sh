#!/usr/bin/env bash
# The whole test suite in about the wall time of its browser tests.
#
# The browser tests spend much of their time waiting on pages in real time, and leave part of
# the CPU idle. So the unit tests run beside them, at the lowest priority, filling that idle
# CPU without taking it from the pages they watch. The few tests that time real runs in real
# seconds (marked wall_clock) run at normal priority, one at a time, while the unit
# tests start, and then the browser tests. Every test runs; the unit tests' report is printed
# when they end (or when this script is stopped).
#
# Usage: tests/run_suite.sh PYTHON WORKERS   (WORKERS: pytest-xdist processes, 0 for one)
set -uo pipefail
py=${1:?usage: tests/run_suite.sh PYTHON WORKERS}
workers=${2:?usage: tests/run_suite.sh PYTHON WORKERS}
case $py in */*) py="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")" ;; esac  # a venv's link, kept
cd "$(dirname "$0")/.."

unit_log=$(mktemp)
unit_pid=
report_unit_tests() {
    echo "== unit tests (ran in the background)"
    cat "$unit_log"
    rm -f "$unit_log"
}
# A stopped script stops the unit tests too, and still shows what they had printed.
trap '[ -n "$unit_pid" ] && kill -- -"$unit_pid" 2>/dev/null; [ -f "$unit_log" ] && report_unit_tests' EXIT
trap 'exit 130' INT TERM  # pytest exits 2 on Ctrl+C, which alone would not stop this script

echo "== unit tests: $workers pytest-xdist workers at nice 19, in the background (report below)"
set -m  # the background job gets a process group of its own, so a stop can end all of it
nice -n 19 "$py" -m pytest -n "$workers" -m "not e2e and not wall_clock" >"$unit_log" 2>&1 </dev/null &
unit_pid=$!
set +m

echo "== wall-clock tests: one at a time, at normal priority"
"$py" -m pytest -m "wall_clock and not e2e"
wall_clock=$?
echo "== browser tests: one at a time, at normal priority"
"$py" -m pytest -m e2e tests/e2e
browser=$?

wait "$unit_pid"
unit=$?
unit_pid=
report_unit_tests

echo "== exit codes: unit $unit, wall-clock $wall_clock, browser $browser"
[ "$unit" -eq 0 ] && [ "$wall_clock" -eq 0 ] && [ "$browser" -eq 0 ]
