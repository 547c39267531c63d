#!/usr/bin/env bash
# test.sh: rebuild what changed (both variants) and run the test suite against both.
set -euo pipefail
cd "$(dirname "$0")"
scons -Q -j"$(nproc)"
scons -Q -j"$(nproc)" debug=1
# Debian's interpreter: it has python3-pytest (a pyenv python3 on PATH may not).
exec /usr/bin/python3 -m pytest -q tests "$@"
