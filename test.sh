#!/usr/bin/env bash
# test.sh: rebuild what changed and run the test suite.
#   bash test.sh                 the full suite (CI): both builds, every conduit and spawner
#   bash test.sh quick           unit tests and one job per feature on the optimized smp build
#   bash test.sh -k udp          any pytest selection (-k, -m timing, a file...) after a full build
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
# Debian's interpreter: it has python3-pytest (a pyenv python3 on PATH may not). The slowest
# tests are listed at the end: where the time goes.
exec /usr/bin/python3 -m pytest -q tests --durations=15 "${select[@]}" "$@"
