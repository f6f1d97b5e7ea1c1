/* elab.c — from syntax trees to IR graphs (elab_*): the interpreter.
 *
 * Elaboration is an interpreter over the AST whose tensor values are IR
 * nodes.  It runs once per entry point (train, infer, eval) with
 * `training` a compile-time constant, which is how `if training` compiles
 * both paths.  Layers are instantiated when their field is declared
 * (hparams, `where`, conditions), but their params are created when the
 * field is first applied: the call's shape pattern binds dims such as `in`,
 * and the param shapes are evaluated with them (the staged build).  A
 * second application re-evaluates the shapes and must agree — that is
 * weight sharing.  Params and state live in model-wide tables keyed by
 * their dotted path, so the three elaborations share them.
 *
 * Errors produce a poison value (VK_NONE) that every operation passes on
 * silently, so one mistake yields one diagnostic.
 *
 * Instantiating layers (templates, hparams, fields, params and state,
 * shape patterns) is inst.c; the primitives the interpreter calls, and
 * the tensor operations behind its operators, are prims.c; what the files
 * share is in elab.h.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elab.h"

/* ===================================================================== */
/* values and scopes                                                      */
/* ===================================================================== */

void *elab_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

Scope *elab_scope_new(Scope *parent)
{
    Scope *s = elab_calloc(1, sizeof *s);
    s->parent = parent;
    return s;
}

void elab_bind(Scope *s, const char *name, Value v, Loc loc)
{
    Bind *b = elab_calloc(1, sizeof *b);
    b->name = name;
    b->v = v;
    b->loc = loc;
    b->next = s->head;
    s->head = b;
}

Bind *elab_lookup_here(Scope *s, const char *name)
{
    for (Bind *b = s->head; b; b = b->next)
        if (!strcmp(b->name, name))
            return b;
    return NULL;
}

Bind *elab_lookup(Scope *s, const char *name)
{
    for (; s; s = s->parent) {
        Bind *b = elab_lookup_here(s, name);
        if (b)
            return b;
    }
    return NULL;
}

const char *elab_vk_name(VK k)
{
    static const char *names[] = {"error",       "int",   "float",  "bool",  "string",       "list",       "fn",
                                  "initializer", "layer", "tensor", "field", "absent field", "i64 counter"};
    return names[k];
}

char *elab_fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = ast_alloc((size_t)n + 1);
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

/* ===================================================================== */
/* the elaboration context                                                */
/* ===================================================================== */

/* The one elaboration under way (elab.h); the batch dim is called N
 * until a model names it. */
Elab E = {.batch_name = "N"};

Node *elab_find_decl(const char *name)
{
    for (int i = 0; i < E.ndecls; i++)
        if (!strcmp(E.decls[i].name, name))
            return E.decls[i].node;
    return NULL;
}

/* ORDER InitKind */
static const char *init_names[] = {
    "zeros", "ones", "constant", "normal", "uniform", "glorot_uniform", "glorot_normal", "he_uniform", "he_normal",
};

int elab_init_kind(const char *name)
{
    for (int i = 0; i < (int)(sizeof init_names / sizeof init_names[0]); i++)
        if (!strcmp(init_names[i], name))
            return i;
    return -1;
}

/* ===================================================================== */
/* nodes, and where they come from                                        */
/* ===================================================================== */

/* A short, one-line excerpt of the source for comments in generated C. */
const char *elab_excerpt(Loc loc)
{
    if (!loc.file || loc.len <= 0)
        return NULL;
    int len = loc.len > 60 ? 60 : loc.len;
    char *s = ast_alloc((size_t)len + 4);
    int k = 0;
    for (int i = 0; i < len; i++) {
        char c = loc.file->text[loc.off + i];
        if ((unsigned char)c < ' ') /* new lines, tabs; and emit.c's marks */
            c = ' ';
        if (c == '*' && i + 1 < len && loc.file->text[loc.off + i + 1] == '/')
            c = '.'; /* never close the C comment */
        if (c == ' ' && k > 0 && s[k - 1] == ' ')
            continue;
        s[k++] = c;
    }
    if (loc.len > 60)
        s[k++] = '.', s[k++] = '.', s[k++] = '.';
    s[k] = 0;
    return s;
}

static int in_std(Loc l) { return l.file && !strcmp(l.file->path, "<std>"); }

/* Errors inside the standard library point at the user's call (diag.c). */
Loc elab_user_site(Loc l) { return in_std(l) && E.user_loc.file ? E.user_loc : l; }

/* A dotted path as a name: "stage1.0.conv1" -> "stage1_0_conv1". */
const char *elab_path_name(const char *path)
{
    char *s = elab_fmt("%s", path);
    for (char *p = s; *p; p++)
        if (*p == '.')
            *p = '_';
    return s;
}

/* `name` qualified by the field being applied: "stage1_0_h", or "h" in the
 * model's own call */
static const char *qualified(const char *name)
{
    return E.path && *E.path ? elab_fmt("%s_%s", elab_path_name(E.path), name) : name;
}

/* The nodes of graph named_g that a field's result or a `let` has named
 * (the names elab_add gives are only defaults). */
static const Graph *named_g;
static char *named;
static int named_cap;

/* The list that `+` grew last, with room after its items: joining it
 * again writes there, so an unrolled loop that gathers its steps (the
 * standard LSTM's outputs) costs linear time, not quadratic.  A list
 * value reads only its first n items, so a value that ends earlier in
 * the same buffer never sees a later join (then n differs, and the join
 * copies). */
static struct {
    Value *items;
    int n, cap;
} grown;

void elab_reset(void)
{
    memset(&E, 0, sizeof E);
    memset(&grown, 0, sizeof grown);
    E.batch_name = "N";
    free(named);
    named = NULL;
    named_g = NULL;
    named_cap = 0;
}

static int is_named(int t) { return named_g == E.g && t < named_cap && named[t]; }

/* Names node t `name` if it was made since node `since` and no field or
 * `let` inside has named it already (the innermost name wins); a reshape
 * passes the name on to the node it views, if that is new and unnamed. */
static void name_node(int t, int since, const char *name)
{
    while (t >= since && !is_named(t)) {
        if (named_g != E.g) {
            if (named)
                memset(named, 0, (size_t)named_cap);
            named_g = E.g;
        }
        if (t >= named_cap) {
            int nc = E.g->n + 64;
            named = realloc(named, (size_t)nc);
            if (!named)
                abort();
            memset(named + named_cap, 0, (size_t)(nc - named_cap));
            named_cap = nc;
        }
        named[t] = 1;
        node(t)->name = name;
        if (node(t)->op != IR_RESHAPE)
            break;
        t = node(t)->in[0];
    }
}

/* Nodes made inside the standard library are attributed to the user's
 * call that reached it, so generated C says "digits.nn:14 fc1: ...". */
int elab_check_elems(Shape s, DType dt, Loc loc, const char *what)
{
    int64_t n = ir_numel(s);
    if (n <= IR_LIMIT_ELEMS)
        return 1;
    char buf[200];
    ir_shape_str(s, E.batch_name, buf, sizeof buf);
    diag_error(loc, "%s would need %s%lld elements%s (%s%s); one tensor may hold at most %lld", what,
               n == INT64_MAX ? "more than " : "", (long long)n, s.bd >= 0 ? " per example" : "",
               dt == DT_I32 ? "i32" : "f32", buf, (long long)IR_LIMIT_ELEMS);
    return 0;
}

/* Nodes past the budget or too large end the pass: the error is
 * reported once, at the source that made the node, and the node is still
 * added (its maker uses its id), but every evaluation after it is poison. */
int elab_add(IrNode n)
{
    if (!E.stop && E.g->n >= ELAB_MAX_NODES) {
        diag_error(E.cur_loc,
                   "here a pass of the model grows past %d graph nodes, the budget; fewer layers, repeats or loop "
                   "iterations would fit",
                   ELAB_MAX_NODES);
        E.stop = 1;
    }
    if (!E.stop && !elab_check_elems(n.shape, n.dt, E.cur_loc, elab_fmt("this '%s'", ir_op_name(n.op))))
        E.stop = 1;
    if (!n.name)
        n.name = qualified(ir_op_name(n.op));
    n.loc = E.cur_loc;
    n.what = elab_excerpt(E.cur_loc);
    if (in_std(E.cur_loc) && E.user_loc.file) {
        n.loc = E.user_loc;
        n.what = elab_fmt("%s: %s", elab_excerpt(E.user_loc), elab_excerpt(E.cur_loc));
    }
    return ir_add(E.g, n);
}

/* ===================================================================== */
/* arguments of calls                                                      */
/* ===================================================================== */

static Args eval_args(Node *call, Scope *env, Value *self_first)
{
    Args a;
    memset(&a, 0, sizeof a);
    int extra = self_first ? 1 : 0;
    a.n = call->list.n + extra;
    a.names = elab_calloc((size_t)a.n, sizeof(char *));
    a.vals = elab_calloc((size_t)a.n, sizeof(Value));
    a.locs = elab_calloc((size_t)a.n, sizeof(Loc));
    a.loc = call->loc;
    if (self_first) {
        a.vals[0] = *self_first;
        a.locs[0] = call->a ? call->a->loc : call->loc;
    }
    for (int i = 0; i < call->list.n; i++) {
        Node *arg = call->list.v[i];
        a.names[i + extra] = arg->name;
        a.vals[i + extra] = elab_eval(arg->a, env);
        a.locs[i + extra] = arg->a->loc;
    }
    return a;
}

/* ===================================================================== */
/* applying layers, and statements                                          */
/* ===================================================================== */

typedef struct Ctx {
    Inst *inst;
    Scope *members;
} Ctx;

static Value apply(Inst *inst, Args *a);
static Value exec_block(Node *block, Scope *env, Ctx *cx, int *returned);

static Value apply_seq(Inst *inst, Args *a)
{
    if (a->n != 1) {
        diag_error(a->loc, "a sequence field takes one argument, got %d", a->n);
        return none();
    }
    Value x = a->vals[0];
    for (int i = 0; i < inst->nitems && x.k != VK_NONE; i++) {
        Args one = *a;
        one.vals = &x;
        if (!in_std(inst->items[i]->loc))
            one.loc = inst->items[i]->loc;
        x = apply(inst->items[i], &one);
    }
    return x;
}

static Value apply_inner(Inst *inst, Args *a);

static Value apply(Inst *inst, Args *a)
{
    Loc saved = E.user_loc;
    const char *saved_path = E.path;
    int since = E.g->n;
    if (!in_std(a->loc))
        E.user_loc = a->loc;
    E.path = inst->path;
    int row = model_row_begin(inst);
    Value r = apply_inner(inst, a);
    model_row_end(row, r);
    E.user_loc = saved;
    E.path = saved_path;
    /* the field's result is called by its path: "stage1_0_conv1" */
    if (r.k == VK_TENSOR && *inst->path)
        name_node(r.t, since, elab_path_name(inst->path));
    return r;
}

static Value apply_inner(Inst *inst, Args *a)
{
    if (!inst->decl)
        return apply_seq(inst, a);
    for (int i = 0; i < a->n; i++)
        if (a->vals[i].k == VK_NONE)
            return none();
    Node *decl = inst->decl;
    Node *fn = inst_call_fn(decl);
    Scope *dims = elab_scope_new(inst->hp);
    Ctx cx = {inst, NULL};
    if (!fn) {
        /* sequential: the fields in declaration order */
        int nfields = 0;
        if (a->n != 1) {
            diag_error(a->loc, "'%s' is sequential and takes one argument, got %d", decl->name, a->n);
            return none();
        }
        Value x = a->vals[0];
        for (int k = 0; k < decl->list.n && x.k != VK_NONE; k++) {
            Node *f = decl->list.v[k];
            if (f->kind == ND_PARAM || f->kind == ND_STATE) {
                diag_error(f->loc, "'%s' has params but no 'fn call' to use them", decl->name);
                return none();
            }
            if (f->kind != ND_FIELD)
                continue;
            nfields++;
            Bind *b = elab_lookup_here(inst->fields, f->name);
            if (!b || b->v.k != VK_INST)
                continue; /* absent (condition false) or broken */
            Args one = *a;
            one.vals = &x;
            if (!in_std(f->loc))
                one.loc = f->loc; /* attribute the work to the field */
            one.locs = &one.loc;
            x = apply(b->v.inst, &one);
        }
        if (!nfields) {
            diag_error(decl->name_loc, "layer '%s' has neither fields nor a 'fn call'", decl->name);
            return none();
        }
        if (!inst->applied)
            inst->applied = 1, inst->first = a->loc;
        return x;
    }
    int nparams = fn->list.n;
    if (a->n != nparams) {
        diag_error(a->loc, "'%s' takes %d argument%s, got %d", decl->name, nparams, nparams == 1 ? "" : "s", a->n);
        diag_note(fn->loc, "'call' is declared here");
        return none();
    }
    for (int i = 0; i < nparams; i++) {
        Node *p = fn->list.v[i];
        if (a->names[i] && strcmp(a->names[i], p->name)) {
            diag_error(a->locs[i], "'%s' has no argument '%s'", decl->name, a->names[i]);
            return none();
        }
        if (p->a) {
            if (a->vals[i].k != VK_TENSOR) {
                diag_error(a->locs[i], "argument '%s' of '%s' must be a tensor, got %s", p->name, decl->name,
                           elab_vk_name(a->vals[i].k));
                return none();
            }
            if (!inst_match_pattern(p->a, shape_of(a->vals[i].t), dims, a->locs[i], elab_fmt("argument '%s'", p->name)))
                return none();
        }
    }
    inst_make_fields(inst, dims);
    Scope *members = elab_scope_new(dims);
    for (Bind *b = inst->fields->head; b; b = b->next)
        elab_bind(members, b->name, b->v, b->loc);
    inst_make_tensors(inst, dims, members, a->loc);
    if (!inst->applied)
        inst->applied = 1, inst->first = a->loc;
    cx.members = members;
    Scope *body = elab_scope_new(members);
    for (int i = 0; i < nparams; i++)
        elab_bind(body, fn->list.v[i]->name, a->vals[i], fn->list.v[i]->loc);
    int returned = 0;
    Value r = exec_block(fn->b, body, &cx, &returned);
    if (E.stop)
        return none();
    if (!returned) {
        diag_error(fn->loc, "'call' of '%s' ends without 'return'", decl->name);
        return none();
    }
    if (r.k == VK_TENSOR && fn->a && !inst_match_pattern(fn->a, shape_of(r.t), dims, a->loc, "the result"))
        return none();
    return r;
}

/* self(x): the model's call, computed once per pass for the same inputs. */
Value elab_self_call(Args *a)
{
    for (int i = 0; i < a->n; i++)
        if (a->vals[i].k != VK_TENSOR)
            return a->vals[i].k == VK_NONE ? none() : (diag_error(a->locs[i], "self takes tensors"), none());
    if (E.self_result >= 0 && E.nself_args == a->n) {
        int same = 1;
        for (int i = 0; i < a->n; i++)
            same &= E.self_args[i] == a->vals[i].t;
        if (same)
            return vtensor(E.self_result);
    }
    if (E.in_self) {
        /* the model's call (or a layer inside it) would call itself
         * forever: the call stack, not a budget, is what would run out */
        diag_error(a->loc, "self(x) cannot be called inside the model's own call: it would call itself forever");
        return none();
    }
    E.in_self = 1;
    Value r = apply(E.root, a);
    E.in_self = 0;
    if (r.k == VK_TENSOR) {
        E.nself_args = a->n;
        E.self_args = realloc(E.self_args, sizeof(int) * (size_t)(a->n + 1));
        for (int i = 0; i < a->n; i++)
            E.self_args[i] = a->vals[i].t;
        E.self_result = r.t;
    }
    return r;
}

/* `update c = c + k` of an i64 state: the only statement a counter may
 * appear in (BatchNorm's num_batches_tracked); k is a compile-time int. */
static Value update_counter(Node *s, Scope *env, Value member)
{
    Node *e = s->a;
    if (e->kind != ND_BINARY || e->op != OP_ADD || e->a->kind != ND_IDENT || strcmp(e->a->name, s->name) != 0) {
        diag_error(e->loc, "'%s' is an i64 counter: its update must be '%s + <int>'", s->name, s->name);
        return none();
    }
    Value by = elab_eval(e->b, env);
    long long k;
    if (by.k == VK_NONE || member.k != VK_INT || !prim_get_int(by, e->b->loc, "a counter's increment", &k))
        return none();
    if (E.training) {
        Graph *g = E.g;
        g->count_state = realloc(g->count_state, sizeof(int) * (size_t)(g->ncounts + 1));
        g->count_by = realloc(g->count_by, sizeof(long long) * (size_t)(g->ncounts + 1));
        g->count_state[g->ncounts] = (int)member.i;
        g->count_by[g->ncounts++] = k;
    }
    return none();
}

static Value exec_stmt(Node *s, Scope *env, Ctx *cx, int *returned)
{
    if (E.stop)
        return none();
    E.cur_loc = s->loc;
    switch (s->kind) {
    case ND_LET: {
        int since = E.g->n;
        Value v = elab_eval(s->a, env);
        if (v.k == VK_TENSOR)
            name_node(v.t, since, qualified(s->name));
        elab_bind(env, s->name, v, s->name_loc);
        return none();
    }
    case ND_ASSIGN: {
        Bind *b = NULL;
        for (Scope *sc = env; sc && sc != cx->members; sc = sc->parent)
            if ((b = elab_lookup_here(sc, s->name)))
                break;
        if (!b) {
            if (elab_lookup(env, s->name))
                diag_error(s->name_loc, "cannot assign to '%s': only names bound by 'let' or arguments can be rebound",
                           s->name);
            else
                diag_error(s->name_loc, "assignment to undeclared name '%s'; declare it with 'let'", s->name);
            return none();
        }
        int since = E.g->n;
        b->v = elab_eval(s->a, env);
        if (b->v.k == VK_TENSOR)
            name_node(b->v.t, since, qualified(s->name));
        return none();
    }
    case ND_IF: {
        Value c = elab_eval(s->a, env);
        int on;
        if (!prim_get_bool(c, s->a->loc, "an 'if' condition", &on))
            return none();
        Node *branch = on ? s->b : s->c;
        if (!branch)
            return none();
        if (branch->kind == ND_IF)
            return exec_stmt(branch, env, cx, returned);
        return exec_block(branch, elab_scope_new(env), cx, returned);
    }
    case ND_FOR: {
        long long lo, hi;
        if (!prim_get_int(elab_eval(s->a, env), s->a->loc, "the start of a range", &lo) ||
            !prim_get_int(elab_eval(s->b, env), s->b->loc, "the end of a range", &hi))
            return none();
        /* the budget is checked before unrolling, so a loop of two
         * billion iterations is an error at once; the trip count in
         * unsigned arithmetic, as hi - lo may not fit (a reversed range
         * is empty, as Python's range) */
        unsigned long long trips = hi > lo ? (unsigned long long)hi - (unsigned long long)lo : 0;
        if (trips > (unsigned long long)(ELAB_MAX_UNROLL - E.unrolled)) {
            if (E.unrolled)
                diag_error(s->loc,
                           "this loop would unroll %llu more iterations, after %lld: over the budget of %d "
                           "iterations of all loops in a model",
                           trips, E.unrolled, ELAB_MAX_UNROLL);
            else
                diag_error(s->loc, "this loop would unroll %llu iterations, over the budget of %d in a model", trips,
                           ELAB_MAX_UNROLL);
            E.stop = 1;
            return none();
        }
        E.unrolled += (long long)trips;
        for (long long i = lo; i < hi && !*returned && !E.stop; i++) {
            Scope *it = elab_scope_new(env);
            elab_bind(it, s->name, vint(i), s->name_loc);
            Value r = exec_block(s->c, it, cx, returned);
            if (*returned)
                return r;
        }
        return none();
    }
    case ND_UPDATE: {
        Node *decl = cx->inst ? cx->inst->decl : NULL;
        Node *mem = decl ? inst_member(decl, ND_STATE, s->name) : NULL;
        if (!mem) {
            diag_error(s->name_loc, "'update' needs a state of this layer; '%s' is not one", s->name);
            return none();
        }
        int k = 0;
        while (decl->list.v[k] != mem)
            k++;
        if (mem->str) /* an i64 counter */
            return update_counter(s, env, cx->inst->members[k]);
        Value v = elab_eval(s->a, env);
        if (v.k == VK_NONE || cx->inst->members[k].k != VK_INT)
            return none();
        int idx = (int)cx->inst->members[k].i;
        if (!prim_need_tensor(v, s->a->loc, "the new value"))
            return none();
        if (!ir_shape_eq(shape_of(v.t), E.m->state[idx].shape)) {
            diag_error(s->a->loc, "'update %s' needs shape %s, got %s", s->name, sstr(E.m->state[idx].shape),
                       sstr(shape_of(v.t)));
            return none();
        }
        if (E.training) {
            Graph *g = E.g;
            g->update_state = realloc(g->update_state, sizeof(int) * (size_t)(g->nupdates + 1));
            g->update_value = realloc(g->update_value, sizeof(int) * (size_t)(g->nupdates + 1));
            g->update_state[g->nupdates] = idx;
            g->update_value[g->nupdates++] = v.t;
            elab_bind(cx->members, s->name, v, s->name_loc);
        }
        return none();
    }
    case ND_SUMMARY: {
        Value v = elab_eval(s->a, env);
        if (!prim_need_tensor(v, s->a->loc, "a summary") || !E.training)
            return none();
        int t = v.t;
        if (shape_of(t).nd) {
            t = mk(IR_MEAN, ir_shape(0, NULL, -1), 1, &t);
            node(t)->axes = (1u << shape_of(v.t).nd) - 1;
        }
        Graph *g = E.g;
        g->summary_value = realloc(g->summary_value, sizeof(int) * (size_t)(g->nsummaries + 1));
        g->summary_name = realloc(g->summary_name, sizeof(char *) * (size_t)(g->nsummaries + 1));
        g->summary_value[g->nsummaries] = t;
        g->summary_name[g->nsummaries++] = s->str;
        return none();
    }
    case ND_RETURN: *returned = 1; return elab_eval(s->a, env);
    default: diag_error(s->loc, "this is not a statement"); return none();
    }
}

static Value exec_block(Node *block, Scope *env, Ctx *cx, int *returned)
{
    for (int i = 0; i < block->list.n; i++) {
        Value v = exec_stmt(block->list.v[i], env, cx, returned);
        if (*returned)
            return v;
    }
    return none();
}

/* ===================================================================== */
/* expressions                                                              */
/* ===================================================================== */

static void unknown_name(Node *e, Scope *env)
{
    const char *cands[256];
    int n = 0;
    for (Scope *s = env; s; s = s->parent)
        for (Bind *b = s->head; b && n < 200; b = b->next)
            cands[n++] = b->name;
    n = prim_names(cands, n, 250);
    for (int i = 0; i < E.ndecls && n < 256; i++)
        cands[n++] = E.decls[i].name;
    const char *c = diag_closest(e->name, cands, n);
    if (c)
        diag_error(e->loc, "unknown name '%s'; did you mean '%s'?", e->name, c);
    else
        diag_error(e->loc, "unknown name '%s'", e->name);
}

static Value eval_ident(Node *e, Scope *env)
{
    Bind *b = elab_lookup(env, e->name);
    if (b) {
        if (b->v.k == VK_ABSENT) {
            diag_error(e->loc, "'%s' does not exist here: its condition is false", e->name);
            diag_note(b->loc, "declared here");
            return none();
        }
        if (b->v.k == VK_COUNTER) {
            /* an i64 state only counts (BatchNorm's num_batches_tracked):
             * the graphs are f32, so it is never an operand */
            diag_error(e->loc, "'%s' is an i64 counter: it can only be counted, as in 'update %s = %s + 1'", e->name,
                       e->name, e->name);
            diag_note(b->loc, "declared here");
            return none();
        }
        return b->v;
    }
    if (!strcmp(e->name, "training"))
        return vbool(E.training);
    Value v = none();
    const Prim *p = prim_find(e->name);
    if (p && prim_is_unary(p)) {
        v.k = VK_FN;
        v.s = e->name;
        return v;
    }
    if (elab_init_kind(e->name) >= 0) {
        v.k = VK_FN; /* an initializer without arguments */
        v.s = e->name;
        return v;
    }
    Node *d = elab_find_decl(e->name);
    if (d && d->kind == ND_LAYER)
        return inst_template(NULL, d, NULL);
    if (d) {
        diag_error(e->loc, "'%s' is a model; only layers can be used as fields", e->name);
        return none();
    }
    unknown_name(e, env);
    return none();
}

/* `xs + ys`: the lists joined (nnc extension).  The items written count
 * against a budget, so doubling a list in a loop is an error, not a
 * machine's memory. */
static Value join_lists(Value a, Value b, Loc loc)
{
    long long n = (long long)a.n + b.n;
    int in_place = a.n > 0 && a.items == grown.items && a.n == grown.n && n <= grown.cap;
    long long cost = in_place ? b.n : n;
    if (cost > ELAB_MAX_LISTED - E.listed) {
        diag_error(loc,
                   "joining these lists would write %lld more items, after %lld: over the budget of %d items "
                   "of joined lists in a model",
                   cost, E.listed, ELAB_MAX_LISTED);
        E.stop = 1;
        return none();
    }
    E.listed += cost;
    if (!in_place) {
        int cap = n < 8 ? 8 : (int)(2 * n);
        Value *items = elab_calloc((size_t)cap, sizeof(Value));
        if (a.n)
            memcpy(items, a.items, sizeof(Value) * (size_t)a.n);
        grown.items = items, grown.cap = cap;
    }
    if (b.n)
        memcpy(grown.items + a.n, b.items, sizeof(Value) * (size_t)b.n);
    grown.n = (int)n;
    Value l = none();
    l.k = VK_LIST;
    l.items = grown.items;
    l.n = (int)n;
    return l;
}

static Value eval_binary(Node *e, Scope *env)
{
    Value a = elab_eval(e->a, env);
    if (e->op == OP_AND || e->op == OP_OR) {
        int x, y;
        if (!prim_get_bool(a, e->a->loc, "an operand of a logic operator", &x))
            return none();
        if ((e->op == OP_AND && !x) || (e->op == OP_OR && x))
            return vbool(x);
        if (!prim_get_bool(elab_eval(e->b, env), e->b->loc, "an operand of a logic operator", &y))
            return none();
        return vbool(y);
    }
    Value b = elab_eval(e->b, env);
    if (a.k == VK_NONE || b.k == VK_NONE)
        return none();
    E.cur_loc = e->loc;
    if (e->op == OP_MATMUL)
        return prim_matmul(a, b, e->loc);
    /* `Layer(...) * n`: n copies in sequence, with their own weights */
    if (e->op == OP_MUL && a.k == VK_LAYER && b.k == VK_INT && !b.batch) {
        if (b.i < 1 || b.i > 10000) {
            diag_error(e->b->loc, "a layer can be repeated 1 to 10000 times, not %lld", b.i);
            return none();
        }
        Value l = none();
        l.k = VK_LIST;
        l.n = (int)b.i;
        l.items = elab_calloc((size_t)l.n, sizeof(Value));
        for (int i = 0; i < l.n; i++)
            l.items[i] = a;
        return l;
    }
    if (e->op == OP_ADD && a.k == VK_LIST && b.k == VK_LIST)
        return join_lists(a, b, e->loc);
    if (a.k == VK_TENSOR || b.k == VK_TENSOR) {
        static const IrOp ops[] = {[OP_ADD] = IR_ADD, [OP_SUB] = IR_SUB, [OP_MUL] = IR_MUL, [OP_DIV] = IR_DIV};
        if (e->op > OP_DIV) {
            diag_error(e->loc, "this operator does not apply to tensors");
            return none();
        }
        return prim_binary(ops[e->op], a, b, e->loc);
    }
    if ((a.batch && (b.k == VK_INT || b.k == VK_FLOAT)) || (b.batch && (a.k == VK_INT || a.k == VK_FLOAT))) {
        /* the batch size times an int is still a dim; anything else with it
         * is a scalar known at run time (n * l / (n * l - 1)) */
        if (e->op == OP_MUL && a.k == VK_INT && b.k == VK_INT && !(a.batch && b.batch)) {
            long long k = a.batch ? b.i : a.i, m = a.batch ? a.i : b.i, p;
            if (k < 1) {
                diag_error(e->loc, "the batch size times %lld is not a dim; the factor must be positive", k);
                return none();
            }
            if (__builtin_mul_overflow(m, k, &p) || p > IR_LIMIT_ELEMS) {
                diag_error(e->loc, "%lld times the batch size is too large a dim (at most %lld times)",
                           m == 1 ? k : (long long)((unsigned long long)m * (unsigned long long)k), IR_LIMIT_ELEMS);
                return none();
            }
            Value r = vint(p);
            r.batch = 1;
            return r;
        }
        static const IrOp rt[] = {[OP_ADD] = IR_ADD, [OP_SUB] = IR_SUB, [OP_MUL] = IR_MUL, [OP_DIV] = IR_DIV};
        if (e->op > OP_DIV) {
            diag_error(e->loc,
                       "the batch size is only known at run time; it cannot be compared or used with this operator");
            return none();
        }
        return prim_binary(rt[e->op], a, b, e->loc);
    }
    if (a.k == VK_INT && b.k == VK_INT) {
        /* ints are 64-bit; a result that does not fit is an error, never
         * a wrapped (undefined) value */
        long long x = a.i, y = b.i, r;
        static const char sym[] = {[OP_ADD] = '+', [OP_SUB] = '-', [OP_MUL] = '*', [OP_DIV] = '/', [OP_MOD] = '%'};
        int ovf = 0;
        switch (e->op) {
        case OP_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
        case OP_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
        case OP_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
        case OP_DIV:
        case OP_MOD:
            if (y == 0) {
                diag_error(e->loc, e->op == OP_DIV ? "division by zero" : "modulo by zero");
                return none();
            }
            ovf = x == LLONG_MIN && y == -1;
            r = ovf ? 0 : e->op == OP_DIV ? x / y : x % y;
            break;
        default: break;
        }
        if (ovf) {
            diag_error(e->loc, "integer overflow: %lld %c %lld does not fit in a 64-bit int", x, sym[e->op], y);
            return none();
        }
        switch (e->op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_DIV:
        case OP_MOD: return vint(r);
        case OP_EQ: return vbool(x == y);
        case OP_NE: return vbool(x != y);
        case OP_LT: return vbool(x < y);
        case OP_LE: return vbool(x <= y);
        case OP_GT: return vbool(x > y);
        case OP_GE: return vbool(x >= y);
        default: break;
        }
    }
    double x, y;
    if ((a.k == VK_INT || a.k == VK_FLOAT) && (b.k == VK_INT || b.k == VK_FLOAT) &&
        prim_get_number(a, e->a->loc, "an operand", &x) && prim_get_number(b, e->b->loc, "an operand", &y)) {
        switch (e->op) {
        case OP_ADD: return vfloat(x + y);
        case OP_SUB: return vfloat(x - y);
        case OP_MUL: return vfloat(x * y);
        case OP_DIV: return vfloat(x / y);
        case OP_MOD: return vfloat(fmod(x, y));
        case OP_EQ: return vbool(x == y);
        case OP_NE: return vbool(x != y);
        case OP_LT: return vbool(x < y);
        case OP_LE: return vbool(x <= y);
        case OP_GT: return vbool(x > y);
        case OP_GE: return vbool(x >= y);
        default: break;
        }
    }
    if (a.k == VK_BOOL && b.k == VK_BOOL && (e->op == OP_EQ || e->op == OP_NE))
        return vbool((a.i == b.i) == (e->op == OP_EQ));
    if (a.k == VK_STR && b.k == VK_STR && (e->op == OP_EQ || e->op == OP_NE))
        return vbool((strcmp(a.s, b.s) == 0) == (e->op == OP_EQ));
    diag_error(e->loc, "this operator does not apply to %s and %s", elab_vk_name(a.k), elab_vk_name(b.k));
    return none();
}

static Value eval_init(const char *name, Args *a)
{
    Value v = none(), p[2];
    Loc l[2];
    v.k = VK_INIT;
    v.ikind = elab_init_kind(name);
    a->callee = name;
    switch (v.ikind) {
    case INIT_CONSTANT:
        if (!prim_bind_args(a, SPEC("value"), p, l) || !prim_get_number(p[0], l[0], "the value", &v.ia))
            return none();
        return v;
    case INIT_NORMAL:
    case INIT_UNIFORM: {
        /* two optional numbers: normal(std: 1, mean: 0), uniform(lo: 0, hi: 1) */
        int normal = v.ikind == INIT_NORMAL;
        const char *na = normal ? "std" : "lo", *nb = normal ? "mean" : "hi";
        v.ia = normal ? 1 : 0, v.ib = normal ? 0 : 1;
        int bound =
            normal ? prim_bind_args(a, SPEC("std?", "mean?"), p, l) : prim_bind_args(a, SPEC("lo?", "hi?"), p, l);
        if (!bound || (p[0].k != VK_ABSENT && !prim_get_number(p[0], l[0], na, &v.ia)) ||
            (p[1].k != VK_ABSENT && !prim_get_number(p[1], l[1], nb, &v.ib)))
            return none();
        return v;
    }
    default:
        if (a->n) {
            diag_error(a->loc, "initializer '%s' takes no arguments", name);
            return none();
        }
        return v;
    }
}

static Value eval_call(Node *e, Scope *env)
{
    Node *f = e->a;
    if (f->kind == ND_SELF) {
        Args a = eval_args(e, env, NULL);
        return elab_self_call(&a);
    }
    if (f->kind == ND_IDENT && !elab_lookup(env, f->name)) {
        Node *d = elab_find_decl(f->name);
        if (d && d->kind == ND_LAYER) {
            Args a = eval_args(e, env, NULL);
            return inst_template(NULL, d, &a);
        }
        const Prim *p = prim_find(f->name);
        if (p) {
            Args a = eval_args(e, env, NULL);
            E.cur_loc = e->loc;
            return prim_call(p, &a);
        }
        if (elab_init_kind(f->name) >= 0) {
            Args a = eval_args(e, env, NULL);
            return eval_init(f->name, &a);
        }
    }
    Value callee = elab_eval(f, env);
    if (callee.k == VK_NONE)
        return none();
    Args a = eval_args(e, env, NULL);
    E.cur_loc = e->loc;
    switch (callee.k) {
    case VK_INST: return apply(callee.inst, &a);
    case VK_FN: {
        if (elab_init_kind(callee.s) >= 0)
            return eval_init(callee.s, &a);
        const Prim *p = prim_find(callee.s); /* a unary one (eval_ident) */
        if (p)
            return prim_call(p, &a);
        diag_error(a.loc, "primitive '%s' is not available in this version of nnc", callee.s);
        return none();
    }
    case VK_LAYER: return inst_template(callee.tpl, callee.tpl->decl, &a);
    default: diag_error(f->loc, "%s is not callable", elab_vk_name(callee.k)); return none();
    }
}

Value elab_eval(Node *e, Scope *env)
{
    if (E.stop)
        return none();
    Loc save = E.cur_loc;
    E.cur_loc = e->loc;
    Value r = none();
    switch (e->kind) {
    case ND_INT: r = vint(e->ival); break;
    case ND_FLOAT: r = vfloat(e->fval); break;
    case ND_BOOL: r = vbool((int)e->ival); break;
    case ND_STR: r.k = VK_STR, r.s = e->str; break;
    case ND_IDENT: r = eval_ident(e, env); break;
    case ND_SELF: diag_error(e->loc, "'self' can only be called, as in self(x)"); break;
    case ND_ELLIPSIS: diag_error(e->loc, "'...' can only appear in a shape pattern"); break;
    case ND_LIST:
        r.k = VK_LIST;
        r.n = e->list.n;
        r.items = elab_calloc((size_t)r.n, sizeof(Value));
        for (int i = 0; i < r.n; i++) {
            r.items[i] = elab_eval(e->list.v[i], env);
            if (r.items[i].k == VK_NONE) {
                r = none();
                break;
            }
        }
        break;
    case ND_UNARY: {
        Value a = elab_eval(e->a, env);
        E.cur_loc = e->loc;
        if (a.k == VK_NONE)
            break;
        if (e->op == OP_NOT) {
            int b;
            if (prim_get_bool(a, e->a->loc, "the operand of '!'", &b))
                r = vbool(!b);
        } else if (a.k == VK_INT && !a.batch) {
            if (a.i == LLONG_MIN)
                diag_error(e->loc, "integer overflow: -(%lld) does not fit in a 64-bit int", a.i);
            else
                r = vint(-a.i);
        } else if (a.k == VK_FLOAT) {
            r = vfloat(-a.f);
        } else if (prim_need_tensor(a, e->a->loc, "the operand of '-'")) {
            r = vtensor(mk1(IR_NEG, a.t));
        }
        break;
    }
    case ND_BINARY: r = eval_binary(e, env); break;
    case ND_COND: {
        int c;
        if (prim_get_bool(elab_eval(e->a, env), e->a->loc, "the condition of '?:'", &c))
            r = elab_eval(c ? e->b : e->c, env);
        break;
    }
    case ND_CALL: r = eval_call(e, env); break;
    case ND_METHOD: {
        Value x = elab_eval(e->a, env);
        const Prim *p = prim_find(e->name);
        if (!p) {
            /* reported even when the receiver failed: an independent mistake */
            const char *cands[128];
            int nc = prim_names(cands, 0, 128);
            const char *c = diag_closest(e->name, cands, nc);
            if (c)
                diag_error(e->name_loc, "'%s' is not a primitive; did you mean '%s'?", e->name, c);
            else
                diag_error(e->name_loc, "'%s' is not a primitive; only primitives take method syntax", e->name);
            break;
        }
        if (x.k == VK_NONE)
            break;
        Args a = eval_args(e, env, &x);
        E.cur_loc = e->loc;
        r = prim_call(p, &a);
        break;
    }
    case ND_INDEX: {
        Value a = elab_eval(e->a, env), i = elab_eval(e->b, env);
        long long k;
        if (a.k == VK_NONE || !prim_get_int(i, e->b->loc, "an index", &k))
            break;
        if (a.k == VK_LIST || (a.k == VK_INST && !a.inst->decl)) {
            int n = a.k == VK_LIST ? a.n : a.inst->nitems;
            if (k < 0 || k >= n) {
                diag_error(e->b->loc, "index %lld is out of range for %d elements", k, n);
                break;
            }
            if (a.k == VK_LIST)
                r = a.items[k];
            else
                r.k = VK_INST, r.inst = a.inst->items[k];
        } else {
            diag_error(e->a->loc, "only lists and sequence fields can be indexed, not %s", elab_vk_name(a.k));
        }
        break;
    }
    default: diag_error(e->loc, "this is not an expression"); break;
    }
    E.cur_loc = save;
    return r;
}
