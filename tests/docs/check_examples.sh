#!/usr/bin/env bash
# docs/guide.md's examples work and are the ones shown:
# - every docs/examples/*.nn compiles with nnc (--emit=all), and every
#   generated .c with cc -std=c11 -Wall -Wextra -Wpedantic -Werror -c;
# - every docs/examples/*.c (a program over a generated header, which it
#   names in its #include) builds and runs;
# - every file under docs/examples/ appears verbatim in docs/guide.md.
#   check_examples.sh NNC SRC RUNTIME_LIB "INCLUDE_DIRS" "LIBS"
set -euo pipefail
nnc=$1 src=$2 rtlib=$3 incs=$4 libs=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ex=$src/docs/examples
cflags=(-std=c11 -Wall -Wextra -Wpedantic -Werror)
for d in $incs; do cflags+=(-I"$d"); done
n=0
for f in "$ex"/*.nn; do
  name=$(basename "$f" .nn)
  "$nnc" "$f" -o "$tmp/$name" --emit=all
  for c in "$tmp/$name"/*.c; do
    cc "${cflags[@]}" -c "$c" -o "$tmp/$name/$(basename "$c" .c).o"
  done
  n=$((n + 1))
done
for f in "$ex"/*.c; do
  [ -e "$f" ] || continue
  h=$(sed -n 's/^#include "\([a-z0-9_]*\)\.h"$/\1/p' "$f" | head -1)
  hdr=$(ls "$tmp"/*/"$h".h 2>/dev/null | head -1)
  [ -n "$h" ] && [ -n "$hdr" ] || { echo "$f: includes no header generated from docs/examples"; exit 1; }
  dir=$(dirname "$hdr")
  exe=$tmp/$(basename "$f" .c)
  # shellcheck disable=SC2086
  cc "${cflags[@]}" -O2 -I"$dir" "$f" "$dir/$h.o" "$rtlib" $libs -o "$exe"
  (cd "$tmp" && "$exe" >/dev/null)
  n=$((n + 1))
done
# the driver of a model with a `summary` prints its value on each epoch line
# shellcheck disable=SC2086
cc "$tmp/running_center/centered_main.o" "$tmp/running_center/centered.o" "$rtlib" $libs -o "$tmp/centered"
(cd "$tmp" && /usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(0)
np.save('cx.npy', r.standard_normal((40, 5)).astype('<f4'))
np.save('cy.npy', r.standard_normal((40, 2)).astype('<f4'))" &&
  ./centered train --inputs cx.npy --labels cy.npy --epochs 2 --batch 8 --save c.st > /dev/null 2> epochs.txt)
python3 - "$tmp/epochs.txt" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("epoch ")]
assert len(lines) == 2, lines
for l in lines:
    m = re.search(r"  hidden_rms (\S+)", l)
    assert m, "no summary on the epoch line: " + l
    v = float(m.group(1))
    assert 0 < v < 10, "hidden_rms out of range: " + l
PY
python3 - "$src" <<'PY'
import pathlib, sys
src = pathlib.Path(sys.argv[1])
guide = (src / "docs/guide.md").read_text(encoding="utf-8")
bad = 0
for f in sorted((src / "docs/examples").rglob("*")):
    if f.is_file() and f.suffix in (".nn", ".c"):
        text = f.read_text(encoding="utf-8").rstrip("\n")
        rel = f.relative_to(src)
        if text not in guide:
            print(f"docs/guide.md does not show {rel} as it is (copy the file into the guide)")
            bad = 1
        elif f"`{rel}`" not in guide:
            print(f"docs/guide.md does not name `{rel}`")
            bad = 1
sys.exit(bad)
PY
echo "docs/examples: $n files compiled, all shown in docs/guide.md"
