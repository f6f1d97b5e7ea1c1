#!/usr/bin/python3
"""op_profile.py — per-operation time of an nnc-generated training step.

    /usr/bin/python3 bench/src/op_profile.py GEN.c OUT.c [MODEL.nn]   # instrument
    /usr/bin/python3 bench/src/op_profile.py --report LOG     # summarize a run
    (bench/profile.sh MODEL does the whole thing: instrument, build, run, report)

Copies the generated C (GEN.c) to OUT.c with a timer mark before every
top-level operation of <p>_train_forward and <p>_backward (the generated code
opens each one with a `/* file.nn:LINE  source */` comment at the function's
indentation), and every cblas_sgemm call routed through a timing shim, so
that each operation's time is split into "inside sgemm" and "own loops".
Each mark is two clock reads (~50 ns with the default CLOCK_MONOTONIC), a
few hundred per step: well under 1% of a step of a model worth profiling
this way.  On a busy machine, compile OUT.c with
-DOPPROF_CLOCK=CLOCK_THREAD_CPUTIME_ID: the thread's CPU time does not count
the time the thread waits for a core (each read is then a system call,
~0.3 us, so the step gets ~1 ms longer; the split stays right).

At exit, OUT.c prints to stderr one line per operation (per step, averaged
over the training passes seen):
    OP <pass> <index> <ms/step> <sgemm ms/step> <sgemm calls/step> <category> | <source>
and per-category totals.  The categories come from the source text and, for
the operations that one source expression expands to (conv2d is one
per-example operation, im2col into a work buffer and a GEMM, and a bias add
forward; a data-gradient operation, GEMM and col2im, a filter-gradient one,
im2col and GEMM, and a bias-gradient reduction backward: so "conv GEMM"'s
own loops are its im2col and col2im; now one call into the runtime, to its
direct kernels, "conv direct", or its columns, "conv columns", whose GEMMs
the shim does not see), from the generated code itself:
linear, conv direct, conv columns, conv GEMM, conv im2col, conv col2im, conv permute, conv bias, pooling,
batch_norm reductions, batch_norm elementwise, batched matmul @,
transpose/reshape copy, softmax, causal_mask, layer_norm, activation,
elementwise, embedding, cross_entropy.  An operation belongs to BatchNorm
when its call site (the source before ': ') calls a field that MODEL.nn
declares as `name: BatchNorm` (or names BatchNorm itself); without MODEL.nn
those operations count as elementwise.
"""
import re
import sys

MARK = re.compile(r"^    /\* ([^*]*?\.nn:\d+)  (.*?) \*/\s*$")


# The categories in report order (the C shim prints them in this order).
CATEGORIES = ["linear", "conv direct", "conv columns", "conv GEMM", "conv im2col", "conv col2im", "conv permute",
              "conv bias", "pooling", "batch_norm reductions", "batch_norm elementwise",
              "batched matmul @", "transpose/reshape copy", "softmax", "causal_mask",
              "layer_norm", "activation", "elementwise (+, *, ...)", "embedding",
              "cross_entropy"]


def batch_norm_fields(nn_path):
    """Names of the fields a .nn file declares as BatchNorm layers."""
    if not nn_path:
        return set()
    text = open(nn_path).read()
    return set(re.findall(r"^\s*(\w+)\s*:\s*BatchNorm\b", text, re.M))


def split_source(s):
    """A mark's source text -> (call site, expression): "bn1(conv1(x)): mean(v, ...)",
    "fc1: Dense(units: 120): linear(x, weight, bias)" (a sequential model's
    field and its type), "conv1: Conv2D(filters: 6, ..., activation:...: conv2d(...)"
    (a call site cut short), or an expression alone ("relu(h + skip)")."""
    if "...: " in s:
        i = s.index("...: ")
        return s[:i + 3], s[i + 5:]
    depth = 0
    for i, ch in enumerate(s):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and s.startswith(": ", i) and not re.fullmatch(r"\w+", s[:i]):
            return s[:i], s[i + 2:]
    return "", s


def category(src, code="", bn_fields=frozenset()):
    """The category of one operation from its source comment and the code
    that follows it (up to the next operation)."""
    head, tail = split_source(src.replace(" (backward)", ""))
    is_reduction = "double acc" in code or "double sum = 0, sq = 0" in code or "double sdx" in code
    if tail.startswith("conv2d("):
        if "nnc_conv2d_cols_" in code:
            return "conv columns"
        if "nnc_conv2d_" in code:
            return "conv direct"
        if "cblas_sgemm" in code:
            return "conv GEMM"
        if is_reduction:
            return "conv bias"
        if "+= crow[" in code:
            return "conv col2im"
        if "crow[ow] =" in code or "memset(crow" in code:
            return "conv im2col"
        if "[o++] =" in code:
            return "conv permute"
        return "conv bias"
    if tail.startswith(("max_pool2d", "avg_pool2d")) or tail.startswith("mean(x, axis: [2, 3])"):
        return "pooling"
    callee = re.match(r"\s*(\w+)\s*[(:]", head)
    if "BatchNorm" in head or (callee and callee.group(1) in bn_fields):
        return "batch_norm reductions" if is_reduction else "batch_norm elementwise"
    if "cross_entropy" in tail:
        return "cross_entropy"
    if tail.startswith("embedding"):
        return "embedding"
    if tail.startswith("layer_norm"):
        return "layer_norm"
    if tail.startswith("softmax"):
        return "softmax"
    if tail.startswith("causal_mask"):
        return "causal_mask"
    if tail.startswith("activation(") or tail.startswith(("gelu", "relu", "tanh", "sigmoid", "silu")):
        return "activation"
    if tail.startswith("linear("):
        return "linear"
    if tail.strip() == "@":
        return "batched matmul @"
    if tail.startswith(("transpose", "reshape", "flatten")):
        return "transpose/reshape copy"
    return "elementwise (+, *, ...)"


def report(log_path, top=30):
    """Groups the OP lines of a run by pass, category and source text (the
    same operation in every layer) and prints them by time, then the CAT
    lines."""
    groups, count = {}, {}
    cats, total = [], ""
    for line in open(log_path):
        if line.startswith("OP "):
            head, src = line.rstrip("\n").split(" | ", 1)
            f = head.split()
            key = (f[1], " ".join(f[6:]), src)
            g = groups.setdefault(key, [0.0, 0.0, 0.0])
            g[0] += float(f[3])
            g[1] += float(f[4])
            g[2] += float(f[5])
            count[key] = count.get(key, 0) + 1
        elif line.startswith("CAT "):
            cats.append(line[4:].rstrip())
        elif line.startswith("TOTAL "):
            total = line.rstrip()
    width = max([len(k[1]) for k in groups] + [8])
    print(f"{'pass':8} {'ms/step':>8} {'sgemm':>7} {'calls':>6} {'ops':>4}  {'category':{width}}  "
          "operation (summed over layers)")
    for key, (t, g, c) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{key[0]:8} {t:8.3f} {g:7.3f} {c:6.0f} {count[key]:4d}  {key[1]:{width}}  {key[2]}")
    print()
    print("\n".join(cats))
    print(total)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        return report(sys.argv[2])
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    src_path, out_path = sys.argv[1], sys.argv[2]
    bn_fields = batch_norm_fields(sys.argv[3] if len(sys.argv) == 4 else None)
    lines = open(src_path).read().split("\n")
    # The passes may be printed once per instruction set (<p>_train_forward_generic,
    # _avx512, _avx2, identical text): every copy gets the same marks, so the
    # profile holds whichever copy nnc_isa() runs.
    m = re.search(r"^(?:static )?(?:NNC_TARGET_\w+ )?float (\w+?)_train_forward(?:_generic)?\(", "\n".join(lines), re.M)
    if not m:
        sys.exit("op_profile: no <p>_train_forward in " + src_path)
    prefix = m.group(1)
    out, ops, code = [], [], []
    pass_name = None  # "forward" / "backward" while inside those functions
    head = re.compile(r"^(?:static )?(?:NNC_TARGET_\w+ )?(float|void) %s_(train_forward|backward)(_\w+)?\(" % prefix)
    copy = 0  # which printing of the passes (0: the first); later ones reuse its marks
    seen, nth = set(), 0
    for ln in lines:
        hm = head.match(ln)
        if hm and not ln.rstrip().endswith(";"):
            pass_name = "forward" if hm.group(2) == "train_forward" else "backward"
            copy = 1 if pass_name in seen else 0
            seen.add(pass_name)
            nth = next(i for i, (p, _) in enumerate(ops) if p == pass_name) if copy else len(ops)
        if pass_name:
            mm = MARK.match(ln)
            if mm and copy:
                out.append(f"    opprof_mark_({nth});")
                nth += 1
            elif mm:
                ops.append((pass_name, mm.group(2)))
                code.append([])
                out.append(f"    opprof_mark_({len(ops) - 1});")
            elif ln.startswith("    return ") and pass_name == "forward":
                out.append("    opprof_mark_(-1);")
            elif ln == "}":
                if pass_name == "backward":
                    out.append("    opprof_mark_(-1);")
                pass_name = None
            elif code and not copy:
                code[-1].append(ln)
        out.append(ln)
    ops = [(p, src, category(src, "\n".join(c), bn_fields)) for (p, src), c in zip(ops, code)]
    # the shim goes after the last #include; clock_gettime wants POSIX
    text = "\n".join(out)
    n = len(ops)
    cats = ", ".join('"%s"' % c for c in CATEGORIES)
    table = ",\n".join('    {"%s", "%s", "%s"}' % (p, s.replace("\\", "\\\\").replace('"', '\\"'), c)
                       for p, s, c in ops)
    shim = f"""
/* ---- op_profile.py instrumentation ---- */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static const struct {{ const char *pass, *src, *cat; }} opprof_ops_[{n}] = {{
{table}
}};
static double opprof_t_[{n}], opprof_g_[{n}], opprof_last_;
static long opprof_c_[{n}], opprof_steps_;
static int opprof_cur_ = -1, opprof_registered_;
#ifndef OPPROF_CLOCK /* -DOPPROF_CLOCK=CLOCK_THREAD_CPUTIME_ID on a busy machine */
#define OPPROF_CLOCK CLOCK_MONOTONIC
#endif
static double opprof_now_(void)
{{
    struct timespec ts;
    clock_gettime(OPPROF_CLOCK, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}}
static void opprof_report_(void)
{{
    static const char *cats[] = {{{cats}}};
    const double s = opprof_steps_ ? 1e3 / (double)opprof_steps_ : 0;
    double tot = 0, totg = 0;
    for (int i = 0; i < {n}; i++) {{
        fprintf(stderr, "OP %s %d %.4f %.4f %.1f %s | %s\\n", opprof_ops_[i].pass, i,
                opprof_t_[i] * s, opprof_g_[i] * s, (double)opprof_c_[i] / (double)(opprof_steps_ ? opprof_steps_ : 1),
                opprof_ops_[i].cat, opprof_ops_[i].src);
        tot += opprof_t_[i], totg += opprof_g_[i];
    }}
    for (int p = 0; p < 2; p++)
        for (unsigned c = 0; c < sizeof cats / sizeof *cats; c++) {{
            double t = 0, g = 0;
            int k = 0;
            for (int i = 0; i < {n}; i++)
                if (!strcmp(opprof_ops_[i].cat, cats[c]) && !strcmp(opprof_ops_[i].pass, p ? "backward" : "forward"))
                    t += opprof_t_[i], g += opprof_g_[i], k++;
            if (k)
                fprintf(stderr, "CAT %s %s: %.3f ms/step (sgemm %.3f, own loops %.3f), %d ops\\n",
                        p ? "backward" : "forward", cats[c], t * s, g * s, (t - g) * s, k);
        }}
    fprintf(stderr, "TOTAL %.3f ms/step over %ld steps (sgemm %.3f)\\n", tot * s, opprof_steps_, totg * s);
}}
static void opprof_mark_(int id)
{{
    const double t = opprof_now_();
    if (opprof_cur_ >= 0)
        opprof_t_[opprof_cur_] += t - opprof_last_;
    if (id == 0) {{
        opprof_steps_++;
        if (!opprof_registered_)
            opprof_registered_ = 1, atexit(opprof_report_);
    }}
    opprof_cur_ = id;
    opprof_last_ = opprof_now_();
}}
/* nnc_cblas_sgemm (one thread, runtime/gemm.c) is the passes' other call */
static inline void opprof_sgemm_(const enum CBLAS_ORDER o, const enum CBLAS_TRANSPOSE ta, const enum CBLAS_TRANSPOSE tb,
                          const blasint M, const blasint N, const blasint K, const float alpha,
                          const float *A, const blasint lda, const float *B, const blasint ldb,
                          const float beta, float *C, const blasint ldc)
{{
    const double t = opprof_now_();
    nnc_cblas_sgemm(o, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (opprof_cur_ >= 0)
        opprof_g_[opprof_cur_] += opprof_now_() - t, opprof_c_[opprof_cur_]++;
}}
/* nnc_sgemm (row-major, split over nnc's threads) is the call the passes make */
static void opprof_nnc_sgemm_(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
                              const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{{
    const double t = opprof_now_();
    nnc_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (opprof_cur_ >= 0)
        opprof_g_[opprof_cur_] += opprof_now_() - t, opprof_c_[opprof_cur_]++;
}}
/* nnc_sgemm_bias (a linear layer's product and bias, plan.c fold_linear_bias) */
static void opprof_nnc_sgemm_bias_(int split, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
                                   float alpha, const float *A, int lda, const float *B, int ldb, float *C, int ldc,
                                   const float *bias)
{{
    const double t = opprof_now_();
    nnc_sgemm_bias(split, ta, tb, M, N, K, alpha, A, lda, B, ldb, C, ldc, bias);
    if (opprof_cur_ >= 0)
        opprof_g_[opprof_cur_] += opprof_now_() - t, opprof_c_[opprof_cur_]++;
}}
#define nnc_cblas_sgemm opprof_sgemm_
#define nnc_sgemm opprof_nnc_sgemm_
#define nnc_sgemm_bias opprof_nnc_sgemm_bias_
/* ---- end of instrumentation ---- */
"""
    i = text.index("\n", text.rindex("\n#include") + 1)
    open(out_path, "w").write("#define _POSIX_C_SOURCE 200809L\n" + text[:i] + "\n" + shim + text[i:])
    print(f"op_profile: {n} operations instrumented in {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
