#!/usr/bin/env bash
# Installs the Debian 12 packages nnprof needs to build and test. Idempotent: it calls
# apt-get only when something is missing. Run as root (or with sudo).
set -euo pipefail

packages=(
  g++ clang libclang-rt-14-dev cmake ninja-build pkg-config ccache
  libfmt-dev libcli11-dev libsqlite3-dev sqlite3 nlohmann-json3-dev
  libdw-dev libunwind-dev libcairo2-dev
  libprotobuf-dev protobuf-compiler zlib1g-dev libtinyxml2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium
  # The live server's HTTP (a split build: its pkg-config file has the flags), and the real
  # Prometheus server its tests scrape /metrics with.
  libcpp-httplib-dev prometheus
  python3
  # The Python package: pybind11 and the interpreter's headers.
  pybind11-dev python3-dev
  # PyTorch operators: LibTorch for libnnprof_torch, Debian's torch and pytest for its tests.
  libtorch-dev python3-torch python3-pytest
  # Distributed runs: Open MPI for libnnprof_mpi (the PMPI interposer) and the mpirun tests.
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "nnprof: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
