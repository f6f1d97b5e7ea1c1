#!/usr/bin/env bash
# Installs the build into a fresh prefix and uses it as a user would:
# nnc from P/bin, the runtime through pkg-config, a program of ours that
# includes the generated header, and the generated driver.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -x "$tmp/prefix/bin/nnc"
pc=$(dirname "$(find "$tmp/prefix" -name nnc.pc | head -1)")
export PKG_CONFIG_PATH=$pc
cd "$tmp"
"$tmp/prefix/bin/nnc" "$src/models/digits.nn" -o model --emit=all
flags=$(pkg-config --cflags --libs nnc)
# the driver
cc -std=c11 -Wall -Wextra -Wpedantic -Werror model/digits.c model/digits_main.c $flags -o digits
./digits info | grep -q "fc1.weight"
# a program that uses the typed header
cat > app.c <<'C'
#include <stdio.h>
#include "digits.h"
int main(void)
{
    digits m;
    if (digits_init(&m, 4, 7) != 0)
        return 1;
    float x[4][64] = {{0}};
    float out[4][10];
    m.params->fc2.bias[3] = 5.0f;   /* typed fields */
    digits_forward(&m, 4, (const float (*)[64])x, out);
    int ok = out[0][3] > out[0][2];
    printf("out[0][3]=%g ok=%d params=%d\n", out[0][3], ok, DIGITS_NUM_PARAMS);
    digits_release(&m);
    return ok ? 0 : 1;
}
C
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Imodel app.c model/digits.c $flags -o app
./app
echo "install test passed"
