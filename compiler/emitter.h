/* emitter.h — what the C emission's files share (emit_*): the emitter
 * context and the functions one file prints with and another calls.
 * main.c sees only emit.h.
 *
 * Every printing function takes the context first: the model and the
 * options, the stream being written, and the state of the function and
 * of the loop block being printed.  P(e, ...) prints to e->out.  Strings
 * the functions return (types, sizes, expressions) are allocated and
 * never freed: one model's output is small.
 */
#ifndef NNC_EMITTER_H
#define NNC_EMITTER_H

#include <stdio.h>

#include "emit.h"

/* Everything the printing functions share.  One per emit_model call. */
/* A run of m->grads summed across the processes as one: floats [lo, hi),
 * started after node fin of the backward pass. */
typedef struct Bucket {
    int64_t lo, hi;
    int fin, started;
} Bucket;

typedef struct Emitter {
    const Model *m;
    const EmitOptions *opt;
    const char *real; /* the real type: "float", or "double" with --precision=f64 */
    FILE *out;        /* the stream being written */
    /* the function being printed (begin_body .. end_body) */
    const Graph *g;
    char *used;             /* per node: its pointer is referenced in this function */
    char *merged;           /* per node: already computed along with an earlier one */
    const char **names;     /* per node: its identifier in this function (emit_names) */
    int in_backward;        /* inputs come from m->in_ (saved by train_forward) */
    int mask_seq;           /* dropout masks emitted in this pass (their keys) */
    struct Bucket *buckets; /* the backward pass's gradient buckets (emit_fn.c) */
    int nbuckets, in_flight;
    FILE *file_out;  /* the file's stream while the body goes to memory */
    FILE *pass_out;  /* the file's stream while a pass goes to memory (emit_fn.c) */
    char *pass_text; /* a pass's code, printed once per instruction set */
    size_t pass_len;
    char *body_text;
    size_t body_len;
    /* --check-numerics: the pass's name in the message ("forward") and the
     * statement that ends it when a check fails ("return NAN;") */
    const char *nf_pass, *nf_fail;
    /* the loop block being printed (emit_loop_begin .. emit_loop_end) */
    int loop_seq;     /* its number (the scope of its values' names) */
    char *loop_used;  /* roots it reads or writes */
    char *loop_wr;    /* ... and the ones it writes besides its own (fused = 2) */
    FILE *loop_saved; /* the stream to print the block to */
    char *loop_text;
    size_t loop_len;
} Emitter;

#define P(e, ...) fprintf((e)->out, __VA_ARGS__)

/* ---- emit.c: strings, literals, sizes, pointers, comments ------------------------ */

/* A new string, printf-style. */
char *emit_fmt(const char *f, ...);
/* A libm function for the real type: "expf" or "exp". */
const char *emit_libm(Emitter *e, const char *name);
/* A literal of the real type: "0.5f", "NAN", "-INFINITY". */
const char *emit_lit(Emitter *e, double v);
/* tanh, and exp where the argument is <= 0: the inline ones in float. */
const char *emit_tanh_fn(Emitter *e);
const char *emit_exp_fn(Emitter *e);
/* relu of the expression a (0 for NaN). */
const char *emit_relu_of(Emitter *e, const char *a);
/* cblas_sgemm or cblas_dgemm. */
const char *emit_gemm(Emitter *e);
/* The opening of a GEMM's call, up to its transposes: cblas_sgemm's
 * ("cblas_sgemm(CblasRowMajor, "), or nnc_sgemm's, on the threads
 * (runtime/threads.c), where a GEMM of `flops` (per example if batched)
 * can gain from them. */
const char *emit_gemm_call(Emitter *e, double flops, int batched);
/* 1 where that is nnc_sgemm's, on the threads */
int emit_gemm_splits(double flops, int batched);
/* Before k perfectly nested loops over s whose iterations write disjoint
 * outputs, `per` operations per element: the pragma that runs them on the
 * threads, if they are large enough to gain (a condition on the batch
 * where that decides), else nothing.  The shapes are static, so this is
 * decided here (nnc_runtime.h: NNC_PARALLEL_FOR). */
void emit_parallel(Emitter *e, const char *ind, int k, Shape s, double per);
/* the same for a loop whose work (element operations) is the C
 * expression `work`, known only at run time */
void emit_parallel_work(Emitter *e, const char *ind, int k, const char *work);
/* Dim i of s, the element count, the product of dims [a, b), the
 * row-major stride of dim i: constants, or `k * n` with the batch. */
const char *emit_dim(Shape s, int i);
const char *emit_gdim(Shape s, int i);
const char *emit_gnumel(Shape s);
const char *emit_numel(Shape s);
const char *emit_prod(Shape s, int a, int b);
const char *emit_stride(Shape s, int i);
/* Node t of the graph being printed. */
const IrNode *emit_nd(Emitter *e, int t);
/* The pointer to t's storage (`fc1`, or its restrict copy `r_fc1` in a
 * loop block); marks it used.  In the body it is a mark that emit_names
 * replaces with the identifier. */
const char *emit_ref(Emitter *e, int t);
/* The per-thread array of a group's local node t (plan_groups), a mark
 * as emit_ref's, but not declared at the function's top. */
const char *emit_local(Emitter *e, int t);
/* The local holding t's value in a fused loop (`v_fc1`), a mark too. */
const char *emit_value(Emitter *e, int t);
/* A scalar operand: a constant inlined, anything else read at [0]. */
const char *emit_const(Emitter *e, const IrNode *n);
const char *emit_scalar(Emitter *e, int t);
/* A loop block: what is printed in between goes inside a block that
 * declares `restrict` copies of the pointers it uses. */
void emit_loop_begin(Emitter *e);
void emit_loop_end(Emitter *e, int written);
/* Once a function's body is printed (e->body_text): each node it refers
 * to gets an identifier, its name made unique in node order (`h`, `h_2`)
 * and free of what else the function names (keywords, parameters, the
 * locals of its blocks, the functions and macros it calls; the restrict
 * copy `r_h` and the value `v_h` too), and the body gets the identifiers. */
void emit_names(Emitter *e);
/* The declaration of used pointer r at the top of a function. */
void emit_declare(Emitter *e, int r);
/* The comment above a node's code: source line and what it computes. */
void emit_comment(Emitter *e, const IrNode *n);
/* The same at indentation `ind` (a group's members, inside its loop). */
void emit_comment_in(Emitter *e, const IrNode *n, const char *ind);
/* `S` upper-cased, and the first line of a generated file. */
const char *emit_upper(const char *s);
void emit_banner(Emitter *e, const char *what);

/* ---- emit_loops.c: elementwise loops, reductions, lane sums ---------------------- */

/* The offset of an operand of shape l broadcast against the first nl dims
 * of the loop shape s (index variables i0..), in units of `unit`. */
const char *emit_bcast_offset(Shape s, int nl, Shape l, int ll, const char *unit);
/* A sum over k in [0, len) of expr in 16 lanes, then `store` the total;
 * emit_lanes_sum declares `name` = the sum. */
void emit_lanes_store(Emitter *e, const char *ind, const char *total, const char *store, const char *len,
                      const char *expr);
void emit_lanes_sum(Emitter *e, const char *ind, const char *name, const char *len, const char *expr);
void emit_lanes_max(Emitter *e, const char *ind, const char *name, const char *len, const char *expr);
/* Column sums of rows in blocks of columns (emit_loops.c): the block
 * width, and the sums of one block [k0, k1) */
int emit_sum_width(Emitter *e);
void emit_column_sums(Emitter *e, const char *ind, const char *lo, const char *hi, const char *setup, int n,
                      const char *const *dst, const char *const *expr);
void emit_elementwise(Emitter *e, int t);
void emit_reduce(Emitter *e, int t);

/* ---- emit_ops.c: the other ops, and the per-node dispatch ------------------------ */

void emit_rng_mask(Emitter *e, int t);
void emit_dist_op(Emitter *e, int t);
void emit_matmul(Emitter *e, int t);
/* A group's one loop over the matrices (plan_groups), t its first member */
void emit_group(Emitter *e, int t);
void emit_permute(Emitter *e, int t);
void emit_concat(Emitter *e, int t);
void emit_slice(Emitter *e, int t);
void emit_pad(Emitter *e, int t);
void emit_pad_reflect(Emitter *e, int t);
void emit_rowop(Emitter *e, int t);
void emit_loss(Emitter *e, int t);
void emit_seq_op(Emitter *e, int t);
/* The code of node t of the function being printed (nothing for a fused
 * or merged node, a leaf or a view). */
void emit_node(Emitter *e, int t);
/* 1 when op prints code of its own (ops.def's emit column is set). */
int emit_op_prints(IrOp op);

/* ---- emit_vision.c: convolution, pooling, batch norm ----------------------------- */

void emit_vision_op(Emitter *e, int t);
void emit_resize(Emitter *e, int t);
void emit_bn_op(Emitter *e, int t);
void emit_conv_op(Emitter *e, int t);
/* A max-pool backward done by tiles (it needs the nnc_keep helper). */

/* ---- emit_fn.c: the model's C file ----------------------------------------------- */

void emit_source(Emitter *e, const char *hname, const char *fname);

/* ---- emit_header.c: the header --------------------------------------------------- */

void emit_header(Emitter *e, const char *fname);
/* An input's parameter, `const float (*x)[8][8]`; with name "", its type. */
const char *emit_io_decl(Emitter *e, const IoDecl *io, int is_const, const char *name);
/* The model's C type (its prefix), and the API's signatures. */
const char *emit_model_type(Emitter *e);
/* ", const float (*x)[64]": the inputs (and labels) as parameters */
const char *emit_sig_inputs(Emitter *e, int labels);
const char *emit_sig_forward(Emitter *e);
const char *emit_sig_train(Emitter *e);
const char *emit_sig_eval(Emitter *e);

/* ---- emit_driver.c: the driver --------------------------------------------------- */

void emit_driver(Emitter *e, const char *hname, const char *fname);

#endif
