#!/usr/bin/env bash
# outputs.sh NNC DIR — everything nnc prints or writes for every model file
# in the repository, into DIR, so that two compilers can be compared with
# `diff -r` (a refactoring that claims to move code without changing what
# it does shows no difference; docs/ARCHITECTURE.md, "Pure moves").
#
# For each .nn file under the repository (build trees excluded), run from
# its own directory with its relative name so that paths do not depend on
# the checkout: every --dump stage, --summary, --emit=all, --emit=dot,
# --precision=f64, and a few -D and --model runs; stdout, stderr, the exit
# status and the files written each land in DIR/<path of the .nn>/.
#
#     scripts/outputs.sh build-old/nnc /tmp/a
#     scripts/outputs.sh build/nnc /tmp/b
#     diff -r /tmp/a /tmp/b && echo identical
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 NNC DIR" >&2
    exit 2
fi
nnc=$1
case $nnc in /*) ;; *) nnc=$(pwd)/$nnc ;; esac
out=$2
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

# run TAG ARGS...: nnc ARGS in the current directory, into $dest/TAG.*
run() {
    local tag=$1
    shift
    mkdir -p "$dest/$tag.files"
    "$nnc" "$@" >"$dest/$tag.out" 2>"$dest/$tag.err"
    echo $? >"$dest/$tag.status"
    rmdir "$dest/$tag.files" 2>/dev/null || true
}

cd "$root" || exit 2
find . -name '*.nn' -not -path './build*' -not -path './.git/*' | sort | while read -r f; do
    dir=$(dirname "$f")
    name=$(basename "$f")
    dest="$out/${f#./}"
    mkdir -p "$dest"
    (
        cd "$dir" || exit 2
        for stage in tokens ast ir grad plan; do
            run "dump-$stage" "$name" --dump=$stage -I lib -I .
        done
        run summary "$name" --summary -I lib -I .
        run all "$name" --emit=all -o "$dest/all.files" -I lib -I .
        run dot "$name" --emit=dot -o "$dest/dot.files" -I lib -I .
        run f64 "$name" --precision=f64 -o "$dest/f64.files" -I lib -I .
        run nolib "$name" -o "$dest/nolib.files"
    )
done

# hparams from the command line, and one model of several
cd "$root/models" || exit 2
dest="$out/-D"
mkdir -p "$dest"
run digits-hidden digits.nn -D hidden=32 -o "$dest/digits-hidden.files"
run digits-float digits.nn -D hidden=2.5 -o "$dest/digits-float.files"
run digits-unknown digits.nn -D hiden=3 -o "$dest/digits-unknown.files"
run digits-bad digits.nn -D 'hidden=[1,' -o "$dest/digits-bad.files"
run resnet-widths resnet.nn -D 'widths=[8, 16]' --dump=ir
run resnet-list resnet.nn -D 'widths=[8,16,32]' --summary
run digits-model digits.nn --model Digits --prefix dg -o "$dest/digits-model.files"
run digits-nomodel digits.nn --model Digit -o "$dest/digits-nomodel.files"
run names-bool names_gpt.nn -D causal=true --summary
exit 0
