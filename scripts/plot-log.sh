#!/usr/bin/env bash
# scripts/plot-log.sh — draws a training log (the driver's --log) as a PNG.
#
#   scripts/plot-log.sh LOG.csv|LOG.jsonl [OUT.png]
#
# Top panel: the training loss of every logged step and the validation
# loss of every epoch, against the step (log scale).  Middle: every other
# value the log has (summaries, val_<metric>).  Bottom: the learning rate.
# OUT defaults to LOG with .png for its extension.  Needs gnuplot (Debian:
# gnuplot-nox); a .jsonl log is converted to CSV with python3 first.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
log=$1
out=${2:-${log%.*}.png}
command -v gnuplot >/dev/null || { echo "plot-log.sh: needs gnuplot (apt-get install gnuplot-nox)" >&2; exit 1; }
[ -r "$log" ] || { echo "plot-log.sh: cannot read $log" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv=$log
case $log in
*.jsonl)
    csv=$tmp/log.csv
    /usr/bin/python3 - "$log" "$csv" <<'PY'
import csv, json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
cols = []
for r in rows:
    cols += [k for k in r if k not in cols]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r.get(k) is None else r.get(k) for k in cols])
PY
    ;;
*.csv) ;;
*) echo "plot-log.sh: $log: expected a .csv or .jsonl log" >&2; exit 1 ;;
esac
header=$(head -n 1 "$csv")
IFS=, read -r -a cols <<<"$header"
has() { local c; for c in "${cols[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
has step && has loss && has lr || { echo "plot-log.sh: $log: no step, loss and lr columns" >&2; exit 1; }
others=()
for c in "${cols[@]}"; do
    case $c in step | epoch | loss | lr | examples_per_s | val_loss) ;; *) others+=("$c") ;; esac
done
{
    echo "set terminal pngcairo size 900,900 noenhanced"
    echo "set output '$out'"
    echo "set datafile separator ','"
    echo "set datafile missing ''"
    echo "set key top right"
    echo "set grid"
    echo "set multiplot layout 3,1 title '$(basename "$log")'"
    echo "set logscale y"
    echo "set ylabel 'loss'"
    printf "plot '%s' using 'step':'loss' with lines title 'loss'" "$csv"
    has val_loss && printf ", '' using 'step':'val_loss' with linespoints pt 7 title 'val_loss'"
    echo
    echo "unset logscale y"
    echo "set ylabel 'metrics'"
    if [ ${#others[@]} -gt 0 ]; then
        sep="plot "
        for c in "${others[@]}"; do
            printf "%s'%s' using 'step':'%s' with linespoints pt 7 ps 0.5 title '%s'" "$sep" "$csv" "$c" "$c"
            sep=", "
        done
        echo
    else
        echo "set label 1 'no metrics in this log' at graph 0.5,0.5 center"
        echo "plot 2 notitle lc rgb 'white'"
        echo "unset label 1"
    fi
    echo "set yrange [0:*]"
    echo "set ylabel 'learning rate'"
    echo "set xlabel 'step'"
    echo "plot '$csv' using 'step':'lr' with lines title 'lr'"
    echo "unset multiplot"
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "$out"
