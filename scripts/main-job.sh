#!/usr/bin/env bash
# The main job: install what is missing, build, compile models/digits.nn
# and train it on the bundled digits (80/20 split fixed by a seed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cmake --build build --target train_digits
