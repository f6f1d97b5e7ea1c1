#!/usr/bin/python3
"""report_dist.py RAW RESULTS_MD — turns bench/dist.sh's raw lines into a table.

RAW holds `META key=value` lines and the harness's `RESULT` lines, each
prefixed with `ROUND=r CONF=PxT` (P processes x T threads).  Per model and
configuration the reported ms/step is the median of the per-round medians;
speedups over 1 x 1 are paired (the median over rounds of each round's
ratio, runs seconds apart, so that the machine's drift cancels).  The wait
is the P-process run's median time per step blocked in the sums across
processes (rank 0's): in the forward pass (BatchNorm's statistics, the
loss) + in the backward pass (the gradients' buckets, BatchNorm's gradient
sums), the communication the computation did not hide.
"""
import math
import os
import re
import statistics
import sys
from collections import defaultdict

from report import kv, markdown, ms

# ---- the cost model (docs/generated-c.md, "Processes: what a step costs") ----
# One sum across P processes of n floats, as runtime/dist.c makes it:
#   small (n*P <= 2^14): one allgather, ceil(log2 P) rounds:
#       T = ceil(log2 P) * a + (P-1) * n * b
#   large: an alltoallv (each rank adds its 1/P slice of every rank's
#   data) and an allgatherv (the sums back), P-1 exchanges each:
#       T = 2 (P-1) * a + 2 (P-1)/P * n * b
# with a the latency of one message and b the time of one float on a link.
SMALL = 1 << 14


def sum_time(n, p, a, b):
    if p == 1:
        return 0.0
    if n * p <= SMALL:
        return math.ceil(math.log2(p)) * a + (p - 1) * n * b
    return 2 * (p - 1) * a + 2 * (p - 1) / p * n * b


def gen_calls(c_file, prefix):
    """The sums one training step makes, read from the generated C: per
    pass (train_forward, backward) the blocking sums' counts (sizes are
    tiny: statistics per channel, loss totals), and the backward pass's
    gradient buckets (sizes in the order they start)."""
    text = open(c_file).read()
    out = {}
    for fn in ("train_forward", "backward"):
        start = text.index(f" {prefix}_{fn}_generic(") if f" {prefix}_{fn}_generic(" in text \
            else text.index(f" {prefix}_{fn}(")
        end = text.find("\n}\n", start)
        body = text[start:end]
        blocking = len(re.findall(r"nnc_dist_(?:sum_f32|sum_f64|max_f32|batch)\(", body)) + \
            2 * len(re.findall(r"nnc_bn_stats_global_f32\(", body))
        buckets = [int(k) for k in re.findall(r"nnc_dist_sum_start\(G \+ \d+, (\d+)\)", body)]
        out[fn] = (blocking, buckets)
    return out


def rebucket(buckets, size):
    """The same gradients in buckets of at most `size` floats (neighbours
    merged, large ones split), in start order."""
    out, cur = [], 0
    for n in buckets:
        while n > 0:
            take = min(n, size - cur)
            cur += take
            n -= take
            if cur == size:
                out.append(cur)
                cur = 0
    return out + ([cur] if cur else [])


def exposed(buckets, tb, p, a, b):
    """Bucket k (in start order) is ready when the backward pass has made
    the gradients before it, taken as produced evenly over its time tb;
    the network works on one sum at a time.  Returns (the sums' total
    time, the time the step waits for them after the pass)."""
    total_n = sum(buckets) or 1
    done, made, busy = 0.0, 0, 0.0
    for n in buckets:
        made += n
        t = sum_time(n, p, a, b)
        done = max(done, tb * made / total_n) + t
        busy += t
    return busy, max(0.0, done - tb)


NET_A, NET_B = 10e-3, 4 * 8 / 25e9 * 1e3  # ms: 10 us per message; ms per float at 25 Gb/s
SPEEDS = (1, 16)  # a node as fast as one core here, and 16 times faster


def projection(models, res, procs, med, fits, small, gen):
    """The measured P-process wait against the cost model, and the
    benchmark models projected to 8-64 nodes on a 25 Gb/s network."""
    if "bucket" not in fits or 16 not in small:
        return []
    a_l, b_l = fits["bucket"]
    t_small = small[16]
    out = ["", "## The cost model against the measured run", "",
           f"Measured here (sum_cost, {procs} processes, shared memory): a small sum {t_small * 1e3:.2f} us; "
           f"a bucket of n floats {a_l * 1e3:.1f} us + n x {b_l * 1e6:.3f} ns (least squares, n >= 4096). "
           "Predicted wait = blocking sums x the small sum's time + the buckets' exposed time, "
           "each rank's backward pass taken as 1/P of the one-process one.", ""]
    rows, calls = [], {}
    for m in models:
        c = f"{gen}/{m}/{m}.c"
        if not res[(m, "1x1")] or not os.path.exists(c):
            continue
        calls[m] = gen_calls(c, m)
        kf, _ = calls[m]["train_forward"]
        kb, bk = calls[m]["backward"]
        tb = med(m, "1x1", "bwd_ms") / procs
        busy, exp_b = exposed(bk, tb, procs, a_l, b_l)
        rows.append([m, str(kf), str(kb), str(len(bk)), str(sum(bk)), ms(kf * t_small),
                     ms(med(m, f"{procs}x1", "wait_fwd_ms")), ms(kb * t_small + exp_b),
                     ms(med(m, f"{procs}x1", "wait_ms"))])
    out += markdown(["model", "blocking sums, forward", "blocking sums, backward", "buckets", "gradient floats",
                     "forward wait: model ms", "measured ms", "backward wait: model ms", "measured ms"], rows)
    out += ["", f"## Projected: 8-64 nodes, 25 Gb/s, {NET_A * 1e3:.0f} us per message", "",
            "Each node runs the benchmark's batch (the global batch grows with the nodes), its compute "
            "the measured one-process one-thread step (x1) or 16 times faster (x16: a 16-core node). "
            "Sums: the formulas above with a = 10 us, b = 1.28 ns per float (25 Gb/s). "
            "`comm` is the buckets' total time per step, `exposed` what the step waits after its backward "
            "pass, `blocking` the small sums of both passes; efficiency = compute / (compute + exposed + blocking).", ""]
    rows = []
    hide = {}
    for m in calls:
        kf, _ = calls[m]["train_forward"]
        kb, bk = calls[m]["backward"]
        tf, tb, to = (med(m, "1x1", k) for k in ("fwd_ms", "bwd_ms", "opt_ms"))

        def eff(p, sp):
            comp = (tf + tb + to) / sp
            return comp / (comp + exposed(bk, tb / sp, p, NET_A, NET_B)[1] + (kf + kb) * sum_time(4, p, NET_A, NET_B))

        for sp in SPEEDS:
            for p in (8, 16, 32, 64):
                busy, exp_b = exposed(bk, tb / sp, p, NET_A, NET_B)
                blk = (kf + kb) * sum_time(4, p, NET_A, NET_B)
                comp = (tf + tb + to) / sp
                rows.append([m, f"x{sp}", str(p), ms(comp), ms(busy), ms(exp_b), ms(blk),
                             f"{100 * comp / (comp + exp_b + blk):.0f}%"])
            p = 2
            while p < 1 << 20 and eff(p, sp) >= 0.9:
                p *= 2
            hide[(m, sp)] = p
    out += markdown(["model", "node", "nodes", "compute ms", "comm ms", "exposed ms", "blocking ms",
                     "efficiency"], rows)
    out += ["", "Where the communication a step waits for first exceeds 10% of it (efficiency below 90%, "
            "counting from 2 nodes): " +
            "; ".join(f"{m} x{sp}: {p} nodes" if p < 1 << 20 else f"{m} x{sp}: never"
                      for (m, sp), p in hide.items()) + ".", ""]
    sizes = [1 << k for k in range(14, 23, 2)]
    rows = []
    for m in calls:
        bk = calls[m]["backward"][1]
        tb = med(m, "1x1", "bwd_ms")
        for sp in SPEEDS:
            for p in (8, 64):
                cells = [ms(exposed(bk, tb / sp, p, NET_A, NET_B)[1])]
                for sz in sizes:
                    busy, exp_b = exposed(rebucket(bk, sz), tb / sp, p, NET_A, NET_B)
                    cells.append(ms(exp_b))
                rows.append([m, f"x{sp}", str(p)] + cells)
    out += ["## Bucket size: exposed ms per step", "",
            "As compiled (runs of at most 2^18 floats of m->grads, from the last param to the first, each "
            "started when all its params are done), and the same gradients cut into buckets of exactly "
            "2^k floats, each started as soon as its floats are made.", ""]
    out += markdown(["model", "node", "nodes", "as compiled"] + [f"2^{k}" for k in range(14, 23, 2)], rows)
    return out


def main():
    raw, out, gen = sys.argv[1], sys.argv[2], sys.argv[3]
    meta, fits, small = {}, {}, {}
    res = defaultdict(dict)  # (model, conf) -> round -> fields
    for line in open(raw):
        if line.startswith("META "):
            k, v = line[5:].rstrip("\n").split("=", 1)
            meta[k] = v
            continue
        f = kv(line.split())
        if "SUM_FIT" in line.split():
            fits[f["kind"]] = (float(f["alpha_us"]) * 1e-3, float(f["beta_ns_per_float"]) * 1e-6)  # ms, ms/float
            continue
        if "SUM" in line.split() and f["kind"] == "blocking":
            small[int(f["n"])] = float(f["median_us"]) * 1e-3
            continue
        if "RESULT" not in line.split() or "model" not in f:
            continue
        key, r = (f["model"], f["CONF"]), int(f["ROUND"])
        # P copies alone: the slowest, whose pace P synchronized ranks would keep
        if f["CONF"] != "alone" or r not in res[key] or float(f["median_ms"]) > float(res[key][r]["median_ms"]):
            res[key][r] = f
    procs = int(meta["procs"])
    confs = ["1x1", f"1x{procs}", f"{procs}x1", "alone"]
    models = list(dict.fromkeys(m for m, _ in res))

    def med(model, conf, key):
        return statistics.median(float(f[key]) for f in res[(model, conf)].values())

    def paired(model, conf, base="1x1"):
        a, b = res[(model, base)], res[(model, conf)]
        return statistics.median(float(a[r]["median_ms"]) / float(b[r]["median_ms"])
                                 for r in a if r in b)

    header = ["model", "global batch", "1 x 1 ms/step", f"1 x {procs} ms/step",
              f"{procs} x 1 ms/step", f"{procs} alone ms/step", f"{procs} threads: speedup",
              f"{procs} processes: speedup", f"{procs} alone: speedup", "processes / alone",
              f"{procs} processes: waiting ms/step, forward + backward", "loss, first step (1 x 1 / processes)"]
    rows = []
    for m in models:
        if any(not res[(m, c)] for c in confs):
            continue
        any_run = next(iter(res[(m, f"{procs}x1")].values()))
        one = next(iter(res[(m, "1x1")].values()))
        rows.append([m, any_run["batch"], ms(med(m, "1x1", "median_ms")), ms(med(m, confs[1], "median_ms")),
                     ms(med(m, confs[2], "median_ms")), ms(med(m, "alone", "median_ms")),
                     f"{paired(m, confs[1]):.2f}x", f"{paired(m, confs[2]):.2f}x", f"{paired(m, 'alone'):.2f}x",
                     f"{paired(m, confs[2], 'alone'):.2f}",
                     f"{ms(med(m, confs[2], 'wait_fwd_ms'))} + {ms(med(m, confs[2], 'wait_ms'))}",
                     f"{float(one['first_loss']):.6f} / {float(any_run['first_loss']):.6f}"])
    table = markdown(header, rows)
    rounds = ["", "Per round (median ms/step; waiting ms/step of the processes):", ""]
    for m in models:
        for c in confs:
            per = " ".join(f"{ms(float(res[(m, c)][r]['median_ms']))}"
                           + (f" (wait {ms(float(res[(m, c)][r]['wait_fwd_ms']))} + {ms(float(res[(m, c)][r]['wait_ms']))})" if c == confs[2] else "")
                           for r in sorted(res[(m, c)]))
            label = f"{procs} alone" if c == "alone" else c.replace('x', ' x ')
            rounds.append(f"- {m}, {label}: {per}")
    text = ["# nnc: processes against threads (bench/dist.sh)", "",
            f"{meta.get('date', '')}, {meta.get('cpu', '')}, {meta.get('cores', '')} cores, "
            f"{meta.get('mpi', '')}, {meta.get('cc', '')}, `{meta.get('cflags', '')}`, "
            f"git {meta.get('git', '')}, {meta.get('rounds', '')} rounds, load "
            f"{meta.get('load_start', '')} at start, {meta.get('load_end', '')} at the end.", "",
            f"P x T = P processes (`mpirun -np P`, the nnc-mpi build) x T threads "
            f"(`OMP_NUM_THREADS`), the same global batch; `{procs} alone`: {procs} copies of the one-process "
            f"build at once, each the step of a 1/{procs} share with no sums (the slowest copy's time): what "
            f"{procs} processes could at most give on this machine, whose cores share caches and memory. "
            "Speedups over 1 x 1, paired per round; processes / alone = the alone time over the processes' "
            "(1.00: the sums cost nothing).", ""]
    text += table + rounds
    text += projection(models, res, procs, med, fits, small, gen)
    print("\n".join(table))
    with open(out, "w") as fh:
        fh.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
