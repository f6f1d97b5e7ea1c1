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
 * The primitives the interpreter calls, and the tensor operations behind
 * its operators, are in prims.c; what the files share is in elab.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elab.h"

/* ===================================================================== */
/* values and scopes                                                      */
/* ===================================================================== */

/* The whole source span of an expression (a binary node's own loc is its
 * operator), for carets under a complete constraint or pattern. */
static Loc expr_span(const Node *e)
{
    Loc l = e->loc;
    const Node *kids[3] = {e->a, e->b, e->c};
    for (int i = 0; i < 3; i++)
        if (kids[i] && kids[i]->loc.file == l.file) {
            Loc k = expr_span(kids[i]);
            int end = l.off + l.len > k.off + k.len ? l.off + l.len : k.off + k.len;
            if (k.off < l.off)
                l.off = k.off;
            l.len = end - l.off;
        }
    for (int i = 0; i < e->list.n; i++) {
        Loc k = expr_span(e->list.v[i]);
        if (k.file != l.file)
            continue;
        int end = l.off + l.len > k.off + k.len ? l.off + l.len : k.off + k.len;
        if (k.off < l.off)
            l.off = k.off;
        l.len = end - l.off;
    }
    return l;
}

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
    static const char *names[] = {"error", "int",         "float", "bool",   "string", "list",
                                  "fn",    "initializer", "layer", "tensor", "field",  "absent field"};
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

static int init_kind(const char *name)
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
static const char *excerpt(Loc loc)
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
static const char *path_name(const char *path)
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
    return E.path && *E.path ? elab_fmt("%s_%s", path_name(E.path), name) : name;
}

/* The nodes of graph named_g that a field's result or a `let` has named
 * (the names elab_add gives are only defaults). */
static const Graph *named_g;
static char *named;
static int named_cap;

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
int elab_add(IrNode n)
{
    if (!n.name)
        n.name = qualified(ir_op_name(n.op));
    n.loc = E.cur_loc;
    n.what = excerpt(E.cur_loc);
    if (in_std(E.cur_loc) && E.user_loc.file) {
        n.loc = E.user_loc;
        n.what = elab_fmt("%s: %s", excerpt(E.user_loc), excerpt(E.cur_loc));
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
/* templates and instantiation                                             */
/* ===================================================================== */

Node *elab_find_member(Node *decl, NodeKind kind, const char *name)
{
    for (int i = 0; i < decl->list.n; i++) {
        Node *m = decl->list.v[i];
        if (m->kind == kind && (!name || !strcmp(m->name, name)))
            return m;
    }
    return NULL;
}

Node *elab_hparams_block(Node *decl) { return elab_find_member(decl, ND_HPARAMS, NULL); }

static Node *call_fn(Node *decl) { return elab_find_member(decl, ND_FN, "call"); }

/* A template: `Dense(units: 3)`, or `block(filters: 64)` binding more of
 * a layer-typed hparam.  Names are checked here, where the user wrote them. */
Value elab_template(Tpl *base, Node *decl, Args *a)
{
    Tpl *t = elab_calloc(1, sizeof *t);
    t->decl = decl;
    t->loc = a ? a->loc : E.cur_loc;
    int nbase = base ? base->n : 0, nnew = a ? a->n : 0;
    t->names = elab_calloc((size_t)(nbase + nnew), sizeof(char *));
    t->vals = elab_calloc((size_t)(nbase + nnew), sizeof(Value));
    t->locs = elab_calloc((size_t)(nbase + nnew), sizeof(Loc));
    for (int i = 0; i < nbase; i++)
        t->names[i] = base->names[i], t->vals[i] = base->vals[i], t->locs[i] = base->locs[i];
    t->n = nbase;
    Node *hp = elab_hparams_block(decl);
    for (int i = 0; i < nnew; i++) {
        if (!a->names[i]) {
            diag_error(a->locs[i], "hparams are given by name: write '%s(name: value)'", decl->name);
            return none();
        }
        Node *h = hp ? elab_find_member(hp, ND_HPARAM, a->names[i]) : NULL;
        if (!h) {
            const char *cands[64];
            int nc = 0;
            for (int k = 0; hp && k < hp->list.n && nc < 64; k++)
                cands[nc++] = hp->list.v[k]->name;
            const char *c = diag_closest(a->names[i], cands, nc);
            diag_error(a->locs[i], "layer '%s' has no hparam '%s'", decl->name, a->names[i]);
            if (c)
                diag_note(h ? h->loc : a->locs[i], "did you mean '%s'?", c);
            return none();
        }
        int k;
        for (k = 0; k < t->n; k++) /* binding again replaces */
            if (!strcmp(t->names[k], a->names[i]))
                break;
        t->names[k] = a->names[i], t->vals[k] = a->vals[i], t->locs[k] = a->locs[i];
        if (k == t->n)
            t->n++;
    }
    Value v = none();
    v.k = VK_LAYER;
    v.tpl = t;
    return v;
}

/* Checks a value against an hparam type; ints widen to float. */
static int check_type(Node *type, Value *v, Loc loc, const char *name)
{
    if (v->k == VK_NONE)
        return 0;
    const char *tn = type->name;
    int ok;
    if (!strcmp(tn, "int"))
        ok = v->k == VK_INT && !v->batch;
    else if (!strcmp(tn, "float")) {
        if (v->k == VK_INT && !v->batch)
            *v = vfloat((double)v->i);
        ok = v->k == VK_FLOAT;
    } else if (!strcmp(tn, "bool"))
        ok = v->k == VK_BOOL;
    else if (!strcmp(tn, "fn"))
        ok = v->k == VK_FN || v->k == VK_INIT;
    else if (!strcmp(tn, "layer"))
        ok = v->k == VK_LAYER;
    else if (!strcmp(tn, "list")) {
        ok = v->k == VK_LIST;
        for (int i = 0; ok && i < v->n; i++)
            if (!check_type(type->a, &v->items[i], loc, name))
                return 0;
        if (ok)
            return 1;
    } else {
        diag_error(type->loc, "unknown hparam type '%s'", tn);
        return 0;
    }
    if (!ok) {
        diag_error(loc, "hparam '%s' is %s, got %s", name, !strcmp(tn, "list") ? "a list" : tn, elab_vk_name(v->k));
        return 0;
    }
    return 1;
}

/* Binds a layer's hparams: given values, then defaults in order (a
 * default may use the hparams above it), then the `where` constraints. */
static Scope *bind_hparams(Tpl *t, Loc at)
{
    Scope *s = elab_scope_new(NULL);
    Node *hp = elab_hparams_block(t->decl);
    for (int i = 0; hp && i < hp->list.n; i++) {
        Node *h = hp->list.v[i];
        Value v = none();
        Loc vl = at;
        int given = 0;
        for (int k = 0; k < t->n; k++)
            if (!strcmp(t->names[k], h->name))
                v = t->vals[k], vl = t->locs[k], given = 1;
        if (!given && h->b) {
            Loc save = E.cur_loc;
            v = elab_eval(h->b, s);
            E.cur_loc = save;
            vl = h->b->loc;
        } else if (!given) {
            diag_error(at, "missing hparam '%s' of '%s'", h->name, t->decl->name);
            diag_note(h->name_loc, "'%s' is declared here without a default", h->name);
            v = none();
        }
        if (v.k != VK_NONE && !check_type(h->a, &v, vl, h->name))
            v = none();
        elab_bind(s, h->name, v, h->name_loc);
    }
    for (int i = 0; hp && i < hp->list.n; i++) {
        Node *h = hp->list.v[i];
        if (!h->c || elab_lookup_here(s, h->name)->v.k == VK_NONE)
            continue;
        Value c = elab_eval(h->c, s);
        if (c.k == VK_NONE)
            continue;
        if (c.k != VK_BOOL) {
            diag_error(h->c->loc, "a 'where' constraint must be a bool, got %s", elab_vk_name(c.k));
        } else if (!c.i) {
            diag_error(at, "hparams of '%s' violate a constraint on '%s'", t->decl->name, h->name);
            diag_note(expr_span(h->c), "constraint declared here");
        }
    }
    return s;
}

static void make_fields(Inst *inst, Scope *env);

/* A field's value: a template, or a list of them (`* n`, `[…]`);
 * VK_ABSENT when its condition is false. */
static Value field_value(Node *f, Scope *env)
{
    if (f->b) {
        Value c = elab_eval(f->b, env);
        int on;
        if (!prim_get_bool(c, f->b->loc, "a field condition", &on))
            return none();
        if (!on) {
            Value v = none();
            v.k = VK_ABSENT;
            return v;
        }
    }
    return elab_eval(f->a, env);
}

/* Overrides flow down from fields: the outermost `init` wins (the user of
 * a layer has the last word over its author), `frozen` is sticky, and the
 * outermost `from` names the file. */
static void inherit(Inst *child, Inst *parent, Node *f)
{
    if (parent && parent->has_init) {
        child->has_init = 1, child->init_kind = parent->init_kind;
        child->init_a = parent->init_a, child->init_b = parent->init_b;
    } else if (f && f->c) {
        Value iv = elab_eval(f->c, parent->hp);
        if (iv.k == VK_FN && init_kind(iv.s) >= 0)
            child->has_init = 1, child->init_kind = init_kind(iv.s), child->init_a = 0, child->init_b = 0;
        else if (iv.k == VK_INIT)
            child->has_init = 1, child->init_kind = iv.ikind, child->init_a = iv.ia, child->init_b = iv.ib;
        else if (iv.k != VK_NONE)
            diag_error(f->c->loc, "'init' needs an initializer such as normal(std: 0.02), got %s", elab_vk_name(iv.k));
    }
    child->frozen = (parent && parent->frozen) || (f && (f->flags & FIELD_FROZEN));
    if (parent && parent->from)
        child->from = parent->from, child->from_prefix = parent->from_prefix;
    else if (f && f->str)
        child->from = f->str, child->from_prefix = child->path;
}

static int *order_push(const int *order, int norder, int k)
{
    int *o = elab_calloc((size_t)norder + 1, sizeof(int));
    if (norder)
        memcpy(o, order, sizeof(int) * (size_t)norder);
    o[norder] = k;
    return o;
}

static Inst *instantiate_value(Value v, const char *path, const int *order, int norder, Loc at, Inst *parent, Node *f)
{
    if (v.k == VK_LAYER)
        return elab_instantiate(v.tpl, path, order, norder, at, parent, f);
    if (v.k == VK_LIST) {
        Inst *seq = elab_calloc(1, sizeof *seq);
        seq->parent = parent;
        seq->path = path;
        seq->order = (int *)order;
        seq->norder = norder;
        seq->loc = at;
        inherit(seq, parent, f);
        seq->items = elab_calloc((size_t)v.n, sizeof(Inst *));
        for (int i = 0; i < v.n; i++) {
            if (v.items[i].k != VK_LAYER) {
                if (v.items[i].k != VK_NONE)
                    diag_error(at, "element %d of a sequence field must be a layer, got %s", i,
                               elab_vk_name(v.items[i].k));
                return NULL;
            }
            Inst *c = elab_instantiate(v.items[i].tpl, elab_fmt("%s.%d", path, i), order_push(order, norder, i),
                                       norder + 1, at, seq, NULL);
            if (!c)
                return NULL;
            seq->items[seq->nitems++] = c;
        }
        return seq;
    }
    if (v.k != VK_NONE)
        diag_error(at, "a field must be a layer, got %s", elab_vk_name(v.k));
    return NULL;
}

Inst *elab_instantiate(Tpl *t, const char *path, const int *order, int norder, Loc at, Inst *parent, Node *pf)
{
    /* recursion: the same layer among the instances this one is a field
     * of (fields may be made lazily, so the chain of parents, not a call
     * stack, is what holds them) */
    for (Inst *a = parent; a; a = a->parent)
        if (a->decl == t->decl) {
            diag_error(at, "layer '%s' instantiates itself", t->decl->name);
            diag_note(t->decl->name_loc, "'%s' is declared here", t->decl->name);
            return NULL;
        }
    Inst *inst = elab_calloc(1, sizeof *inst);
    inst->path = path;
    inst->order = (int *)order;
    inst->norder = norder;
    inst->loc = at;
    inst->decl = t->decl;
    inherit(inst, parent, pf);
    inst->hp = bind_hparams(t, at);
    inst->fields = elab_scope_new(NULL);
    inst->members = elab_calloc((size_t)t->decl->list.n, sizeof(Value));
    inst->parent = parent;
    for (int k = 0; k < t->decl->list.n; k++)
        inst->members[k].k = VK_ABSENT;
    /* a sequential layer's fields are made now; a layer with a call makes
     * them at its first application, so they may use the call's dims */
    if (!call_fn(t->decl) || !parent)
        make_fields(inst, inst->hp);
    return inst;
}

/* Instantiates the fields of inst, their hparams evaluated in env. */
static void make_fields(Inst *inst, Scope *env)
{
    if (inst->fields_made)
        return;
    inst->fields_made = 1;
    Node *decl = inst->decl;
    for (int k = 0; k < decl->list.n; k++) {
        Node *f = decl->list.v[k];
        if (f->kind != ND_FIELD)
            continue;
        Value v = field_value(f, env);
        Value fv = none();
        if (v.k == VK_ABSENT) {
            fv.k = VK_ABSENT;
        } else {
            const char *p = *inst->path ? elab_fmt("%s.%s", inst->path, f->name) : f->name;
            Inst *c =
                instantiate_value(v, p, order_push(inst->order, inst->norder, k), inst->norder + 1, f->a->loc, inst, f);
            if (c) {
                fv.k = VK_INST, fv.inst = c;
                c->doc = f->doc;
            }
        }
        elab_bind(inst->fields, f->name, fv, f->name_loc);
    }
}

/* ===================================================================== */
/* params and state: created at the first application                       */
/* ===================================================================== */

static int eval_shape(Node *list, Scope *env, Shape *s)
{
    memset(s, 0, sizeof *s);
    s->bd = -1;
    if (list->kind != ND_LIST) {
        diag_error(list->loc, "a shape is a list of dims such as [units, in]");
        return 0;
    }
    if (list->list.n > IR_MAXD) {
        diag_error(list->loc, "a tensor has at most %d dims", IR_MAXD);
        return 0;
    }
    for (int i = 0; i < list->list.n; i++) {
        Value v = elab_eval(list->list.v[i], env);
        long long d;
        if (v.k == VK_INT && v.batch) {
            diag_error(list->list.v[i]->loc, "a param or state shape cannot use the batch dim");
            return 0;
        }
        if (!prim_get_int(v, list->list.v[i]->loc, "a dim", &d))
            return 0;
        if (d <= 0) {
            diag_error(list->list.v[i]->loc, "dim %d is %lld; dims must be positive", i, d);
            return 0;
        }
        s->d[s->nd++] = d;
    }
    return 1;
}

static int find_tensor(Tensor *ts, int n, const char *path)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].path, path))
            return i;
    return -1;
}

static int new_tensor(Inst *inst, Node *mem, int k, Shape s, Value init)
{
    Model *m = E.m;
    int st = mem->kind == ND_STATE;
    Tensor **tab = st ? &m->state : &m->params;
    int *n = st ? &m->nstate : &m->nparams;
    const char *path = *inst->path ? elab_fmt("%s.%s", inst->path, mem->name) : mem->name;
    int idx = find_tensor(*tab, *n, path);
    if (idx >= 0)
        return idx; /* made by an earlier graph */
    *tab = realloc(*tab, sizeof(Tensor) * (size_t)(*n + 1));
    Tensor *t = &(*tab)[*n];
    memset(t, 0, sizeof *t);
    t->path = path;
    t->shape = s;
    t->state = st;
    t->frozen = inst->frozen;
    t->doc = mem->doc;
    t->loc = mem->name_loc;
    t->order = order_push(inst->order, inst->norder, k);
    t->npart = inst->norder + 1;
    t->from = inst->from;
    t->from_prefix = inst->from_prefix;
    if (inst->has_init && !st) {
        /* a field's `init` is for params, as the spec says: a BatchNorm's
         * running variance drawn from normal(std: 0.02) could be negative */
        t->init = (InitKind)inst->init_kind, t->init_a = inst->init_a, t->init_b = inst->init_b;
    } else if (init.k == VK_FN && init_kind(init.s) >= 0) {
        t->init = (InitKind)init_kind(init.s);
    } else if (init.k == VK_INIT) {
        t->init = (InitKind)init.ikind, t->init_a = init.ia, t->init_b = init.ib;
    } else if (init.k == VK_ABSENT) {
        t->init = INIT_ZEROS;
    } else {
        if (init.k != VK_NONE)
            diag_error(mem->b->loc,
                       "'%s' is not an initializer (zeros, ones, constant(v), normal(std:, mean:), "
                       "uniform(lo, hi), glorot_uniform, glorot_normal, he_uniform, he_normal)",
                       init.k == VK_FN ? init.s : elab_vk_name(init.k));
        t->init = INIT_ZEROS;
    }
    return (*n)++;
}

static int leaf(int state, int idx)
{
    int **cache = state ? &E.snode : &E.pnode;
    int *cap = state ? &E.scap : &E.pcap;
    if (idx >= *cap) {
        int nc = idx + 16;
        *cache = realloc(*cache, sizeof(int) * (size_t)nc);
        for (int i = *cap; i < nc; i++)
            (*cache)[i] = -1;
        *cap = nc;
    }
    if ((*cache)[idx] < 0) {
        Tensor *t = state ? &E.m->state[idx] : &E.m->params[idx];
        IrNode n = ir_node(state ? IR_STATE : IR_PARAM, DT_F32, t->shape, 0, NULL);
        n.ival = idx;
        n.loc = t->loc;
        n.what = t->path;
        n.name = path_name(t->path);
        (*cache)[idx] = ir_add(E.g, n);
    }
    return (*cache)[idx];
}

/* Creates (first application) or checks (later ones) the params and state
 * of `inst` with the dims bound in `env`; binds them into `members`. */
void elab_make_tensors(Inst *inst, Scope *env, Scope *members, Loc at)
{
    Node *decl = inst->decl;
    for (int k = 0; k < decl->list.n; k++) {
        Node *mem = decl->list.v[k];
        if (mem->kind != ND_PARAM && mem->kind != ND_STATE)
            continue;
        int st = mem->kind == ND_STATE;
        if (mem->c) {
            Value c = elab_eval(mem->c, env);
            int on;
            if (!prim_get_bool(c, mem->c->loc, "a param condition", &on) || !on)
                continue;
        }
        Shape s;
        if (!eval_shape(mem->a, env, &s)) {
            elab_bind(members, mem->name, none(), mem->name_loc); /* poison: no cascade */
            continue;
        }
        if (!inst->applied) {
            Value init = none();
            init.k = VK_ABSENT;
            if (mem->b)
                init = elab_eval(mem->b, env);
            int idx = new_tensor(inst, mem, k, s, init);
            inst->members[k] = vint(idx);
        }
        if (inst->members[k].k != VK_INT) {
            elab_bind(members, mem->name, none(), mem->name_loc);
            continue;
        }
        int idx = (int)inst->members[k].i;
        Tensor *t = st ? &E.m->state[idx] : &E.m->params[idx];
        if (!ir_shape_eq(t->shape, s)) {
            diag_error(at, "'%s' is applied again with an input that gives %s the shape %s, not %s",
                       *inst->path ? inst->path : decl->name, t->path, sstr(s), sstr(t->shape));
            diag_note(inst->first, "first applied here (applying a field again shares its weights)");
            elab_bind(members, mem->name, none(), mem->name_loc);
            continue;
        }
        elab_bind(members, mem->name, vtensor(leaf(st, idx)), mem->name_loc);
    }
}

/* ===================================================================== */
/* shape patterns                                                           */
/* ===================================================================== */

/* Matches `s` against a pattern such as [..., in]: fresh names bind dims,
 * hparams and bound names check them, `_` takes one, `...` takes any run. */
static int match_pattern(Node *pat, Shape s, Scope *env, Loc at, const char *what)
{
    int n = pat->list.n, ell = -1;
    for (int i = 0; i < n; i++)
        if (pat->list.v[i]->kind == ND_ELLIPSIS) {
            if (ell >= 0) {
                diag_error(pat->list.v[i]->loc, "'...' may appear once in a shape pattern");
                return 0;
            }
            ell = i;
        }
    int fixed = ell >= 0 ? n - 1 : n;
    if (ell < 0 ? s.nd != n : s.nd < fixed) {
        diag_error(at, "%s has shape %s, which does not match the pattern %s", what, sstr(s), excerpt(pat->loc));
        diag_note(pat->loc, "pattern declared here");
        return 0;
    }
    for (int i = 0; i < n; i++) {
        Node *p = pat->list.v[i];
        if (p->kind == ND_ELLIPSIS)
            continue;
        int d = ell >= 0 && i > ell ? s.nd - (n - i) : i;
        Value dv = vint(s.d[d]);
        if (d == s.bd)
            dv.batch = 1;
        if (p->kind == ND_IDENT && !strcmp(p->name, "_"))
            continue;
        if (p->kind == ND_IDENT) {
            Bind *b = elab_lookup(env, p->name);
            if (!b) {
                elab_bind(env, p->name, dv, p->loc);
                continue;
            }
            if (b->v.k == VK_INT && b->v.i == dv.i && b->v.batch == dv.batch)
                continue;
            if (b->v.k != VK_INT) {
                diag_error(p->loc, "'%s' in a shape pattern must be a dim or an int hparam, not %s", p->name,
                           elab_vk_name(b->v.k));
                return 0;
            }
            diag_error(at, "%s has shape %s: dim %d is %s, but the pattern needs '%s' = %lld", what, sstr(s), d,
                       dv.batch ? E.batch_name : elab_fmt("%lld", dv.i), p->name, b->v.i);
            diag_note(p->loc, "pattern declared here");
            return 0;
        }
        Value want = elab_eval(p, env);
        long long w;
        if (!prim_get_int(want, p->loc, "a pattern dim", &w))
            return 0;
        if (dv.batch || dv.i != w) {
            diag_error(at, "%s has shape %s: dim %d should be %lld", what, sstr(s), d, w);
            diag_note(p->loc, "pattern declared here");
            return 0;
        }
    }
    return 1;
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
        name_node(r.t, since, path_name(inst->path));
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
    Node *fn = call_fn(decl);
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
            if (!match_pattern(p->a, shape_of(a->vals[i].t), dims, a->locs[i], elab_fmt("argument '%s'", p->name)))
                return none();
        }
    }
    make_fields(inst, dims);
    Scope *members = elab_scope_new(dims);
    for (Bind *b = inst->fields->head; b; b = b->next)
        elab_bind(members, b->name, b->v, b->loc);
    elab_make_tensors(inst, dims, members, a->loc);
    if (!inst->applied)
        inst->applied = 1, inst->first = a->loc;
    cx.members = members;
    Scope *body = elab_scope_new(members);
    for (int i = 0; i < nparams; i++)
        elab_bind(body, fn->list.v[i]->name, a->vals[i], fn->list.v[i]->loc);
    int returned = 0;
    Value r = exec_block(fn->b, body, &cx, &returned);
    if (!returned) {
        diag_error(fn->loc, "'call' of '%s' ends without 'return'", decl->name);
        return none();
    }
    if (r.k == VK_TENSOR && fn->a && !match_pattern(fn->a, shape_of(r.t), dims, a->loc, "the result"))
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
    Value r = apply(E.root, a);
    if (r.k == VK_TENSOR) {
        E.nself_args = a->n;
        E.self_args = realloc(E.self_args, sizeof(int) * (size_t)(a->n + 1));
        for (int i = 0; i < a->n; i++)
            E.self_args[i] = a->vals[i].t;
        E.self_result = r.t;
    }
    return r;
}

static Value exec_stmt(Node *s, Scope *env, Ctx *cx, int *returned)
{
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
        for (long long i = lo; i < hi && !*returned; i++) {
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
        Node *mem = decl ? elab_find_member(decl, ND_STATE, s->name) : NULL;
        if (!mem) {
            diag_error(s->name_loc, "'update' needs a state of this layer; '%s' is not one", s->name);
            return none();
        }
        int k = 0;
        while (decl->list.v[k] != mem)
            k++;
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
    if (init_kind(e->name) >= 0) {
        v.k = VK_FN; /* an initializer without arguments */
        v.s = e->name;
        return v;
    }
    Node *d = elab_find_decl(e->name);
    if (d && d->kind == ND_LAYER)
        return elab_template(NULL, d, NULL);
    if (d) {
        diag_error(e->loc, "'%s' is a model; only layers can be used as fields", e->name);
        return none();
    }
    unknown_name(e, env);
    return none();
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
            Value r = vint(a.i * b.i);
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
        long long x = a.i, y = b.i;
        int batch = 0;
        switch (e->op) {
        case OP_ADD: return vint(x + y);
        case OP_SUB: return vint(x - y);
        case OP_MUL: {
            Value r = vint(x * y);
            r.batch = batch;
            return r;
        }
        case OP_DIV:
        case OP_MOD:
            if (y == 0) {
                diag_error(e->loc, "division by zero");
                return none();
            }
            return vint(e->op == OP_DIV ? x / y : x % y);
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
    v.ikind = init_kind(name);
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
            return elab_template(NULL, d, &a);
        }
        const Prim *p = prim_find(f->name);
        if (p) {
            Args a = eval_args(e, env, NULL);
            E.cur_loc = e->loc;
            return prim_call(p, &a);
        }
        if (init_kind(f->name) >= 0) {
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
        if (init_kind(callee.s) >= 0)
            return eval_init(callee.s, &a);
        const Prim *p = prim_find(callee.s); /* a unary one (eval_ident) */
        if (p)
            return prim_call(p, &a);
        diag_error(a.loc, "primitive '%s' is not available in this version of nnc", callee.s);
        return none();
    }
    case VK_LAYER: return elab_template(callee.tpl, callee.tpl->decl, &a);
    default: diag_error(f->loc, "%s is not callable", elab_vk_name(callee.k)); return none();
    }
}

Value elab_eval(Node *e, Scope *env)
{
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
            const char *cands[64];
            int nc = prim_names(cands, 0, 64);
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
