/* onnx.h — the ONNX reader (onnx_*): the first stage of `nnc import`.
 *
 * onnx_load unpacks a model file with protobuf-c (bindings generated at
 * build time from onnx.proto) and converts it into the structs below, so
 * that nothing after this stage sees protobuf-c's types.  It checks what
 * the later stages rely on: the opset, that every value a node reads is
 * defined, a topological order, tensor data whose length matches its dims
 * and type, inputs whose only dynamic axis is the batch; and it bounds
 * every length, count and product, so that a hostile file gets one error
 * line, never a crash or an unbounded allocation.
 *
 * Everything of an OnnxModel lives in its own allocations, freed by
 * onnx_free.
 */
#ifndef NNC_ONNX_H
#define NNC_ONNX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The element types: TensorProto.DataType's codes. */
typedef enum OnnxType {
    ONNX_UNDEFINED = 0,
    ONNX_FLOAT = 1,
    ONNX_UINT8 = 2,
    ONNX_INT8 = 3,
    ONNX_UINT16 = 4,
    ONNX_INT16 = 5,
    ONNX_INT32 = 6,
    ONNX_INT64 = 7,
    ONNX_STRING = 8,
    ONNX_BOOL = 9,
    ONNX_FLOAT16 = 10,
    ONNX_DOUBLE = 11,
    ONNX_UINT32 = 12,
    ONNX_UINT64 = 13,
    ONNX_COMPLEX64 = 14,
    ONNX_COMPLEX128 = 15,
    ONNX_BFLOAT16 = 16,
} OnnxType;

enum {
    ONNX_OPSET_MIN = 13, /* the opsets of the default domain nnc imports */
    ONNX_OPSET_MAX = 17,
    ONNX_MAX_RANK = 16, /* dims of any tensor or value */
};
/* Elements of one tensor, and of one example of an input: the language's
 * limit (docs/language.md, "Limits"). */
#define ONNX_MAX_ELEMENTS INT64_C(2147483647)

/* "float", "int64", ..., or NULL for a code ONNX does not define. */
const char *onnx_type_name(int type);
/* 1 for the types whose data the reader converts to floats (float,
 * double, float16, bfloat16), 0 for those it converts to int64s (the
 * integers up to 32 bits, int64 and bool) and for the unsupported ones. */
int onnx_type_is_float(int type);
/* 1 for a type the reader converts (an initializer's or an input's). */
int onnx_type_supported(int type);

/* One axis of a value's shape: a size, a symbol (dim_param) or unknown. */
typedef struct OnnxDim {
    int64_t value;      /* >= 0; -1 when symbolic or unknown */
    const char *symbol; /* dim_param, or NULL */
} OnnxDim;

/* A graph input, output or value_info entry. */
typedef struct OnnxValue {
    const char *name;
    int type; /* OnnxType; ONNX_UNDEFINED when not a tensor or not given */
    int rank; /* -1 when the shape is not given */
    OnnxDim *dims;
} OnnxValue;

/* An initializer, or a tensor attribute.  Exactly one of f and i holds
 * the `count` elements, in row-major order: f for the float types, i for
 * the integer ones (bool as 0 or 1); neither when count is 0 or the type
 * is unsupported (only an attribute's tensor may be: `supported` says). */
typedef struct OnnxTensor {
    const char *name; /* "" for an attribute's tensor without one */
    int type;         /* OnnxType, as stored */
    int rank;
    int64_t *dims;
    int64_t count; /* the product of dims: 1 for a scalar */
    int supported; /* onnx_type_supported(type): data converted */
    float *f;
    int64_t *i;
} OnnxTensor;

typedef enum OnnxAttrKind {
    ONNX_ATTR_FLOAT,
    ONNX_ATTR_INT,
    ONNX_ATTR_STRING,
    ONNX_ATTR_TENSOR,
    ONNX_ATTR_GRAPH,
    ONNX_ATTR_FLOATS,
    ONNX_ATTR_INTS,
    ONNX_ATTR_STRINGS,
    ONNX_ATTR_TENSORS,
    ONNX_ATTR_GRAPHS,
    ONNX_ATTR_SPARSE_TENSOR,
    ONNX_ATTR_SPARSE_TENSORS,
    ONNX_ATTR_TYPE_PROTO,
    ONNX_ATTR_TYPE_PROTOS,
} OnnxAttrKind;

/* A node's attribute.  Graphs, sparse tensors and type protos are kept by
 * kind and count only: no op nnc maps takes one. */
typedef struct OnnxAttr {
    const char *name;
    OnnxAttrKind kind;
    float f;              /* FLOAT */
    int64_t i;            /* INT */
    const char *s;        /* STRING: bytes, NUL-terminated */
    size_t slen;          /*   their length */
    OnnxTensor *t;        /* TENSOR */
    int n;                /* the lists' length; a GRAPH's node count */
    float *floats;        /* FLOATS */
    int64_t *ints;        /* INTS */
    const char **strings; /* STRINGS, each NUL-terminated */
    const size_t *string_lens;
} OnnxAttr;

typedef struct OnnxNode {
    const char *op_type;
    const char *domain; /* "" for the default domain ("ai.onnx" too) */
    const char *name;   /* "" when the file gives none */
    int index;          /* its position in the file's node list */
    int64_t opset;      /* the version its domain is imported at */
    int ninputs, noutputs;
    const char **inputs; /* "" for an omitted optional input */
    const char **outputs;
    int nattrs;
    OnnxAttr *attrs;
} OnnxNode;

typedef struct OnnxOpset {
    const char *domain; /* "" for the default domain */
    int64_t version;
} OnnxOpset;

typedef struct OnnxModel {
    const char *path;
    int64_t ir_version;
    const char *producer, *producer_version, *graph_name;
    int64_t opset; /* the default domain's: ONNX_OPSET_MIN..ONNX_OPSET_MAX */
    int nopsets;
    OnnxOpset *opsets;
    int ninputs; /* the graph's inputs, without those that are initializers */
    OnnxValue *inputs;
    int noutputs;
    OnnxValue *outputs;
    int nvalue_infos;
    OnnxValue *value_infos;
    int ninits;
    OnnxTensor *inits;
    int nnodes;
    OnnxNode *nodes;          /* in a topological order: the file's when it is one */
    struct OnnxBlock *blocks; /* every allocation, for onnx_free */
} OnnxModel;

typedef enum OnnxStatus {
    ONNX_OK,
    ONNX_ERR_READ,      /* the file could not be read: exit 1 */
    ONNX_ERR_MALFORMED, /* not valid ONNX, or not importable: exit 2 */
} OnnxStatus;

/* Reads and checks the model at `path`.  On failure prints one line,
 * `nnc: error: PATH: problem` (through diag.c), sets *status and returns
 * NULL. */
OnnxModel *onnx_load(const char *path, OnnxStatus *status);
void onnx_free(OnnxModel *m);

/* --dump=onnx: opsets, inputs, outputs, initializers, the nodes in order
 * with their attributes, value_info shapes. */
void onnx_dump(const OnnxModel *m, FILE *out);

/* 1 when the import maps `op_type` of `domain` at `opset` to the language
 * (onnx_ops.def). */
int onnx_op_supported(const char *domain, const char *op_type, int64_t opset);
/* The first node, in the model's order, whose op is not supported; NULL
 * when there is none. */
const OnnxNode *onnx_first_unsupported(const OnnxModel *m);
/* Reports the error of node n's op being unsupported: `nnc: error: PATH:
 * unsupported op OP (DOMAIN opset V) at NODE`. */
void onnx_report_unsupported(const OnnxModel *m, const OnnxNode *n);
/* How messages name a node: node 'name' (Op), or node #index (Op, output
 * 'y') when it has no name.  Writes into buf (cap bytes) and returns it. */
const char *onnx_node_label(const OnnxNode *n, char *buf, size_t cap);
/* Writes s quoted for a message or the dump ('a\nb' -> 'a\x0ab'), at most
 * `max` bytes of it (then "..."), into buf (cap bytes); returns buf. */
const char *onnx_quote(const char *s, size_t len, size_t max, char *buf, size_t cap);

/* The file as messages name it, `nnc: error: PATH: ...`: escaped as
 * onnx_quote does, without the quotes, cut at 320 bytes. */
const char *onnx_path_str(const char *path, char *buf, size_t cap);

/* The import's names (docs/nnc.1, IMPORT): NAME from the file's stem in
 * snake_case ("ResNet18.onnx" -> "res_net18"), and the model's name,
 * NAME in CamelCase ("res_net18" -> "ResNet18").  Both malloc'd. */
char *onnx_default_name(const char *path);
char *onnx_model_name(const char *name);
/* 1 when `name` may be NAME: a lower-case letter, then lower-case letters,
 * digits and '_'. */
int onnx_name_ok(const char *name);

#endif
