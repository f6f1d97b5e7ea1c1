#!/usr/bin/python3
"""gradcheck.py — finite-difference gradient checks of nnc's backward pass.

For one case (tests/gradcheck/<case>.nn) it:

  1. compiles the model in double precision:
     `nnc <case>.nn -o gen --precision=f64 --prefix gc_<case>`;
  2. reads the case's `input`/`label` declarations (a regex over the .nn)
     and the `gc_<case>_train_forward` prototype in the generated header, and
     generates deterministic random inputs and labels;
  3. writes a C harness (harness.c) that sets every param to seeded random
     values, runs train_forward + backward once, and then compares, for
     every param element (at most `cap` sampled elements per tensor), the
     analytic gradient with the central difference
         fd = (f(p + h) - f(p - h)) / 2h
     under  |a - fd| <= atol_eff + rtol * max(|a|, |fd|),
     atol_eff = atol * max(1, |loss|);
  4. builds it with `cc -std=c11 -O0 -g -Wall -Wextra -Wpedantic -Werror`
     against the runtime and runs it.

Besides the comparison the harness checks: the loss and every gradient are
finite; `frozen` params have a gradient of exactly 0 (every element) while
their finite difference is not 0 (so the check is not vacuous); every other
param tensor has some non-zero gradient (the case really exercises it);
a second train_forward + backward at the same point gives bit-identical
loss and gradients (backward overwrites, it does not accumulate, and uses
only what the last forward kept, although many forwards ran in between).

Directives: comment lines `// gradcheck: key=value key=value ...` anywhere
in the case file (by convention the first lines):

  batch=B            batch size n (default 3); max_batch is B + 1 so that
                     n < max_batch is exercised
  classes=C          i32 labels/inputs draw from [0, C) (default 2);
                     classes.<name>=C for one tensor
  ignore=F           fraction of i32 label elements set to -100 (exactly
                     round(F * count), at least 1); ignore.<name>=F
  in=LO:HI           range of f32 inputs/labels (default -1:1);
                     in.<name>=LO:HI for one tensor
  init=LO:HI         range of every param (default -1:1);
                     init.<tensor>=LO:HI for a tensor or a field prefix
                     (`init.enc=...` covers enc.weight and enc.bias)
  frozen=a,b         params (names or field prefixes) that are frozen:
                     their gradient must be exactly 0
  allow_zero=a,b     params allowed to have an all-zero gradient
  rtol=, atol=, h=   tolerances and step (defaults 1e-6, 1e-8, 1e-6)
  cap=K              at most K checked elements per tensor (default 400)
  seed=S             seed of params, inputs and labels (default 1)
  kink_frac=F        most elements that may be skipped as kinks (0.01)

`--set key=value` on the command line overrides a directive.

Usage:
  gradcheck.py --nnc build/nnc --runtime-lib build/libnnc_runtime.a \\
      --runtime-include runtime --case elementwise      # or --all
  gradcheck.py --coverage        # every primitive of the list is in a case
  gradcheck.py ... --self-test   # the harness must reject a wrong gradient
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

DEFAULTS = {
    "batch": "3", "classes": "2", "ignore": "0", "in": "-1:1",
    "init": "-1:1", "frozen": "", "allow_zero": "", "rtol": "1e-6",
    "atol": "1e-8", "h": "1e-6", "cap": "400", "seed": "1",
    "kink_frac": "0.01",
}

CFLAGS = ["-std=c11", "-O0", "-g", "-Wall", "-Wextra", "-Wpedantic",
          "-Werror"]


class GradcheckError(Exception):
    pass


# ---- the case file ------------------------------------------------------------

DECL_RE = re.compile(
    r"^\s*(input|label)\s+([A-Za-z_]\w*)\s*:\s*(f32|i32)\s*\[([^\]]*)\]",
    re.M)
DIRECTIVE_RE = re.compile(r"^\s*//\s*gradcheck:(.*)$", re.M)


def parse_case(path, overrides=()):
    text = open(path, encoding="utf-8").read()
    directives = dict(DEFAULTS)
    lines = [m.group(1) for m in DIRECTIVE_RE.finditer(text)]
    for line in lines + list(overrides):
        for tok in line.split():
            if "=" not in tok:
                raise GradcheckError(f"{path}: bad directive token {tok!r}")
            k, v = tok.split("=", 1)
            base = k.split(".", 1)[0]
            if base not in DEFAULTS:
                raise GradcheckError(f"{path}: unknown directive {k!r}")
            directives[k] = v
    if not re.search(r"^\s*model\s+[A-Za-z_]\w*", text, re.M):
        raise GradcheckError(f"{path}: no model declaration")
    decls = []
    for m in DECL_RE.finditer(text):
        dims = [d.strip() for d in m.group(4).split(",")]
        decls.append({"kind": m.group(1), "name": m.group(2),
                      "dtype": m.group(3), "dims": dims})
    code = strip_comments(text)
    frozen = name_list(directives["frozen"])
    for m in re.finditer(r"^\s*([A-Za-z_]\w*)\s*:[^\n]*\bfrozen\b", code, re.M):
        f = m.group(1)
        if not any(x == f or x.endswith("." + f) for x in frozen):
            raise GradcheckError(f"{path}: field {f!r} is frozen: list its "
                                 "path in the `frozen=` directive")
    if not re.search(r"^\s*loss\b", code, re.M):
        raise GradcheckError(f"{path}: the model has no loss")
    return text, directives, decls


def split_top(s):
    """Splits at commas outside () and []."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_prototype(header, prefix):
    """The arguments of <prefix>_train_forward after (m, n): name, C type
    without the name, element type, per-example dims."""
    m = re.search(r"^double\s+" + re.escape(prefix) +
                  r"_train_forward\((.*)\);\s*$", header, re.M)
    if not m:
        raise GradcheckError(
            f"no `double {prefix}_train_forward(...)` in the header "
            "(did nnc emit f64 code?)")
    args = split_top(m.group(1))
    if len(args) < 2 or not args[1].startswith("int"):
        raise GradcheckError(f"unexpected prototype: {m.group(0)}")
    out = []
    for a in args[2:]:
        pm = re.match(r"^(const\s+)?(double|int32_t)\s*(?:\(\s*\*\s*([A-Za-z_]\w*)\s*\)((?:\[\d+\])+)|\*\s*([A-Za-z_]\w*))$", a)
        if not pm:
            raise GradcheckError(f"cannot read the argument {a!r} of "
                                 f"{prefix}_train_forward")
        elem = pm.group(2)
        if pm.group(3):
            name = pm.group(3)
            dims = [int(d) for d in re.findall(r"\[(\d+)\]", pm.group(4))]
            ctype = f"{pm.group(1) or ''}{elem} (*){pm.group(4)}"
        else:
            name = pm.group(5)
            dims = []
            ctype = f"{pm.group(1) or ''}{elem} *"
        out.append({"name": name, "elem": elem, "dims": dims, "ctype": ctype})
    return out


def parse_range(s, what):
    try:
        lo, hi = (float(v) for v in s.split(":"))
    except ValueError:
        raise GradcheckError(f"bad range {s!r} for {what} (want LO:HI)")
    if not lo <= hi:
        raise GradcheckError(f"empty range {s!r} for {what}")
    return lo, hi


def per_tensor(directives, key, name):
    return directives.get(f"{key}.{name}", directives[key])


def make_data(decls, proto, directives, batch, rng):
    """C definitions of the inputs and labels, and the call arguments."""
    if len(decls) != len(proto):
        raise GradcheckError(
            f"the .nn declares {len(decls)} inputs/labels "
            f"({', '.join(d['name'] for d in decls)}) but train_forward "
            f"takes {len(proto)} ({', '.join(p['name'] for p in proto)})")
    names = {d["name"] for d in decls}
    for k in directives:
        if "." in k and k.split(".", 1)[0] in ("in", "classes", "ignore"):
            if k.split(".", 1)[1] not in names:
                raise GradcheckError(f"directive {k}: no input or label "
                                     f"named {k.split('.', 1)[1]!r}")
    defs, args = [], []
    for d, p in zip(decls, proto):
        if d["name"] != p["name"]:
            raise GradcheckError(f"declaration order: .nn has {d['name']}, "
                                 f"train_forward has {p['name']}")
        want = "double" if d["dtype"] == "f32" else "int32_t"
        if p["elem"] != want:
            raise GradcheckError(f"{d['name']}: {d['dtype']} in the .nn but "
                                 f"{p['elem']} in the header")
        if re.fullmatch(r"\d+", d["dims"][0]):
            raise GradcheckError(f"{d['name']}: only batch-first tensors "
                                 "are supported")
        for nd, hd in zip(d["dims"][1:], p["dims"]):
            if re.fullmatch(r"\d+", nd) and int(nd) != hd:
                raise GradcheckError(f"{d['name']}: dim {nd} in the .nn, "
                                     f"{hd} in the header")
        if len(d["dims"]) - 1 != len(p["dims"]):
            raise GradcheckError(f"{d['name']}: rank differs between the .nn "
                                 "and the header")
        count = batch * int(np.prod(p["dims"], dtype=np.int64))
        cname = f"data_{d['name']}"
        if d["dtype"] == "f32":
            lo, hi = parse_range(per_tensor(directives, "in", d["name"]),
                                 d["name"])
            vals = rng.uniform(lo, hi, size=count)
            body = ",\n    ".join(
                ", ".join(f"{v:.17g}" for v in vals[i:i + 6])
                for i in range(0, count, 6))
            defs.append(f"static const double {cname}[{count}] = {{\n"
                        f"    {body}\n}};")
        else:
            classes = int(per_tensor(directives, "classes", d["name"]))
            ignore = float(per_tensor(directives, "ignore", d["name"]))
            vals = rng.integers(0, classes, size=count)
            if ignore > 0:
                k = min(count - 1, max(1, int(round(ignore * count))))
                vals[rng.permutation(count)[:k]] = -100
            body = ",\n    ".join(
                ", ".join(str(int(v)) for v in vals[i:i + 12])
                for i in range(0, count, 12))
            defs.append(f"static const int32_t {cname}[{count}] = {{\n"
                        f"    {body}\n}};")
        args.append(f"({p['ctype']}){cname}")
    return "\n".join(defs), ", ".join(args)


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def name_list(s):
    return [x for x in s.split(",") if x]


# ---- the C harness ------------------------------------------------------------

HARNESS = r"""/* harness.c: generated by tests/gradcheck/gradcheck.py for case @CASE@. */
#include "@P@.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

@DATA@

typedef struct range_spec { const char *name; double lo, hi; } range_spec;
static const range_spec ranges[] = {
@RANGES@    {NULL, 0, 0}
};
static const char *const frozen[] = { @FROZEN@NULL };
static const char *const allow_zero[] = { @ALLOWZERO@NULL };

enum { BATCH = @BATCH@, MAX_BATCH = @MAXB@, CAP = @CAP@, MAX_PRINT = 12 };
static const double H = @H@, RTOL = @RTOL@, ATOL = @ATOL@;
static const double INIT_LO = @INITLO@, INIT_HI = @INITHI@;
static const double KINK_FRAC = @KINKFRAC@, CORRUPT = @CORRUPT@;

static uint64_t rng_s = @SEED@u;

static uint64_t next_u64(void)
{
    uint64_t z = (rng_s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next_u64() >> 11) * 0x1.0p-53);
}

/* `pat` names the tensor itself or a field above it ("enc" for "enc.weight"). */
static int matches(const char *pat, const char *name)
{
    size_t k = strlen(pat);
    return strncmp(pat, name, k) == 0 && (name[k] == '\0' || name[k] == '.');
}

static int in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (matches(*list, name))
            return 1;
    return 0;
}

static @P@ m;
static double *state0;

static double loss_at(void)
{
    if (m.state)
        memcpy((void *)m.state, state0, sizeof(double) * @UP@_NUM_STATE);
    return @P@_train_forward(&m, BATCH, @ARGS@);
}

static int check_names(const nnc_tensor_info *ti, size_t nt, const char *what, const char *pat)
{
    for (size_t t = 0; t < nt; t++)
        if (ti[t].trainable && matches(pat, ti[t].name))
            return 0;
    fprintf(stderr, "gradcheck @CASE@: %s %s matches no param tensor\n", what, pat);
    return 1;
}

int main(void)
{
    size_t nt = 0;
    const nnc_tensor_info *ti = @P@_tensors(&nt);
    int bad = 0;
    for (const range_spec *r = ranges; r->name; r++)
        bad |= check_names(ti, nt, "init range", r->name);
    for (const char *const *f = frozen; *f; f++)
        bad |= check_names(ti, nt, "frozen", *f);
    for (const char *const *f = allow_zero; *f; f++)
        bad |= check_names(ti, nt, "allow_zero", *f);
    if (bad)
        return 2;
    if (@P@_init(&m, MAX_BATCH, 42) != 0) {
        perror("gradcheck @CASE@: init");
        return 2;
    }
    double *params = (double *)m.params;
    const double *grads = (const double *)m.grads;

    /* Every param: uniform in its range (the last matching spec wins). */
    for (size_t t = 0; t < nt; t++) {
        if (!ti[t].trainable)
            continue;
        double lo = INIT_LO, hi = INIT_HI;
        for (const range_spec *r = ranges; r->name; r++)
            if (matches(r->name, ti[t].name)) {
                lo = r->lo;
                hi = r->hi;
            }
        for (size_t i = 0; i < ti[t].size; i++)
            params[ti[t].offset + i] = uniform(lo, hi);
    }
    state0 = malloc(sizeof(double) * (@UP@_NUM_STATE + 1));
    double *g0 = malloc(sizeof(double) * (@UP@_NUM_PARAMS + 1));
    size_t *idx = malloc(sizeof(size_t) * (@UP@_NUM_PARAMS + 1));
    if (!state0 || !g0 || !idx) {
        perror("gradcheck @CASE@: malloc");
        return 2;
    }
    if (m.state)
        memcpy(state0, (const void *)m.state, sizeof(double) * @UP@_NUM_STATE);

    /* Backward overwrites m->grads (frozen params get 0): start from junk. */
    double *gw = (double *)m.grads;
    for (size_t i = 0; i < @UP@_NUM_PARAMS; i++)
        gw[i] = 777.0;
    const double f0 = loss_at();
    @P@_backward(&m);
    memcpy(g0, grads, sizeof(double) * @UP@_NUM_PARAMS);
    printf("gradcheck @CASE@: loss %.17g (batch %d of max %d)\n", f0, BATCH, MAX_BATCH);
    int failures = 0;
    if (!isfinite(f0)) {
        printf("FAIL: the loss is not finite\n");
        failures++;
    }
    for (size_t i = 0; i < @UP@_NUM_PARAMS; i++)
        if (!isfinite(g0[i])) {
            printf("FAIL: gradient element %zu is not finite (%g)\n", i, g0[i]);
            failures++;
            break;
        }
    if (CORRUPT != 0.0) {
        /* --self-test: one wrong analytic value that the check must catch. */
        for (size_t t = 0; t < nt; t++)
            if (ti[t].trainable && !in_list(frozen, ti[t].name)) {
                size_t k = ti[t].offset + ti[t].size / 2;
                printf("self-test: %s[%zu] analytic %.17g scaled by %g\n", ti[t].name,
                       ti[t].size / 2, g0[k], 1.0 + CORRUPT);
                g0[k] *= 1.0 + CORRUPT;
                break;
            }
    }

    const double atol = ATOL * fmax(1.0, fabs(f0));
    size_t total = 0, total_kinks = 0;
    double max_rel = 0.0, max_abs = 0.0;
    for (size_t t = 0; t < nt && isfinite(f0); t++) {
        if (!ti[t].trainable)
            continue;
        const size_t off = ti[t].offset, size = ti[t].size;
        const int is_frozen = in_list(frozen, ti[t].name);
        char shape[96] = "";
        for (int d = 0; d < ti[t].ndim; d++) {
            size_t l = strlen(shape);
            snprintf(shape + l, sizeof shape - l, "%s%d", d ? "x" : "", ti[t].shape[d]);
        }
        /* The elements to check: all, or CAP sampled (partial Fisher-Yates). */
        size_t k = size;
        for (size_t i = 0; i < size; i++)
            idx[i] = i;
        if (size > CAP) {
            k = CAP;
            for (size_t i = 0; i < k; i++) {
                size_t j = i + (size_t)(next_u64() % (size - i));
                size_t tmp = idx[i];
                idx[i] = idx[j];
                idx[j] = tmp;
            }
        }
        if (is_frozen) {
            size_t nonzero = 0;
            for (size_t i = 0; i < size; i++)
                if (g0[off + i] != 0.0) {
                    if (nonzero < MAX_PRINT)
                        printf("FAIL: %s[%zu] is frozen but its gradient is %.17g (want exactly 0)\n",
                               ti[t].name, i, g0[off + i]);
                    nonzero++;
                }
            double max_fd = 0.0;
            for (size_t s = 0; s < k; s++) {
                const size_t i = idx[s];
                const double p = params[off + i];
                params[off + i] = p + H;
                const double fp = loss_at();
                params[off + i] = p - H;
                const double fm = loss_at();
                params[off + i] = p;
                max_fd = fmax(max_fd, fabs((fp - fm) / (2 * H)));
            }
            printf("  %-28s [%s] frozen: gradient exactly 0 on %zu/%zu elements; max |fd| %.3g\n",
                   ti[t].name, shape, size - nonzero, size, max_fd);
            failures += (int)nonzero;
            if (max_fd <= 1e3 * atol) {
                printf("FAIL: frozen %s does not affect the loss (max |fd| %.3g): the check is vacuous\n",
                       ti[t].name, max_fd);
                failures++;
            }
            continue;
        }
        size_t printed = 0, kinks = 0, fails_here = 0;
        double t_rel = 0.0, t_abs = 0.0, max_mag = 0.0;
        for (size_t s = 0; s < k; s++) {
            const size_t i = idx[s];
            const double p = params[off + i];
            params[off + i] = p + H;
            const double fp = loss_at();
            params[off + i] = p - H;
            const double fm = loss_at();
            params[off + i] = p;
            const double fd = (fp - fm) / (2 * H);
            const double a = g0[off + i];
            const double mag = fmax(fabs(a), fabs(fd));
            const double err = fabs(a - fd);
            max_mag = fmax(max_mag, mag);
            if (!(err <= atol + RTOL * mag)) {
                /* A kink (relu, abs, max, maximum/minimum) between p - h and
                   p + h makes the two one-sided differences disagree by far
                   more than h * f'' + rounding: the loss is not smooth here. */
                const double fwd = (fp - f0) / H, bwd = (f0 - fm) / H;
                if (fabs(fwd - bwd) > 1e-3 * (1.0 + fabs(fd))) {
                    kinks++;
                    printf("  note: %s[%zu] skipped: not smooth within h (one-sided %.9g vs %.9g)\n",
                           ti[t].name, i, fwd, bwd);
                    continue;
                }
                if (printed++ < MAX_PRINT)
                    printf("FAIL: %s[%zu] (%s) analytic %.17g numeric %.17g |diff| %.3g > tol %.3g\n",
                           ti[t].name, i, shape, a, fd, err, atol + RTOL * mag);
                fails_here++;
            }
            t_abs = fmax(t_abs, err);
            if (mag >= 1e-4)
                t_rel = fmax(t_rel, err / mag);
        }
        printf("  %-28s [%s] %zu/%zu checked, max |g| %.3g, max abs err %.3g, max rel err %.3g%s\n",
               ti[t].name, shape, k, size, max_mag, t_abs, t_rel,
               kinks ? " (kinks skipped)" : "");
        if (fails_here > MAX_PRINT)
            printf("FAIL: %s: %zu elements differ in all\n", ti[t].name, fails_here);
        failures += (int)fails_here;
        if (max_mag <= atol && !in_list(allow_zero, ti[t].name)) {
            printf("FAIL: %s has an all-zero gradient (max %.3g): the case does not exercise it\n",
                   ti[t].name, max_mag);
            failures++;
        }
        total += k;
        total_kinks += kinks;
        max_rel = fmax(max_rel, t_rel);
        max_abs = fmax(max_abs, t_abs);
    }
    if (total_kinks > KINK_FRAC * (double)total + 0.5) {
        printf("FAIL: %zu of %zu elements sit at a kink (more than %g of them): change the case\n",
               total_kinks, total, KINK_FRAC);
        failures++;
    }

    /* Determinism and overwrite: the same point again, bit for bit. */
    for (size_t i = 0; i < @UP@_NUM_PARAMS; i++)
        gw[i] = -555.0;
    const double f1 = loss_at();
    @P@_backward(&m);
    if (f1 != f0) {
        printf("FAIL: train_forward at the same point gave %.17g then %.17g\n", f0, f1);
        failures++;
    }
    if (CORRUPT == 0.0)
        for (size_t i = 0; i < @UP@_NUM_PARAMS; i++)
            if (grads[i] != g0[i]) {
                printf("FAIL: a second backward at the same point gives element %zu = %.17g, "
                       "the first gave %.17g (accumulating instead of overwriting?)\n",
                       i, grads[i], g0[i]);
                failures++;
                break;
            }

    printf("gradcheck @CASE@: %zu elements checked, max rel err %.3g, max abs err %.3g, "
           "%zu kinks skipped, tolerance |a-fd| <= %.3g + %.3g*max(|a|,|fd|): %s\n",
           total, max_rel, max_abs, total_kinks, atol, RTOL, failures ? "FAILED" : "ok");
    free(state0);
    free(g0);
    free(idx);
    @P@_release(&m);
    return failures ? 1 : 0;
}
"""


def run(cmd, cwd=None, what=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise GradcheckError(f"{what or cmd[0]} failed (exit {p.returncode}):"
                             f"\n$ {' '.join(cmd)}\n{p.stdout}")
    return p.stdout


def run_case(args, nn_path, corrupt=0.0):
    case = os.path.splitext(os.path.basename(nn_path))[0]
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", case):
        raise GradcheckError(f"case name {case!r}: use snake_case")
    text, directives, decls = parse_case(nn_path, args.set)
    batch = int(directives["batch"])
    tmp = tempfile.mkdtemp(prefix=f"gradcheck_{case}_")
    try:
        gen = os.path.join(tmp, "gen")
        prefix = "gc_" + case     # no clash with the harness's own names
        run([args.nnc, nn_path, "-o", gen, "--precision=f64",
             "--prefix", prefix], what="nnc")
        header = open(os.path.join(gen, f"{prefix}.h"),
                      encoding="utf-8").read()
        proto = parse_prototype(header, prefix)
        rng = np.random.default_rng(int(directives["seed"]))
        data, call_args = make_data(decls, proto, directives, batch, rng)
        ranges = ""
        for k, v in directives.items():
            if k.startswith("init."):
                lo, hi = parse_range(v, k)
                ranges += f"    {{{c_str(k[5:])}, {lo!r}, {hi!r}}},\n"
        init_lo, init_hi = parse_range(directives["init"], "init")
        subst = {
            "@CASE@": case, "@P@": prefix, "@UP@": prefix.upper(),
            "@DATA@": data, "@ARGS@": call_args, "@RANGES@": ranges,
            "@FROZEN@": "".join(c_str(x) + ", "
                                for x in name_list(directives["frozen"])),
            "@ALLOWZERO@": "".join(c_str(x) + ", "
                                   for x in name_list(directives["allow_zero"])),
            "@BATCH@": str(batch), "@MAXB@": str(batch + 1),
            "@CAP@": str(int(directives["cap"])),
            "@H@": repr(float(directives["h"])),
            "@RTOL@": repr(float(directives["rtol"])),
            "@ATOL@": repr(float(directives["atol"])),
            "@INITLO@": repr(init_lo), "@INITHI@": repr(init_hi),
            "@KINKFRAC@": repr(float(directives["kink_frac"])),
            "@CORRUPT@": repr(float(corrupt)),
            "@SEED@": str(int(directives["seed"]) * 7919 + 17),
        }
        src = HARNESS
        for k, v in subst.items():
            src = src.replace(k, v)
        harness = os.path.join(tmp, "harness.c")
        with open(harness, "w", encoding="utf-8") as f:
            f.write(src)
        exe = os.path.join(tmp, "harness")
        incs = ["-I" + gen, "-I" + args.runtime_include]
        incs += ["-I" + d for d in args.include]
        run([args.cc] + CFLAGS + incs + [harness, os.path.join(gen, f"{prefix}.c"),
             args.runtime_lib, "-lopenblas", "-lm", "-fopenmp", "-o", exe], what="cc")
        p = subprocess.run([exe], cwd=tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return p.returncode, p.stdout, tmp
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


# ---- coverage -------------------------------------------------------------------

# Every differentiable primitive (spec §7) that nnc implements, and the
# language features the suite promises to check; each must appear in the
# code (not the comments) of some case.
REQUIRED = [
    "relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "exp", "log", "sqrt", "rsqrt",
    "abs", "square", "identity", "pow", "maximum", "minimum", "transpose",
    "permute", "sum", "mean", "max", "reshape", "flatten", "concat", "slice",
    "softmax", "log_softmax", "cross_entropy", "mse", "bce_with_logits",
    "Dense", "frozen", "keepdim", "layer",
]
# the convolution family (spec §7): groups, dilation, conv1d, transposed
REQUIRED += ["conv2d", "conv1d", "conv_transpose2d", "groups", "dilation"]
# the primitives an ONNX import needs (sign: a zero gradient, checked exact)
REQUIRED += ["erf", "leaky_relu", "hard_sigmoid", "hard_swish", "clip", "reciprocal", "sign",
             "neg", "where", "expand", "tril", "triu"]
# the rest of ONNX's float ops (floor, ceil, round and float: a zero
# gradient, checked exact)
REQUIRED += ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
             "floor", "ceil", "round", "softplus", "softsign", "elu", "selu", "celu", "mish", "float",
             "cumsum", "gather_elements"]
REQUIRED_OPS = ["@", "+", "-", "*", "/"]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def coverage(files):
    code = "\n".join(strip_comments(open(f, encoding="utf-8").read())
                     for f in files)
    missing = [w for w in REQUIRED if not re.search(r"\b" + w + r"\b", code)]
    missing += [o for o in REQUIRED_OPS if o not in code]
    if not re.search(r"ignore(\.\w+)?=0?\.\d*[1-9]",
                     "\n".join(open(f).read() for f in files)):
        missing.append("cross_entropy with ignored (-100) labels")
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nnc")
    ap.add_argument("--runtime-lib")
    ap.add_argument("--runtime-include")
    ap.add_argument("--include", action="append", default=[],
                    help="extra include directory (cblas.h)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--case", action="append", default=[],
                    help="case name (tests/gradcheck/<case>.nn) or path")
    ap.add_argument("--all", action="store_true", help="every case here")
    ap.add_argument("--set", action="append", default=[],
                    metavar="KEY=VALUE",
                    help="override a directive (e.g. seed=5 batch=1)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (printed)")
    ap.add_argument("--coverage", action="store_true",
                    help="check that the cases cover every primitive")
    ap.add_argument("--self-test", action="store_true",
                    help="corrupt one analytic gradient element by a relative "
                         "1e-4 and require the check to fail")
    args = ap.parse_args()

    all_cases = sorted(glob.glob(os.path.join(HERE, "*.nn")))
    if args.coverage:
        missing = coverage(all_cases)
        if missing:
            print("gradcheck coverage: no case covers: " + ", ".join(missing))
            return 1
        print(f"gradcheck coverage: {len(all_cases)} cases cover all "
              f"{len(REQUIRED) + len(REQUIRED_OPS)} required items")
        return 0

    for opt in ("nnc", "runtime_lib", "runtime_include"):
        if not getattr(args, opt):
            ap.error(f"--{opt.replace('_', '-')} is required")
    cases = list(all_cases) if args.all else []
    for c in args.case:
        cases.append(c if c.endswith(".nn") else os.path.join(HERE, c + ".nn"))
    if not cases:
        ap.error("give --case or --all")

    status = 0
    for nn in cases:
        case = os.path.splitext(os.path.basename(nn))[0]
        try:
            if args.self_test:
                rc, out, tmp = run_case(args, nn, corrupt=1e-4)
                print(out, end="")
                if rc == 1 and "FAIL:" in out:
                    print(f"gradcheck self-test {case}: the corrupted "
                          "gradient was caught: ok")
                else:
                    print(f"gradcheck self-test {case}: a gradient off by a "
                          f"relative 1e-4 was NOT caught (exit {rc})")
                    status = 1
                continue
            rc, out, tmp = run_case(args, nn)
            print(out, end="")
            if args.keep:
                print(f"(work directory kept: {tmp})")
            if rc != 0:
                print(f"gradcheck {case}: FAILED (harness exit {rc})")
                status = 1
        except GradcheckError as e:
            print(f"gradcheck {case}: ERROR: {e}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
