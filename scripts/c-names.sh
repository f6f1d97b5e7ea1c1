#!/usr/bin/env bash
# Writes compiler/cnames.def: the ordinary identifiers (functions,
# variables, typedefs, enum constants) and macros that the C library and
# OpenBLAS headers declare, which a language name must not become in the
# generated C (compiler/cnames.c).  The headers are those the generated
# code and nnc_runtime.h include (stddef, stdint, errno, math, stdlib,
# string, cblas.h), plus stdio, assert and stdbool, which nearly every
# program that includes a generated header includes too.  The widest
# reading: C11 and gnu17 with _GNU_SOURCE, clang's and gcc's predefined
# macros (so `linux`, `unix`, `i386`).  Names the family rules of
# cnames.c already cover (a leading `_`, nnc_, cblas_, Cblas, CBLAS,
# openblas_, OPENBLAS_) are left out.  Rerun when a generated file gains
# an #include; the table is checked in so that nnc's output never depends
# on the machine that builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
cblas_dir=${1:-$(dirname "$(echo '#include <cblas.h>' | cc -xc -E -H - 2>&1 >/dev/null | grep -m1 'cblas.h' | sed 's/^\.* //')")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tu.c" <<'EOF'
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nnc_runtime.h"
#include "nnc_math.h"
EOF
inc=(-Iruntime "-I$cblas_dir")
for std in "-std=c11" "-std=gnu17 -D_GNU_SOURCE"; do
    for cc in gcc clang; do
        # shellcheck disable=SC2086
        $cc $std "${inc[@]}" -E -dM "$tmp/tu.c" | awk '{print $2}' | sed 's/(.*//'
    done
    # shellcheck disable=SC2086
    clang $std "${inc[@]}" -fsyntax-only -Xclang -ast-dump -fno-color-diagnostics "$tmp/tu.c" |
        grep -E '^\|-(FunctionDecl|VarDecl|TypedefDecl)|EnumConstantDecl' | grep -oE "[A-Za-z_][A-Za-z0-9_]* '" |
        sed "s/ '//"
done | grep -vE '^(_|nnc_|NNC_|cblas_|Cblas|CBLAS|openblas_|OPENBLAS_)' | LC_ALL=C sort -u >"$tmp/names"
{
    echo "/* cnames.def: written by scripts/c-names.sh; do not edit.  The names the"
    echo " * C library and OpenBLAS headers take (cnames.c), sorted (strcmp). */"
    sed 's/.*/"&",/' "$tmp/names"
} >compiler/cnames.def
echo "compiler/cnames.def: $(wc -l <"$tmp/names") names"
