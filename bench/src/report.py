#!/usr/bin/python3
"""report.py RAW RESULTS_MD — turns bench/run.sh's raw lines into the table.

RAW holds `META key=value` lines and, per round, the `SGEMM`/`SGEMM_PEAK`
lines of sgemm_peak and the `RESULT` lines of the nnc harness and of
torch_bench.py, prefixed with `ROUND=r`.  Per model and side, the reported
median is the median of the per-round medians and the reported min the
minimum over all timed steps; the sgemm peak is, over the sizes, the best
median-over-rounds rate.  Prints the table and writes RESULTS_MD.
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


def markdown(header, rows):
    """A markdown table; columns whose cells all start with a digit are right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    right = [all(r[i][:1].isdigit() or r[i] == "-" for r in rows) for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if right[i] else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    out = [line(header), "|" + "|".join(
        ("-" * (w + 1) + ":") if right[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"]
    return out + [line(r) for r in rows]


def main():
    raw, md_path = sys.argv[1], sys.argv[2]
    meta = {}
    sgemm = defaultdict(list)          # n -> [median gflops per round]
    results = defaultdict(list)        # (model, side) -> [dict per round]
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
        tag, d = parts[1], kv(parts[2:])
        if tag == "SGEMM_CONFIG":
            meta["blas_config"] = line.split("SGEMM_CONFIG", 1)[1].strip()
        if tag == "SGEMM":
            sgemm[int(d["n"])].append(float(d["median_gflops"]))
        elif tag == "RESULT":
            key = (d["model"], d["side"])
            results[key].append(d)
            if d["model"] not in order:
                order.append(d["model"])

    sizes = sorted(sgemm)
    per_size = {n: statistics.median(v) for n, v in sgemm.items()}
    peak_n = max(per_size, key=per_size.get) if per_size else 0
    peak = per_size.get(peak_n, float("nan"))

    def agg(model, side):
        rs = results.get((model, side))
        if not rs:
            return None
        return {
            "median": statistics.median(float(r["median_ms"]) for r in rs),
            "min": min(float(r["min_ms"]) for r in rs),
            "rounds": [float(r["median_ms"]) for r in rs],
            "phases": [statistics.median(float(r[k]) for r in rs)
                       for k in ("fwd_ms", "bwd_ms", "opt_ms")],
            "sgemm": (statistics.median(float(r["sgemm_ms"]) for r in rs)
                      if all(r.get("sgemm_ms", "nan") != "nan" for r in rs) else None),
            "iters": sum(int(r["iters"]) for r in rs),
            "r": rs[0],
        }

    header = ["model", "batch", "nnc ms/step", "nnc min", "PyTorch ms/step",
              "PyTorch min", "speedup (PyTorch/nnc)", "paired speedup", "nnc GFLOP/s",
              "% of sgemm peak", "PyTorch GFLOP/s"]
    rows, details = [], []
    for m in order:
        a, b = agg(m, "nnc"), agg(m, "torch")
        if a is None:
            continue
        flops = float(a["r"]["step_flops"])
        g = flops / (a["median"] * 1e-3) * 1e-9
        row = [m, a["r"]["batch"], f"{a['median']:.3f}", f"{a['min']:.3f}"]
        paired = []
        if b:
            gt = flops / (b["median"] * 1e-3) * 1e-9
            # each round's PyTorch run against its nnc run, right before or
            # after it: the machine's speed drifts over minutes, and a
            # pair is seconds apart
            paired = [y / x for x, y in zip(a["rounds"], b["rounds"])]
            row += [f"{b['median']:.3f}", f"{b['min']:.3f}",
                    f"{b['median'] / a['median']:.2f}x", f"{statistics.median(paired):.2f}x"]
        else:
            gt = None
            row += ["-", "-", "-", "-"]
        row += [f"{g:.1f}", f"{100 * g / peak:.1f}%", f"{gt:.1f}" if gt else "-"]
        rows.append(row)
        details.append(
            f"- `{m}`: {int(a['r']['params']):,} params, {flops / 1e6:.2f} MFLOP per "
            f"training step, {OPTIM.get(a['r'].get('optim', 'adam'), '?')}; per-round medians nnc "
            f"{', '.join(f'{x:.3f}' for x in a['rounds'])} ms ({a['iters']} steps), "
            + (f"PyTorch {', '.join(f'{x:.3f}' for x in b['rounds'])} ms ({b['iters']} steps); "
               f"per-round speedups {', '.join(f'{x:.2f}x' for x in paired)}; "
               if b else "")
            + f"loss nnc {float(a['r']['first_loss']):.3f} -> {float(a['r']['last_loss']):.4f}"
            + (f", PyTorch {float(b['r']['first_loss']):.3f} -> {float(b['r']['last_loss']):.4f}"
               if b else "")
            + (f"; threads nnc OpenBLAS {a['r']['threads']}, PyTorch torch "
               f"{b['r']['threads']} / OpenBLAS {b['r']['openblas_threads']}" if b else ""))

    phase_header = ["model", "side", "forward (+loss)", "backward", "optimizer step", "sum",
                    "in sgemm", "fwd+bwd outside sgemm"]
    phase_rows = []
    for m in order:
        for side, label in (("nnc", "nnc"), ("torch", "PyTorch")):
            a = agg(m, side)
            if a:
                f, b, o = a["phases"]
                g = a.get("sgemm")
                phase_rows.append([m, label, f"{f:.3f}", f"{b:.3f}", f"{o:.3f}",
                                   f"{f + b + o:.3f}",
                                   f"{g:.3f}" if g is not None else "-",
                                   f"{f + b - g:.3f}" if g is not None else "-"])

    table = markdown(header, rows)
    phase_table = markdown(phase_header, phase_rows)
    peak_line = (f"OpenBLAS sgemm peak: {peak:.1f} GFLOP/s (n={peak_n}; "
                 + ", ".join(f"n={n}: {per_size[n]:.1f}" for n in sizes)
                 + f"), {meta.get('threads', '?')} thread(s)")

    print()
    print(f"threads {meta.get('threads')}, {meta.get('rounds')} round(s), "
          f"load average {meta.get('load_start')} -> {meta.get('load_end')}")
    print(peak_line)
    print("\n".join(table))
    print("\nms per phase (medians; PyTorch's backward includes zero_grad; "
          "'in sgemm': time inside cblas_sgemm, nnc only):")
    print("\n".join(phase_table))

    with open(md_path, "w") as f:
        f.write("# nnc training-step benchmark — results\n\n")
        f.write("Written by `bench/run.sh` (see bench/README.md for the method); "
                "regenerate with the same command.\n\n")
        f.write(f"- date (UTC): {meta.get('date')}\n")
        f.write(f"- machine: {meta.get('cpu')}, {meta.get('cores')} cores"
                f"{meta.get('virt', '')}, {meta.get('kernel')}\n")
        f.write(f"- threads: {meta.get('threads')} (OPENBLAS_NUM_THREADS = OMP_NUM_THREADS "
                f"= MKL_NUM_THREADS, torch.set_num_threads; "
                f"OMP_WAIT_POLICY={meta.get('omp_wait_policy')})\n")
        f.write(f"- BLAS: {meta.get('blas_config', 'OpenBLAS ' + meta.get('openblas', '?'))} "
                f"(the same library for both sides); PyTorch {meta.get('torch')}; "
                f"{meta.get('cc')}, generated C and harness at `{meta.get('cflags')}`, "
                f"runtime at CMake Release\n")
        f.write(f"- nnc: git {meta.get('git')}\n")
        f.write(f"- rounds: {meta.get('rounds')} (sides alternate, each run a separate "
                f"process timing >= {meta.get('min_time')} s after 20 warm-up steps)\n")
        f.write(f"- load average at start / end: {meta.get('load_start')} / "
                f"{meta.get('load_end')}\n")
        f.write(f"- {peak_line}\n\n")
        f.write("\n".join(table) + "\n\n")
        f.write("ms/step: median over rounds of each run's median step time; min: fastest "
                "step seen; speedup: the ratio of those medians; paired speedup: the median "
                "over rounds of each round's ratio (PyTorch's run against the nnc run next to "
                "it, so that the machine's drift between rounds cancels).  GFLOP/s: "
                "training FLOPs (3 x forward GEMM FLOPs, 2·M·N·K each) / median step time; "
                "% of the sgemm peak measured above.\n\n")
        f.write("\n".join(details) + "\n\n")
        f.write("Where the time goes, ms per phase (medians of the phases timed within "
                "the same steps; PyTorch's backward includes `opt.zero_grad()`; "
                "'in sgemm' is the time spent inside `cblas_sgemm` during the step, measured "
                "for nnc by wrapping the call, so 'outside sgemm' is the generated code's "
                "own loops: elementwise ops, reductions, the loss; per-GEMM figures are in "
                "`bench/build/log.txt`):\n\n")
        f.write("\n".join(phase_table) + "\n")
    print(f"\nwrote {md_path}")


if __name__ == "__main__":
    main()
