/* emit.c — prints the planned graphs as C (emit_*): emit_model, the
 * stage's entry point, and what the other emit files share.
 *
 * Per model: <prefix>.h (typed structs and the API of generated-c.md;
 * emit_header.c), <prefix>.c (init, forward, train_forward, backward,
 * eval, save/load, reflection; emit_fn.c, with each node's code from
 * emit_loops.c, emit_ops.c and emit_vision.c) and, with --emit=driver,
 * <prefix>_main.c (a main() that hands the model to the runtime's
 * driver; emit_driver.c).  Every size is a constant except the batch: a
 * dim that holds it is printed as `k * n`.
 *
 * Inside a function, each stored tensor is a pointer into the arena, the
 * params, the state or the caller's arrays, named after the source
 * (`stage1_0_conv1`, `d_fc1`: the node's name, IrNode.name); a fused
 * elementwise chain is one loop with one local per node (`v_fc1`), so a
 * value used twice is computed once.  GEMMs go to cblas_sgemm.  The body
 * of each function is written to memory first, so that only the pointers
 * it uses are declared (no unused-variable warnings at -Wall -Wextra), and
 * so that the identifiers are chosen knowing every other name it uses.
 *
 * Here: the strings, literals and sizes the printers build, the pointers
 * (emit_ref, a loop block's restrict copies, the declarations at the top
 * of a function), their identifiers (emit_names), and the comment above
 * each node's code.  All of them take the context that emitter.h declares.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "emitter.h"
#include "plan.h"

char *emit_fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (!s)
        abort();
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

/* a libm function for the real type: "expf" or "exp" */
const char *emit_libm(Emitter *e, const char *name) { return e->opt->f64 ? name : emit_fmt("%sf", name); }

const char *emit_lit(Emitter *e, double v)
{
    if (isnan(v))
        return "NAN";
    if (isinf(v))
        return v > 0 ? "INFINITY" : "-INFINITY";
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", v);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return emit_fmt("%s%s", buf, e->opt->f64 ? "" : "f");
}

/* ---- the real type's functions ------------------------------------------------ */

/* tanh: libm's in double code (the finite-difference checks), else the
 * inline rational one (nnc_tanh_float, emitted with the model), which
 * vectorizes. */
const char *emit_tanh_fn(Emitter *e) { return e->opt->f64 ? "tanh" : "nnc_tanh_float"; }
/* exp where the argument is <= 0 (softmax, cross-entropy): nnc_exp_float */
const char *emit_exp_fn(Emitter *e) { return e->opt->f64 ? "exp" : "nnc_exp_float"; }

/* relu of the expression a (0 for NaN), wherever the emitted code applies
 * one: the elementwise op and the relus folded into other ops */
const char *emit_relu_of(Emitter *e, const char *a)
{
    return emit_fmt("%s > %s ? %s : %s", a, emit_lit(e, 0), a, emit_lit(e, 0));
}

/* Float GEMMs go to nnc's own (runtime/gemm.c, by the CPU's instruction
 * set), double ones to BLAS. */
const char *emit_gemm(Emitter *e) { return e->opt->f64 ? "cblas_dgemm" : "nnc_cblas_sgemm"; }

/* ---- threads ------------------------------------------------------------------ */

/* A loop of fewer element operations than this stays on one thread:
 * about 10 microseconds of work, what waking the threads costs. */
#define PAR_MIN 32768.0

void emit_parallel(Emitter *e, const char *ind, int k, Shape s, double per)
{
    const double c = (double)ir_numel(s) * per;
    if (k < 1)
        return;
    if (c >= PAR_MIN)
        P(e, "%sNNC_PARALLEL_FOR(%d)\n", ind, k);
    else if (s.bd >= 0 && c * 4096 >= PAR_MIN) /* large enough at some batch sizes */
        P(e, "%sNNC_PARALLEL_FOR_IF(%d, (double)n * %.17g >= %.17g)\n", ind, k, c, PAR_MIN);
}

void emit_parallel_work(Emitter *e, const char *ind, int k, const char *work)
{
    P(e, "%sNNC_PARALLEL_FOR_IF(%d, (double)(%s) >= %.17g)\n", ind, k, work, PAR_MIN);
}

int emit_gemm_splits(double flops, int batched) { return flops >= 2 * PAR_MIN || batched; }

const char *emit_gemm_call(Emitter *e, double flops, int batched)
{
    if (!emit_gemm_splits(flops, batched))
        return emit_fmt("%s(CblasRowMajor, ", emit_gemm(e));
    return e->opt->f64 ? "nnc_dgemm(" : "nnc_sgemm("; /* row-major only */
}

/* ---- sizes ----------------------------------------------------------------- */

const char *emit_dim(Shape s, int i)
{
    if (i == s.bd)
        return s.d[i] == 1 ? "n" : emit_fmt("%lld * n", (long long)s.d[i]);
    return emit_fmt("%lld", (long long)s.d[i]);
}

/* The same with the global batch (gn: every process's examples), for the
 * counts that divide a reduction over the batch. */
const char *emit_gdim(Shape s, int i)
{
    if (i == s.bd)
        return s.d[i] == 1 ? "gn" : emit_fmt("%lld * gn", (long long)s.d[i]);
    return emit_fmt("%lld", (long long)s.d[i]);
}

const char *emit_gnumel(Shape s)
{
    int64_t k = ir_numel(s);
    if (s.bd < 0)
        return emit_fmt("%lld", (long long)k);
    return k == 1 ? "gn" : emit_fmt("%lld * gn", (long long)k);
}

const char *emit_numel(Shape s)
{
    int64_t k = ir_numel(s);
    if (s.bd < 0)
        return emit_fmt("%lld", (long long)k);
    return k == 1 ? "(int64_t)n" : emit_fmt("%lld * (int64_t)n", (long long)k);
}

/* product of dims [a, b) */
const char *emit_prod(Shape s, int a, int b)
{
    int64_t k = 1;
    int batch = 0;
    for (int i = a; i < b; i++) {
        k *= s.d[i];
        batch |= i == s.bd;
    }
    if (!batch)
        return emit_fmt("%lld", (long long)k);
    return k == 1 ? "(int64_t)n" : emit_fmt("%lld * (int64_t)n", (long long)k);
}

/* stride of dim i of a row-major tensor s */
const char *emit_stride(Shape s, int i) { return emit_prod(s, i + 1, s.nd); }

/* ---- pointers ---------------------------------------------------------------- */

const IrNode *emit_nd(Emitter *e, int t) { return &e->g->nodes[t]; }

/* In a body, a node's identifiers are marks until emit_names chooses
 * them: \1P<id>\2 its pointer, \1R<id>\2 the restrict copy in a loop
 * block, \1V<id>.<loop>\2 its value in the fused loop of that number. */
static const char *mark(char kind, int t) { return emit_fmt("\001%c%d\002", kind, t); }

const char *emit_ref(Emitter *e, int t)
{
    int r = plan_storage_root(e->g, t);
    e->used[r] = 1;
    if (e->loop_used) {
        e->loop_used[r] = 1;
        return mark('R', r);
    }
    return mark('P', r);
}

const char *emit_local(Emitter *e, int t)
{
    (void)e;
    return mark('P', t);
}

const char *emit_value(Emitter *e, int t) { return emit_fmt("\001V%d.%d\002", t, e->loop_seq); }

/* A constant node's value: fval times the batch size to the power
 * ival2 (-1..1), the batch being the global one (gn: every process's
 * examples, docs/language.md "Over several processes"). */
const char *emit_const(Emitter *e, const IrNode *n)
{
    if (!n->ival2)
        return emit_lit(e, n->fval);
    return emit_fmt("(%s)(%s %s (double)gn)", e->real, emit_lit(e, n->fval), n->ival2 < 0 ? "/" : "*");
}

/* A scalar operand: a constant is inlined, anything else read at [0]. */
const char *emit_scalar(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    if (n->op == IR_CONST && n->fused == 1)
        return emit_const(e, n);
    return emit_fmt("%s[0]", emit_ref(e, t));
}

/* A loop block gets `restrict` copies of the pointers it uses: tensors
 * live in one loop never overlap (plan.c), so the compiler may vectorize.
 * (Function-wide restrict would be wrong: buffers reuse arena space.) */
void emit_loop_begin(Emitter *e)
{
    e->loop_used = calloc((size_t)e->g->n + 1, 1);
    e->loop_seq++;
    e->loop_wr = calloc((size_t)e->g->n + 1, 1);
    e->loop_saved = e->out;
    e->out = open_memstream(&e->loop_text, &e->loop_len);
    if (!e->loop_used || !e->out)
        abort();
}

void emit_loop_end(Emitter *e, int written)
{
    fclose(e->out);
    e->out = e->loop_saved;
    int w = plan_storage_root(e->g, written);
    P(e, "    {\n");
    for (int r = 0; r < e->g->n; r++)
        if (e->loop_used[r]) {
            const char *ty = emit_nd(e, r)->dt == DT_I32 ? "int32_t" : e->real;
            P(e, "    %s%s *restrict const %s = %s;\n", r == w || e->loop_wr[r] ? "" : "const ", ty, mark('R', r),
              mark('P', r));
        }
    fwrite(e->loop_text, 1, e->loop_len, e->out);
    P(e, "    }\n");
    free(e->loop_text);
    free(e->loop_used);
    free(e->loop_wr);
    e->loop_used = NULL;
    e->loop_wr = NULL;
}

/* The declaration of a used pointer, at the top of the function, with
 * the tensor's shape (and name, for leaves) in a comment. */
void emit_declare(Emitter *e, int r)
{
    const IrNode *n = emit_nd(e, r);
    const char *ty = n->dt == DT_I32 ? "int32_t" : e->real, *id = e->names[r];
    char sb[160];
    const char *shape = ir_shape_str(n->shape, "N", sb, sizeof sb);
    switch (n->op) {
    case IR_PARAM:
        P(e, "    const %s *const %s = P + %lld; /* %s %s */\n", ty, id, (long long)e->m->params[n->ival].offset,
          e->m->params[n->ival].path, shape);
        return;
    case IR_STATE:
        P(e, "    const %s *const %s = S + %lld; /* %s %s */\n", ty, id, (long long)e->m->state[n->ival].offset,
          e->m->state[n->ival].path, shape);
        return;
    case IR_INPUT:
    case IR_LABEL: {
        int lab = n->op == IR_LABEL;
        const IoDecl *io = lab ? &e->m->labels[n->ival] : &e->m->inputs[n->ival];
        if (e->in_backward)
            P(e, "    const %s *const %s = (const %s *)m->%s_[%d]; /* %s %s */\n", ty, id, ty, lab ? "lab" : "in",
              n->ival, io->name, shape);
        else
            P(e, "    const %s *const %s = (const %s *)%s; /* %s */\n", ty, id, ty, io->cname, shape);
        return;
    }
    default: break;
    }
    const Buffer *b = &e->g->bufs[n->buf];
    if (b->param_grad >= 0)
        P(e, "    %s *const %s = G + %lld; /* d %s %s */\n", ty, id, (long long)e->m->params[b->param_grad].offset,
          e->m->params[b->param_grad].path, shape);
    else if (b->batched)
        P(e, "    %s *const %s = (%s *)(A + SB + %lld * MB); /* %s */\n", ty, id, ty, (long long)b->off, shape);
    else
        P(e, "    %s *const %s = (%s *)(A + %lld); /* %s */\n", ty, id, ty, (long long)b->off, shape);
}

/* ---- identifiers ------------------------------------------------------------- */

/* A set of strings: open addressing, FNV-1a. */
typedef struct Names {
    const char **slot;
    size_t cap, n;
} Names;

static size_t hash(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int names_has(const Names *ns, const char *s)
{
    if (!ns->cap)
        return 0;
    for (size_t i = hash(s) & (ns->cap - 1); ns->slot[i]; i = (i + 1) & (ns->cap - 1))
        if (!strcmp(ns->slot[i], s))
            return 1;
    return 0;
}

static void names_add(Names *ns, const char *s)
{
    if (names_has(ns, s))
        return;
    if (2 * (ns->n + 1) > ns->cap) {
        Names big = {calloc(ns->cap ? 2 * ns->cap : 256, sizeof(char *)), ns->cap ? 2 * ns->cap : 256, 0};
        if (!big.slot)
            abort();
        for (size_t i = 0; i < ns->cap; i++)
            if (ns->slot[i])
                names_add(&big, ns->slot[i]);
        free(ns->slot);
        *ns = big;
    }
    size_t i = hash(s) & (ns->cap - 1);
    while (ns->slot[i])
        i = (i + 1) & (ns->cap - 1);
    ns->slot[i] = s;
    ns->n++;
}

/* Per base name, the last suffix a search for a free name stopped at (1:
 * the base itself), so that the next search for that base starts after
 * it: names are only ever added, so every candidate before it is still
 * taken.  Without it, n nodes of one op (600 softmaxes unrolled) probe
 * n^2 / 2 candidates.  Open addressing, as Names. */
typedef struct Suffixes {
    const char **key;
    int *last;
    size_t cap, n;
} Suffixes;

static int *suffix_of(Suffixes *sx, const char *base)
{
    if (2 * (sx->n + 1) > sx->cap) {
        Suffixes big = {calloc(sx->cap ? 2 * sx->cap : 256, sizeof(char *)),
                        calloc(sx->cap ? 2 * sx->cap : 256, sizeof(int)), sx->cap ? 2 * sx->cap : 256, 0};
        if (!big.key || !big.last)
            abort();
        for (size_t i = 0; i < sx->cap; i++)
            if (sx->key[i])
                *suffix_of(&big, sx->key[i]) = sx->last[i];
        free(sx->key);
        free(sx->last);
        *sx = big;
    }
    size_t i = hash(base) & (sx->cap - 1);
    for (; sx->key[i]; i = (i + 1) & (sx->cap - 1))
        if (!strcmp(sx->key[i], base))
            return &sx->last[i];
    sx->key[i] = base;
    sx->n++;
    sx->last[i] = 0; /* nothing tried yet */
    return &sx->last[i];
}

/* Names no tensor may take, besides those the function's code uses and
 * those C and its headers take (cname_taken: keywords, the C library's
 * and BLAS's names): what every pass declares, its parameters and fixed
 * locals, and the tensor table. */
static const char *const reserved[] = {"tensor_info_", "m",  "n", "out", "loss", "metrics", "A",
                                       "MB",           "SB", "P", "G",   "S"};

/* A name of a reserved family, which a numeric suffix would not take out
 * of it (base_name puts "t_" in front instead): C's reserved identifiers
 * (_x), macros by convention (no lower-case letter: EDOM, I), the
 * runtime's and BLAS's prefixes. */
static int reserved_family(const char *s)
{
    static const char *const prefixes[] = {"_", "nnc_", "NNC_", "cblas_", "Cblas", "CBLAS", "openblas", "OPENBLAS"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(s, prefixes[i], strlen(prefixes[i])))
            return 1;
    for (const char *p = s; *p; p++)
        if (islower((unsigned char)*p))
            return 0;
    return 1;
}

static int is_id(int c) { return isalnum(c) || c == '_'; }

/* Every identifier in the code of a body (not in its comments, strings
 * or marks): the locals of its blocks, the functions and macros it calls. */
static void code_names(const char *s, size_t len, Names *out)
{
    size_t i = 0;
    while (i < len) {
        char c = s[i];
        if (c == '\001') {
            while (i < len && s[i] != '\002')
                i++;
            i++;
        } else if (c == '/' && i + 1 < len && s[i + 1] == '*') {
            const char *end = strstr(s + i + 2, "*/");
            i = end ? (size_t)(end - s) + 2 : len;
        } else if (c == '"' || c == '\'') {
            for (i++; i < len && s[i] != c; i++)
                if (s[i] == '\\')
                    i++;
            i++;
        } else if (isdigit((unsigned char)c)) {
            while (i < len && (is_id((unsigned char)s[i]) || s[i] == '.'))
                i++;
        } else if (is_id((unsigned char)c)) {
            size_t b = i;
            while (i < len && is_id((unsigned char)s[i]))
                i++;
            names_add(out, emit_fmt("%.*s", (int)(i - b), s + b));
        } else {
            i++;
        }
    }
}

/* A node's name as a C identifier: its characters, the op's name if it
 * has none, "t_" in front of one that a reserved family would take. */
static const char *base_name(const IrNode *n)
{
    char *b = emit_fmt("%s", n->name && *n->name ? n->name : ir_op_name(n->op));
    for (char *p = b; *p; p++)
        if (!is_id((unsigned char)*p))
            *p = '_';
    if (isdigit((unsigned char)b[0]) || reserved_family(b))
        b = emit_fmt("t_%s", b);
    return b;
}

/* A mark in a body (emit_ref, emit_value): the node, and for a value the
 * loop it is in. */
typedef struct Mark {
    char kind; /* 'P' pointer, 'R' restrict copy, 'V' value */
    int t, loop;
} Mark;

/* the mark at s (after \1), and the length of its text */
static Mark read_mark(const char *s, size_t *len)
{
    Mark k = {s[0], 0, -1};
    char *end;
    k.t = (int)strtol(s + 1, &end, 10);
    if (*end == '.')
        k.loop = (int)strtol(end + 1, &end, 10);
    *len = (size_t)(end - s) + 2; /* with \1 and \2 */
    return k;
}

static int by_id(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int typedef_like(const char *id)
{
    size_t l = strlen(id);
    return l >= 2 && !strcmp(id + l - 2, "_t"); /* size_t, int64_t */
}

/* What a new name must not be: declared in a or b, shaped like a
 * typedef, or a C name; with `prefixed` (a pointer, whose restrict copy
 * and value local are r_<id> and v_<id>), nor may those be. */
typedef struct {
    const Names *a, *b;
    int prefixed;
} Taken;

static int taken(const Taken *tk, const char *id)
{
    if (names_has(tk->a, id) || names_has(tk->b, id) || typedef_like(id) || cname_taken(id))
        return 1;
    if (!tk->prefixed)
        return 0;
    const char *r = emit_fmt("r_%s", id), *v = emit_fmt("v_%s", id);
    return names_has(tk->a, r) || names_has(tk->a, v) || cname_taken(r) || cname_taken(v);
}

/* A free name for base: base, else base_2, base_3, ..., the search
 * resuming after the suffix it stopped at last time for that base in sx */
static const char *fresh_name(Suffixes *sx, const char *base, const Taken *tk)
{
    int *last = suffix_of(sx, base), k = *last < 1 ? 1 : *last + 1;
    const char *id = k > 1 ? emit_fmt("%s_%d", base, k) : base;
    while (taken(tk, id))
        id = emit_fmt("%s_%d", base, k = k < 2 ? 2 : k + 1);
    *last = k;
    return id;
}

void emit_names(Emitter *e)
{
    const Graph *g = e->g;
    /* fn: what the function and its blocks declare or use; pv: the value
     * locals v_<id> of the pointers, which live in the loops only */
    Names fn = {0}, pv = {0};
    Suffixes sx = {0};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        names_add(&fn, reserved[i]);
    for (int i = 0; i < e->m->ninputs; i++)
        names_add(&fn, e->m->inputs[i].cname);
    for (int i = 0; i < e->m->nlabels; i++)
        names_add(&fn, e->m->labels[i].cname);
    const char *p = e->m->prefix;
    names_add(&fn, p);
    names_add(&fn, emit_fmt("%s_params", p));
    names_add(&fn, emit_fmt("%s_state", p));
    names_add(&fn, emit_fmt("%s_metric_names", p));
    names_add(&fn, emit_fmt("%s_summary_names", p));
    code_names(e->body_text, e->body_len, &fn);
    /* the marks, in the order of the text */
    Mark *marks = NULL;
    int nmarks = 0, cap = 0;
    char *ptr = calloc((size_t)g->n + 1, 1);
    if (!ptr)
        abort();
    for (size_t i = 0; i < e->body_len; i++) {
        if (e->body_text[i] != '\001')
            continue;
        size_t len;
        Mark k = read_mark(e->body_text + i + 1, &len);
        if (nmarks == cap) {
            cap = cap ? 2 * cap : 256;
            marks = realloc(marks, sizeof(Mark) * (size_t)cap);
            if (!marks)
                abort();
        }
        marks[nmarks++] = k;
        if (k.kind != 'V')
            ptr[k.t] = 1;
        i += len - 1;
    }
    for (int t = 0; t < g->n; t++)
        ptr[t] |= e->used[t]; /* declared, so named, even if no mark is left */
    /* pointers, in node order: the name, or name_2, name_3, ... so that
     * neither it nor r_<it> nor v_<it> is taken */
    free(e->names);
    e->names = calloc((size_t)g->n + 1, sizeof(char *));
    const char **vname = calloc((size_t)g->n + 1, sizeof(char *));
    const char **mname = calloc((size_t)nmarks + 1, sizeof(char *));
    if (!e->names || !vname || !mname)
        abort();
    for (int t = 0; t < g->n; t++) {
        if (!ptr[t])
            continue;
        const char *id = fresh_name(&sx, base_name(&g->nodes[t]), &(const Taken){&fn, &pv, 1});
        names_add(&fn, id);
        names_add(&fn, emit_fmt("r_%s", id));
        names_add(&pv, emit_fmt("v_%s", id));
        e->names[t] = id;
    }
    /* values, loop by loop: v_<pointer> for a stored node, else v_<name>
     * made unique in the loop (node order) and free of fn's names */
    for (int a = 0; a < nmarks;) {
        if (marks[a].kind != 'V') {
            a++;
            continue;
        }
        int loop = marks[a].loop, b = a;
        int *ts = malloc(sizeof(int) * (size_t)(nmarks - a));
        int nt = 0;
        for (; b < nmarks && (marks[b].kind != 'V' || marks[b].loop == loop); b++)
            if (marks[b].kind == 'V' && !vname[marks[b].t]) {
                vname[marks[b].t] = "";
                ts[nt++] = marks[b].t;
            }
        qsort(ts, (size_t)nt, sizeof(int), by_id);
        Names in_loop = {0};
        for (int i = 0; i < nt; i++)
            if (ptr[ts[i]]) {
                vname[ts[i]] = emit_fmt("v_%s", e->names[ts[i]]);
                names_add(&in_loop, vname[ts[i]]);
            }
        /* each base's search resumes after its last, as the pointers'
         * do: a loop of 8000 fused values of one op (a `for` of 4000
         * relu(y * 2)) had probed 32 million names, 10 s under ASan */
        Suffixes vsx = {0};
        for (int i = 0; i < nt; i++) {
            int t = ts[i];
            if (ptr[t])
                continue;
            const char *id =
                fresh_name(&vsx, emit_fmt("v_%s", base_name(&g->nodes[t])), &(const Taken){&fn, &in_loop, 0});
            names_add(&in_loop, id);
            vname[t] = id;
        }
        free(vsx.key);
        free(vsx.last);
        for (int i = a; i < b; i++)
            if (marks[i].kind == 'V')
                mname[i] = vname[marks[i].t];
        for (int i = 0; i < nt; i++)
            vname[ts[i]] = NULL;
        free(ts);
        free(in_loop.slot);
        a = b;
    }
    /* the marks become the identifiers */
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    for (size_t i = 0, k = 0; i < e->body_len; i++) {
        if (e->body_text[i] != '\001') {
            fputc(e->body_text[i], f);
            continue;
        }
        size_t ml;
        Mark mk = read_mark(e->body_text + i + 1, &ml);
        if (mk.kind == 'V')
            fputs(mname[k], f);
        else
            fprintf(f, "%s%s", mk.kind == 'R' ? "r_" : "", e->names[mk.t]);
        k++;
        i += ml - 1;
    }
    fclose(f);
    free(e->body_text);
    e->body_text = text;
    e->body_len = len;
    free(marks);
    free(mname);
    free(vname);
    free(ptr);
    free(fn.slot);
    free(pv.slot);
    free(sx.key);
    free(sx.last);
}

/* ---- comments ---------------------------------------------------------------- */

void emit_comment_in(Emitter *e, const IrNode *n, const char *ind)
{
    if (!n->loc.file) {
        P(e, "%s/* %s%s */\n", ind, ir_op_name(n->op), n->backward ? " (backward)" : "");
        return;
    }
    int line, col;
    diag_linecol(n->loc, &line, &col);
    const char *base = strrchr(n->loc.file->path, '/');
    base = base ? base + 1 : n->loc.file->path;
    P(e, "%s/* %s:%d  %s%s */\n", ind, base, line, n->what ? n->what : ir_op_name(n->op),
      n->backward ? " (backward)" : "");
}

void emit_comment(Emitter *e, const IrNode *n) { emit_comment_in(e, n, "    "); }

/* ---- names and banners ------------------------------------------------------- */

const char *emit_upper(const char *s)
{
    char *u = emit_fmt("%s", s);
    for (char *p = u; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

void emit_banner(Emitter *e, const char *what)
{
    P(e, "/* %s: generated by nnc from %s; do not edit. */\n", what, e->m->source);
}

/* ---- the entry point ---------------------------------------------------------- */

static void finish_file(EmitFile *f, const char *name, char *text, size_t len)
{
    f->name = emit_fmt("%s", name);
    f->text = text;
    f->len = len;
}

int emit_model(const Model *m, const EmitOptions *opt, EmitFile *files)
{
    Emitter em = {.m = m, .opt = opt, .real = opt->f64 ? "double" : "float"};
    Emitter *e = &em;
    int nf = 0;
    if (opt->f64)
        for (int k = 0; k < m->nparams + m->nstate; k++) {
            const Tensor *t = k < m->nparams ? &m->params[k] : &m->state[k - m->nparams];
            if (t->from) {
                diag_error(t->loc, "'from' loads float files and cannot be used with --precision=f64");
                return 0;
            }
        }
    const char *hname = emit_fmt("%s.h", m->prefix), *cname = emit_fmt("%s.c", m->prefix),
               *dname = emit_fmt("%s_main.c", m->prefix);
    char *text;
    size_t len;
    e->out = open_memstream(&text, &len);
    emit_header(e, hname);
    fclose(e->out);
    finish_file(&files[nf++], hname, text, len);
    e->out = open_memstream(&text, &len);
    emit_source(e, hname, cname);
    fclose(e->out);
    finish_file(&files[nf++], cname, text, len);
    if (opt->driver && !opt->f64) {
        e->out = open_memstream(&text, &len);
        emit_driver(e, hname, dname);
        fclose(e->out);
        finish_file(&files[nf++], dname, text, len);
    }
    free(e->used);
    free(e->merged);
    free(e->names);
    return nf;
}
