#!/bin/sh
# regress.sh BINDIR SRCDIR TARGET... — replays every crash reproducer
# (SRCDIR/regress/TARGET/) and every seed (SRCDIR/corpus/TARGET/) through
# BINDIR/TARGET_regress, the target built with a plain main() under ASan +
# UBSan.  Fails on the first target whose replay crashes, overflows or leaks.
set -eu
bin=$1 src=$2
shift 2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in "$@"; do
  dirs=""
  for d in "$src/regress/$t" "$src/corpus/$t"; do
    [ -d "$d" ] && dirs="$dirs $d"
  done
  printf '%s: ' "$t"
  # the targets' own output (usage text, messages) is noise here
  "$bin/${t}_regress" $dirs 2>"$bin/$t.stderr" >/dev/null || {
    echo "FAILED"; cat "$bin/$t.stderr"; exit 1; }
  echo "ok ($(find $dirs -type f | wc -l) files)"
done
