#!/usr/bin/env bash
# Data-parallel training over MPI against one process (docs/generated-c.md,
# "Processes").  For bn_cnn.nn (BatchNorm, dropout) and center.nn (a user
# state updated from a batch mean, a loss with a whole-param penalty):
#   - 50 SGD steps (batch 20, 100 examples) under `mpirun -np 2` and
#     `-np 3` (shares 7, 7, 6) agree with one process within 1e-5
#     relative, weights and state, counters exactly;
#   - -np 1 over the MPI runtime equals the runtime without MPI bit for bit;
#   - two -np 2 runs give the same file bit for bit;
#   - eval and predict over 3 processes equal one process's;
#   - check_ranks (the typed C API): every rank ends with the same bits;
#   - a batch smaller than the processes is refused with a message;
#   - ranks running different models are refused, naming the model;
#   - a rank killed mid-run ends the job, without a hang.
# Arguments: nnc, the runtime, the MPI runtime, the runtime's headers.
set -euo pipefail
nnc=$1 rt=$2 rtmpi=$3 rtinc=$4 src=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpirun="mpirun --oversubscribe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
miss() { echo "FAIL: $*"; fail=1; }

flags="-std=c11 -O2 -fno-math-errno -fno-trapping-math -fopenmp -I$rtinc"
for m in bn_cnn center; do
  "$nnc" "$src/$m.nn" -o gen --emit=all --prefix "$m"
  cc $flags -Igen gen/$m.c gen/${m}_main.c "$rt" -lopenblas -lm -o ${m}_1
  mpicc $flags -Igen gen/$m.c gen/${m}_main.c "$rtmpi" -lopenblas -lm -o ${m}_mpi
done
mpicc $flags -Igen gen/bn_cnn.c "$src/check_ranks.c" "$rtmpi" -lopenblas -lm -o check_ranks

/usr/bin/python3 - <<'EOF'
import numpy as np
r = np.random.default_rng(7)
y = r.integers(0, 10, 100).astype("<i4")
x = (r.standard_normal((100, 1, 8, 8)) * 0.5 + y[:, None, None, None] / 5.0).astype("<f4")
np.save("img_x.npy", x); np.save("img_y.npy", y)
x = r.standard_normal((100, 5)).astype("<f4")
np.save("vec_x.npy", x)
np.save("vec_y.npy", np.tanh(x[:, :3] * 2 + 0.5).astype("<f4"))
EOF

train() { # model, runner, out, data
  $2 ./$1 train --inputs $4_x.npy --labels $4_y.npy --batch 20 --epochs 10 --seed 3 \
    --optimizer sgd --lr 0.05 --momentum 0.5 --threads 1 --quiet --save $3 > $3.out
}
for pair in "bn_cnn img" "center vec"; do
  set -- $pair
  m=$1 d=$2
  train ${m}_1 "" $m.ref.st $d
  train ${m}_mpi "$mpirun -np 1" $m.p1.st $d
  cmp -s $m.ref.st $m.p1.st || miss "$m: one process over the MPI runtime differs from the runtime without MPI"
  for p in 2 3; do
    train ${m}_mpi "$mpirun -np $p" $m.p$p.st $d
    echo "$m, $p processes vs one:"
    /usr/bin/python3 "$src/compare_st.py" $m.ref.st $m.p$p.st 1e-5 || miss "$m: $p processes differ from one"
  done
  train ${m}_mpi "$mpirun -np 2" $m.p2b.st $d
  cmp -s $m.p2.st $m.p2b.st || miss "$m: two runs on 2 processes differ"
  # eval and predict over 3 processes: the same numbers as one process
  ./${m}_1 eval --inputs ${d}_x.npy --labels ${d}_y.npy --weights $m.ref.st > e1.txt
  $mpirun -np 3 ./${m}_mpi eval --inputs ${d}_x.npy --labels ${d}_y.npy --weights $m.ref.st > e3.txt
  ./${m}_1 predict --inputs ${d}_x.npy --weights $m.ref.st --output o1.npy
  $mpirun -np 3 ./${m}_mpi predict --inputs ${d}_x.npy --weights $m.ref.st --output o3.npy
  /usr/bin/python3 - "$m" <<'EOF' || miss "$m: eval or predict over 3 processes"
import sys
import numpy as np
def vals(p):
    return {k: float(v) for k, v in (l.strip().split("=") for l in open(p) if "=" in l)}
a, b = vals("e1.txt"), vals("e3.txt")
assert a.keys() == b.keys() and a, (a, b)
for k in a:
    assert abs(a[k] - b[k]) <= 1e-6 * max(1.0, abs(a[k])), (k, a[k], b[k])
o1, o3 = np.load("o1.npy"), np.load("o3.npy")
assert o1.shape == o3.shape and np.allclose(o1, o3, rtol=1e-6, atol=1e-6), np.abs(o1 - o3).max()
print(f"{sys.argv[1]}: eval {a} and predict {o1.shape} over 3 processes = one process")
EOF
done

for p in 2 3; do
  $mpirun -np $p ./check_ranks 30 || miss "check_ranks on $p processes"
done

# refused: each process needs an example of every batch
set +e
$mpirun -np 3 ./bn_cnn_mpi train --inputs img_x.npy --labels img_y.npy --batch 2 --epochs 1 --save x.st 2> small.err
st=$?
set -e
[ $st -ne 0 ] && grep -q "fewer than the 3 processes" small.err || miss "--batch 2 on 3 processes: status $st, $(cat small.err)"
[ ! -e x.st ] || miss "a refused run wrote its checkpoint"

# ranks whose models differ (another momentum: the same shapes and files)
sed 's/momentum: float = 0.2/momentum: float = 0.3/' "$src/center.nn" > other.nn
"$nnc" other.nn -o gen_other --emit=all --prefix center
mpicc $flags -Igen_other gen_other/center.c gen_other/center_main.c "$rtmpi" -lopenblas -lm -o other_mpi
set +e
timeout 60 $mpirun -np 1 ./center_mpi train --inputs vec_x.npy --labels vec_y.npy --batch 20 --epochs 1 --save o.st : \
  -np 1 ./other_mpi train --inputs vec_x.npy --labels vec_y.npy --batch 20 --epochs 1 --save o.st > /dev/null 2> other.err
st=$?
set -e
[ $st -ne 0 ] && [ $st -ne 124 ] && grep -q "model CenterNet" other.err || miss "different models: status $st, $(head -3 other.err)"
[ ! -e o.st ] || miss "different models: a checkpoint was written"
echo "different models on the ranks: refused ($(grep -m1 'model CenterNet' other.err))"

# a rank killed mid-run: the job ends (mpirun kills the others), no hang
$mpirun -np 2 ./bn_cnn_mpi train --inputs img_x.npy --labels img_y.npy --batch 20 --epochs 100000 --threads 1 \
  --quiet --save killed.st > /dev/null 2> killed.err &
job=$!
victim=""
for _ in $(seq 100); do
  # a rank (its command line starts with the program), not mpirun
  victim=$(pgrep -f "^./bn_cnn_mpi train" | sort -n | tail -1 || true)
  [ -n "$victim" ] && [ "$(pgrep -f '^./bn_cnn_mpi train' | wc -l || true)" -ge 2 ] && break
  sleep 0.1
done
sleep 1
kill -9 "$victim"
ended=0
for _ in $(seq 300); do
  kill -0 $job 2> /dev/null || { ended=1; break; }
  sleep 0.1
done
if [ $ended = 1 ]; then
  set +e; wait $job; st=$?; set -e
  [ $st -ne 0 ] || miss "a killed rank: mpirun exited 0"
  left=$(pgrep -f "bn_cnn_mpi train" | wc -l || true)
  [ "$left" = 0 ] || miss "a killed rank: $left processes left"
  [ ! -e killed.st ] || miss "a killed run wrote a checkpoint"
  grep -q "signal 9" killed.err || miss "a killed rank: mpirun did not say why: $(cat killed.err)"
  echo "a rank killed: the job ended with status $st: $(grep -m1 'signal 9' killed.err)"
else
  miss "a killed rank: the job still runs after 30 s"
  pkill -9 -f "bn_cnn_mpi train" || true
fi

[ $fail = 0 ] && echo "distributed training: as one process on the joined batch"
exit $fail
