/* model.c — model assembly (model_*): from the loaded program to one
 * Model per model declared in the main file, which is what main.c calls.
 *
 * A model is elaborated twice: train (when it has a loss) and infer, each
 * time from a fresh instance of its template (the -D values bound as
 * hparams) into its own graph; the params and state they create are
 * shared through the model's tables.  The infer graph serves two entry
 * points: forward runs it up to the output (core_end), eval goes on to
 * the loss and the metrics, so the inference pass is written once.  Once
 * both are built, the tables are sorted into declaration order
 * (the order of the generated structs) and the summary rows, recorded as
 * fields were first applied in the inference graph, are completed.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cnames.h"
#include "elab.h"
#include "model.h"

/* One global namespace for layers and models; a duplicate names both. */
static void collect_decls(Program *p)
{
    for (int f = 0; f < p->nfiles; f++)
        for (int i = 0; i < p->files[f]->list.n; i++) {
            Node *d = p->files[f]->list.v[i];
            if (d->kind != ND_LAYER && d->kind != ND_MODEL)
                continue;
            Node *prev = elab_find_decl(d->name);
            if (prev) {
                diag_error(d->name_loc, "duplicate declaration of '%s'", d->name);
                diag_note(prev->name_loc, "'%s' was first declared here", d->name);
                continue;
            }
            E.decls = realloc(E.decls, sizeof(Decl) * (size_t)(E.ndecls + 1));
            E.decls[E.ndecls].name = d->name;
            E.decls[E.ndecls++].node = d;
        }
}

/* ===================================================================== */
/* summary rows                                                          */
/* ===================================================================== */

/* A summary row for the first application of a field, in the inference
 * graph: filled in pre-order, completed when the application returns. */
int model_row_begin(Inst *inst)
{
    if (strcmp(E.g->name, "infer") || !*inst->path || inst->summarized)
        return -1;
    inst->summarized = 1;
    Model *m = E.m;
    m->rows = realloc(m->rows, sizeof(SummaryRow) * (size_t)(m->nrows + 1));
    SummaryRow *r = &m->rows[m->nrows];
    memset(r, 0, sizeof *r);
    r->path = inst->path;
    r->layer = inst->decl ? inst->decl->name : "sequence";
    r->doc = inst->doc;
    r->depth = 1;
    for (const char *p = inst->path; *p; p++)
        r->depth += *p == '.';
    r->first = E.g->n;
    return m->nrows++;
}

void model_row_end(int row, Value result)
{
    if (row < 0)
        return;
    SummaryRow *r = &E.m->rows[row];
    r->last = E.g->n;
    if (result.k == VK_TENSOR)
        r->out = shape_of(result.t);
    else
        r->out.nd = -1;
    for (int i = r->first; i < r->last; i++)
        r->flops += ir_node_flops(E.g, i);
}

/* The length of the path of row r's parent ("blocks" for "blocks.1"), or
 * 0 at depth 1. */
static size_t parent_len(const SummaryRow *r)
{
    const char *dot = strrchr(r->path, '.');
    return dot ? (size_t)(dot - r->path) : 0;
}

static int is_under(const SummaryRow *r, const char *prefix, size_t len)
{
    return !strncmp(r->path, prefix, len) && r->path[len] == '.';
}

/* A list whose items the model calls one by one (`blocks[0](x)`) is never
 * applied itself, so it has no row of its own: give it one, as a list
 * called whole gets ("sequence"), before its items, which move up to
 * follow it; its FLOPs are its items'.  Its node range stays empty (the
 * items' nodes need not be contiguous), so --dot draws the items' ops as
 * before.  A list of lists gets a row at each level. */
static void add_list_rows(Model *m)
{
    for (int r = 0; r < m->nrows; r++) {
        size_t len = parent_len(&m->rows[r]);
        if (!len)
            continue;
        int found = 0;
        for (int q = 0; q < m->nrows && !found; q++)
            found = strlen(m->rows[q].path) == len && !strncmp(m->rows[q].path, m->rows[r].path, len);
        if (found)
            continue;
        SummaryRow parent = {0};
        parent.path = ast_strndup(m->rows[r].path, len);
        parent.layer = "list";
        parent.depth = m->rows[r].depth - 1;
        parent.out.nd = -1;
        /* the new order: rows before r, the parent, every row under it (in
         * their order), then the rest */
        SummaryRow *rows = malloc(sizeof(SummaryRow) * (size_t)(m->nrows + 1));
        int k = 0;
        for (int q = 0; q < r; q++)
            rows[k++] = m->rows[q];
        rows[k++] = parent;
        for (int q = r; q < m->nrows; q++)
            if (is_under(&m->rows[q], parent.path, len)) {
                if (m->rows[q].depth == parent.depth + 1)
                    rows[r].flops += m->rows[q].flops;
                rows[k++] = m->rows[q];
            }
        for (int q = r; q < m->nrows; q++)
            if (!is_under(&m->rows[q], parent.path, len))
                rows[k++] = m->rows[q];
        free(m->rows);
        m->rows = rows;
        m->nrows = k;
        r = -1; /* again from the top: the parent may itself need one */
    }
}

/* ===================================================================== */
/* -D values                                                             */
/* ===================================================================== */

/* A -D value is an expression of the language (3, -2, 0.5, true, [1, 2],
 * relu, Dense(units: 4)), read by the language's own lexer and parser from
 * a source of its own named "<-D name>", so that an error in it points
 * into it.  The values are parsed when the first model needs them, once
 * (a file of several models reports a bad value once), and evaluated for
 * each model with nothing in scope: the names are those known everywhere
 * (primitives, initializers, layers). */
static Node **def_exprs; /* per -D: its expression, NULL after errors */

static void parse_defines(const ElabOptions *opt)
{
    def_exprs = elab_calloc((size_t)opt->ndefs, sizeof(Node *));
    for (int i = 0; i < opt->ndefs; i++) {
        const Define *d = &opt->defs[i];
        def_exprs[i] = ast_parse_expr(diag_string_file(elab_fmt("<-D %s>", d->name), d->value));
    }
}

/* The model template with -D overrides bound as arguments. */
static Tpl *model_template(Node *decl, const ElabOptions *opt)
{
    Args a;
    memset(&a, 0, sizeof a);
    a.n = opt->ndefs;
    a.names = elab_calloc((size_t)a.n, sizeof(char *));
    a.vals = elab_calloc((size_t)a.n, sizeof(Value));
    a.locs = elab_calloc((size_t)a.n, sizeof(Loc));
    a.loc = decl->name_loc;
    Loc none_loc = {0};
    if (!def_exprs)
        parse_defines(opt);
    for (int i = 0; i < a.n; i++) {
        a.names[i] = opt->defs[i].name;
        a.vals[i] = def_exprs[i] ? elab_eval(def_exprs[i], NULL) : none();
        a.locs[i] = none_loc; /* a type error names the hparam: "hparam 'h' is int" */
    }
    Node *hp = inst_hparams_block(decl);
    for (int i = 0; i < a.n; i++)
        if (!hp || !inst_member(hp, ND_HPARAM, a.names[i])) {
            const char *cands[64];
            int nc = 0;
            for (int k = 0; hp && k < hp->list.n && nc < 64; k++)
                cands[nc++] = hp->list.v[k]->name;
            const char *c = diag_closest(a.names[i], cands, nc);
            diag_error(none_loc, "-D %s: model '%s' has no hparam '%s'%s%s%s", a.names[i], decl->name, a.names[i],
                       c ? "; did you mean '" : "", c ? c : "", c ? "'?" : "");
            return NULL;
        }
    Value v = inst_template(NULL, decl, &a);
    return v.k == VK_LAYER ? v.tpl : NULL;
}

/* ===================================================================== */
/* entry points                                                          */
/* ===================================================================== */

static IoDecl io_decl(Node *mem, const char **bname)
{
    IoDecl io;
    memset(&io, 0, sizeof io);
    io.name = mem->name;
    io.cname = cname_param(mem->name);
    io.loc = mem->name_loc;
    io.dt = !strcmp(mem->str, "i32") ? DT_I32 : DT_F32;
    if (strcmp(mem->str, "i32") && strcmp(mem->str, "f32"))
        diag_error(mem->loc, "'%s' must be f32 or i32, not '%s'", mem->name, mem->str);
    io.shape.bd = -1;
    Node *dims = mem->a;
    for (int i = 0; i < dims->list.n && i < IR_MAXD; i++) {
        Node *d = dims->list.v[i];
        if (i == 0 && d->kind == ND_IDENT && !elab_lookup(E.root->hp, d->name)) {
            if (*bname && strcmp(*bname, d->name))
                diag_error(d->loc, "every input and label shares one batch dim; this one is '%s'", *bname);
            *bname = d->name;
            io.shape.bd = 0;
            io.shape.d[io.shape.nd++] = 1;
            continue;
        }
        long long v;
        if (!prim_get_int(elab_eval(d, E.root->hp), d->loc, "a dim", &v))
            continue;
        if (v <= 0)
            diag_error(d->loc, "dims must be positive, got %lld", v);
        io.shape.d[io.shape.nd++] = v;
    }
    /* the C parameter is an array of this shape: its size is checked
     * here, not by the C compiler */
    if (!elab_check_elems(io.shape, io.dt, mem->name_loc, elab_fmt("'%s'", mem->name)))
        E.stop = 1;
    return io;
}

/* One graph: train (loss, updates), or infer (the output, then the loss
 * and the metrics of eval, which forward does not run).
 * The model's call body sees only its arguments (scopes are lexical), so
 * labels, bound in the loss's scope, are visible to loss and metric only. */
static Graph *entry_graph(Node *decl, Tpl *tpl, const char *name, int training)
{
    Model *m = E.m;
    E.g = ir_graph_new(name, training);
    E.training = training;
    E.pcap = E.scap = 0;
    free(E.pnode), free(E.snode);
    E.pnode = E.snode = NULL;
    E.self_result = -1;
    E.unrolled = 0, E.listed = 0, E.ninstances = 0, E.in_self = 0, E.stop = 0;
    E.root = inst_instantiate(tpl, "", NULL, 0, decl->name_loc, NULL, NULL);
    if (!E.root)
        return NULL;
    /* scope of loss and metric: params > inputs, labels, fields > hparams */
    Scope *env = elab_scope_new(E.root->hp);
    for (Bind *b = E.root->fields->head; b; b = b->next)
        elab_bind(env, b->name, b->v, b->loc);
    const char *bname = NULL;
    int first = m->inputs == NULL && m->labels == NULL;
    Args args;
    memset(&args, 0, sizeof args);
    args.loc = decl->name_loc;
    args.vals = elab_calloc((size_t)decl->list.n, sizeof(Value));
    args.names = elab_calloc((size_t)decl->list.n, sizeof(char *));
    args.locs = elab_calloc((size_t)decl->list.n, sizeof(Loc));
    int nl = 0;
    for (int k = 0; k < decl->list.n; k++) {
        Node *mem = decl->list.v[k];
        if (mem->kind != ND_INPUT && mem->kind != ND_LABEL)
            continue;
        IoDecl io = io_decl(mem, &bname);
        int lab = mem->kind == ND_LABEL;
        if (first) {
            IoDecl **tab = lab ? &m->labels : &m->inputs;
            int *n = lab ? &m->nlabels : &m->ninputs;
            *tab = realloc(*tab, sizeof(IoDecl) * (size_t)(*n + 1));
            (*tab)[(*n)++] = io;
        }
        IrNode n = ir_node(lab ? IR_LABEL : IR_INPUT, io.dt, io.shape, 0, NULL);
        n.ival = lab ? nl++ : args.n;
        n.loc = mem->name_loc;
        n.what = mem->name;
        n.name = elab_fmt("%s_in", mem->name); /* not the C parameter's name */
        int t = ir_add(E.g, n);
        elab_bind(env, mem->name, vtensor(t), mem->name_loc);
        if (!lab) {
            args.locs[args.n] = mem->name_loc;
            args.vals[args.n++] = vtensor(t);
        }
    }
    if (first)
        m->fixed_shape = !bname;
    if (bname) {
        /* the batch dim is visible by name in the model (reshape(x, [N, -1])) */
        Value b = vint(1);
        b.batch = 1;
        E.batch_name = bname;
        elab_bind(E.root->hp, bname, b, decl->name_loc);
    }
    /* model-level params have no call dims: their shapes use hparams only */
    Scope *top = elab_scope_new(env);
    inst_make_tensors(E.root, E.root->hp, top, decl->name_loc);
    if (!training) {
        Value out = elab_self_call(&args);
        if (out.k == VK_TENSOR) {
            E.g->output = out.t;
            /* A model with a batch returns one row per example.  A
             * fixed-shape model (no input or label has a batch dim) runs
             * on one sample and returns any tensor, a scalar too.  A
             * batched model's output without the batch (a sum over the
             * examples) stays an error: its value would depend on how
             * the driver chunks the examples and splits them over
             * processes.  An i32 output (argmax's class ids, an ONNX
             * graph's integer or bool result) is for prediction only: a
             * model with a loss returns f32, what its loss reads. */
            int i32 = node(out.t)->dt == DT_I32;
            if (i32 && m->has_loss)
                diag_error(decl->name_loc, "the output of model '%s' is an i32 tensor: a model with a loss returns f32",
                           decl->name);
            else if (bname && node(out.t)->shape.bd != 0)
                diag_error(decl->name_loc,
                           "the output of model '%s' must be a tensor whose first dim is the batch, got %s%s",
                           decl->name, i32 ? "i32 " : "", sstr(shape_of(out.t)));
        } else if (out.k != VK_NONE) {
            diag_error(decl->name_loc, "the call of model '%s' must return a tensor, got %s", decl->name,
                       elab_vk_name(out.k));
        }
        /* the inference pass ends here: forward runs nodes [0, core_end),
         * eval all of them (emit_fn.c); self(x) in the loss and the
         * metrics below is this pass's output (elab_self_call) */
        E.g->core_end = E.g->n;
    }
    if (m->has_loss) {
        Node *loss = inst_member(decl, ND_LOSS, NULL);
        E.cur_loc = loss->a->loc;
        Value l = elab_eval(loss->a, top);
        if (l.k == VK_TENSOR && (shape_of(l.t).nd != 0 || node(l.t)->dt != DT_F32))
            diag_error(loss->a->loc, "the loss must be an f32 scalar, got %s", sstr(shape_of(l.t)));
        else if (l.k == VK_TENSOR)
            E.g->loss = l.t;
        else if (l.k != VK_NONE)
            diag_error(loss->a->loc, "the loss must be a tensor, got %s", elab_vk_name(l.k));
        for (int k = 0; !training && k < decl->list.n; k++) {
            Node *mem = decl->list.v[k];
            if (mem->kind != ND_METRIC)
                continue;
            E.cur_loc = mem->a->loc;
            Value v = elab_eval(mem->a, top);
            int t = -1;
            if (v.k == VK_TENSOR && shape_of(v.t).nd == 0 && node(v.t)->dt == DT_F32)
                t = v.t;
            else if (v.k == VK_INT || v.k == VK_FLOAT)
                prim_operand(v, mem->a->loc, &t);
            else if (v.k != VK_NONE)
                diag_error(mem->a->loc, "a metric must be an f32 scalar, got %s",
                           v.k == VK_TENSOR ? sstr(shape_of(v.t)) : elab_vk_name(v.k));
            E.g->metrics = realloc(E.g->metrics, sizeof(int) * (size_t)(E.g->nmetrics + 1));
            E.g->metrics[E.g->nmetrics++] = t;
        }
    }
    E.g->fwd_end = E.g->n;
    return E.g;
}

static int cmp_tensor(const void *pa, const void *pb)
{
    const Tensor *a = pa, *b = pb;
    for (int i = 0; i < a->npart && i < b->npart; i++)
        if (a->order[i] != b->order[i])
            return a->order[i] < b->order[i] ? -1 : 1;
    return a->npart - b->npart;
}

/* Offsets of tensors [lo, hi), which share their first `depth` path parts,
 * from `off` on, as a C compiler lays out the structs emit_header.c writes
 * for them: a field (or a sequence's copy) is a struct, aligned like its
 * most aligned member, and its size is a multiple of that.  Only an i64
 * counter is aligned to more than one real (to `cslots`). */
static int64_t lay_out(Tensor *ts, int lo, int hi, int depth, int64_t off, int cslots)
{
    for (int i = lo; i < hi;) {
        if (ts[i].npart == depth + 1) {
            if (ts[i].counter)
                off = (off + cslots - 1) / cslots * cslots;
            ts[i].offset = off;
            off += ts[i].counter ? cslots : ir_numel(ts[i].shape);
            i++;
            continue;
        }
        int j = i, align = 1;
        while (j < hi && ts[j].npart > depth + 1 && !strcmp(ts[j].parts[depth], ts[i].parts[depth]))
            align = ts[j++].counter ? cslots : align;
        off = (off + align - 1) / align * align;
        off = lay_out(ts, i, j, depth + 1, off, cslots);
        off = (off + align - 1) / align * align;
        i = j;
    }
    return off;
}

/* Declaration order for the structs; the graphs' leaves are renumbered.
 * Offsets count reals (floats, or doubles with f64), as the structs lay
 * them out: an i64 counter takes 8 bytes aligned to 8, so in float code
 * two slots at an even offset, and the state's size is then even, which
 * keeps sizeof(<p>_state) == NUM_STATE reals. */
static void sort_tensors(Model *m, int state, int f64)
{
    Tensor *ts = state ? m->state : m->params;
    int n = state ? m->nstate : m->nparams;
    int *old = elab_calloc((size_t)n, sizeof(int));
    Tensor *copy = elab_calloc((size_t)n, sizeof(Tensor));
    if (n) /* a model without state has no table: memcpy of NULL is undefined even for 0 bytes */
        memcpy(copy, ts, sizeof(Tensor) * (size_t)n);
    for (int i = 0; i < n; i++)
        copy[i].offset = i; /* remember the old index */
    qsort(copy, (size_t)n, sizeof(Tensor), cmp_tensor);
    for (int i = 0; i < n; i++)
        old[copy[i].offset] = i;
    for (int i = 0; i < n; i++) {
        /* split the path into the parts the structs nest by */
        copy[i].parts = elab_calloc((size_t)copy[i].npart, sizeof(char *));
        const char *p = copy[i].path;
        for (int k = 0; k < copy[i].npart; k++) {
            const char *dot = k + 1 < copy[i].npart ? strchr(p, '.') : NULL;
            copy[i].parts[k] = dot ? ast_strndup(p, (size_t)(dot - p)) : p;
            p = dot ? dot + 1 : p;
        }
        /* a sequence's index ("0") is a member `_0` or an array index */
        copy[i].cparts = elab_calloc((size_t)copy[i].npart, sizeof(char *));
        for (int k = 0; k < copy[i].npart; k++)
            copy[i].cparts[k] =
                isdigit((unsigned char)copy[i].parts[k][0]) ? copy[i].parts[k] : cname_of(copy[i].parts[k]);
    }
    const int cslots = f64 ? 1 : 2;
    int64_t off = lay_out(copy, 0, n, 0, 0, cslots), align = 1;
    for (int i = 0; i < n; i++)
        align = copy[i].counter ? cslots : align;
    off = (off + align - 1) / align * align; /* the struct's size is a multiple of its alignment */
    if (n)
        memcpy(ts, copy, sizeof(Tensor) * (size_t)n);
    if (state)
        m->num_state = off;
    else
        m->num_params = off;
    Graph *gs[2] = {m->train, m->infer};
    for (int k = 0; k < 2; k++) {
        Graph *g = gs[k];
        for (int i = 0; g && i < g->n; i++)
            if (g->nodes[i].op == (state ? IR_STATE : IR_PARAM))
                g->nodes[i].ival = old[g->nodes[i].ival];
        for (int i = 0; state && g && i < g->nupdates; i++)
            g->update_state[i] = old[g->update_state[i]];
        for (int i = 0; state && g && i < g->ncounts; i++)
            g->count_state[i] = old[g->count_state[i]];
    }
    free(old);
    free(copy);
}

/* ===================================================================== */
/* C names                                                               */
/* ===================================================================== */

/* The C names are those of cnames.c, decided here once so that the header,
 * the C file and the driver print the same.  Its rule is one-to-one but
 * for `u_a_` next to `_a_`, and upper-casing hparams can fold two into one
 * constant: such a pair is an error naming both. */
static void name_clash(Loc at, Loc first, const char *what, const char *a, const char *b, const char *c)
{
    diag_error(at, "%s '%s' and '%s' both become '%s' in the generated C; rename one", what, a, b, c);
    diag_note(first, "'%s' is declared here", a);
}

/* Where a member of the header is declared: a field or param of the
 * model itself by its name, one deeper by the tensor's declaration. */
static Loc member_loc(const Node *decl, const Tensor *t, int k)
{
    for (int i = 0; k == 0 && i < decl->list.n; i++)
        if (decl->list.v[i]->name && !strcmp(decl->list.v[i]->name, t->parts[0]))
            return decl->list.v[i]->name_loc;
    return t->loc;
}

/* Two members of one struct of the header (the same parent, different
 * names) with the same C name. */
static void check_members(const Node *decl, const Tensor *ts, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int k = 0;
            while (k < ts[i].npart && k < ts[j].npart && !strcmp(ts[i].parts[k], ts[j].parts[k]))
                k++;
            if (k < ts[i].npart && k < ts[j].npart && !strcmp(ts[i].cparts[k], ts[j].cparts[k])) {
                name_clash(member_loc(decl, &ts[j], k), member_loc(decl, &ts[i], k), "names", ts[i].parts[k],
                           ts[j].parts[k], ts[j].cparts[k]);
                return;
            }
        }
}

static void check_io(const Model *m)
{
    int n = m->ninputs + m->nlabels;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const IoDecl *a = i < m->ninputs ? &m->inputs[i] : &m->labels[i - m->ninputs];
            const IoDecl *b = j < m->ninputs ? &m->inputs[j] : &m->labels[j - m->ninputs];
            if (!strcmp(a->cname, b->cname))
                name_clash(b->loc, a->loc, "names", a->name, b->name, b->cname);
        }
}

static void check_hparams(const Model *m)
{
    for (int i = 0; i < m->nhparams; i++)
        for (int j = i + 1; j < m->nhparams; j++)
            if (!strcmp(m->hparams[i].cname, m->hparams[j].cname))
                name_clash(m->hparams[j].loc, m->hparams[i].loc, "hparams", m->hparams[i].name, m->hparams[j].name,
                           m->hparams[j].cname);
}

static const char *upper(const char *s)
{
    char *u = ast_strndup(s, strlen(s));
    for (char *p = u; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

static const char *snake(const char *name)
{
    size_t n = strlen(name);
    char *s = ast_alloc(2 * n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (isupper(c)) {
            /* a capital starts a word after a lower-case letter or a digit
             * (Gpt2Small -> gpt2_small), and ends a run of capitals when a
             * lower-case letter follows (TinyMLPNet -> tiny_mlp_net) */
            if (i > 0 &&
                (islower((unsigned char)name[i - 1]) || isdigit((unsigned char)name[i - 1]) ||
                 (i + 1 < n && islower((unsigned char)name[i + 1]) && isupper((unsigned char)name[i - 1]))))
                s[k++] = '_';
            s[k++] = (char)tolower(c);
        } else {
            s[k++] = (char)c;
        }
    }
    s[k] = 0;
    return s;
}

static Model *elaborate_model(Node *decl, const ElabOptions *opt)
{
    Model *m = elab_calloc(1, sizeof *m);
    E.m = m;
    m->name = decl->name;
    m->prefix = opt->prefix ? opt->prefix : cname_of(snake(decl->name));
    m->source = decl->loc.file->path;
    m->doc = decl->doc;
    int errs = diag_errors();
    E.params_total = E.state_total = 0;
    Tpl *tpl = model_template(decl, opt);
    if (!tpl)
        return NULL;
    m->has_loss = inst_member(decl, ND_LOSS, NULL) != NULL;
    for (int k = 0; k < decl->list.n; k++)
        if (decl->list.v[k]->kind == ND_METRIC) {
            m->metric_names = realloc(m->metric_names, sizeof(char *) * (size_t)(m->nmetrics + 1));
            m->metric_names[m->nmetrics++] = decl->list.v[k]->name;
        }
    if (!inst_member(decl, ND_INPUT, NULL)) {
        diag_error(decl->name_loc, "model '%s' declares no input", decl->name);
        return NULL;
    }
    /* both even after an error: each may find its own (metrics are only
     * in infer); repeats of one error are printed once (diag.c) */
    if (m->has_loss)
        m->train = entry_graph(decl, tpl, "train", 1);
    m->infer = entry_graph(decl, tpl, "infer", 0);
    m->eval = m->has_loss ? m->infer : NULL;
    if (diag_errors() > errs || !m->infer)
        return NULL;
    /* the int hparams of the model, for the header's enum */
    Node *hp = inst_hparams_block(decl);
    for (int i = 0; hp && i < hp->list.n; i++) {
        Bind *b = elab_lookup_here(E.root->hp, hp->list.v[i]->name);
        if (!b || b->v.k != VK_INT)
            continue;
        m->hparams = realloc(m->hparams, sizeof(HparamVal) * (size_t)(m->nhparams + 1));
        m->hparams[m->nhparams].name = b->name;
        m->hparams[m->nhparams].cname = cname_const(upper(m->prefix), b->name);
        m->hparams[m->nhparams].loc = hp->list.v[i]->name_loc;
        m->hparams[m->nhparams].ival = b->v.i;
        m->hparams[m->nhparams].is_int = 1;
        m->hparams[m->nhparams++].doc = hp->list.v[i]->doc;
    }
    sort_tensors(m, 0, opt->f64);
    sort_tensors(m, 1, opt->f64);
    check_members(decl, m->params, m->nparams);
    check_members(decl, m->state, m->nstate);
    check_io(m);
    check_hparams(m);
    if (diag_errors() > errs)
        return NULL;
    add_list_rows(m);
    for (int r = 0; r < m->nrows; r++) {
        size_t len = strlen(m->rows[r].path);
        for (int i = 0; i < m->nparams; i++)
            if (!strncmp(m->params[i].path, m->rows[r].path, len) && m->params[i].path[len] == '.')
                m->rows[r].params += ir_numel(m->params[i].shape);
    }
    return m;
}

/* --prefix names the files and the C symbols as written, so it must be
 * an identifier that C and its headers leave free. */
static int check_prefix(const char *p)
{
    Loc none_loc = {0};
    int ok = *p && !isdigit((unsigned char)*p);
    for (const char *c = p; *c; c++)
        ok &= isalnum((unsigned char)*c) || *c == '_';
    if (!ok)
        diag_error(none_loc, "--prefix: '%s' is not a C identifier", p);
    else if (cname_taken(p))
        diag_error(none_loc, "--prefix: '%s' is a name C, its headers or the runtime take; try '%s'", p, cname_of(p));
    return ok && !cname_taken(p);
}

int model_elaborate(Program *p, const ElabOptions *opt, Model ***models)
{
    elab_reset();
    def_exprs = NULL;
    diag_set_user_site(elab_user_site);
    *models = NULL;
    if (opt->prefix && !check_prefix(opt->prefix))
        return 0;
    E.prog = p;
    collect_decls(p);
    int n = 0;
    *models = NULL;
    int nmodels = 0;
    if (opt->model) {
        Node *d = elab_find_decl(opt->model);
        const char *cands[256];
        int nc = 0;
        for (int i = 0; i < p->main->list.n && nc < 256; i++)
            if (p->main->list.v[i]->kind == ND_MODEL)
                cands[nc++] = p->main->list.v[i]->name;
        int here = 0;
        for (int i = 0; i < p->main->list.n; i++)
            here |= p->main->list.v[i] == d;
        if (!d || d->kind != ND_MODEL || !here) {
            Loc none_loc = {0};
            const char *c = diag_closest(opt->model, cands, nc);
            diag_error(none_loc, "--model: '%s' is not a model of '%s'%s%s%s", opt->model, p->main->loc.file->path,
                       c ? "; did you mean '" : "", c ? c : "", c ? "'?" : "");
            return 0;
        }
        Model *m = elaborate_model(d, opt);
        if (!m)
            return 0;
        *models = malloc(sizeof(Model *));
        (*models)[0] = m;
        return 1;
    }
    for (int i = 0; i < p->main->list.n; i++)
        nmodels += p->main->list.v[i]->kind == ND_MODEL;
    if (nmodels == 0) {
        Loc l = {p->main->loc.file, 0, 0};
        diag_error(l, "no model is declared in this file");
        return 0;
    }
    if (nmodels > 1 && opt->prefix) {
        Loc none_loc = {0};
        diag_error(none_loc, "--prefix needs a file with one model; this one has %d", nmodels);
        return 0;
    }
    for (int i = 0; i < p->main->list.n; i++) {
        Node *d = p->main->list.v[i];
        if (d->kind != ND_MODEL)
            continue;
        Model *m = elaborate_model(d, opt);
        if (!m)
            continue;
        *models = realloc(*models, sizeof(Model *) * (size_t)(n + 1));
        (*models)[n++] = m;
    }
    return n;
}
