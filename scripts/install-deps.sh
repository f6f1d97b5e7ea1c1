#!/usr/bin/env bash
# Installs what nnc needs on Debian 12, skipping apt when it is all there.
#   scripts/install-deps.sh          build deps: compilers, cmake, re2c, lemon, OpenBLAS,
#                                    Open MPI (nnc_runtime_mpi, tests/dist), protobuf-c and
#                                    onnx.proto (nnc import)
#   scripts/install-deps.sh --test   also the test references: python3-torch, python3-numpy,
#                                    python3-torchvision (tests/port's ResNet-18),
#                                    python3-onnx and the ONNX test data (tests/onnx),
#                                    and clang-format (tests/format)
set -euo pipefail
pkgs=(gcc clang make cmake ninja-build pkg-config re2c lemon libopenblas-dev gzip openmpi-bin libopenmpi-dev
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev)
if [ "${1:-}" = "--test" ]; then
  pkgs+=(python3-torch python3-numpy python3-torchvision libclang-rt-dev libomp-dev clang-format gnuplot-nox
    python3-onnx libonnx-testdata)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
