/* elab.h — the elaboration stage, shared by elab.c, prims.c and model.c
 * (main.c sees only model.h).
 *
 * Elaboration turns the parsed program into IR graphs.  elab.c is the
 * interpreter: values, scopes, layer instances, statements and
 * expressions, whose tensor values are IR nodes of the graph being built.
 * prims.c holds the built-in primitives, the tensor operations they are
 * made of, and the checks of argument values that the interpreter uses
 * too.  model.c assembles each model from its entry points.  Like
 * chibicc.h, this header has the types they share first, then one section
 * per file with what that file exports.
 */
#ifndef NNC_ELAB_H
#define NNC_ELAB_H

#include <string.h>

#include "ir.h"
#include "load.h"

/* ===================================================================== */
/* values, scopes and instances                                           */
/* ===================================================================== */

typedef enum VK {
    VK_NONE,    /* poison: an error was already reported */
    VK_INT,     /* i (batch: the batch dim, i its multiplier) */
    VK_FLOAT,   /* f */
    VK_BOOL,    /* i */
    VK_STR,     /* s */
    VK_LIST,    /* items[n] */
    VK_FN,      /* s: a unary elementwise primitive */
    VK_INIT,    /* an initializer: ikind, ia, ib */
    VK_LAYER,   /* tpl: a layer template with some hparams bound */
    VK_TENSOR,  /* t: an IR node of the current graph */
    VK_INST,    /* inst: a field (layer instance or sequence) */
    VK_ABSENT,  /* a conditional field or param whose condition is false */
    VK_COUNTER, /* i: an i64 state (its index), usable only by `update s = s + k` */
} VK;

typedef struct Tpl Tpl;
typedef struct Inst Inst;

typedef struct Value {
    VK k;
    int batch;
    long long i;
    double f;
    const char *s;
    struct Value *items;
    int n;
    Tpl *tpl;
    Inst *inst;
    int t;
    int ikind;
    double ia, ib;
} Value;

struct Tpl {
    Node *decl; /* ND_LAYER */
    int n;
    const char **names;
    Value *vals;
    Loc *locs;
    Loc loc; /* where the template was written */
};

typedef struct Bind {
    const char *name;
    Value v;
    Loc loc;
    struct Bind *next;
} Bind;

typedef struct Scope {
    Bind *head;
    struct Scope *parent;
} Scope;

struct Inst {
    const char *path; /* "" for the model, "blocks.2" */
    int *order;       /* declaration-order key */
    int norder;
    Node *decl;   /* NULL for a sequence */
    Scope *hp;    /* hparams (parent NULL: layers see only their own) */
    Inst **items; /* a sequence's copies */
    int nitems;
    Scope *fields; /* field name -> VK_INST / VK_ABSENT */
    int applied;
    Loc first;      /* first application */
    Value *members; /* per member: its param/state tensor index (VK_INT) or VK_ABSENT */
    int has_init;   /* a field `init` above overrides every initializer below */
    int init_kind;
    double init_a, init_b;
    int frozen;
    const char *from, *from_prefix;
    const char *doc; /* the field's `///` comment */
    int summarized;  /* has a summary row */
    Inst *parent;    /* the instance whose field this is (recursion check) */
    int fields_made; /* fields instantiated (at the first application when
                              the layer has a call: they may use its dims) */
    Loc loc;
};

/* The arguments of a call, evaluated. */
typedef struct Args {
    int n;
    const char **names; /* NULL for positional */
    Value *vals;
    Loc *locs;
    Loc loc; /* the call */
    const char *callee;
} Args;

/* ===================================================================== */
/* the elaboration context                                                */
/* ===================================================================== */

/* The limits of elaboration (docs/language.md, "Limits"): each ends a
 * model that would take the compiler, or the C it writes, out of bounds
 * with one located error, instead of a hang, a crash or C that cannot
 * compile.  The budgets are per pass elaborated (the inference pass, the
 * training pass), each far above what the models of this repository
 * need: resnet18, the largest, makes 634 nodes and unrolls no loop.
 * The node budget is the lowest because the stages after elaboration
 * are superlinear in the nodes (a pass at the budget: 8.5 s, 500 MB). */
#define ELAB_MAX_UNROLL 100000    /* iterations of `for` loops, nested and repeated ones included */
#define ELAB_MAX_NODES 20000      /* IR nodes elaboration makes (autodiff adds its own) */
#define ELAB_MAX_INSTANCES 100000 /* layer instances: the product of nested `* n` */
#define ELAB_MAX_LISTED 1000000   /* items written by joining lists (`xs + ys`) */
/* and IR_LIMIT_ELEMS, IR_LIMIT_TOTAL (ir.h), which later stages check too */

typedef struct Decl {
    const char *name;
    Node *node;
} Decl;

/* One elaboration at a time: the model and the graph being built, and
 * where in the source the interpreter is (for the nodes it makes). */
typedef struct Elab {
    Program *prog;
    Decl *decls;
    int ndecls;
    Model *m;
    Graph *g;
    int training;
    int *pnode, *snode; /* per param/state: its leaf node in g, or -1 */
    int pcap, scap;
    Inst *root;
    int *self_args, nself_args, self_result; /* self(x) is computed once */
    Loc cur_loc;                             /* the expression being elaborated, for nodes */
    Loc user_loc;                            /* the innermost call written in a user's file */
    const char *path;                        /* the field being applied ("stage1.0.conv1"; "" or NULL for
                             * the model): its nodes are named after it */
    const char *batch_name;                  /* the batch dim, bound by name in `input x: f32[N, 64]` */
    /* the budgets spent in this pass (ELAB_MAX_*), and whether one ran
     * out: then everything returns poison at once, so elaboration ends */
    long long unrolled;
    long long listed;
    int ninstances;
    int in_self; /* inside the model's own call: self(x) would recurse */
    int stop;
    int64_t params_total, state_total;
} Elab;

extern Elab E;

/* Forgets the elaboration's state, for a new compilation in the same
 * process (model_elaborate calls it; the fuzz target, tests/fuzz/). */
void elab_reset(void);

/* ===================================================================== */
/* elab.c: the interpreter                                                */
/* ===================================================================== */

void *elab_calloc(size_t n, size_t size); /* calloc, or abort */
char *elab_fmt(const char *f, ...);       /* printf into the arena */
const char *elab_vk_name(VK k);           /* "int", "tensor": for messages */

Scope *elab_scope_new(Scope *parent);
void elab_bind(Scope *s, const char *name, Value v, Loc loc);
Bind *elab_lookup_here(Scope *s, const char *name);
Bind *elab_lookup(Scope *s, const char *name); /* here, then the parents */

/* Layers and models by name (E.decls). */
Node *elab_find_decl(const char *name);
/* The initializer named so (ORDER InitKind), or -1. */
int elab_init_kind(const char *name);
/* A short one-line excerpt of the source, for comments and messages. */
const char *elab_excerpt(Loc loc);
/* A dotted path as a C name: "stage1.0.conv1" -> "stage1_0_conv1". */
const char *elab_path_name(const char *path);
/* self(x): the model's call (E.root), once per graph for the same inputs. */
Value elab_self_call(Args *a);
Value elab_eval(Node *e, Scope *env);

/* ===================================================================== */
/* inst.c: instantiating layers                                            */
/* ===================================================================== */

/* A declaration's member of a kind (and name, unless NULL), or NULL. */
Node *inst_member(Node *decl, NodeKind kind, const char *name);
Node *inst_hparams_block(Node *decl);
Node *inst_call_fn(Node *decl); /* its `fn call`, or NULL */

/* A template: decl with the hparams of base (or none) and those of a
 * call (or none) bound, checked by name. */
Value inst_template(Tpl *base, Node *decl, Args *a);
/* An instance of a template at `path`: hparams bound and checked, fields
 * made (or, for a layer with a call, left to its first application). */
Inst *inst_instantiate(Tpl *t, const char *path, const int *order, int norder, Loc at, Inst *parent, Node *pf);
/* The fields of inst, their hparams evaluated in env (once). */
void inst_make_fields(Inst *inst, Scope *env);
/* Creates or checks inst's params and state, binding them in `members`. */
void inst_make_tensors(Inst *inst, Scope *env, Scope *members, Loc at);
/* Matches shape s against a call's pattern ([_, c, ...]), binding its
 * dims in env; 0 after reporting a mismatch (`what` names the value). */
int inst_match_pattern(Node *pat, Shape s, Scope *env, Loc at, const char *what);

/* ===================================================================== */
/* elab.c, again                                                           */
/* ===================================================================== */

/* Adds a node to the current graph, attributed to the source being
 * elaborated (the user's call, inside the standard library), and named
 * after the field being applied and its op ("stage1_0_bn1_batch_norm",
 * or "relu" in the model's own call) until a better name comes. */
int elab_add(IrNode n);
/* Reports `what` (a tensor, "'fc.weight'", or a node, "this matmul")
 * at loc if shape s holds more than IR_LIMIT_ELEMS elements (per example
 * if batched); 0 then. */
int elab_check_elems(Shape s, DType dt, Loc loc, const char *what);
/* For diag_set_user_site: an error inside the standard library is
 * reported at the user's call that reached it. */
Loc elab_user_site(Loc l);

/* Values, and nodes of the current graph, are made in all three files,
 * a hundred times over: these small makers are defined here, inline, so
 * that they keep their short names. */
static inline Value none(void)
{
    Value v;
    memset(&v, 0, sizeof v);
    return v;
}

static inline Value vint(long long i)
{
    Value v = none();
    v.k = VK_INT;
    v.i = i;
    return v;
}

static inline Value vfloat(double f)
{
    Value v = none();
    v.k = VK_FLOAT;
    v.f = f;
    return v;
}

static inline Value vbool(int b)
{
    Value v = none();
    v.k = VK_BOOL;
    v.i = b != 0;
    return v;
}

static inline Value vtensor(int t)
{
    Value v = none();
    v.k = VK_TENSOR;
    v.t = t;
    return v;
}

/* The current graph's nodes, and new f32 nodes in it (elab_add). */
static inline IrNode *node(int t) { return &E.g->nodes[t]; }
static inline Shape shape_of(int t) { return E.g->nodes[t].shape; }

static inline int mk(IrOp op, Shape s, int nin, const int *in) { return elab_add(ir_node(op, DT_F32, s, nin, in)); }

static inline int mk1(IrOp op, int a) { return mk(op, shape_of(a), 1, &a); }

/* A shape for a message, the batch dim written N. */
static inline const char *sstr(Shape s)
{
    char buf[160];
    ir_shape_str(s, "N", buf, sizeof buf);
    return ast_strndup(buf, strlen(buf));
}

/* ===================================================================== */
/* prims.c: the primitives                                                */
/* ===================================================================== */

typedef struct Prim Prim;

/* The primitive called `name`, or NULL. */
const Prim *prim_find(const char *name);
/* A unary elementwise primitive: usable as a value of type fn. */
int prim_is_unary(const Prim *p);
/* Appends every primitive's name to cands[n..cap), in the table's order
 * (which decides between equally close suggestions); returns the new n. */
int prim_names(const char **cands, int n, int cap);
Value prim_call(const Prim *p, Args *a);

/* Binds a call's arguments to parameter names given with SPEC("x",
 * "axis?"); see prims.c. */
#define SPEC(...) (const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))
int prim_bind_args(Args *a, const char *const *spec, int nspec, Value *out, Loc *locs);

/* Checks of a value where the language wants one kind: 0 after reporting
 * (or silently for poison), else the value in *out. */
int prim_get_int(Value v, Loc loc, const char *what, long long *out);
int prim_get_number(Value v, Loc loc, const char *what, double *out);
int prim_get_bool(Value v, Loc loc, const char *what, int *out);
int prim_need_tensor(Value v, Loc loc, const char *what);

/* Tensor operations of the operators: a number operand becomes a
 * constant (prim_operand), shapes broadcast (prim_binary), '@' is
 * NumPy's matmul. */
int prim_operand(Value v, Loc loc, int *t);
Value prim_binary(IrOp op, Value a, Value b, Loc loc);
Value prim_matmul(Value va, Value vb, Loc loc);

/* ===================================================================== */
/* model.c: model assembly                                                */
/* ===================================================================== */

/* A summary row for a field's first application in the inference graph
 * (or -1), completed with its result's shape and its nodes' FLOPs. */
int model_row_begin(Inst *inst);
void model_row_end(int row, Value result);

#endif
