#!/usr/bin/env bash
# examples/make with plain make against an installed nnc: PATH and
# PKG_CONFIG_PATH point into a fresh prefix; the program builds and runs;
# touching the imported layers.nn rebuilds it (nnc runs again); afterwards
# `make -q` says everything is up to date.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PATH="$tmp/prefix/bin:$PATH"
export PKG_CONFIG_PATH="$(dirname "$(find "$tmp/prefix" -name nnc.pc | head -1)")"
cp -r "$src/examples/make" "$tmp/ex"
cd "$tmp/ex"
rm -rf gen xor_net ./*.o ./*.o.d
fail() { echo "FAIL: $*"; exit 1; }

make >make.log 2>&1 || { cat make.log; fail "make"; }
grep -q "^nnc xor_net.nn" make.log || fail "make did not run nnc"
./xor_net
make -q || fail "make -q after a build: not up to date"

touch layers.nn
if make -q; then fail "touching the imported layers.nn left the program up to date"; fi
make >make.log 2>&1 || { cat make.log; fail "make after touching layers.nn"; }
grep -q "^nnc xor_net.nn" make.log || { cat make.log; fail "touching layers.nn did not rerun nnc"; }
grep -q -- "-o xor_net " make.log || { cat make.log; fail "touching layers.nn did not relink"; }
./xor_net >/dev/null
make -q || fail "make -q after the rebuild: not up to date"
make >make.log 2>&1
grep -q "Nothing to be done" make.log || { cat make.log; fail "a second make did something"; }
echo "make example test passed"
