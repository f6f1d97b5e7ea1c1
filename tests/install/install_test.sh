#!/usr/bin/env bash
# Installs the build into a fresh prefix and uses it as a user would:
# nnc from P/bin, the runtime through pkg-config, a program of ours that
# includes the generated header, and the generated driver.  With a third
# argument (the MPI launcher and its flags), also the MPI runtime: a
# program of the processes' calls built with `pkg-config nnc-mpi` alone,
# run on two processes.
set -euo pipefail
build=$1 src=$2 mpirun=${3:-}
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
# (taken whole, then searched: under pipefail `info | grep -q` fails when
# grep quits at its match and info dies of SIGPIPE)
info=$(./digits info)
grep -q "fc1.weight" <<<"$info"
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

if [ -n "$mpirun" ]; then
  test -f "$tmp/prefix/lib/libnnc_runtime_mpi.a"
  cat > dist.c <<'C'
#include <stdio.h>
#include "nnc_runtime.h"
int main(int argc, char **argv)
{
    if (nnc_dist_init(&argc, &argv) != 0) {
        fprintf(stderr, "dist: %s\n", nnc_error());
        return 1;
    }
    int me = nnc_dist_rank(), np = nnc_dist_size();
    float x[3] = {1.0f, (float)me, 0.5f};
    nnc_dist_sum_f32(x, 3);
    int64_t global, first;
    nnc_dist_batch(10 + me, &global, &first);
    int ok = np == 2 && x[0] == 2.0f && x[1] == 1.0f && x[2] == 1.0f && global == 21 && first == 10 * me;
    printf("rank %d of %d: sum %g %g %g, batch %lld from %lld: %s\n", me, np, x[0], x[1], x[2], (long long)global,
           (long long)first, ok ? "ok" : "WRONG");
    nnc_dist_finalize();
    return ok ? 0 : 1;
}
C
  cc -std=c11 -O3 -Wall -Wextra -Wpedantic -Werror dist.c $(pkg-config --cflags --libs nnc-mpi) -o dist
  out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 $mpirun -np 2 ./dist)
  echo "$out"
  [ "$(echo "$out" | grep -c ': ok$')" = 2 ] || { echo "the MPI program did not run on 2 processes"; exit 1; }
  # nnc.pc stays free of MPI
  if pkg-config --libs nnc | grep -q mpi; then echo "nnc.pc names MPI"; exit 1; fi
fi
echo "install test passed"
