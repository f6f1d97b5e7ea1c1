/* inst.c — instantiating layers (inst_*): templates, hparams, fields,
 * params and state, shape patterns.
 *
 * A field's value is a template (`Dense(units: 3)`: a layer with some
 * hparams bound), instantiated when the field is declared: its hparams
 * get their given values, then their defaults in order, then the `where`
 * constraints are checked.  A layer with a call makes its own fields and
 * its params and state at its first application, when the call's shape
 * pattern has bound dims such as `in`; a later application checks the
 * shapes again (weight sharing).  Params and state live in model-wide
 * tables keyed by their dotted path, so the entry points share them.
 * elab.c applies the instances; what the files share is in elab.h.
 */
#include <stdlib.h>
#include <string.h>

#include "elab.h"

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

/* ===================================================================== */
/* templates and instantiation                                             */
/* ===================================================================== */

Node *inst_member(Node *decl, NodeKind kind, const char *name)
{
    for (int i = 0; i < decl->list.n; i++) {
        Node *m = decl->list.v[i];
        if (m->kind == kind && (!name || !strcmp(m->name, name)))
            return m;
    }
    return NULL;
}

Node *inst_hparams_block(Node *decl) { return inst_member(decl, ND_HPARAMS, NULL); }

Node *inst_call_fn(Node *decl) { return inst_member(decl, ND_FN, "call"); }

/* A template: `Dense(units: 3)`, or `block(filters: 64)` binding more of
 * a layer-typed hparam.  Names are checked here, where the user wrote them. */
Value inst_template(Tpl *base, Node *decl, Args *a)
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
    Node *hp = inst_hparams_block(decl);
    for (int i = 0; i < nnew; i++) {
        if (!a->names[i]) {
            diag_error(a->locs[i], "hparams are given by name: write '%s(name: value)'", decl->name);
            return none();
        }
        Node *h = hp ? inst_member(hp, ND_HPARAM, a->names[i]) : NULL;
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
    Node *hp = inst_hparams_block(t->decl);
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
        if (iv.k == VK_FN && elab_init_kind(iv.s) >= 0)
            child->has_init = 1, child->init_kind = elab_init_kind(iv.s), child->init_a = 0, child->init_b = 0;
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

/* whether every element of sequence v is the same layer (`L * n`), whose
 * copies then make the same number of instances */
static int same_layer(Value v)
{
    for (int i = 1; i < v.n; i++)
        if (v.items[i].k != VK_LAYER || v.items[i].tpl != v.items[0].tpl)
            return 0;
    return 1;
}

static Inst *instantiate_value(Value v, const char *path, const int *order, int norder, Loc at, Inst *parent, Node *f)
{
    if (v.k == VK_LAYER)
        return inst_instantiate(v.tpl, path, order, norder, at, parent, f);
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
            if (i == 0 && v.n > ELAB_MAX_INSTANCES - E.ninstances) {
                /* before making any: `* 10000` of a layer that itself has
                 * `* 10000` ends here, at once */
                diag_error(at, "%d more layer instances, after %d, are over the budget of %d in a model", v.n,
                           E.ninstances, ELAB_MAX_INSTANCES);
                E.stop = 1;
                return NULL;
            }
            const int before = E.ninstances;
            Inst *c = inst_instantiate(v.items[i].tpl, elab_fmt("%s.%d", path, i), order_push(order, norder, i),
                                       norder + 1, at, seq, NULL);
            if (!c)
                return NULL;
            seq->items[seq->nitems++] = c;
            /* the first of n copies of one layer tells what the rest will
             * cost: `Wide * 10000` of a Wide with `* 10000` inside made
             * 90,000 instances (5 s under ASan) before the budget stopped
             * it; now it stops after the first copy */
            const int64_t each = E.ninstances - before, rest = v.n - 1;
            if (i == 0 && rest > 0 && each * rest > ELAB_MAX_INSTANCES - E.ninstances && same_layer(v)) {
                diag_error(
                    at,
                    "%lld more layer instances (%lld copies of %lld), after %d, are over the budget of %d in a model",
                    (long long)(each * rest), (long long)rest, (long long)each, E.ninstances, ELAB_MAX_INSTANCES);
                E.stop = 1;
                return NULL;
            }
        }
        return seq;
    }
    if (v.k != VK_NONE)
        diag_error(at, "a field must be a layer, got %s", elab_vk_name(v.k));
    return NULL;
}

Inst *inst_instantiate(Tpl *t, const char *path, const int *order, int norder, Loc at, Inst *parent, Node *pf)
{
    if (E.stop)
        return NULL;
    if (E.ninstances >= ELAB_MAX_INSTANCES) {
        diag_error(at, "this layer instance is over the budget of %d in a model", ELAB_MAX_INSTANCES);
        E.stop = 1;
        return NULL;
    }
    E.ninstances++;
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
    if (!inst_call_fn(t->decl) || !parent)
        inst_make_fields(inst, inst->hp);
    return inst;
}

/* Instantiates the fields of inst, their hparams evaluated in env. */
void inst_make_fields(Inst *inst, Scope *env)
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
    t->counter = st && mem->str;
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
    } else if (init.k == VK_FN && elab_init_kind(init.s) >= 0) {
        t->init = (InitKind)elab_init_kind(init.s);
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
    /* a counter starts at an integer: zeros, ones or constant(k) */
    if (t->counter &&
        !(t->init == INIT_ZEROS || t->init == INIT_ONES ||
          (t->init == INIT_CONSTANT && t->init_a == (double)(long long)t->init_a))) {
        diag_error(mem->b ? mem->b->loc : mem->name_loc,
                   "an i64 counter starts at zeros, ones or constant(k) with an integer k");
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
        n.name = elab_path_name(t->path);
        (*cache)[idx] = ir_add(E.g, n);
    }
    return (*cache)[idx];
}

/* Creates (first application) or checks (later ones) the params and state
 * of `inst` with the dims bound in `env`; binds them into `members`. */
void inst_make_tensors(Inst *inst, Scope *env, Scope *members, Loc at)
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
        if (mem->str && s.nd != 0) {
            diag_error(mem->a->loc, "an i64 state is a counter, a scalar: its shape must be [], not %s", sstr(s));
            elab_bind(members, mem->name, none(), mem->name_loc);
            continue;
        }
        if (!inst->applied) {
            const char *path = *inst->path ? elab_fmt("%s.%s", inst->path, mem->name) : mem->name;
            int64_t *total = st ? &E.state_total : &E.params_total;
            if (!elab_check_elems(s, DT_F32, mem->name_loc, elab_fmt("'%s'", path))) {
                E.stop = 1;
                return;
            }
            if (find_tensor(st ? E.m->state : E.m->params, st ? E.m->nstate : E.m->nparams, path) < 0 &&
                (*total += ir_numel(s)) > IR_LIMIT_TOTAL) {
                diag_error(mem->name_loc, "'%s' brings the model's %s to %lld floats; a model may have at most %lld",
                           path, st ? "state" : "params", (long long)*total, (long long)IR_LIMIT_TOTAL);
                E.stop = 1;
                return;
            }
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
        if (t->counter) {
            Value c = none();
            c.k = VK_COUNTER, c.i = idx;
            elab_bind(members, mem->name, c, mem->name_loc);
        } else {
            elab_bind(members, mem->name, vtensor(leaf(st, idx)), mem->name_loc);
        }
    }
}

/* ===================================================================== */
/* shape patterns                                                           */
/* ===================================================================== */

/* Matches `s` against a pattern such as [..., in]: fresh names bind dims,
 * hparams and bound names check them, `_` takes one, `...` takes any run. */
int inst_match_pattern(Node *pat, Shape s, Scope *env, Loc at, const char *what)
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
        diag_error(at, "%s has shape %s, which does not match the pattern %s", what, sstr(s), elab_excerpt(pat->loc));
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
