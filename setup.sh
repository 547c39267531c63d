#!/usr/bin/env bash
# setup.sh: install the Debian packages the project needs (python3-argparse-manpage and man-db
# make and check the man pages), build the optimized and the sanitizer variants, and run the
# bundled demo on 4 ranks of the smp conduit.
set -euo pipefail
cd "$(dirname "$0")"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
PACKAGES="gcc g++ clang make scons pkg-config python3 python3-dev python3-cffi python3-rich python3-pytest python3-pytest-xdist python3-clustershell mypy python3-argparse-manpage man-db nftables iproute2 openssh-client openssh-server util-linux openmpi-bin libopenmpi-dev"
# Site launchers the pmi and mpi spawners are tested under: PMIx, MPICH's Hydra, Slurm
# (with munge and Slurm's PMI-2 client); gasnet-tune's statistics and plots (scipy,
# matplotlib); rdma-core's libibverbs (the ibv conduit), its ibv_devinfo and hwloc's lstopo
# (gasnetrun's node probe); libfabric (the ofi conduit) and its fi_info and fi_pingpong. Their recommends would bring in desktop packages.
LAUNCHERS="libpmix-dev mpich libmpich-dev slurmctld slurmd slurm-client munge libpmi2-0-dev python3-scipy python3-matplotlib libibverbs-dev ibverbs-utils hwloc libfabric-dev libfabric-bin"
missing=$(for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
missing_launchers=$(for p in $LAUNCHERS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing$missing_launchers" ]; then
  $SUDO apt-get update -qq
fi
if [ -n "$missing" ]; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi
if [ -n "$missing_launchers" ]; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $missing_launchers
fi
scons -Q -j"$(nproc)"
scons -Q -j"$(nproc)" debug=1
build/bin/gasnetrun -n 4 build/smp/examples/hello_ring-seq
