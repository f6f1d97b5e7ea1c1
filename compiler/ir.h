/* ir.h — the graph IR of primitive tensor ops (ir_*), and the model-level
 * tables that the later stages share (params, state, inputs).
 *
 * A Graph is a DAG in topological order: a node only refers to nodes with
 * smaller ids.  Every node has a static shape in which at most one dim is
 * the batch: that dim's size is `d[bd] * n` at run time, where n is the
 * batch size of the call.  Elaboration (elab.c) builds one graph per entry
 * point; autodiff (grad.c) appends the backward nodes to the training
 * graph; plan.c decides what is materialized and where; emit.c prints C.
 */
#ifndef NNC_IR_H
#define NNC_IR_H

#include <stdint.h>
#include <stdio.h>

#include "ast.h"

#define IR_MAXD 8

/* Sizes (docs/language.md, "Limits"): one tensor holds at most
 * IR_LIMIT_ELEMS elements, per example when batched (BLAS takes int sizes;
 * elaboration checks every tensor it makes, and <p>_init checks
 * max_batch times them); the params, the state, and the arena's static
 * part, its part per example and the kernels' work hold at most
 * IR_LIMIT_TOTAL floats each (4 TiB in f32: more than any machine will
 * allocate, far less than overflows int64 in any sum of them). */
#define IR_LIMIT_ELEMS 2147483647LL
#define IR_LIMIT_TOTAL (1LL << 40)

typedef struct Shape {
    int nd;
    int64_t d[IR_MAXD];
    int bd; /* index of the batch dim, or -1 */
} Shape;

typedef enum DType { DT_F32, DT_I32 } DType;

/* The ops, one row each in ops.def: what each reads and writes is said
 * there, beside its name, autodiff rule and emitter. */
typedef enum IrOp {
#define OP(e, ...) IR_##e,
#include "ops.def"
#undef OP
    IR_NUM_OPS
} IrOp;

/* selu's constants, PyTorch's (torch.nn.SELU); ONNX's Selu defaults are
 * their float roundings */
#define NNC_SELU_ALPHA 1.6732632423543772848170429916717
#define NNC_SELU_SCALE 1.0507009873554804934193349852946

typedef enum OpClass { OC_LEAF, OC_UNARY, OC_BINARY, OC_TERNARY, OC_OTHER } OpClass;

/* How a node is computed, where there is a choice (kernel.c). */
typedef enum KernelKind {
    KERNEL_LOOPS,     /* the generated code of its op (a matmul: a GEMM) */
    KERNEL_GEMM,      /* convolution: the image is the GEMM operand (1x1) */
    KERNEL_DIRECT,    /* convolution: the runtime's direct kernels, or the columns */
    KERNEL_COLUMNS,   /* convolution: im2col and a GEMM per example */
    KERNEL_VECTOR,    /* the runtime's vector kernel of the op (pool.c, bn.c) */
    KERNEL_TILES,     /* max-pool backward over windows that tile the image */
    KERNEL_CAUSAL_NT, /* batched A Bᵀ on and below the diagonal (attn.c) */
    KERNEL_LOWER_NN,  /* batched A B with A lower triangular (attn.c) */
    KERNEL_LOWER_TN,  /* batched Aᵀ B with A lower triangular (attn.c) */
    KERNEL_FULL_NT,   /* batched A Bᵀ of a [T, T] result, whole (attn.c) */
    KERNEL_FULL_NN,   /* batched A B with A [T, T] (attn.c) */
    KERNEL_FULL_TN,   /* batched Aᵀ B with A [T, T] (attn.c) */
    KERNEL_CONV_GEN,  /* convolution: the general kernel (conv_cols.c; ir_conv_general) */
} KernelKind;

typedef struct IrNode {
    IrOp op;
    DType dt;
    Shape shape;
    int nin;
    int *in; /* operand node ids */
    double fval;
    double fval2; /* a second constant: clip's upper bound, hard_sigmoid's beta (ops.def) */
    int ival, ival2;
    int axis;
    uint32_t axes; /* reductions: bit i set = reduce dim i */
    int keepdim;
    int ta, tb;         /* matmul transposes */
    double alpha;       /* matmul: alpha * op(A) @ op(B) (1 unless plan.c folds a scale);
                             * softmax, softmax_bwd: scale of the input / of dx */
    int causal;         /* softmax over [..., T, T]: row i reads only [0, i] (plan.c
                             * folds a causal_mask into it); softmax_bwd: the same rows;
                             * matmul (plan.c, flags): 1 = only causal softmaxes read the
                             * [T, T] result (its lower triangle), 2 = in[0] is a causal
                             * softmax or its gradient (zero above the diagonal) */
    int hperm;          /* matmul (plan.c fold_head_permutes): bit k < 2, in[k] is a
                             * 4-D [s0, s1, s2, s3] read as [s0, s2, s1, s3]; bit 2, the
                             * result [o0, o1, o2, o3] is stored as [o0, o2, o1, o3] */
    int64_t start, end; /* slice / pad */
    int perm[IR_MAXD];
    int kh, kw, stride, pad; /* im2col and pools */
    /* convolutions: the columns' stride and padding (stride and pad are
     * the rows'), dilation and groups; all set wherever a convolution is
     * made (prims.c, grad.c), and a node with any of them not the common
     * case's takes the general kernel (ir_conv_general) */
    int stride_w, pad_w, dil_h, dil_w, groups;
    int exclude_pad;  /* avg pools: divide by the window's in-bounds count (count_include_pad false) */
    Loc loc;          /* source span it came from */
    const char *what; /* short source text for comments: "fc1(x)" */
    const char *name; /* what the generated C calls it: "stage1_0_conv1", "d_fc1",
                             * "x_in" (elab.c, model.c, grad.c); the emitter makes it a
                             * unique C identifier */
    int backward;     /* 1 if created by autodiff */
    int global;       /* a reduction over the batch that the emitter completes
                             * across processes (dist.c) */
    /* filled by kernel.c */
    KernelKind kernel;
    int64_t work; /* floats of work memory it needs while it runs */
    /* filled by plan.c */
    int uses;  /* consumers in the graph */
    int fused; /* 1: computed inline inside its only consumer; 2: computed in the
                             * loop of node `home` (its first reader) and stored there */
    int home;
    int buf; /* storage: index into Graph.bufs, or -1 */
    /* plan_groups: >= 0, the first node of its group, whose one loop over
     * the [T, L] matrices of attention computes every member's matrix in
     * turn; -1 none.  local: read only inside its group, one matrix at a
     * time, so it lives in that loop (a per-thread array), not the arena */
    int group, local;
} IrNode;

typedef struct Buffer {
    int64_t size; /* elements: size, times n when batched */
    int batched;
    int64_t off;     /* in floats, within its region */
    int first, last; /* live range in node ids */
    int param_grad;  /* >= 0: this is the grad of that param (lives in m->grads) */
} Buffer;

typedef struct Graph {
    const char *name; /* "train", "infer", "eval" */
    IrNode *nodes;
    int n, cap;
    int training;
    int output;   /* the model output node, or -1 */
    int loss;     /* scalar loss node, or -1 */
    int *metrics; /* one node per metric */
    int nmetrics;
    int *update_state, *update_value; /* `update` statements */
    int nupdates;
    int *count_state;    /* `update c = c + k` of i64 counters: state index, */
    long long *count_by; /* and k */
    int ncounts;
    int *summary_value; /* summaries (scalars) */
    const char **summary_name;
    int nsummaries;
    int fwd_end;      /* nodes [0, fwd_end) are the forward pass */
    int core_end;     /* infer: nodes [0, core_end) make the output (forward), the
                             * rest the loss and metrics (eval); others: -1 */
    int *param_grad;  /* per param: node holding d loss/d param, or -1 */
    char *dist_grads; /* per param: 1 if its gradient is summed across processes
                             * at the end of the backward pass (dist.c) */
    Buffer *bufs;
    int nbufs, bufcap;
    int64_t static_size, batched_size; /* arena floats: static + batched * max_batch */
    int64_t work_max;                  /* floats of the largest kernel work: one thread's (kernel.c) */
} Graph;

/* Whether convolution n is outside what the direct kernels and the
 * columns take (groups, dilation, or strides or padding that differ
 * between rows and columns): runtime/conv_cols.c's general kernel. */
static inline int ir_conv_general(const IrNode *n)
{
    return n->groups > 1 || n->dil_h > 1 || n->dil_w > 1 || n->stride_w != n->stride || n->pad_w != n->pad;
}

/* Whether pool n (x the image, o the pooled side) is a square window with
 * equal strides and padding, no dilation, and no window past the padded
 * image (ceil_mode's last): the loops and kernels of the plain case. */
static inline int ir_pool_plain(const IrNode *n, Shape x, Shape o)
{
    return n->kh == n->kw && n->stride_w == n->stride && n->pad_w == n->pad && n->dil_h <= 1 && n->dil_w <= 1 &&
        (o.d[2] - 1) * n->stride + n->kh <= x.d[2] + 2 * n->pad &&
        (o.d[3] - 1) * n->stride + n->kw <= x.d[3] + 2 * n->pad;
}

/* Initializers; ORDER nnc_init_kind (runtime) and elab.c's init_names. */
typedef enum InitKind {
    INIT_ZEROS,
    INIT_ONES,
    INIT_CONSTANT,
    INIT_NORMAL,
    INIT_UNIFORM,
    INIT_GLOROT_UNIFORM,
    INIT_GLOROT_NORMAL,
    INIT_HE_UNIFORM,
    INIT_HE_NORMAL,
} InitKind;

/* A param or state tensor of the model (the leaves that live in the
 * generated structs).  `path` is the dotted state_dict name. */
typedef struct Tensor {
    const char *path;
    const char **parts;  /* path split at '.', npart entries */
    const char **cparts; /* the parts as C member names (cname_of; "0" stays) */
    int npart;
    int *order;  /* declaration-order key of each part, for layout */
    Shape shape; /* bd == -1 */
    int state;   /* 0 param, 1 state */
    int counter; /* an i64 scalar state: 8 bytes, aligned, in 8 / sizeof(real) slots */
    int frozen;
    InitKind init;
    double init_a, init_b;
    const char *from;        /* `from` file, or NULL */
    const char *from_prefix; /* the field path the file's names are relative to */
    const char *doc;
    int64_t offset; /* floats into params or state (set by sort_tensors) */
    Loc loc;
} Tensor;

typedef struct IoDecl {
    const char *name;
    const char *cname; /* the C parameter's name (cname_param) */
    Loc loc;
    DType dt;
    Shape shape;   /* bd is 0 when batched */
    int32_t limit; /* i32 ids: valid range [0, limit), 0 unchecked */
    int ignore_ok; /* -100 allowed (cross_entropy labels) */
} IoDecl;

typedef struct HparamVal {
    const char *name;
    const char *cname; /* the header's enum constant (cname_const) */
    Loc loc;
    long long ival; /* int hparams only are exported as enums */
    int is_int;
    const char *doc;
} HparamVal;

/* One row of `nnc --summary` and one box of `--emit=dot`: a field of the
 * model (or a field of a field), at its first application. */
typedef struct SummaryRow {
    const char *path;  /* "blocks.1.fc" */
    const char *layer; /* "Dense" */
    const char *doc;   /* the field's `///` comment */
    int depth;         /* 1 for the model's own fields */
    Shape out;         /* result shape (bd set when batched) */
    int64_t params;    /* floats of the params below it */
    double flops;      /* forward FLOPs per example, its sub-fields included */
    int first, last;   /* the inference graph's nodes it made: [first, last) */
} SummaryRow;

typedef struct Model {
    const char *name;   /* "Digits" */
    const char *prefix; /* "digits" */
    const char *source; /* the .nn path as given */
    const char *doc;
    HparamVal *hparams;
    int nhparams;
    Tensor *params; /* sorted in declaration order by model.c */
    int nparams;
    Tensor *state;
    int nstate;
    int64_t num_params, num_state;
    IoDecl *inputs, *labels;
    int ninputs, nlabels;
    const char **metric_names;
    int nmetrics;
    int has_loss;
    int uses_rng;
    int fixed_shape;             /* no input or label has a batch dim: each call is one sample */
    Graph *train, *infer, *eval; /* train/eval NULL without loss */
    double flops;                /* forward FLOPs per example */
    const char *dist_refuse;     /* "file:line:col: op ...": why the model cannot
                                  * run on several processes (dist.c), or NULL */
    SummaryRow *rows;            /* fields in pre-order (inference graph) */
    int nrows;
} Model;

/* ---- shapes ---------------------------------------------------------------- */
Shape ir_shape(int nd, const int64_t *d, int bd);
int64_t ir_numel(Shape s); /* static elements (times n if batched); INT64_MAX if more */
int ir_shape_eq(Shape a, Shape b);
/* The shape matmul n reads as operand k: in[k]'s, with dims 1 and 2
 * swapped where plan.c folded a head permute into it (hperm bit k) */
Shape ir_matmul_operand(const Graph *g, const IrNode *n, int k);
/* "[N, 64]" into buf (N is the batch name given). */
const char *ir_shape_str(Shape s, const char *batch, char *buf, size_t cap);
/* NumPy broadcasting of a and b; 0 and *out on success, -1 if incompatible. */
int ir_broadcast(Shape a, Shape b, Shape *out);

/* ---- graph building (shapes are checked by the caller, prims.c) ------------- */
Graph *ir_graph_new(const char *name, int training);
int ir_add(Graph *g, IrNode node); /* copies; returns the id */
IrNode ir_node(IrOp op, DType dt, Shape shape, int nin, const int *in);
const char *ir_op_name(IrOp op);
OpClass ir_op_class(IrOp op);
/* Operands an op is built with (ops.def), or -1 for any number. */
int ir_op_arity(IrOp op);
/* Floating-point operations of node i per example (a multiply-add is 2;
 * moves such as reshape, permute, concat count 0). */
double ir_node_flops(const Graph *g, int i);
int ir_is_elementwise(IrOp op);
/* softmax / softmax_bwd over a contiguous last dim that is not the batch
 * dim: emitted row by row with a scale and a causal mask (plan.c folds
 * those only into such nodes) */
int ir_softmax_by_rows(const IrNode *n);

/* resize (ops.def RESIZE): modes, coordinate transformations and nearest
 * roundings, in the order of ir_resize_names' lists (ONNX's names) */
enum { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC };
enum {
    RESIZE_HALF_PIXEL,
    RESIZE_PYTORCH_HALF_PIXEL,
    RESIZE_ALIGN_CORNERS,
    RESIZE_ASYMMETRIC,
    RESIZE_TF_HALF_PIXEL_FOR_NN
};
enum { RESIZE_ROUND_PREFER_FLOOR, RESIZE_ROUND_PREFER_CEIL, RESIZE_FLOOR, RESIZE_CEIL };
extern const char *const ir_resize_modes[], *const ir_resize_coords[], *const ir_resize_roundings[];
/* Taps per output position of a resize node along its axis (1 nearest,
 * 2 linear, 4 cubic): output i reads input idx[i * taps + k] (in [0, in))
 * with weight w[i * taps + k], for `in` inputs and `out` outputs.  Returns
 * taps; idx and w hold out * 4 entries. */
int ir_resize_taps(const IrNode *n, int64_t in, int64_t out, int64_t *idx, double *w);

/* ---- dumps ------------------------------------------------------------------- */
void ir_dump(const Model *m, const Graph *g, FILE *out, int backward_only);

#endif
