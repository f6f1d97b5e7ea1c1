#!/bin/sh
# run_golden.sh NNC FILE.nn — one golden diagnostics test.
#
# Runs `NNC FILE.nn -o DIR` from FILE's directory, with the relative name,
# so that the paths in the messages do not depend on the checkout, and a
# fresh empty DIR.  Passes when nnc exits with status 1, DIR is still empty
# (no output on errors) and stderr is byte for byte FILE.err.
# With NNC_UPDATE_GOLDEN=1 it writes stderr to FILE.err instead of comparing
# (the status and empty-DIR checks still apply).
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 NNC FILE.nn" >&2
    exit 2
fi
nnc=$1
case $nnc in /*) ;; *) nnc=$(pwd)/$nnc ;; esac
dir=$(dirname "$2")
name=$(basename "$2")
golden=${name%.nn}.err

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nnc-golden.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"

cd "$dir" || exit 2
"$nnc" "$name" -o "$tmp/out" >/dev/null 2>"$tmp/stderr"
status=$?

fail=0
if [ "$status" -ne 1 ]; then
    echo "FAIL: nnc $name exited with status $status, expected 1" >&2
    fail=1
fi
if [ -n "$(ls -A "$tmp/out")" ]; then
    echo "FAIL: nnc $name wrote output despite errors:" >&2
    ls -A "$tmp/out" >&2
    fail=1
fi

if [ "${NNC_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$tmp/stderr" "$golden" || exit 2
    echo "updated $dir/$golden" >&2
elif [ ! -f "$golden" ]; then
    echo "FAIL: no $dir/$golden; create it with NNC_UPDATE_GOLDEN=1 and review it" >&2
    cat "$tmp/stderr" >&2
    fail=1
elif ! cmp -s "$golden" "$tmp/stderr"; then
    echo "FAIL: stderr of nnc $name differs from $golden:" >&2
    diff -u "$golden" "$tmp/stderr" >&2
    fail=1
fi
exit $fail
