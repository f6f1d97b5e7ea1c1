/* onnx.c — the ONNX reader (onnx_*): a model file unpacked by protobuf-c,
 * checked, and converted into onnx.h's structs.
 *
 * The file is hostile until proven otherwise.  Before protobuf-c sees it,
 * a walk over the wire format (scan) bounds the nesting of messages,
 * because protobuf-c's unpacker recurses once per level and a 1.6 MB file
 * of 200,000 nested TypeProtos overflows the stack.  protobuf-c then
 * allocates through a budget (256 MiB plus ten times the file's size), so
 * that a small file cannot ask for gigabytes: a repeated field costs
 * protobuf-c a pointer and a struct per element it counted, from as
 * little as two bytes of input each.  The conversion that follows checks
 * every count, dim and product before it allocates, and every length
 * against the dims and the type; tensor data is read byte by byte as
 * little-endian.  The first problem found is the one reported, in one
 * line, and the model is dropped.
 */
#include "onnx.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "onnx.pb-c.h"

enum {
    MAX_DEPTH = 64,   /* nested messages; ONNX's deepest are types and subgraphs */
    MAX_OPSETS = 64,  /* opset imports: models have one or two */
    NAME_SHOWN = 80,  /* bytes of a name a message shows */
    DUMP_VALUES = 16, /* a tensor of at most this many elements is dumped whole */
    DUMP_HEAD = 4,    /* of a larger one, its first elements */
    QUOTE_RING = 8,   /* names one message may quote */
    QUOTE_CAP = 4 * NAME_SHOWN + 16,
};
#define MAX_FILE ((size_t)INT32_MAX) /* protobuf's own limit: 2 GiB - 1 */
#define BASE_BUDGET ((size_t)256 << 20)
#define BUDGET_PER_BYTE 10

/* Every allocation of a model: onnx_free walks the list. */
struct OnnxBlock {
    struct OnnxBlock *next;
    max_align_t data[];
};

typedef struct Ctx {
    const char *path;
    OnnxModel *m;
    size_t budget, used; /* bytes protobuf-c and the conversion may take, and took */
    int over;            /* an allocation was refused for the budget */
} Ctx;

/* ---- messages ------------------------------------------------------------ */

/* s escaped into buf: control bytes, DEL, '\\' and '\'' as escapes, at
 * most max bytes of s (then "..."). */
static void escape(const char *s, size_t len, size_t max, char *buf, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 8 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i == max) {
            memcpy(buf + k, "...", 3);
            k += 3;
            break;
        }
        if (ch < 0x20 || ch == 0x7f)
            k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", ch);
        else if (ch == '\\' || ch == '\'')
            k += (size_t)snprintf(buf + k, cap - k, "\\%c", ch);
        else
            buf[k++] = (char)ch;
    }
    buf[k] = 0;
}

const char *onnx_quote(const char *s, size_t len, size_t max, char *buf, size_t cap)
{
    if (cap < 16) {
        if (cap)
            buf[0] = 0;
        return buf;
    }
    buf[0] = '\'';
    escape(s, len, max, buf + 1, cap - 2);
    size_t k = strlen(buf);
    buf[k] = '\'';
    buf[k + 1] = 0;
    return buf;
}

const char *onnx_path_str(const char *path, char *buf, size_t cap)
{
    escape(path, strlen(path), 4 * NAME_SHOWN, buf, cap);
    return buf;
}

/* A name quoted for a message, in one of a ring of buffers, so that one
 * message can quote several. */
static const char *Q(const char *s)
{
    static char ring[QUOTE_RING][QUOTE_CAP];
    static int next;
    char *b = ring[next++ % QUOTE_RING];
    return onnx_quote(s, strlen(s), NAME_SHOWN, b, QUOTE_CAP);
}

/* A node for a message: 'name', or #index and its first output; with its
 * op in parentheses when `with_op`. */
static const char *label(const OnnxNode *n, int with_op, char *buf, size_t cap)
{
    char q[QUOTE_CAP], op[2 * QUOTE_CAP], dom[QUOTE_CAP];
    const char *out = NULL;
    for (int k = 0; k < n->noutputs && !out; k++)
        if (n->outputs[k][0])
            out = n->outputs[k];
    escape(n->op_type, strlen(n->op_type), NAME_SHOWN, op, sizeof op);
    escape(n->domain, strlen(n->domain), NAME_SHOWN, dom, sizeof dom);
    if (dom[0]) {
        size_t d = strlen(dom);
        memmove(op + d + 1, op, strlen(op) + 1);
        memcpy(op, dom, d);
        op[d] = '.';
    }
    if (n->name[0])
        snprintf(buf, cap, "node %s%s%s%s", onnx_quote(n->name, strlen(n->name), NAME_SHOWN, q, sizeof q),
                 with_op ? " (" : "", with_op ? op : "", with_op ? ")" : "");
    else if (out)
        snprintf(buf, cap, "node #%d (%s%soutput %s)", n->index, with_op ? op : "", with_op ? ", " : "",
                 onnx_quote(out, strlen(out), NAME_SHOWN, q, sizeof q));
    else
        snprintf(buf, cap, "node #%d%s%s%s", n->index, with_op ? " (" : "", with_op ? op : "", with_op ? ")" : "");
    return buf;
}

const char *onnx_node_label(const OnnxNode *n, char *buf, size_t cap) { return label(n, 1, buf, cap); }

static const char *NL(const OnnxNode *n)
{
    static char ring[QUOTE_RING][2 * QUOTE_CAP];
    static int next;
    return onnx_node_label(n, ring[next++ % QUOTE_RING], sizeof ring[0]);
}

/* Reports `nnc: error: PATH: message` and returns -1. */
static int fail(Ctx *c, const char *fmt, ...)
{
    char msg[1024], path[QUOTE_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    escape(c->path, strlen(c->path), 4 * NAME_SHOWN, path, sizeof path);
    diag_error((Loc){0}, "%s: %s", path, msg);
    return -1;
}

/* ---- memory -------------------------------------------------------------- */

static int charge(Ctx *c, size_t n)
{
    if (n > c->budget - c->used) {
        c->over = 1;
        return -1;
    }
    c->used += n;
    return 0;
}

/* Zeroed memory owned by the model; NULL (c->over set) past the budget. */
static void *alloc(Ctx *c, size_t count, size_t size)
{
    if (size && count > (SIZE_MAX - sizeof(struct OnnxBlock)) / size) {
        c->over = 1;
        return NULL;
    }
    size_t n = count * size;
    if (charge(c, n + sizeof(struct OnnxBlock)) != 0)
        return NULL;
    struct OnnxBlock *b = calloc(1, sizeof *b + n);
    if (!b) {
        c->over = 1;
        return NULL;
    }
    b->next = c->m->blocks;
    c->m->blocks = b;
    return b->data;
}

static int out_of_memory(Ctx *c)
{
    return fail(c,
                "reading it would take more than %zu MiB, the limit for a file of this size (256 MiB and 10 "
                "times its size)",
                c->budget >> 20);
}

#define ALLOC(c, p, n) \
    do { \
        if (!((p) = alloc((c), (size_t)(n), sizeof *(p))) && (n)) \
            return out_of_memory(c); \
    } while (0)

/* A copy of the bytes s[0..len), NUL-terminated. */
static char *dup_bytes(Ctx *c, const void *s, size_t len)
{
    char *p = alloc(c, len + 1, 1);
    if (p && len)
        memcpy(p, s, len);
    return p;
}

#define DUP(c, p, s) \
    do { \
        const char *s_ = (s) ? (s) : ""; \
        if (!((p) = dup_bytes((c), s_, strlen(s_)))) \
            return out_of_memory(c); \
    } while (0)

void onnx_free(OnnxModel *m)
{
    if (!m)
        return;
    for (struct OnnxBlock *b = m->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(m);
}

/* protobuf-c's allocations, charged to the same budget */
static void *pb_alloc(void *data, size_t size)
{
    Ctx *c = data;
    return charge(c, size) == 0 ? malloc(size) : NULL;
}

static void pb_free(void *data, void *p)
{
    (void)data;
    free(p);
}

/* ---- names: a hash map from a value's name to who defines it ------------- */

typedef struct Map {
    const char **keys;
    int *vals;
    size_t cap; /* a power of two, at least twice the entries */
} Map;

static size_t hash(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return (size_t)h;
}

static int map_init(Ctx *c, Map *mp, size_t n)
{
    mp->cap = 16;
    while (mp->cap < 2 * n + 2)
        mp->cap *= 2;
    ALLOC(c, mp->keys, mp->cap);
    ALLOC(c, mp->vals, mp->cap);
    return 0;
}

/* The slot of `key`: where it is, or the empty one where it would go. */
static size_t map_slot(const Map *mp, const char *key)
{
    size_t i = hash(key) & (mp->cap - 1);
    while (mp->keys[i] && strcmp(mp->keys[i], key))
        i = (i + 1) & (mp->cap - 1);
    return i;
}

static int map_get(const Map *mp, const char *key)
{
    size_t i = map_slot(mp, key);
    return mp->keys[i] ? mp->vals[i] : -1;
}

/* Adds key -> val; returns the value key had, or -1 when it is new. */
static int map_put(Map *mp, const char *key, int val)
{
    size_t i = map_slot(mp, key);
    if (mp->keys[i])
        return mp->vals[i];
    mp->keys[i] = key;
    mp->vals[i] = val;
    return -1;
}

/* ---- the wire format's nesting, before protobuf-c recurses into it ----- */

typedef struct Scan {
    const uint8_t *base;
    const char *problem; /* NULL while all is well */
    size_t at;           /* the byte offset of the problem */
} Scan;

static int varint(Scan *s, const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*pos >= len) {
            s->problem = "a field runs past the end of the file";
            return -1;
        }
        uint8_t b = p[(*pos)++];
        if (shift == 63 && b > 1) {
            s->problem = "a varint overflows 64 bits";
            return -1;
        }
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    s->problem = "a varint is longer than 10 bytes";
    return -1;
}

/* Walks the message of type d in p[0..len): fails on what is not protobuf
 * and on messages nested deeper than MAX_DEPTH. */
static int scan(Scan *s, const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d, int depth)
{
    if (depth > MAX_DEPTH) {
        s->at = (size_t)(p - s->base);
        s->problem = "messages nest more than 64 deep";
        return -1;
    }
    size_t pos = 0;
    while (pos < len) {
        uint64_t tag, v;
        s->at = (size_t)(p - s->base) + pos;
        if (varint(s, p, len, &pos, &tag) != 0)
            return -1;
        uint64_t field = tag >> 3;
        if (field == 0 || field > 0x1fffffff) {
            s->problem = "a field number out of protobuf's range";
            return -1;
        }
        switch (tag & 7) {
        case 0:
            if (varint(s, p, len, &pos, &v) != 0)
                return -1;
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if (len - pos < w) {
                s->problem = "a field runs past the end of the file";
                return -1;
            }
            pos += w;
            break;
        }
        case 2: {
            if (varint(s, p, len, &pos, &v) != 0)
                return -1;
            if (v > len - pos) {
                s->problem = "a field runs past the end of the file";
                return -1;
            }
            const ProtobufCFieldDescriptor *f = d ? protobuf_c_message_descriptor_get_field(d, (unsigned)field) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && scan(s, p + pos, (size_t)v, f->descriptor, depth + 1) != 0)
                return -1;
            pos += (size_t)v;
            break;
        }
        default: s->problem = "a wire type ONNX does not use (groups, or not protobuf)"; return -1;
        }
    }
    return 0;
}

/* ---- element types ------------------------------------------------------- */

static const char *const type_names[] = {
    "undefined", "float",   "uint8",  "int8",   "uint16", "int16",     "int32",      "int64",    "string",
    "bool",      "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
};

const char *onnx_type_name(int type)
{
    return type >= 0 && type < (int)(sizeof type_names / sizeof *type_names) ? type_names[type] : NULL;
}

int onnx_type_is_float(int type)
{
    return type == ONNX_FLOAT || type == ONNX_DOUBLE || type == ONNX_FLOAT16 || type == ONNX_BFLOAT16;
}

int onnx_type_supported(int type)
{
    switch (type) {
    case ONNX_FLOAT:
    case ONNX_DOUBLE:
    case ONNX_FLOAT16:
    case ONNX_BFLOAT16:
    case ONNX_UINT8:
    case ONNX_INT8:
    case ONNX_UINT16:
    case ONNX_INT16:
    case ONNX_INT32:
    case ONNX_UINT32:
    case ONNX_INT64:
    case ONNX_BOOL: return 1;
    default: return 0;
    }
}

/* A type for a message: its name, or its code. */
static const char *TN(int type)
{
    static char ring[QUOTE_RING][32];
    static int next;
    const char *n = onnx_type_name(type);
    if (n)
        return n;
    char *b = ring[next++ % QUOTE_RING];
    snprintf(b, sizeof ring[0], "%d", type);
    return b;
}

/* bytes per element in raw_data */
static size_t type_size(int type)
{
    switch (type) {
    case ONNX_UINT8:
    case ONNX_INT8:
    case ONNX_BOOL: return 1;
    case ONNX_UINT16:
    case ONNX_INT16:
    case ONNX_FLOAT16:
    case ONNX_BFLOAT16: return 2;
    case ONNX_FLOAT:
    case ONNX_INT32:
    case ONNX_UINT32: return 4;
    default: return 8; /* int64, double */
    }
}

static float bits_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static float half_float(uint32_t h)
{
    uint32_t sign = (h >> 15 & 1) << 31, exp = h >> 10 & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f)
        return bits_float(sign | 0x7f800000u | man << 13);
    if (exp)
        return bits_float(sign | (exp + 112) << 23 | man << 13);
    if (!man)
        return bits_float(sign);
    uint32_t e = 113; /* a subnormal: normalized */
    while (!(man & 0x400)) {
        man <<= 1;
        e--;
    }
    return bits_float(sign | e << 23 | (man & 0x3ff) << 13);
}

/* double to float as IEEE rounds it, without the undefined behaviour of a
 * C conversion out of float's range */
static float narrow(double d)
{
    if (d > FLT_MAX)
        return d >= 0x1.ffffffp127 ? (float)INFINITY : FLT_MAX;
    if (d < -FLT_MAX)
        return d <= -0x1.ffffffp127 ? -(float)INFINITY : -FLT_MAX;
    return (float)d;
}

static uint64_t le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;)
        v = v << 8 | p[k];
    return v;
}

/* An integer of `type` from its unsigned bits (raw_data), sign-extended. */
static int64_t int_bits(int type, uint64_t u)
{
    switch (type) {
    case ONNX_INT8: return (int64_t)u - (u >= 0x80 ? 0x100 : 0);
    case ONNX_INT16: return (int64_t)u - (u >= 0x8000 ? 0x10000 : 0);
    case ONNX_INT32: return (int64_t)u - (u >= 0x80000000u ? INT64_C(0x100000000) : 0);
    case ONNX_BOOL: return u != 0;
    case ONNX_INT64: {
        int64_t v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    default: return (int64_t)u; /* uint8, uint16, uint32 */
    }
}

/* The range of int32_data's values for a type stored there. */
static void int32_range(int type, int64_t *lo, int64_t *hi)
{
    switch (type) {
    case ONNX_INT8: *lo = -128, *hi = 127; break;
    case ONNX_UINT8: *lo = 0, *hi = 255; break;
    case ONNX_INT16: *lo = -32768, *hi = 32767; break;
    case ONNX_UINT16:
    case ONNX_FLOAT16:
    case ONNX_BFLOAT16: *lo = 0, *hi = 65535; break;
    case ONNX_BOOL: *lo = 0, *hi = 1; break;
    default: *lo = INT32_MIN, *hi = INT32_MAX; break;
    }
}

/* ---- tensors ------------------------------------------------------------- */

static const char *dims_str(const int64_t *dims, size_t n, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

/* Checks dims (what: how messages name their tensor) and their product. */
static int check_dims(Ctx *c, const char *what, const int64_t *dims, size_t n, int64_t *count)
{
    char b[512];
    if (n > ONNX_MAX_RANK)
        return fail(c, "%s has %zu dims, more than %d", what, n, ONNX_MAX_RANK);
    int64_t prod = 1;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0)
            return fail(c, "%s has a negative dim: %s", what, dims_str(dims, n, b, sizeof b));
        if (dims[i] > ONNX_MAX_ELEMENTS || (dims[i] && prod > ONNX_MAX_ELEMENTS / dims[i]))
            return fail(c, "%s has dims %s: more than %lld elements", what, dims_str(dims, n, b, sizeof b),
                        (long long)ONNX_MAX_ELEMENTS);
        prod *= dims[i];
    }
    *count = prod;
    return 0;
}

/* The typed field a type's data is kept in (onnx.proto, TensorProto). */
static const char *typed_field(int type)
{
    switch (type) {
    case ONNX_FLOAT:
    case ONNX_COMPLEX64: return "float_data";
    case ONNX_INT64: return "int64_data";
    case ONNX_DOUBLE:
    case ONNX_COMPLEX128: return "double_data";
    case ONNX_UINT32:
    case ONNX_UINT64: return "uint64_data";
    case ONNX_STRING: return "string_data";
    default: return "int32_data";
    }
}

/* Converts tensor tp into t.  `what` names it in messages.  A type the
 * reader does not convert is an error when `strict` (initializers), else
 * kept without data (an attribute's tensor, which only ops nnc does not
 * map take). */
static int tensor(Ctx *c, const Onnx__TensorProto *tp, OnnxTensor *t, const char *what, int strict)
{
    DUP(c, t->name, tp->name);
    t->type = tp->has_data_type ? tp->data_type : ONNX_UNDEFINED;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return fail(c, "%s: external data is not supported (the weights must be inside the .onnx file)", what);
    if (tp->n_external_data)
        return fail(c, "%s: external data is not supported (the weights must be inside the .onnx file)", what);
    if (tp->segment)
        return fail(c, "%s: segmented tensors are not supported", what);
    if (check_dims(c, what, tp->dims, tp->n_dims, &t->count) != 0)
        return -1;
    t->rank = (int)tp->n_dims;
    ALLOC(c, t->dims, tp->n_dims);
    if (tp->n_dims)
        memcpy(t->dims, tp->dims, tp->n_dims * sizeof *t->dims);
    t->supported = onnx_type_supported(t->type);
    if (!t->supported) {
        if (strict)
            return fail(c, "%s: element type %s is not supported", what, TN(t->type));
        return 0;
    }

    /* exactly one source of data: raw_data, or the type's own field */
    const struct {
        const char *name;
        size_t n;
    } fields[] = {
        {"float_data", tp->n_float_data},   {"int32_data", tp->n_int32_data},   {"int64_data", tp->n_int64_data},
        {"double_data", tp->n_double_data}, {"uint64_data", tp->n_uint64_data}, {"string_data", tp->n_string_data},
    };
    const char *own = typed_field(t->type);
    size_t ntyped = 0;
    for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
        if (!fields[k].n)
            continue;
        if (strcmp(fields[k].name, own))
            return fail(c, "%s: a %s tensor with data in %s", what, TN(t->type), fields[k].name);
        ntyped = fields[k].n;
    }
    int raw = tp->has_raw_data && (tp->raw_data.len || !ntyped);
    if (raw && ntyped)
        return fail(c, "%s: data in both raw_data and %s", what, own);
    size_t esize = type_size(t->type), n = (size_t)t->count;
    char b[512];
    if (raw && tp->raw_data.len != n * esize)
        return fail(c, "%s: raw_data holds %zu bytes, %s%s needs %zu", what, tp->raw_data.len, TN(t->type),
                    dims_str(t->dims, tp->n_dims, b, sizeof b), n * esize);
    if (!raw && ntyped != n)
        return fail(c, "%s: %s holds %zu values, %s%s needs %zu", what, own, ntyped, TN(t->type),
                    dims_str(t->dims, tp->n_dims, b, sizeof b), n);

    const uint8_t *rd = tp->raw_data.data;
    if (onnx_type_is_float(t->type)) {
        ALLOC(c, t->f, n);
        for (size_t k = 0; k < n; k++) {
            switch (t->type) {
            case ONNX_FLOAT: t->f[k] = raw ? bits_float((uint32_t)le(rd + 4 * k, 4)) : tp->float_data[k]; break;
            case ONNX_DOUBLE: {
                double d;
                if (raw) {
                    uint64_t u = le(rd + 8 * k, 8);
                    memcpy(&d, &u, sizeof d);
                } else {
                    d = tp->double_data[k];
                }
                t->f[k] = narrow(d);
                break;
            }
            default: { /* float16, bfloat16: 16 bits */
                int64_t v = raw ? (int64_t)le(rd + 2 * k, 2) : tp->int32_data[k];
                if (v < 0 || v > 65535)
                    return fail(c, "%s: int32_data holds %lld, not the bits of a %s", what, (long long)v, TN(t->type));
                t->f[k] = t->type == ONNX_FLOAT16 ? half_float((uint32_t)v) : bits_float((uint32_t)v << 16);
            }
            }
        }
        return 0;
    }
    ALLOC(c, t->i, n);
    int64_t lo, hi;
    int32_range(t->type, &lo, &hi);
    for (size_t k = 0; k < n; k++) {
        if (raw) {
            t->i[k] = int_bits(t->type, le(rd + esize * k, esize));
        } else if (t->type == ONNX_INT64) {
            t->i[k] = tp->int64_data[k];
        } else if (t->type == ONNX_UINT32) {
            if (tp->uint64_data[k] > UINT32_MAX)
                return fail(c, "%s: uint64_data holds %llu, out of uint32's range", what,
                            (unsigned long long)tp->uint64_data[k]);
            t->i[k] = (int64_t)tp->uint64_data[k];
        } else {
            int64_t v = tp->int32_data[k];
            if (v < lo || v > hi)
                return fail(c, "%s: int32_data holds %lld, out of %s's range", what, (long long)v, TN(t->type));
            t->i[k] = v;
        }
    }
    return 0;
}

/* ---- values: inputs, outputs, value_info ---------------------------------- */

/* Converts vi.  An input (`input` set) must be a tensor of a supported type
 * whose axes are all known but the first. */
static int value(Ctx *c, const Onnx__ValueInfoProto *vi, OnnxValue *v, int input)
{
    static const char *const kinds[] = {[ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE] = "a sequence",
                                        [ONNX__TYPE_PROTO__VALUE_MAP_TYPE] = "a map",
                                        [ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE] = "a sparse tensor",
                                        [ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE] = "an optional"};
    DUP(c, v->name, vi->name);
    v->rank = -1;
    const char *what = input ? "input" : "value";
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        if (!input)
            return 0;
        if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
            return fail(c, "input %s has no type", Q(v->name));
        int k = (int)tp->value_case;
        return fail(c, "input %s is %s, not a tensor", Q(v->name),
                    k >= 0 && k < (int)(sizeof kinds / sizeof *kinds) && kinds[k] ? kinds[k] : "not a tensor");
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    v->type = tt->has_elem_type ? tt->elem_type : ONNX_UNDEFINED;
    if (input && !onnx_type_supported(v->type))
        return fail(c, "input %s: element type %s is not supported", Q(v->name), TN(v->type));
    if (!tt->shape) {
        if (input)
            return fail(c, "input %s has no shape: a dynamic shape that is not the batch", Q(v->name));
        return 0;
    }
    const Onnx__TensorShapeProto *sh = tt->shape;
    if (sh->n_dim > ONNX_MAX_RANK)
        return fail(c, "%s %s has %zu dims, more than %d", what, Q(v->name), sh->n_dim, ONNX_MAX_RANK);
    v->rank = (int)sh->n_dim;
    ALLOC(c, v->dims, sh->n_dim);
    int64_t per_example = 1;
    for (int k = 0; k < v->rank; k++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[k];
        OnnxDim *o = &v->dims[k];
        o->value = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value < 0)
                return fail(c, "%s %s: axis %d is %lld, negative", what, Q(v->name), k, (long long)d->dim_value);
            o->value = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param) {
            DUP(c, o->symbol, d->dim_param);
        }
        if (!input)
            continue;
        if (o->value < 0 && k > 0)
            return fail(c, "input %s has a dynamic shape that is not the batch: axis %d is %s", Q(v->name), k,
                        o->symbol ? Q(o->symbol) : "unknown");
        if (o->value > ONNX_MAX_ELEMENTS || (k > 0 && o->value && per_example > ONNX_MAX_ELEMENTS / o->value))
            return fail(c, "input %s: an example has more than %lld elements", Q(v->name),
                        (long long)ONNX_MAX_ELEMENTS);
        if (k > 0)
            per_example *= o->value;
    }
    return 0;
}

/* ---- the model ------------------------------------------------------------ */

static int is_default_domain(const char *d) { return !d || !d[0] || !strcmp(d, "ai.onnx"); }

static int opsets(Ctx *c, const Onnx__ModelProto *mp)
{
    OnnxModel *m = c->m;
    if (mp->n_opset_import > MAX_OPSETS)
        return fail(c, "%zu opset imports, more than %d", mp->n_opset_import, MAX_OPSETS);
    m->nopsets = (int)mp->n_opset_import;
    ALLOC(c, m->opsets, m->nopsets);
    m->opset = -1;
    for (int k = 0; k < m->nopsets; k++) {
        const Onnx__OperatorSetIdProto *op = mp->opset_import[k];
        OnnxOpset *o = &m->opsets[k];
        DUP(c, o->domain, is_default_domain(op->domain) ? "" : op->domain);
        o->version = op->has_version ? op->version : 0;
        for (int j = 0; j < k; j++)
            if (!strcmp(m->opsets[j].domain, o->domain))
                return fail(c, "two opset imports of domain %s", o->domain[0] ? Q(o->domain) : "ai.onnx");
        if (o->domain[0])
            continue;
        if (o->version < ONNX_OPSET_MIN || o->version > ONNX_OPSET_MAX)
            return fail(c, "opset %lld of ai.onnx is not supported: nnc imports opsets %d to %d", (long long)o->version,
                        ONNX_OPSET_MIN, ONNX_OPSET_MAX);
        m->opset = o->version;
    }
    return 0;
}

static int initializers(Ctx *c, const Onnx__GraphProto *g, Map *defs)
{
    OnnxModel *m = c->m;
    if (g->n_sparse_initializer) {
        const Onnx__SparseTensorProto *sp = g->sparse_initializer[0];
        return fail(c, "sparse initializer %s: sparse initializers are not supported",
                    Q(sp->values && sp->values->name ? sp->values->name : ""));
    }
    if (g->n_initializer > INT_MAX / 2)
        return fail(c, "%zu initializers, too many", g->n_initializer);
    m->ninits = (int)g->n_initializer;
    ALLOC(c, m->inits, m->ninits);
    for (int k = 0; k < m->ninits; k++) {
        const Onnx__TensorProto *tp = g->initializer[k];
        char what[QUOTE_CAP + 16];
        if (!tp->name || !tp->name[0])
            return fail(c, "initializer #%d has no name", k);
        snprintf(what, sizeof what, "initializer %s", Q(tp->name));
        if (tensor(c, tp, &m->inits[k], what, 1) != 0)
            return -1;
        if (map_put(defs, m->inits[k].name, k) >= 0)
            return fail(c, "two initializers are named %s", Q(tp->name));
    }
    return 0;
}

/* The graph's inputs, those that are also initializers left out (older
 * exporters list every weight as an input too). */
static int inputs(Ctx *c, const Onnx__GraphProto *g, Map *defs)
{
    OnnxModel *m = c->m;
    if (g->n_input > INT_MAX / 2)
        return fail(c, "%zu inputs, too many", g->n_input);
    ALLOC(c, m->inputs, g->n_input);
    for (size_t k = 0; k < g->n_input; k++) {
        const char *name = g->input[k]->name ? g->input[k]->name : "";
        int d = map_get(defs, name);
        if (d >= 0 && d < m->ninits)
            continue;
        if (!name[0])
            return fail(c, "input #%zu has no name", k);
        if (d >= 0)
            return fail(c, "two inputs are named %s", Q(name));
        OnnxValue *v = &m->inputs[m->ninputs];
        if (value(c, g->input[k], v, 1) != 0)
            return -1;
        map_put(defs, v->name, m->ninits + m->ninputs++);
    }
    return 0;
}

static int attr_kind_of(const Onnx__AttributeProto *a, OnnxAttrKind *kind)
{
    switch (a->has_type ? (int)a->type : 0) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: *kind = ONNX_ATTR_FLOAT; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: *kind = ONNX_ATTR_INT; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: *kind = ONNX_ATTR_STRING; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: *kind = ONNX_ATTR_TENSOR; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: *kind = ONNX_ATTR_GRAPH; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: *kind = ONNX_ATTR_FLOATS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: *kind = ONNX_ATTR_INTS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: *kind = ONNX_ATTR_STRINGS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: *kind = ONNX_ATTR_TENSORS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: *kind = ONNX_ATTR_GRAPHS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: *kind = ONNX_ATTR_SPARSE_TENSOR; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: *kind = ONNX_ATTR_SPARSE_TENSORS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: *kind = ONNX_ATTR_TYPE_PROTO; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: *kind = ONNX_ATTR_TYPE_PROTOS; return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED: break;
    default: return -1;
    }
    /* IR version 1 had no type: the field that is set says it */
    *kind = a->has_f          ? ONNX_ATTR_FLOAT
        : a->has_i            ? ONNX_ATTR_INT
        : a->has_s            ? ONNX_ATTR_STRING
        : a->t                ? ONNX_ATTR_TENSOR
        : a->g                ? ONNX_ATTR_GRAPH
        : a->sparse_tensor    ? ONNX_ATTR_SPARSE_TENSOR
        : a->tp               ? ONNX_ATTR_TYPE_PROTO
        : a->n_floats         ? ONNX_ATTR_FLOATS
        : a->n_ints           ? ONNX_ATTR_INTS
        : a->n_strings        ? ONNX_ATTR_STRINGS
        : a->n_tensors        ? ONNX_ATTR_TENSORS
        : a->n_graphs         ? ONNX_ATTR_GRAPHS
        : a->n_sparse_tensors ? ONNX_ATTR_SPARSE_TENSORS
        : a->n_type_protos    ? ONNX_ATTR_TYPE_PROTOS
                              : (OnnxAttrKind)-1;
    return (int)*kind < 0 ? -2 : 0;
}

static int attribute(Ctx *c, const OnnxNode *n, const Onnx__AttributeProto *a, OnnxAttr *o)
{
    if (!a->name || !a->name[0])
        return fail(c, "%s has an attribute without a name", NL(n));
    DUP(c, o->name, a->name);
    int r = attr_kind_of(a, &o->kind);
    if (r == -1)
        return fail(c, "attribute %s of %s has type %d, which ONNX does not define", Q(o->name), NL(n), (int)a->type);
    if (r == -2)
        return fail(c, "attribute %s of %s has no type and no value", Q(o->name), NL(n));
    size_t count = 0;
    switch (o->kind) {
    case ONNX_ATTR_FLOAT: o->f = a->f; break;
    case ONNX_ATTR_INT: o->i = a->i; break;
    case ONNX_ATTR_STRING:
        if (!(o->s = dup_bytes(c, a->s.data, a->has_s ? a->s.len : 0)))
            return out_of_memory(c);
        o->slen = a->has_s ? a->s.len : 0;
        break;
    case ONNX_ATTR_TENSOR: {
        char what[2 * QUOTE_CAP + 32];
        if (!a->t)
            return fail(c, "attribute %s of %s is a tensor without one", Q(o->name), NL(n));
        snprintf(what, sizeof what, "attribute %s of %s", Q(o->name), NL(n));
        ALLOC(c, o->t, 1);
        return tensor(c, a->t, o->t, what, 0);
    }
    case ONNX_ATTR_GRAPH: count = a->g ? a->g->n_node : 0; break;
    case ONNX_ATTR_FLOATS:
        count = a->n_floats;
        ALLOC(c, o->floats, count);
        if (count)
            memcpy(o->floats, a->floats, count * sizeof *o->floats);
        break;
    case ONNX_ATTR_INTS:
        count = a->n_ints;
        ALLOC(c, o->ints, count);
        if (count)
            memcpy(o->ints, a->ints, count * sizeof *o->ints);
        break;
    case ONNX_ATTR_STRINGS: {
        count = a->n_strings;
        const char **ss;
        size_t *lens;
        ALLOC(c, ss, count);
        ALLOC(c, lens, count);
        for (size_t k = 0; k < count; k++) {
            if (!(ss[k] = dup_bytes(c, a->strings[k].data, a->strings[k].len)))
                return out_of_memory(c);
            lens[k] = a->strings[k].len;
        }
        o->strings = ss;
        o->string_lens = lens;
        break;
    }
    case ONNX_ATTR_TENSORS: count = a->n_tensors; break;
    case ONNX_ATTR_GRAPHS: count = a->n_graphs; break;
    case ONNX_ATTR_SPARSE_TENSOR: count = a->sparse_tensor != NULL; break;
    case ONNX_ATTR_SPARSE_TENSORS: count = a->n_sparse_tensors; break;
    case ONNX_ATTR_TYPE_PROTO: count = a->tp != NULL; break;
    case ONNX_ATTR_TYPE_PROTOS: count = a->n_type_protos; break;
    }
    if (count > INT_MAX)
        return fail(c, "attribute %s of %s has %zu values, too many", Q(o->name), NL(n), count);
    o->n = (int)count;
    return 0;
}

static int cmp_attr(const void *a, const void *b)
{
    return strcmp(((const OnnxAttr *)a)->name, ((const OnnxAttr *)b)->name);
}

static int node(Ctx *c, const Onnx__NodeProto *np, int index, OnnxNode *n)
{
    OnnxModel *m = c->m;
    n->index = index;
    if (!np->op_type || !np->op_type[0])
        return fail(c, "node #%d has no op_type", index);
    DUP(c, n->op_type, np->op_type);
    DUP(c, n->domain, is_default_domain(np->domain) ? "" : np->domain);
    DUP(c, n->name, np->name);
    if (np->n_input > INT_MAX / 2 || np->n_output > INT_MAX / 2 || np->n_attribute > INT_MAX / 2)
        return fail(c, "node #%d has too many inputs, outputs or attributes", index);
    n->ninputs = (int)np->n_input;
    n->noutputs = (int)np->n_output;
    ALLOC(c, n->inputs, n->ninputs);
    ALLOC(c, n->outputs, n->noutputs);
    for (int k = 0; k < n->ninputs; k++)
        DUP(c, n->inputs[k], np->input[k]);
    for (int k = 0; k < n->noutputs; k++)
        DUP(c, n->outputs[k], np->output[k]);
    n->opset = -1;
    for (int k = 0; k < m->nopsets; k++)
        if (!strcmp(m->opsets[k].domain, n->domain))
            n->opset = m->opsets[k].version;
    if (n->opset < 0 && !n->domain[0])
        return fail(c, "no opset import of ai.onnx, the default domain, which %s is in", NL(n));
    if (n->opset < 0)
        return fail(c, "%s is in domain %s, which the model imports no opset of", NL(n), Q(n->domain));
    n->nattrs = (int)np->n_attribute;
    ALLOC(c, n->attrs, n->nattrs);
    for (int k = 0; k < n->nattrs; k++)
        if (attribute(c, n, np->attribute[k], &n->attrs[k]) != 0)
            return -1;
    /* the same name twice: found in a sorted copy, in n log n */
    if (n->nattrs > 1) {
        OnnxAttr *sorted;
        ALLOC(c, sorted, n->nattrs);
        memcpy(sorted, n->attrs, (size_t)n->nattrs * sizeof *sorted);
        qsort(sorted, (size_t)n->nattrs, sizeof *sorted, cmp_attr);
        for (int k = 1; k < n->nattrs; k++)
            if (!strcmp(sorted[k - 1].name, sorted[k].name))
                return fail(c, "%s has two attributes named %s", NL(n), Q(sorted[k].name));
    }
    return 0;
}

/* Appends s to the string in b (cap bytes), as much of it as fits. */
static void append(char *b, size_t cap, const char *s)
{
    size_t k = strlen(b), n = strlen(s);
    if (n > cap - 1 - k)
        n = cap - 1 - k;
    memcpy(b + k, s, n);
    b[k + n] = 0;
}

/* ---- the order ----------------------------------------------------------- */

/* A min-heap of node indices: the ready node first in the file goes first,
 * so a file already in a topological order keeps it. */
static void heap_push(int *h, int *n, int v)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int k = 2 * i + 1;
        if (k >= *n)
            break;
        if (k + 1 < *n && h[k + 1] < h[k])
            k++;
        if (h[k] >= v)
            break;
        h[i] = h[k];
        i = k;
    }
    if (*n)
        h[i] = v;
    return top;
}

/* Every value read defined, each defined once, and the nodes in an order
 * where each comes after the producers of its inputs. */
static int order(Ctx *c, Map *defs)
{
    OnnxModel *m = c->m;
    int base = m->ninits + m->ninputs, nn = m->nnodes;
    OnnxNode *nodes = m->nodes;
    for (int k = 0; k < nn; k++)
        for (int j = 0; j < nodes[k].noutputs; j++) {
            const char *o = nodes[k].outputs[j];
            if (!o[0])
                continue;
            int d = map_put(defs, o, base + k);
            if (d < 0)
                continue;
            const char *by = d < m->ninits ? "an initializer" : d < base ? "an input" : NL(&nodes[d - base]);
            return fail(c, "%s is defined twice: by %s and by %s", Q(o), by, NL(&nodes[k]));
        }
    /* edges from producers to consumers, as lists per producer */
    int *indeg, *first, *edges, nedges = 0;
    ALLOC(c, indeg, nn);
    ALLOC(c, first, nn + 1);
    for (int k = 0; k < nn; k++)
        for (int j = 0; j < nodes[k].ninputs; j++) {
            const char *in = nodes[k].inputs[j];
            if (!in[0])
                continue;
            int d = map_get(defs, in);
            if (d < 0)
                return fail(c, "%s reads %s, which no input, initializer or node output defines", NL(&nodes[k]), Q(in));
            if (d >= base) {
                indeg[k]++;
                first[d - base]++;
                nedges++;
            }
        }
    ALLOC(c, edges, nedges);
    for (int k = 0, sum = 0; k <= nn; k++) {
        int cnt = k < nn ? first[k] : 0;
        first[k] = sum;
        sum += cnt;
    }
    int *fill;
    ALLOC(c, fill, nn);
    for (int k = 0; k < nn; k++)
        for (int j = 0; j < nodes[k].ninputs; j++) {
            int d = nodes[k].inputs[j][0] ? map_get(defs, nodes[k].inputs[j]) : -1;
            if (d >= base)
                edges[first[d - base] + fill[d - base]++] = k;
        }
    int *heap, nheap = 0, *sorted, nsorted = 0;
    ALLOC(c, heap, nn);
    ALLOC(c, sorted, nn);
    for (int k = 0; k < nn; k++)
        if (!indeg[k])
            heap_push(heap, &nheap, k);
    while (nheap) {
        int k = heap_pop(heap, &nheap);
        sorted[nsorted++] = k;
        for (int e = first[k]; e < first[k + 1]; e++)
            if (--indeg[edges[e]] == 0)
                heap_push(heap, &nheap, edges[e]);
    }
    if (nsorted < nn) {
        /* walk back from a node left over, through producers left over,
         * until a node repeats: the nodes from there on are a cycle */
        int *step, *path, len = 0, cur = 0;
        ALLOC(c, step, nn);
        ALLOC(c, path, nn);
        while (!indeg[cur])
            cur++;
        while (!step[cur]) {
            step[cur] = ++len;
            path[len - 1] = cur;
            int next = -1;
            for (int j = 0; j < nodes[cur].ninputs && next < 0; j++) {
                int d = nodes[cur].inputs[j][0] ? map_get(defs, nodes[cur].inputs[j]) : -1;
                if (d >= base && indeg[d - base])
                    next = d - base;
            }
            cur = next;
        }
        /* path[i + 1] produces path[i], and path[from] produces path[len - 1]:
         * in the data's direction the cycle is path[from], path[len - 1],
         * ..., path[from + 1], path[from] */
        int from = step[cur] - 1, ncyc = len - from, *seq;
        ALLOC(c, seq, ncyc + 1);
        seq[0] = seq[ncyc] = path[from];
        for (int i = 1; i < ncyc; i++)
            seq[i] = path[len - i];
        char b[1024] = "";
        for (int i = 0; i <= ncyc; i++) {
            if (i == 4 && ncyc > 5) {
                append(b, sizeof b, " -> ...");
                i = ncyc;
            }
            append(b, sizeof b, i ? " -> " : "");
            append(b, sizeof b, NL(&nodes[seq[i]]));
        }
        return fail(c, "the nodes form a cycle: %s", b);
    }
    /* the nodes in that order */
    OnnxNode *ordered;
    ALLOC(c, ordered, nn);
    for (int k = 0; k < nn; k++)
        ordered[k] = nodes[sorted[k]];
    m->nodes = ordered;
    return 0;
}

static int convert(Ctx *c, const Onnx__ModelProto *mp)
{
    OnnxModel *m = c->m;
    m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    DUP(c, m->path, c->path);
    DUP(c, m->producer, mp->producer_name);
    DUP(c, m->producer_version, mp->producer_version);
    const Onnx__GraphProto *g = mp->graph;
    if (!g)
        return fail(c, "no graph: not an ONNX model");
    DUP(c, m->graph_name, g->name);
    if (opsets(c, mp) != 0)
        return -1;
    if (g->n_node > INT_MAX / 2)
        return fail(c, "%zu nodes, too many", g->n_node);
    size_t nouts = 0;
    for (size_t k = 0; k < g->n_node; k++)
        nouts += g->node[k]->n_output;
    /* (each takes two bytes of the file at least: no sum overflows) */
    if (g->n_initializer + g->n_input + nouts > INT_MAX / 2)
        return fail(c, "%zu values, too many", g->n_initializer + g->n_input + nouts);
    Map defs;
    if (map_init(c, &defs, g->n_initializer + g->n_input + nouts) != 0)
        return -1;
    if (initializers(c, g, &defs) != 0 || inputs(c, g, &defs) != 0)
        return -1;
    m->nnodes = (int)g->n_node;
    ALLOC(c, m->nodes, m->nnodes);
    for (int k = 0; k < m->nnodes; k++)
        if (node(c, g->node[k], k, &m->nodes[k]) != 0)
            return -1;
    if (order(c, &defs) != 0)
        return -1;
    if (g->n_output > INT_MAX / 2 || g->n_value_info > INT_MAX / 2)
        return fail(c, "too many outputs or value_info entries");
    m->noutputs = (int)g->n_output;
    ALLOC(c, m->outputs, m->noutputs);
    for (int k = 0; k < m->noutputs; k++) {
        if (value(c, g->output[k], &m->outputs[k], 0) != 0)
            return -1;
        if (map_get(&defs, m->outputs[k].name) < 0)
            return fail(c, "graph output %s is not defined by any input, initializer or node", Q(m->outputs[k].name));
    }
    m->nvalue_infos = (int)g->n_value_info;
    ALLOC(c, m->value_infos, m->nvalue_infos);
    for (int k = 0; k < m->nvalue_infos; k++)
        if (value(c, g->value_info[k], &m->value_infos[k], 0) != 0)
            return -1;
    return 0;
}

/* The file's bytes (malloc'd), or NULL after reporting why not. */
static uint8_t *read_file(Ctx *c, size_t *len, OnnxStatus *status)
{
    FILE *f = fopen(c->path, "rb");
    size_t cap = 1 << 16, n = 0;
    /* a file's size known, it is refused unread or read into one buffer */
    struct stat st;
    if (f && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > MAX_FILE) {
            fclose(f);
            fail(c, "larger than 2 GiB, protobuf's limit (external data is not supported)");
            return NULL;
        }
        cap = (size_t)st.st_size + 1;
    }
    uint8_t *buf = f ? malloc(cap) : NULL;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || ferror(f))
            break;
        if (cap > MAX_FILE) {
            free(buf);
            fclose(f);
            fail(c, "larger than 2 GiB, protobuf's limit (external data is not supported)");
            return NULL;
        }
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb)
            free(buf);
        buf = nb;
        cap *= 2;
    }
    if (!buf || ferror(f)) {
        char path[QUOTE_CAP];
        int e = errno;
        *status = ONNX_ERR_READ;
        if (f)
            fclose(f);
        free(buf);
        escape(c->path, strlen(c->path), 4 * NAME_SHOWN, path, sizeof path);
        diag_error((Loc){0}, "cannot read '%s': %s", path, strerror(e ? e : EIO));
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

OnnxModel *onnx_load(const char *path, OnnxStatus *status)
{
    Ctx c = {path, NULL, 0, 0, 0};
    *status = ONNX_ERR_MALFORMED;
    size_t len = 0;
    errno = 0;
    uint8_t *buf = read_file(&c, &len, status);
    if (!buf)
        return NULL;
    c.budget = BASE_BUDGET + (len > (SIZE_MAX - BASE_BUDGET) / BUDGET_PER_BYTE ? 0 : BUDGET_PER_BYTE * len);
    if (!len) {
        free(buf);
        fail(&c, "empty file, not an ONNX model");
        return NULL;
    }
    Scan s = {buf, NULL, 0};
    if (scan(&s, buf, len, &onnx__model_proto__descriptor, 0) != 0) {
        free(buf);
        fail(&c, "not an ONNX model (truncated, or not protobuf): at byte %zu, %s", s.at, s.problem);
        return NULL;
    }
    ProtobufCAllocator pa = {pb_alloc, pb_free, &c};
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&pa, len, buf);
    free(buf);
    if (!mp) {
        if (c.over)
            out_of_memory(&c);
        else
            fail(&c, "not an ONNX model (truncated, or not protobuf): protobuf-c cannot unpack it");
        return NULL;
    }
    OnnxModel *m = calloc(1, sizeof *m);
    if (!m) {
        onnx__model_proto__free_unpacked(mp, &pa);
        out_of_memory(&c);
        return NULL;
    }
    c.m = m;
    int rc = convert(&c, mp);
    onnx__model_proto__free_unpacked(mp, &pa);
    if (rc != 0) {
        onnx_free(m);
        return NULL;
    }
    *status = ONNX_OK;
    return m;
}

/* ---- the dump ------------------------------------------------------------- */

/* s[0..len) quoted, whole, escaped as onnx_quote does */
static void put_quoted(FILE *out, const char *s, size_t len)
{
    fputc('\'', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\x%02x", ch);
        else if (ch == '\\' || ch == '\'')
            fprintf(out, "\\%c", ch);
        else
            fputc(ch, out);
    }
    fputc('\'', out);
}

static void put_name(FILE *out, const char *s) { put_quoted(out, s, strlen(s)); }

/* a name shown unquoted (a domain, an op type, a dim's symbol): escaped */
static void put_word(FILE *out, const char *s)
{
    char b[QUOTE_CAP];
    escape(s, strlen(s), NAME_SHOWN, b, sizeof b);
    fputs(b, out);
}

static void put_type(FILE *out, int type)
{
    const char *n = onnx_type_name(type);
    if (type == ONNX_UNDEFINED)
        fputc('?', out);
    else if (n)
        fputs(n, out);
    else
        fprintf(out, "type%d", type);
}

static void put_value(FILE *out, const OnnxValue *v)
{
    put_name(out, v->name);
    fputs(": ", out);
    put_type(out, v->type);
    if (v->rank < 0) {
        fputs(" (no shape)", out);
        return;
    }
    fputc('[', out);
    for (int k = 0; k < v->rank; k++) {
        if (k)
            fputs(", ", out);
        if (v->dims[k].value >= 0)
            fprintf(out, "%lld", (long long)v->dims[k].value);
        else if (v->dims[k].symbol)
            put_word(out, v->dims[k].symbol);
        else
            fputc('?', out);
    }
    fputc(']', out);
}

/* NaN as "nan" whatever its sign bit (printf would say "-nan") */
static void put_float(FILE *out, float f)
{
    if (isnan(f))
        fputs("nan", out);
    else
        fprintf(out, "%.9g", (double)f);
}

static void put_tensor(FILE *out, const OnnxTensor *t)
{
    put_type(out, t->type);
    fputc('[', out);
    for (int k = 0; k < t->rank; k++)
        fprintf(out, "%s%lld", k ? ", " : "", (long long)t->dims[k]);
    fputc(']', out);
    if (!t->supported) {
        fputs(" (not read)", out);
        return;
    }
    if (!t->count)
        return;
    int64_t n = t->count <= DUMP_VALUES ? t->count : DUMP_HEAD;
    fputs(" = [", out);
    for (int64_t k = 0; k < n; k++) {
        if (k)
            fputs(", ", out);
        if (t->f)
            put_float(out, t->f[k]);
        else
            fprintf(out, "%lld", (long long)t->i[k]);
    }
    fputs(n < t->count ? ", ...]" : "]", out);
}

static const char *const attr_kinds[] = {
    [ONNX_ATTR_FLOAT] = "float",
    [ONNX_ATTR_INT] = "int",
    [ONNX_ATTR_STRING] = "string",
    [ONNX_ATTR_TENSOR] = "tensor",
    [ONNX_ATTR_GRAPH] = "graph",
    [ONNX_ATTR_FLOATS] = "floats",
    [ONNX_ATTR_INTS] = "ints",
    [ONNX_ATTR_STRINGS] = "strings",
    [ONNX_ATTR_TENSORS] = "tensors",
    [ONNX_ATTR_GRAPHS] = "graphs",
    [ONNX_ATTR_SPARSE_TENSOR] = "sparse_tensor",
    [ONNX_ATTR_SPARSE_TENSORS] = "sparse_tensors",
    [ONNX_ATTR_TYPE_PROTO] = "type_proto",
    [ONNX_ATTR_TYPE_PROTOS] = "type_protos",
};

static void put_attr(FILE *out, const OnnxAttr *a)
{
    fputs("  ", out);
    put_name(out, a->name);
    fprintf(out, " %s", attr_kinds[a->kind]);
    switch (a->kind) {
    case ONNX_ATTR_FLOAT: fputc(' ', out), put_float(out, a->f); break;
    case ONNX_ATTR_INT: fprintf(out, " %lld", (long long)a->i); break;
    case ONNX_ATTR_STRING: fputc(' ', out), put_quoted(out, a->s, a->slen); break;
    case ONNX_ATTR_TENSOR: fputc(' ', out), put_tensor(out, a->t); break;
    case ONNX_ATTR_GRAPH: fprintf(out, " (%d nodes)", a->n); break;
    case ONNX_ATTR_FLOATS:
    case ONNX_ATTR_INTS:
    case ONNX_ATTR_STRINGS:
        fputs(" [", out);
        for (int k = 0; k < a->n; k++) {
            if (k)
                fputs(", ", out);
            if (a->kind == ONNX_ATTR_FLOATS)
                put_float(out, a->floats[k]);
            else if (a->kind == ONNX_ATTR_INTS)
                fprintf(out, "%lld", (long long)a->ints[k]);
            else
                put_quoted(out, a->strings[k], a->string_lens[k]);
        }
        fputc(']', out);
        break;
    default: fprintf(out, " (%d)", a->n); break;
    }
    fputc('\n', out);
}

void onnx_dump(const OnnxModel *m, FILE *out)
{
    fputs("onnx ", out);
    put_name(out, m->path);
    fprintf(out, ": ir_version %lld, producer ", (long long)m->ir_version);
    put_name(out, m->producer);
    fputc(' ', out);
    put_name(out, m->producer_version);
    fputs(", graph ", out);
    put_name(out, m->graph_name);
    fputc('\n', out);
    for (int k = 0; k < m->nopsets; k++) {
        fputs("opset ", out);
        put_word(out, m->opsets[k].domain[0] ? m->opsets[k].domain : "ai.onnx");
        fprintf(out, " %lld\n", (long long)m->opsets[k].version);
    }
    for (int k = 0; k < m->ninputs; k++) {
        fputs("input ", out);
        put_value(out, &m->inputs[k]);
        fputc('\n', out);
    }
    for (int k = 0; k < m->noutputs; k++) {
        fputs("output ", out);
        put_value(out, &m->outputs[k]);
        fputc('\n', out);
    }
    for (int k = 0; k < m->ninits; k++) {
        fputs("initializer ", out);
        put_name(out, m->inits[k].name);
        fputs(": ", out);
        put_tensor(out, &m->inits[k]);
        fputc('\n', out);
    }
    for (int k = 0; k < m->nnodes; k++) {
        const OnnxNode *n = &m->nodes[k];
        fprintf(out, "node #%d ", n->index);
        put_name(out, n->name);
        fputc(' ', out);
        if (n->domain[0]) {
            put_word(out, n->domain);
            fputc('.', out);
        }
        put_word(out, n->op_type);
        fputc(':', out);
        for (int j = 0; j < n->ninputs; j++) {
            fputs(j ? ", " : " ", out);
            put_name(out, n->inputs[j]);
        }
        fputs(" ->", out);
        for (int j = 0; j < n->noutputs; j++) {
            fputs(j ? ", " : " ", out);
            put_name(out, n->outputs[j]);
        }
        fputc('\n', out);
        for (int j = 0; j < n->nattrs; j++)
            put_attr(out, &n->attrs[j]);
    }
    for (int k = 0; k < m->nvalue_infos; k++) {
        fputs("value_info ", out);
        put_value(out, &m->value_infos[k]);
        fputc('\n', out);
    }
}

/* ---- what the import maps --------------------------------------------------- */

static const struct {
    const char *domain, *op;
    int from, to;
} supported_ops[] = {
#define ONNX_OP(domain, op, from, to) {domain, op, from, to},
#include "onnx_ops.def"
#undef ONNX_OP
    {NULL, NULL, 0, 0},
};

int onnx_op_supported(const char *domain, const char *op_type, int64_t opset)
{
    for (int k = 0; supported_ops[k].op; k++)
        if (!strcmp(supported_ops[k].domain, domain) && !strcmp(supported_ops[k].op, op_type) &&
            opset >= supported_ops[k].from && opset <= supported_ops[k].to)
            return 1;
    return 0;
}

const OnnxNode *onnx_first_unsupported(const OnnxModel *m)
{
    for (int k = 0; k < m->nnodes; k++)
        if (!onnx_op_supported(m->nodes[k].domain, m->nodes[k].op_type, m->nodes[k].opset))
            return &m->nodes[k];
    return NULL;
}

void onnx_report_unsupported(const OnnxModel *m, const OnnxNode *n)
{
    char op[QUOTE_CAP], dom[QUOTE_CAP], path[QUOTE_CAP];
    escape(n->op_type, strlen(n->op_type), NAME_SHOWN, op, sizeof op);
    escape(n->domain[0] ? n->domain : "ai.onnx", strlen(n->domain[0] ? n->domain : "ai.onnx"), NAME_SHOWN, dom,
           sizeof dom);
    escape(m->path, strlen(m->path), 4 * NAME_SHOWN, path, sizeof path);
    char at[2 * QUOTE_CAP];
    diag_error((Loc){0}, "%s: unsupported op %s%s%s (%s opset %lld) at %s", path, n->domain[0] ? dom : "",
               n->domain[0] ? "." : "", op, dom, (long long)n->opset, label(n, 0, at, sizeof at));
}

/* ---- names ---------------------------------------------------------------- */

/* ASCII classes: the rule must not depend on the locale */
static int is_up(int ch) { return ch >= 'A' && ch <= 'Z'; }
static int is_low(int ch) { return ch >= 'a' && ch <= 'z'; }
static int is_dig(int ch) { return ch >= '0' && ch <= '9'; }

char *onnx_default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
    char *s = malloc(2 * n + 8);
    if (!s)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)base[i], prev = i ? (unsigned char)base[i - 1] : 0,
            next = i + 1 < n ? (unsigned char)base[i + 1] : 0;
        if (!is_up(ch) && !is_low(ch) && !is_dig(ch)) {
            if (k && s[k - 1] != '_')
                s[k++] = '_';
            continue;
        }
        /* a capital starts a word after a lower-case letter or a digit,
         * and ends a run of capitals when a lower-case letter follows: the
         * rule nnc names a model's files by (TinyMLPNet -> tiny_mlp_net) */
        if (is_up(ch) && k && s[k - 1] != '_' && (is_low(prev) || is_dig(prev) || (is_up(prev) && is_low(next))))
            s[k++] = '_';
        s[k++] = (char)(is_up(ch) ? ch - 'A' + 'a' : ch);
    }
    while (k && s[k - 1] == '_')
        k--;
    s[k] = 0;
    if (!k || is_dig(s[0])) {
        memmove(s + 6, s, k + 1);
        memcpy(s, "model_", 6);
        if (!k)
            s[5] = 0;
    }
    return s;
}

char *onnx_model_name(const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    size_t k = 0;
    int up = 1;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)name[i];
        /* '_' goes, and the letter after it is a capital; before a digit
         * it stays (v2_1 -> V2_1: V21 would read as another name) */
        if (ch == '_' && i + 1 < n && (is_low((unsigned char)name[i + 1]) || is_up((unsigned char)name[i + 1]))) {
            up = 1;
            continue;
        }
        s[k++] = (char)(up && is_low(ch) ? ch - 'a' + 'A' : ch);
        up = 0;
    }
    s[k] = 0;
    return s;
}

int onnx_name_ok(const char *name)
{
    if (!is_low((unsigned char)name[0]))
        return 0;
    for (const char *p = name; *p; p++)
        if (!is_low((unsigned char)*p) && !is_dig((unsigned char)*p) && *p != '_')
            return 0;
    return 1;
}
