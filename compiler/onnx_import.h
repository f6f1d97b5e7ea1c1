/* onnx_import.h — the stages of `nnc import` after the reader (onnx.h):
 *
 *     fold (onnx_fold.c, fold_*): the shape of every value, with the batch
 *         axis as a symbol N, and the value of every constant, so that the
 *         shape arithmetic an exporter writes (Shape, Gather, Concat,
 *         Unsqueeze, ConstantOfShape, Cast, ...) is evaluated here;
 *     lift (onnx_lift.c, lift_*): the nodes that remain as the language's
 *         syntax tree, nested by the initializers' module names, with the
 *         standard library's layers where a run of nodes is one; and the
 *         weights under the names the generated code gives them.
 *
 * The output of lift is the same tree the parser builds (ast.h), written
 * as source by source.c and checked by compiling it before anything is
 * written.
 */
#ifndef NNC_ONNX_IMPORT_H
#define NNC_ONNX_IMPORT_H

#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "onnx.h"

/* One axis: c * N^b, where N is the batch size (b is 0 or 1). */
typedef struct FDim {
    int64_t c;
    int b;
} FDim;

typedef enum FoldKind {
    FV_INPUT, /* a graph input */
    FV_PARAM, /* a float initializer: a param or a state of the model */
    FV_CONST, /* known at import: a Constant, an integer initializer, a folded node */
    FV_NODE,  /* computed by a node at run time */
} FoldKind;

typedef struct FoldVal {
    const char *name;
    FoldKind kind;
    int type; /* OnnxType of the elements (FLOAT for the float types) */
    int rank;
    FDim dims[ONNX_MAX_RANK];
    int64_t count; /* FV_CONST, FV_PARAM: the number of elements */
    double *f;     /* FV_CONST of a float type: the elements */
    FDim *i;       /* FV_CONST of an integer or bool type: the elements, c * N^b */
    int input;     /* FV_INPUT: the index in OnnxModel.inputs */
    int init;      /* FV_PARAM, or a const from one: the index in OnnxModel.inits; else -1 */
    int node;      /* the node that computes it, or -1 */
    int uses;      /* reads by nodes that are not folded, and graph outputs */
} FoldVal;

typedef struct Fold {
    const OnnxModel *m;
    int nvals;
    FoldVal *vals;
    int *node_out;         /* per node: the index of its first output in vals */
    unsigned char *folded; /* per node: 1 when every output is FV_CONST */
    struct FoldMap *map;
} Fold;

typedef enum FoldStatus {
    FOLD_OK,
    FOLD_UNSUPPORTED, /* an op's attributes or inputs nnc cannot map: exit 1 */
    FOLD_MALFORMED,   /* shapes that do not agree, or that are dynamic beyond the batch: exit 2 */
} FoldStatus;

/* The one line of an import error: `nnc: error: PATH: unsupported WHAT at
 * NODE` (FOLD_UNSUPPORTED), `PATH: NODE: WHAT`, or `PATH: WHAT` without a
 * node. */
void fold_report(const OnnxModel *m, const OnnxNode *n, FoldStatus st, const char *msg);
/* Shapes and constants of every value of m; NULL after reporting one
 * error line. */
Fold *fold_run(const OnnxModel *m, FoldStatus *status);
/* The value named `name`; NULL for "" (an omitted optional input). */
FoldVal *fold_val(const Fold *f, const char *name);
/* --dump=fold: every value with its kind, type, shape and, for small
 * constants, its elements. */
void fold_dump(const Fold *f, FILE *out);
/* Attribute lookups of a node: the attribute, or NULL. */
const OnnxAttr *fold_attr(const OnnxNode *n, const char *name);
int64_t fold_attr_int(const OnnxNode *n, const char *name, int64_t def);
float fold_attr_float(const OnnxNode *n, const char *name, float def);
const char *fold_attr_str(const OnnxNode *n, const char *name, const char *def);
/* Slice's start and end made positive and clamped to an axis of `len`
 * for `step` (ONNX's rule). */
void fold_clamp_slice(int64_t len, int64_t step, int64_t *b, int64_t *e);
/* The strides, dilations and begin and end pads of a Conv, ConvTranspose
 * or pool node n over x's nsp spatial axes, its kernel k, with auto_pad
 * applied; -1 for an auto_pad ONNX does not define.  The attributes'
 * lengths are fold's to check. */
int fold_window_pads(const OnnxNode *n, const FoldVal *x, int nsp, const int64_t *k, int64_t *st, int64_t *di,
                     int64_t *pb, int64_t *pe);
/* "3", "N", "4 * N", for messages */
const char *fold_dim_str(FDim d, char *buf, size_t cap);
/* "[N, 3, 4]", for messages */
const char *fold_shape_str(const FoldVal *v, char *buf, size_t cap);

/* The imported program, ready to print. */
typedef struct LiftTensor {
    const char *name; /* the checkpoint's name */
    int i64;          /* an I64 tensor (BatchNorm's num_batches_tracked) */
    int rank;
    int64_t dims[ONNX_MAX_RANK];
    int64_t count;
    const float *f; /* count elements (NULL when i64: zeros) */
} LiftTensor;

typedef struct Lift {
    Node *file; /* ND_FILE: the layers, then the model */
    int ntensors;
    LiftTensor *tensors;
    int flat; /* the module names did not nest: one flat model */
} Lift;

typedef enum LiftLoss { LIFT_LOSS_NONE, LIFT_LOSS_CROSS_ENTROPY, LIFT_LOSS_MSE } LiftLoss;

/* Builds the tree of model `model_name` (CamelCase); NULL after reporting
 * one error line (*status as fold's). */
Lift *lift_run(const Fold *f, const char *model_name, LiftLoss loss, FoldStatus *status);
/* The weights as a safetensors file, in memory (malloc'd). */
char *lift_safetensors(const Lift *l, size_t *len);
/* The last check before anything is written: `text` (len bytes, the
 * lifted tree as source.c prints it), as the file `path`, parses and
 * elaborates (from memory: nothing is read from the disk).  0 when it
 * compiles; else its diagnostics have been reported and it returns -1.
 * Both `nnc import` (main.c) and the fuzz target call it. */
int lift_compiles(const char *path, const char *text, size_t len);

#endif
