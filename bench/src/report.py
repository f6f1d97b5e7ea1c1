#!/usr/bin/python3
"""report.py RAW RESULTS_MD — turns bench/run.sh's raw lines into the tables.

RAW holds `META key=value` lines and, per round, lines prefixed with
`ROUND=r` and tags (`TH=t`: the thread count; `CONF=c`: nnc's build,
`portable` or `native`, or PyTorch's mode `torch-TxB`, torch threads x
OpenBLAS threads): the `SGEMM`/`SGEMM_PEAK`/`SGEMM_CONFIG`/`SGEMM_CORE`
lines of sgemm_peak, the `FMA`/`FMA_PEAK` lines of fma_peak and the `RESULT`
lines of the nnc harness and of torch_bench.py.

Per model, build or mode, and thread count, the reported ms/step is the
median of the per-round medians.  PyTorch's figure at a thread count is its
fastest mode there (by that median).  Speedups are paired: the median over
rounds of each round's PyTorch / nnc ratio.  The sgemm peak at T threads is,
over the sizes, the best median-over-rounds rate; the FMA peak the best
repetition of any round.  Prints the tables and writes RESULTS_MD.
"""
import statistics
import sys
from collections import defaultdict


def kv(fields):
    out = {}
    for f in fields:
        if "=" in f:
            k, v = f.split("=", 1)
            out[k] = v
    return out


OPTIM = {"adam": "Adam", "adamw": "AdamW"}

# a core-to-core round trip above this (ns) is the 2-core VM's slow mode
# (bench/README.md: 56-76 ns fast, 330-390 slow), which slows runs on more
# than one thread; the report names the rounds that saw it
SLOW_NS = 200


def markdown(header, rows):
    """A markdown table; columns whose cells all start with a digit are right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    right = [all(r[i].lstrip("-")[:1].isdigit() or r[i] == "-" for r in rows) for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if right[i] else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    out = [line(header), "|" + "|".join(
        ("-" * (w + 1) + ":") if right[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"]
    return out + [line(r) for r in rows]


def ms(x):
    """A time in ms with 3-4 significant digits (0.0587, 5.61, 167.3)."""
    return f"{x:.4f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def mode_label(conf):
    """'torch-2x1' -> 'torch 2 x BLAS 1'."""
    t, b = conf[len("torch-"):].split("x")
    return f"torch {t} x BLAS {b}"


def main():
    raw, md_path = sys.argv[1], sys.argv[2]
    meta = {}
    sgemm = defaultdict(list)          # (threads, n) -> [median gflops per round]
    fma = defaultdict(list)            # (isa, threads) -> [best gflops per round]
    fma_peak_isa = {}                  # threads -> isa of the FMA_PEAK lines
    results = defaultdict(dict)        # (model, conf, threads) -> {round: dict}
    probes = defaultdict(list)         # (model, round) -> [core-to-core round trip, ns]
    order = []
    for line in open(raw):
        line = line.rstrip("\n")
        if line.startswith("META "):
            k, v = line[5:].split("=", 1)
            meta[k] = v
            continue
        parts = line.split()
        if len(parts) < 2 or not parts[0].startswith("ROUND="):
            continue
        rnd = int(parts[0][len("ROUND="):])
        i = 1
        tags = {}
        while i < len(parts) and "=" in parts[i]:
            k, v = parts[i].split("=", 1)
            tags[k] = v
            i += 1
        if i >= len(parts):
            continue
        tag, rest = parts[i], parts[i + 1:]
        d = kv(rest)
        if tag == "SGEMM_CONFIG":
            meta["blas_config"] = " ".join(rest)
        elif tag == "SGEMM_CORE":
            meta["blas_core"] = " ".join(rest)
        elif tag == "SGEMM":
            sgemm[(int(tags["TH"]), int(d["n"]))].append(float(d["median_gflops"]))
        elif tag == "FMA":
            fma[(d["isa"], int(d["threads"]))].append(float(d["best_gflops"]))
        elif tag == "FMA_PEAK":
            fma_peak_isa[int(d["threads"])] = d["isa"]
        elif tag == "PROBE":
            probes[(d["model"], rnd)].append(int(d["rt_ns"]))
        elif tag == "RESULT":
            key = (d["model"], tags["CONF"], int(tags["TH"]))
            results[key][rnd] = d
            if d["model"] not in order:
                order.append(d["model"])

    threads = [int(t) for t in meta.get("threads", "1").split()]
    builds = meta.get("builds", "portable").split()
    cores = int(meta.get("cores", "1"))

    # ---- peaks ----
    sgemm_peak, sgemm_n = {}, {}
    for t in threads:
        per = {n: statistics.median(v) for (tt, n), v in sgemm.items() if tt == t}
        if per:
            sgemm_n[t] = max(per, key=per.get)
            sgemm_peak[t] = per[sgemm_n[t]]
    fma_peak = {t: max(fma[(isa, t)]) for t, isa in fma_peak_isa.items() if fma.get((isa, t))}

    def agg(model, conf, t):
        rs = results.get((model, conf, t))
        if not rs:
            return None
        rounds = sorted(rs)
        return {
            "median": statistics.median(float(rs[r]["median_ms"]) for r in rounds),
            "min": min(float(rs[r]["min_ms"]) for r in rounds),
            "rounds": {r: float(rs[r]["median_ms"]) for r in rounds},
            "phases": [statistics.median(float(rs[r][k]) for r in rounds)
                       for k in ("fwd_ms", "bwd_ms", "opt_ms")],
            "sgemm": (statistics.median(float(rs[r]["sgemm_ms"]) for r in rounds)
                      if all(rs[r].get("sgemm_ms", "nan") != "nan" for r in rounds) else None),
            "iters": sum(int(rs[r]["iters"]) for r in rounds),
            # the process's peak resident set, the most of the rounds (MB;
            # results of older harnesses have none)
            "rss": max((float(rs[r]["maxrss_mb"]) for r in rounds if "maxrss_mb" in rs[r]), default=None),
            "r": rs[rounds[0]],
            "conf": conf,
        }

    def torch_best(model, t):
        """PyTorch's fastest mode at t threads, and every mode's aggregate."""
        modes = [agg(model, c, tt) for (m, c, tt) in results if m == model and tt == t
                 and c.startswith("torch-")]
        modes = sorted((x for x in modes if x), key=lambda x: x["median"])
        return (modes[0] if modes else None), modes

    def paired(a, b):
        """Median over the rounds both ran of b's / a's round medians."""
        common = sorted(set(a["rounds"]) & set(b["rounds"]))
        ratios = [b["rounds"][r] / a["rounds"][r] for r in common]
        return (statistics.median(ratios) if ratios else float("nan")), ratios

    def tl(t):
        return f"{t}T"

    lo, hi = threads[0], threads[-1]
    header = ["model", "batch"]
    header += [f"portable {tl(t)}" for t in threads]
    if "native" in builds:
        header += [f"native {tl(t)}" for t in threads]
    header += [f"PyTorch {tl(t)}" for t in threads]
    header += [f"speedup {tl(t)}" for t in threads]
    if "native" in builds:
        header += [f"portable/native {tl(t)}" for t in threads]
    if len(threads) > 1:
        header += [f"scaling nnc {tl(lo)}/{tl(hi)}", f"scaling PyTorch {tl(lo)}/{tl(hi)}"]
    for t in threads:
        header += [f"GFLOP/s {tl(t)}", f"% FMA peak {tl(t)}"]

    rows, details, warnings, slow_rounds = [], [], [], []
    for m in order:
        port = {t: agg(m, "portable", t) for t in threads}
        nat = {t: agg(m, "native", t) for t in threads}
        best = {t: torch_best(m, t) for t in threads}
        ref = next((x for x in port.values() if x), None) or next((x for x in nat.values() if x), None)
        if ref is None:
            continue
        flops = float(ref["r"]["step_flops"])
        row = [m, ref["r"]["batch"]]
        row += [ms(port[t]["median"]) if port[t] else "-" for t in threads]
        if "native" in builds:
            row += [ms(nat[t]["median"]) if nat[t] else "-" for t in threads]
        for t in threads:
            b = best[t][0]
            if b is None:
                row.append("-")
            elif t == 1:
                row.append(ms(b["median"]))
            else:
                row.append(f"{ms(b['median'])} ({b['conf'][len('torch-'):]})")
        for t in threads:
            b = best[t][0]
            row.append(f"{paired(port[t], b)[0]:.2f}x" if b and port[t] else "-")
        if "native" in builds:
            # paired like the speedup: each round's portable / native, whose
            # two runs are adjacent, so the machine's drift between rounds
            # cancels (the target: within 1.10)
            row += [f"{paired(nat[t], port[t])[0]:.2f}" if nat[t] and port[t] else "-" for t in threads]
        if len(threads) > 1:
            # paired too: each round's lo / hi, from runs of the same round
            row.append(f"{paired(port[hi], port[lo])[0]:.2f}x"
                       if port[lo] and port[hi] else "-")
            row.append(f"{paired(best[hi][0], best[lo][0])[0]:.2f}x"
                       if best[lo][0] and best[hi][0] else "-")
        for t in threads:
            if port[t]:
                g = flops / (port[t]["median"] * 1e-3) * 1e-9
                row.append(f"{g:.1f}")
                row.append(f"{100 * g / fma_peak[t]:.1f}%" if t in fma_peak else "-")
            else:
                row += ["-", "-"]
        rows.append(row)

        # details: params check, every run's per-round figures
        np_nnc = int(ref["r"]["params"])
        tb_any = next((x[0] for x in best.values() if x[0]), None)
        np_torch = int(tb_any["r"]["params"]) if tb_any else None
        if np_torch is not None and np_torch != np_nnc:
            warnings.append(f"`{m}`: nnc has {np_nnc:,} params, PyTorch {np_torch:,}: "
                            f"the twins are not the same network")
        parts = [f"- `{m}`: {np_nnc:,} params"
                 + ("" if np_torch is None else
                    (" (PyTorch the same)" if np_torch == np_nnc else f" (PyTorch {np_torch:,}!)"))
                 + f", {flops / 1e6:.2f} MFLOP per training step, "
                 f"{OPTIM.get(ref['r'].get('optim', 'adam'), '?')}; loss nnc "
                 f"{float(ref['r']['first_loss']):.3f} -> {float(ref['r']['last_loss']):.4f}"
                 + (f", PyTorch {float(tb_any['r']['first_loss']):.3f} -> "
                    f"{float(tb_any['r']['last_loss']):.4f}" if tb_any else "")]
        for t in threads:
            items = []
            for conf, a in (("portable", port[t]), ("native", nat[t])):
                if a:
                    items.append(f"nnc {conf} {', '.join(ms(x) for x in a['rounds'].values())}"
                                 f" (min {ms(a['min'])}; {a['iters']} steps)")
            for x in best[t][1]:
                mark = " [fastest]" if len(best[t][1]) > 1 and x is best[t][0] else ""
                items.append(f"PyTorch {mode_label(x['conf'])} "
                             f"{', '.join(ms(v) for v in x['rounds'].values())} "
                             f"(min {ms(x['min'])}; OpenBLAS threads {x['r'].get('openblas_threads')})"
                             f"{mark}")
            if port[t] and best[t][0]:
                items.append("per-round speedups " + ", ".join(
                    f"{v:.2f}x" for v in paired(port[t], best[t][0])[1]))
            if port[t] and t in sgemm_peak:
                g = flops / (port[t]["median"] * 1e-3) * 1e-9
                items.append(f"{100 * g / sgemm_peak[t]:.1f}% of the sgemm peak")
            parts.append(f"  - {tl(t)}, ms/step per round: " + "; ".join(items))
        rounds_seen = sorted({r for (pm, r) in probes if pm == m})
        if rounds_seen:
            parts.append("  - core-to-core round trip (src/cpu_probe.c) before / after the model's runs, "
                         "per round: " + ", ".join(
                             " / ".join(str(v) for v in probes[(m, r)]) for r in rounds_seen) + " ns")
            slow = [r for r in rounds_seen if max(probes[(m, r)]) > SLOW_NS]
            if slow:
                slow_rounds.append(f"`{m}` round{'s' if len(slow) > 1 else ''} "
                                   + ", ".join(map(str, slow)))
        details.append("\n".join(parts))

    if slow_rounds:
        warnings.append(f"a core-to-core round trip over {SLOW_NS} ns (the VM's slow mode; per-round "
                        "figures with each model's details) before or after the runs of "
                        + "; ".join(slow_rounds) + ": those rounds' multi-thread times are slower "
                        "than the fast mode's")
    phase_header = ["model", "run", "threads", "forward (+loss)", "backward", "optimizer step",
                    "sum", "in sgemm", "fwd+bwd outside sgemm"]
    phase_rows = []
    for m in order:
        for t in threads:
            runs = [(f"nnc {b}", agg(m, b, t)) for b in builds]
            b = torch_best(m, t)[0]
            if b:
                runs.append((f"PyTorch ({mode_label(b['conf'])})", b))
            for label, a in runs:
                if not a:
                    continue
                f, bw, o = a["phases"]
                g = a.get("sgemm")
                phase_rows.append([m, label, str(t), f"{f:.3f}", f"{bw:.3f}", f"{o:.3f}",
                                   f"{f + bw + o:.3f}",
                                   f"{g:.3f}" if g is not None else "-",
                                   f"{f + bw - g:.3f}" if g is not None else "-"])

    # ISA: what the runtime named, per build (from the nnc runs)
    isa = {}
    for (m, conf, t), rs in results.items():
        if not conf.startswith("torch-"):
            r = next(iter(rs.values()))
            isa[conf] = (r.get("isa", "?"), r.get("built_for", "?"))
    isa_line = "; ".join(f"{b}: nnc_isa() {isa[b][0]}, generated C compiled for {isa[b][1]} "
                         f"(`{meta.get('cflags_' + b, '?')}`), runtime at "
                         f"{meta.get('runtime_' + b, 'CMake default build type')}" for b in builds if b in isa)
    # run.sh --no-torch: nnc's builds only
    has_torch = any(c.startswith("torch-") for (_, c, _) in results)
    isa_line += (f"; PyTorch: {meta.get('torch_isa', 'unlimited')}" if has_torch
                 else "; PyTorch: not run (--no-torch)")

    def peaks_line():
        out = []
        for t in threads:
            s = f"{tl(t)}: sgemm {sgemm_peak[t]:.1f} GFLOP/s (n={sgemm_n[t]})" if t in sgemm_peak else f"{tl(t)}: sgemm -"
            if t in fma_peak:
                s += f", FMA {fma_peak[t]:.1f} GFLOP/s ({fma_peak_isa[t]})"
            out.append(s)
        extra = [t for t in sorted(fma_peak) if t not in threads]
        for t in extra:
            out.append(f"{tl(t)}: FMA {fma_peak[t]:.1f} GFLOP/s ({fma_peak_isa[t]})")
        return "; ".join(out)

    def fma_all_line():
        return ", ".join(f"{isa_} {tl(t)} {max(v):.1f}" for (isa_, t), v in sorted(fma.items()))

    # peak RSS by thread count: what extra threads add to the memory
    rss_header = ["model"] + [f"nnc {b} {tl(t)}" for b in builds for t in threads] \
        + [f"PyTorch {tl(t)}" for t in threads]
    rss_rows = []
    for m in order:
        row = [m]
        for b in builds:
            for t in threads:
                a = agg(m, b, t)
                row.append(f"{a['rss']:.1f}" if a and a["rss"] is not None else "-")
        for t in threads:
            x = torch_best(m, t)[0]
            row.append(f"{x['rss']:.1f}" if x and x["rss"] is not None else "-")
        rss_rows.append(row)

    table = markdown(header, rows)
    phase_table = markdown(phase_header, phase_rows)
    rss_table = markdown(rss_header, rss_rows)
    threads_note = (f"nnc at N threads: OMP_NUM_THREADS=N, its own OpenMP threads for its kernels, "
                    f"GEMMs (split by nnc into blocks of its own one-thread GEMM) and loops"
                    + ("; PyTorch at N > 1 threads runs in its fastest of (torch N, BLAS 1), "
                       "(torch 1, BLAS N), (torch N, BLAS N) per model (shown as torchxBLAS)"
                       if has_torch else ""))

    print()
    print(f"threads {' '.join(map(str, threads))} ({cores} cores), {meta.get('rounds')} round(s), "
          f"load average {meta.get('load_start')} -> {meta.get('load_end')}")
    print(f"ISA: {isa_line}")
    print(f"OpenBLAS core: {meta.get('blas_core', '?')} ({meta.get('blas_config', '?')})")
    print(f"peaks: {peaks_line()}")
    print(threads_note)
    print("\n".join(table))
    for w in warnings:
        print("WARNING: " + w)
    print("\nms per phase (medians; PyTorch's backward includes zero_grad; "
          "'in sgemm': time inside nnc's float GEMM, runtime/gemm.c, nnc only):")
    print("\n".join(phase_table))

    coretype = meta.get("coretype", "")
    coretype_note = (f"OPENBLAS_CORETYPE={coretype} from the caller's environment (--blas-env)"
                     if coretype else "no OPENBLAS_CORETYPE set")
    with open(md_path, "w") as f:
        f.write("# nnc training-step benchmark — results\n\n")
        f.write("Written by `bench/run.sh` (see bench/README.md for the method); "
                "regenerate with the same command.\n\n")
        f.write(f"- date (UTC): {meta.get('date')}\n")
        f.write(f"- machine: {meta.get('cpu')}, {cores} cores"
                f"{meta.get('virt', '')}, {meta.get('kernel')}\n")
        f.write(f"- ISA: {isa_line}; each build installed and linked through "
                f"`pkg-config --cflags --libs nnc` ({meta.get('cc')})\n")
        f.write(f"- BLAS: OpenBLAS core **{meta.get('blas_core', '?')}** "
                f"(`openblas_get_corename()`, {coretype_note}); "
                f"`openblas_get_config()`: {meta.get('blas_config', meta.get('openblas', '?'))} "
                f"(the same library for both sides); PyTorch {meta.get('torch')}\n")
        f.write(f"- peaks: {peaks_line()}; every FMA rate: {fma_all_line()}\n")
        f.write(f"- threads: {' '.join(map(str, threads))}. {threads_note}; "
                f"OMP_WAIT_POLICY={meta.get('omp_wait_policy')}\n")
        f.write(f"- nnc: git {meta.get('git')}\n")
        f.write(f"- rounds: {meta.get('rounds')} (runs alternate, each a separate process "
                f"timing >= {meta.get('min_iters')} steps and {meta.get('min_time')} s after "
                f"{meta.get('warmup')} warm-up steps)\n")
        loads = [meta[k] for k in sorted(meta) if k.startswith("load_round")]
        f.write(f"- load average at start / per round / end: {meta.get('load_start')} / "
                f"{' | '.join(loads)} / {meta.get('load_end')}\n\n")
        f.write("\n".join(table) + "\n\n")
        for w in warnings:
            f.write(f"**Warning**: {w}\n\n")
        f.write("ms/step: median over rounds of each run's median step time; portable: nnc "
                "installed and built as a user does (no -march); native: runtime and generated "
                "C at -march=native; PyTorch: its fastest mode at that thread count (in "
                "parentheses: torch threads x OpenBLAS threads).  Speedup: PyTorch / portable "
                "nnc, the median over rounds of each round's ratio.  Portable/native: the same "
                "paired median of portable ms / native ms (above 1: the portable build is slower).  Scaling: ms/step at "
                f"{tl(lo)} / ms/step at {tl(hi)}, the same paired median.  GFLOP/s: portable nnc's training FLOPs (3 x "
                "forward GEMM FLOPs, 2·M·N·K each) / median step time; % of the FMA peak at "
                "the same thread count (peaks above).\n\n")
        f.write("\n".join(details) + "\n\n")
        f.write("Where the time goes, ms per phase (medians of the phases timed within "
                "the same steps; PyTorch's backward includes `opt.zero_grad()`; "
                "'in sgemm' is the time spent inside nnc's float GEMM (`runtime/gemm.c`; OpenBLAS's `cblas_sgemm` in the generic build) during the step, measured "
                "for nnc by wrapping the call, so 'outside sgemm' is the generated code's "
                "and the runtime's own loops: convolutions, elementwise ops, reductions, the "
                "loss; per-GEMM figures are in `bench/build/log.txt`):\n\n")
        f.write("\n".join(phase_table) + "\n")
        f.write("\nPeak resident set of each process, MB (`getrusage`'s `ru_maxrss` at the end of "
                "the run, the most of the rounds): nnc's bench program holds the arena, the "
                "threads' scratch, the weights, gradients and Adam's moments, and the harness's "
                "data; PyTorch's (its fastest mode) the interpreter and its libraries too.\n\n")
        f.write("\n".join(rss_table) + "\n")
    print("\npeak RSS, MB:")
    print("\n".join(rss_table))
    print(f"\nwrote {md_path}")


if __name__ == "__main__":
    main()
