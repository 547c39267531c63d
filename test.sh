#!/usr/bin/env bash
# test.sh: rebuild what changed and run the test suite.
#   bash test.sh                 the full suite (CI): both builds, every conduit and spawner
#   bash test.sh quick           unit tests and one job per feature on the optimized smp build
#   bash test.sh -k udp          any pytest selection (-k, -m timing, a file...) after a full build
#   bash test.sh tests/test_knobs.py   only the files (or dirs, or file::test ids) named
#   bash test.sh quick -k knobs  a selection within the quick tier
set -euo pipefail
cd "$(dirname "$0")"
select=()
if [ "${1:-}" = quick ]; then
  shift
  select=(-m "quick")
  scons -Q -j"$(nproc)"
else
  scons -Q -j"$(nproc)"
  scons -Q -j"$(nproc)" debug=1
fi
# Tests run in parallel (pytest-xdist, Debian's python3-pytest-xdist) on one worker per two
# cores, at most 4: a job's ranks poll, so each worker's jobs need cores of their own (on 2
# cores, 2 workers made the suite slower: 27:52 against 25:19 in one). Tests that share
# something the machine has once run on one worker (conftest.py: xdist_group).
# TEST_WORKERS=N sets the number; 1 runs them one after the other.
workers=()
if /usr/bin/python3 -c 'import xdist' 2>/dev/null; then
  half=$(( $(nproc) / 2 ))
  n="${TEST_WORKERS:-$(( half < 1 ? 1 : half < 4 ? half : 4 ))}"
  if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ]; then
    echo "test.sh: TEST_WORKERS=$n is not a number of workers (1 or more)" >&2
    exit 2
  fi
  [ "$n" -gt 1 ] && workers=(-n "$n" --dist loadgroup)
fi
# The whole tests/ folder unless the arguments name test paths themselves (a file, a folder or
# a file::test id; an option's value, such as -k's, is not one): pytest would run both.
paths=(tests)
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -k|-m|-p|-n|-o|-c|--maxfail|--deselect|--ignore|--rootdir|--durations) i=$((i + 1)) ;;
    -*) ;;
    *) if [ -e "${args[i]%%::*}" ]; then paths=(); fi ;;
  esac
done
# Debian's interpreter: it has python3-pytest (a pyenv python3 on PATH may not). The slowest
# tests are listed at the end: where the time goes.
exec /usr/bin/python3 -m pytest -q "${paths[@]}" --durations=15 "${workers[@]}" "${select[@]}" "$@"
