#!/usr/bin/env bash
# Runs every test: installs the test references (PyTorch, NumPy) if
# missing, builds, and runs ctest (parity, gradient checks, diagnostics,
# generated/ freshness, warnings, ASan/UBSan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/build.sh
cd build
ctest --output-on-failure -j2 "$@"
