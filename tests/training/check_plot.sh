#!/usr/bin/env bash
# scripts/plot-log.sh on the logs of a short digits run, CSV and JSON
# lines: each gives a PNG (its signature checked) of a plausible size.
set -euo pipefail
driver=$1 data=$2 plot=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ext in csv jsonl; do
    "$driver" train --inputs "$data/x_train.npy" --labels "$data/y_train.npy" --save "$tmp/w.safetensors" \
        --epochs 2 --val-split 0.2 --lr-schedule cosine --warmup 5 --log "$tmp/log.$ext" --quiet >/dev/null
    "$plot" "$tmp/log.$ext" "$tmp/$ext.png" >/dev/null
    sig=$(head -c 8 "$tmp/$ext.png" | od -An -tx1 | tr -d ' \n')
    size=$(stat -c %s "$tmp/$ext.png")
    [ "$sig" = 89504e470d0a1a0a ] || { echo "FAIL: $ext.png is not a PNG ($sig)"; exit 1; }
    [ "$size" -gt 10000 ] || { echo "FAIL: $ext.png has $size bytes"; exit 1; }
    echo "$ext: $size-byte PNG"
done
if "$plot" "$tmp/nothere.csv" "$tmp/x.png" 2>/dev/null; then
    echo "FAIL: a missing log was drawn"
    exit 1
fi
echo "plot-log.sh: both logs drawn; a missing one refused"
