#!/usr/bin/env bash
# setup.sh: install the Debian packages the project needs, build the optimized and the
# sanitizer variants, and run the bundled demo on 4 ranks of the smp conduit.
set -euo pipefail
cd "$(dirname "$0")"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
PACKAGES="gcc make scons pkg-config python3 python3-dev python3-cffi python3-rich python3-pytest python3-clustershell mypy nftables iproute2 openssh-client openssh-server util-linux openmpi-bin libopenmpi-dev"
missing=$(for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi
scons -Q -j"$(nproc)"
scons -Q -j"$(nproc)" debug=1
build/bin/gasnetrun -n 4 build/smp/examples/hello_ring-seq
