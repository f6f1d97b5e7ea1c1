/* safetensors.c — checkpoints in the safetensors format.
 *
 * A checkpoint is an 8-byte little-endian header length, a JSON header that
 * maps each tensor name to {"dtype","shape","data_offsets"}, and the raw
 * little-endian data; names are PyTorch state_dict keys so that files move
 * between nnc and PyTorch unchanged.  Checkpoints come from anywhere, so the
 * reader is strict and bounds-checked: a small JSON parser that accepts
 * exactly RFC 8259 (plus the format's trailing space padding), limits on
 * every length and count, and a complete validation pass (names, dtypes,
 * shapes, offsets against the file size) before a single byte is copied
 * into the model, so that a failed load leaves the model as it was.  F16,
 * BF16 and F64 tensors (PyTorch's half, bfloat16 and double checkpoints)
 * are converted to float as they are read; saves write F32.  The
 * "__metadata__" entry is accepted and ignored by the model's load, and
 * so are tensors named NNC_TRAIN_PREFIX... (the driver's training state,
 * which nnc__st_read_state reads with the metadata).  Writes are atomic
 * (see fileio.c).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

/* The reference implementation refuses headers above 100 MB; so do we, so
 * that a corrupt length cannot make us allocate gigabytes. */
#define ST_MAX_HEADER (100u * 1000u * 1000u)
/* Nesting limit for skipped JSON values (inside __metadata__): recursion
 * depth must be bounded for hostile input. */
#define ST_MAX_DEPTH 64

/* ---- a growable string for building the header ------------------------------ */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->oom = 1;
        return;
    }
    sb_putn(b, tmp, (size_t)n);
}

/* A JSON string literal for a tensor name. */
static void sb_json_string(sbuf *b, const char *s)
{
    sb_putn(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            sb_putn(b, e, 2);
        } else if (*p < 0x20) {
            sb_printf(b, "\\u%04x", *p);
        } else {
            sb_putn(b, (const char *)p, 1);
        }
    }
    sb_putn(b, "\"", 1);
}

/* Shape as "[3, 4]" for error messages. */
static void fmt_shape(char *out, size_t cap, int ndim, const int64_t *shape)
{
    size_t k = 0;
    out[0] = '\0';
    k += (size_t)snprintf(out + k, cap - k, "[");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (k < cap)
        snprintf(out + k, cap - k, "]");
}

/* ---- writing ------------------------------------------------------------------ */

/* n int64_t (the header's length; a model's counters: few) as
 * little-endian I64 */
static void write_le64(nnc__atomic *a, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)((uint64_t)v[i] >> (8 * k));
        nnc__atomic_write(a, b, 8);
    }
}

int nnc_st_write(const char *path, const nnc_st_entry *e, size_t count)
{
    return nnc__st_write_meta(path, e, count, NULL, 0, NULL);
}

int nnc__st_write_meta(const char *path, const nnc_st_entry *e, size_t count, const nnc__kv *meta, size_t nmeta,
                       const nnc_dtype *dtypes)
{
    /* Validate everything first: a bad entry must not leave a temp file. */
    for (size_t i = 0; i < count; i++) {
        if (!e[i].name || !e[i].name[0])
            return nnc_fail("%s: tensor %zu has no name", path, i);
        if (strcmp(e[i].name, "__metadata__") == 0)
            return nnc_fail("%s: '__metadata__' is not a valid tensor name", path);
        if (e[i].ndim < 0 || e[i].ndim > NNC_MAX_DIMS)
            return nnc_fail("%s: tensor '%s': %d dims (at most %d)", path, e[i].name, e[i].ndim, NNC_MAX_DIMS);
        for (int d = 0; d < e[i].ndim; d++)
            if (e[i].shape[d] < 0)
                return nnc_fail("%s: tensor '%s': negative dim %d", path, e[i].name, e[i].shape[d]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(e[i].name, e[j].name) == 0)
                return nnc_fail("%s: duplicate tensor '%s'", path, e[i].name);
    }

    sbuf h = {0};
    sb_puts(&h, "{");
    if (nmeta) { /* string keys to string values, as the format allows */
        sb_puts(&h, "\"__metadata__\":{");
        for (size_t i = 0; i < nmeta; i++) {
            if (i)
                sb_puts(&h, ",");
            sb_json_string(&h, meta[i].key);
            sb_puts(&h, ":");
            sb_json_string(&h, meta[i].value);
        }
        sb_puts(&h, count ? "}," : "}");
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t size = 1;
        for (int d = 0; d < e[i].ndim; d++)
            size *= (uint64_t)e[i].shape[d];
        if (size > 0 && !e[i].data) {
            free(h.p);
            return nnc_fail("%s: tensor '%s' has no data", path, e[i].name);
        }
        if (i)
            sb_puts(&h, ",");
        sb_json_string(&h, e[i].name);
        const unsigned es = dtypes && dtypes[i] == NNC_I64 ? 8 : 4;
        sb_puts(&h, es == 8 ? ":{\"dtype\":\"I64\",\"shape\":[" : ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < e[i].ndim; d++)
            sb_printf(&h, d ? ",%d" : "%d", e[i].shape[d]);
        sb_printf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
                  (unsigned long long)(offset + es * size));
        offset += es * size;
    }
    sb_puts(&h, "}");
    /* Pad with spaces so that the data starts 8-byte aligned, as the
     * reference writer does: readers may then map the tensors in place. */
    while (!h.oom && (8 + h.len) % 8 != 0)
        sb_puts(&h, " ");
    if (h.oom) {
        free(h.p);
        errno = ENOMEM;
        return nnc_fail("%s: out of memory building the header", path);
    }

    nnc__atomic a;
    if (nnc__atomic_open(&a, path) != 0) {
        free(h.p);
        return -1;
    }
    write_le64(&a, &(const int64_t){(int64_t)h.len}, 1);
    nnc__atomic_write(&a, h.p, h.len);
    free(h.p);
    for (size_t i = 0; i < count; i++) {
        size_t size = 1;
        for (int d = 0; d < e[i].ndim; d++)
            size *= (size_t)e[i].shape[d];
        if (dtypes && dtypes[i] == NNC_I64)
            write_le64(&a, (const int64_t *)(const void *)e[i].data, size);
        else
            nnc__atomic_write_le32(&a, e[i].data, size);
    }
    return nnc__atomic_commit(&a);
}

int nnc_st_save(const char *path, const nnc_tensor_info *infos, size_t count, const float *params, const float *state)
{
    return nnc__st_save_meta(path, infos, count, params, state, NULL, 0, NULL, 0);
}

int nnc__st_save_meta(const char *path, const nnc_tensor_info *infos, size_t count, const float *params,
                      const float *state, const nnc_st_entry *extra, size_t nextra, const nnc__kv *meta, size_t nmeta)
{
    nnc_st_entry *e = malloc((count + nextra ? count + nextra : 1) * sizeof *e);
    nnc_dtype *dt = calloc(count + nextra ? count + nextra : 1, sizeof *dt); /* NNC_F32 is 0 */
    if (!e || !dt) {
        free(e);
        free(dt);
        errno = ENOMEM;
        return nnc_fail("%s: out of memory", path);
    }
    for (size_t i = 0; i < count; i++) {
        const float *base = infos[i].trainable ? params : state;
        if (!base && infos[i].size > 0) {
            free(e);
            free(dt);
            return nnc_fail("%s: tensor '%s': no %s array to save from", path, infos[i].name,
                            infos[i].trainable ? "params" : "state");
        }
        e[i].name = infos[i].name;
        e[i].ndim = infos[i].ndim;
        memcpy(e[i].shape, infos[i].shape, sizeof e[i].shape);
        e[i].data = base ? base + infos[i].offset : NULL;
        dt[i] = infos[i].dtype == NNC_I64 ? NNC_I64 : NNC_F32;
    }
    if (nextra)
        memcpy(e + count, extra, nextra * sizeof *e);
    int rc = nnc__st_write_meta(path, e, count + nextra, meta, nmeta, dt);
    free(e);
    free(dt);
    return rc;
}

/* ---- a strict JSON reader for the header ---------------------------------------- */

typedef struct jp {
    char *s; /* the header, mutable: strings are decoded in place */
    size_t n, i;
    const char *path;
} jp;

static int jp_fail(jp *p, const char *what)
{
    return nnc_fail("%s: bad JSON header at byte %zu: %s", p->path, p->i, what);
}

static void jp_ws(jp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int jp_peek(jp *p)
{
    jp_ws(p);
    return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static int jp_expect(jp *p, char c)
{
    if (jp_peek(p) != (unsigned char)c) {
        char what[32];
        snprintf(what, sizeof what, "expected '%c'", c);
        return jp_fail(p, what);
    }
    p->i++;
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int jp_hex4(jp *p, unsigned *out)
{
    if (p->n - p->i < 4)
        return jp_fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval((unsigned char)p->s[p->i + (size_t)k]);
        if (h < 0)
            return jp_fail(p, "bad \\u escape");
        v = v * 16 + (unsigned)h;
    }
    p->i += 4;
    *out = v;
    return 0;
}

/* Checks one UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF); returns its length or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (avail < len)
        return 0;
    unsigned cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Parses a string, decoding it in place; *out points at the NUL-terminated
 * result inside p->s.  Decoding never lengthens a string, so writing behind
 * the read position is safe.  A NUL character (\u0000) is refused: names
 * are C strings. */
static int jp_string(jp *p, char **out)
{
    if (jp_peek(p) != '"')
        return jp_fail(p, "expected a string");
    p->i++;
    size_t w = p->i;
    char *start = p->s + w;
    for (;;) {
        if (p->i >= p->n)
            return jp_fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            p->s[w] = '\0';
            *out = start;
            return 0;
        }
        if (c < 0x20)
            return jp_fail(p, "control character in string");
        if (c != '\\') {
            size_t len = utf8_len((const unsigned char *)p->s + p->i, p->n - p->i);
            if (len == 0)
                return jp_fail(p, "invalid UTF-8 in string");
            memmove(p->s + w, p->s + p->i, len);
            w += len;
            p->i += len;
            continue;
        }
        p->i++;
        if (p->i >= p->n)
            return jp_fail(p, "unterminated string");
        char e = p->s[p->i++];
        char simple = 0;
        switch (e) {
        case '"': simple = '"'; break;
        case '\\': simple = '\\'; break;
        case '/': simple = '/'; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        case 'u': break;
        default: p->i--; return jp_fail(p, "bad escape in string");
        }
        if (simple) {
            p->s[w++] = simple;
            continue;
        }
        unsigned cp;
        if (jp_hex4(p, &cp) != 0)
            return -1;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
                return jp_fail(p, "unpaired surrogate in string");
            p->i += 2;
            if (jp_hex4(p, &lo) != 0)
                return -1;
            if (lo < 0xDC00 || lo > 0xDFFF)
                return jp_fail(p, "unpaired surrogate in string");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return jp_fail(p, "unpaired surrogate in string");
        }
        if (cp == 0)
            return jp_fail(p, "NUL character in string");
        /* At least 6 input bytes were consumed; UTF-8 needs at most 4. */
        if (cp < 0x80) {
            p->s[w++] = (char)cp;
        } else if (cp < 0x800) {
            p->s[w++] = (char)(0xC0 | (cp >> 6));
            p->s[w++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            p->s[w++] = (char)(0xE0 | (cp >> 12));
            p->s[w++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            p->s[w++] = (char)(0x80 | (cp & 0x3F));
        } else {
            p->s[w++] = (char)(0xF0 | (cp >> 18));
            p->s[w++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            p->s[w++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            p->s[w++] = (char)(0x80 | (cp & 0x3F));
        }
    }
}

/* A non-negative JSON integer (no sign, fraction or exponent), at most
 * 2^62 so that sums of two never overflow. */
static int jp_uint(jp *p, uint64_t *out)
{
    int c = jp_peek(p);
    if (c < '0' || c > '9')
        return jp_fail(p, "expected a non-negative integer");
    size_t start = p->i;
    uint64_t v = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        /* Checked before multiplying, so v never wraps. */
        if (v > ((UINT64_C(1) << 62) - 9) / 10) {
            p->i = start;
            return jp_fail(p, "integer too large");
        }
        v = v * 10 + (uint64_t)(p->s[p->i] - '0');
        p->i++;
    }
    if (p->s[start] == '0' && p->i - start > 1) {
        p->i = start;
        return jp_fail(p, "leading zero in integer");
    }
    if (p->i < p->n && (p->s[p->i] == '.' || p->s[p->i] == 'e' || p->s[p->i] == 'E'))
        return jp_fail(p, "expected a non-negative integer");
    *out = v;
    return 0;
}

/* Any JSON number, validated against the RFC grammar and skipped. */
static int jp_skip_number(jp *p)
{
    size_t i = p->i;
    const char *s = p->s;
    if (i < p->n && s[i] == '-')
        i++;
    if (i >= p->n || s[i] < '0' || s[i] > '9')
        return jp_fail(p, "bad number");
    if (s[i] == '0') {
        i++;
    } else {
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->n && s[i] == '.') {
        i++;
        if (i >= p->n || s[i] < '0' || s[i] > '9')
            return jp_fail(p, "bad number");
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->n || s[i] < '0' || s[i] > '9')
            return jp_fail(p, "bad number");
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    p->i = i;
    return 0;
}

static int jp_skip_value(jp *p, int depth)
{
    if (depth > ST_MAX_DEPTH)
        return jp_fail(p, "nested too deeply");
    int c = jp_peek(p);
    char *ignored;
    switch (c) {
    case '"': return jp_string(p, &ignored);
    case '{':
        p->i++;
        if (jp_peek(p) == '}') {
            p->i++;
            return 0;
        }
        for (;;) {
            if (jp_string(p, &ignored) || jp_expect(p, ':') || jp_skip_value(p, depth + 1))
                return -1;
            c = jp_peek(p);
            p->i++;
            if (c == '}')
                return 0;
            if (c != ',') {
                p->i--;
                return jp_fail(p, "expected ',' or '}'");
            }
        }
    case '[':
        p->i++;
        if (jp_peek(p) == ']') {
            p->i++;
            return 0;
        }
        for (;;) {
            if (jp_skip_value(p, depth + 1))
                return -1;
            c = jp_peek(p);
            p->i++;
            if (c == ']')
                return 0;
            if (c != ',') {
                p->i--;
                return jp_fail(p, "expected ',' or ']'");
            }
        }
    case 't':
    case 'f':
    case 'n': {
        const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t len = strlen(word);
        if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0)
            return jp_fail(p, "unexpected token");
        p->i += len;
        return 0;
    }
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return jp_skip_number(p);
        return jp_fail(p, c < 0 ? "unexpected end" : "unexpected character");
    }
}

/* ---- reading ------------------------------------------------------------------------ */

typedef struct st_tensor {
    char *name; /* inside the header buffer */
    char *dtype;
    int ndim;
    int64_t shape[NNC_MAX_DIMS];
    uint64_t begin, end;
    size_t info; /* index into infos, once matched */
} st_tensor;

/* [n0, n1, ...] of non-negative integers, at most `max` of them. */
static int jp_uint_array(jp *p, uint64_t *v, int max, int *count, const char *name, const char *field)
{
    if (jp_expect(p, '['))
        return -1;
    *count = 0;
    if (jp_peek(p) == ']') {
        p->i++;
        return 0;
    }
    for (;;) {
        if (*count >= max)
            return nnc_fail("%s: tensor '%s': %s has more than %d entries", p->path, name, field, max);
        if (jp_uint(p, &v[*count]))
            return -1;
        (*count)++;
        int c = jp_peek(p);
        p->i++;
        if (c == ']')
            return 0;
        if (c != ',') {
            p->i--;
            return jp_fail(p, "expected ',' or ']'");
        }
    }
}

static int parse_tensor(jp *p, st_tensor *t)
{
    int have_dtype = 0, have_shape = 0, have_offsets = 0;
    if (jp_expect(p, '{'))
        return -1;
    if (jp_peek(p) == '}')
        p->i++;
    else
        for (;;) {
            char *key;
            if (jp_string(p, &key) || jp_expect(p, ':'))
                return -1;
            if (strcmp(key, "dtype") == 0) {
                if (have_dtype++)
                    return nnc_fail("%s: tensor '%s': duplicate dtype", p->path, t->name);
                if (jp_string(p, &t->dtype))
                    return -1;
            } else if (strcmp(key, "shape") == 0) {
                uint64_t v[NNC_MAX_DIMS];
                if (have_shape++)
                    return nnc_fail("%s: tensor '%s': duplicate shape", p->path, t->name);
                if (jp_uint_array(p, v, NNC_MAX_DIMS, &t->ndim, t->name, "shape"))
                    return -1;
                for (int d = 0; d < t->ndim; d++) {
                    if (v[d] > INT32_MAX)
                        return nnc_fail("%s: tensor '%s': dim %llu too large", p->path, t->name,
                                        (unsigned long long)v[d]);
                    t->shape[d] = (int64_t)v[d];
                }
            } else if (strcmp(key, "data_offsets") == 0) {
                uint64_t v[2];
                int n;
                if (have_offsets++)
                    return nnc_fail("%s: tensor '%s': duplicate data_offsets", p->path, t->name);
                if (jp_uint_array(p, v, 2, &n, t->name, "data_offsets"))
                    return -1;
                if (n != 2)
                    return nnc_fail("%s: tensor '%s': data_offsets must be [begin, end]", p->path, t->name);
                t->begin = v[0];
                t->end = v[1];
            } else {
                return nnc_fail("%s: tensor '%s': unknown field '%s'", p->path, t->name, key);
            }
            int c = jp_peek(p);
            p->i++;
            if (c == '}')
                break;
            if (c != ',') {
                p->i--;
                return jp_fail(p, "expected ',' or '}'");
            }
        }
    if (!have_dtype || !have_shape || !have_offsets)
        return nnc_fail("%s: tensor '%s': missing %s", p->path, t->name,
                        !have_dtype       ? "dtype"
                            : !have_shape ? "shape"
                                          : "data_offsets");
    return 0;
}

/* __metadata__'s object of strings into a malloc'd array (the strings
 * stay in the header buffer) */
static int parse_meta(jp *p, nnc__kv **out, size_t *count)
{
    nnc__kv *kv = NULL;
    size_t n = 0, cap = 0;
    if (jp_expect(p, '{'))
        return -1;
    if (jp_peek(p) == '}') {
        p->i++;
        return 0;
    }
    for (;;) {
        char *key, *value;
        if (jp_string(p, &key) || jp_expect(p, ':'))
            goto fail;
        if (jp_peek(p) != '"') {
            jp_fail(p, "__metadata__ values must be strings");
            goto fail;
        }
        if (jp_string(p, &value))
            goto fail;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            nnc__kv *nk = realloc(kv, ncap * sizeof *nk);
            if (!nk) {
                errno = ENOMEM;
                nnc_fail("%s: out of memory reading the header", p->path);
                goto fail;
            }
            kv = nk, cap = ncap;
        }
        kv[n].key = key, kv[n].value = value, n++;
        int c = jp_peek(p);
        p->i++;
        if (c == '}')
            break;
        if (c != ',') {
            p->i--;
            jp_fail(p, "expected ',' or '}'");
            goto fail;
        }
    }
    *out = kv;
    *count = n;
    return 0;
fail:
    free(kv);
    return -1;
}

/* Parses the whole header into a malloc'd array of tensors, and with
 * `meta` __metadata__'s pairs (else that entry is checked and skipped). */
static int parse_header(jp *p, st_tensor **out, size_t *count, nnc__kv **meta, size_t *nmeta)
{
    st_tensor *ts = NULL;
    size_t n = 0, cap = 0;
    int have_meta = 0;
    *out = NULL;
    *count = 0;
    if (meta)
        *meta = NULL, *nmeta = 0;
    if (jp_expect(p, '{'))
        return -1;
    if (jp_peek(p) == '}') {
        p->i++;
    } else {
        for (;;) {
            char *key;
            if (jp_string(p, &key) || jp_expect(p, ':'))
                goto fail;
            if (strcmp(key, "__metadata__") == 0) {
                if (have_meta++) {
                    nnc_fail("%s: duplicate __metadata__", p->path);
                    goto fail;
                }
                if (jp_peek(p) != '{') {
                    jp_fail(p, "__metadata__ must be an object");
                    goto fail;
                }
                if (meta ? parse_meta(p, meta, nmeta) : jp_skip_value(p, 0))
                    goto fail;
            } else {
                if (n == cap) {
                    size_t ncap = cap ? 2 * cap : 16;
                    st_tensor *nt = realloc(ts, ncap * sizeof *nt);
                    if (!nt) {
                        errno = ENOMEM;
                        nnc_fail("%s: out of memory reading the header", p->path);
                        goto fail;
                    }
                    ts = nt;
                    cap = ncap;
                }
                st_tensor *t = &ts[n++];
                memset(t, 0, sizeof *t);
                t->name = key;
                if (parse_tensor(p, t))
                    goto fail;
            }
            int c = jp_peek(p);
            p->i++;
            if (c == '}')
                break;
            if (c != ',') {
                p->i--;
                jp_fail(p, "expected ',' or '}'");
                goto fail;
            }
        }
    }
    /* Only white space (the writer's padding) may follow the object. */
    jp_ws(p);
    if (p->i != p->n) {
        jp_fail(p, "trailing characters after the header object");
        goto fail;
    }
    *out = ts;
    *count = n;
    return 0;
fail:
    free(ts);
    if (meta) {
        free(*meta);
        *meta = NULL, *nmeta = 0;
    }
    return -1;
}

/* Bytes per element of the dtypes a load converts to float (PyTorch's
 * half, bfloat16 and double checkpoints), or 0 */
static size_t dtype_size(const char *dt)
{
    return !strcmp(dt, "F32") ? 4 : !strcmp(dt, "F16") || !strcmp(dt, "BF16") ? 2 : !strcmp(dt, "F64") ? 8 : 0;
}

/* IEEE half to float, exactly (every half is a float): subnormals
 * scaled, infinities and NaNs kept */
static float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
    uint32_t u;
    if (e == 31)
        u = sign | 0x7f800000u | m << 13;
    else if (e)
        u = sign | (e + 112) << 23 | m << 13;
    else {
        float f = (float)m * 0x1p-24f; /* subnormal or zero: m 2^-24 */
        memcpy(&u, &f, sizeof u);
        u |= sign;
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* n little-endian elements of dtype dt (F16, BF16 or F64) at raw, as
 * floats into out; the dtype is looked at once, not per element */
static void to_float(const char *dt, const unsigned char *raw, size_t n, float *out)
{
    if (!strcmp(dt, "F16"))
        for (size_t i = 0; i < n; i++)
            out[i] = half_to_float((uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8));
    else if (!strcmp(dt, "BF16"))
        for (size_t i = 0; i < n; i++) {
            const uint32_t u = (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) << 16;
            memcpy(&out[i], &u, sizeof u);
        }
    else /* F64, rounded to the nearest float */
        for (size_t i = 0; i < n; i++) {
            double d;
            const uint64_t u = nnc__load_le64(raw + 8 * i);
            memcpy(&d, &u, sizeof d);
            out[i] = (float)d;
        }
}

static int cmp_begin(const void *a, const void *b)
{
    const st_tensor *const *x = a, *const *y = b;
    if ((*x)->begin != (*y)->begin)
        return (*x)->begin < (*y)->begin ? -1 : 1;
    return (*x)->end < (*y)->end ? -1 : (*x)->end > (*y)->end;
}

/* Checks the parsed header against the model's tensors and the data size. */
static int validate(const char *path, st_tensor *ts, size_t nt, const nnc_tensor_info *infos, size_t count,
                    uint64_t data_len, size_t *map, int strict)
{
    for (size_t k = 0; k < count; k++)
        map[k] = SIZE_MAX;
    for (size_t i = 0; i < nt; i++) {
        st_tensor *t = &ts[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(ts[j].name, t->name) == 0)
                return nnc_fail("%s: duplicate tensor '%s'", path, t->name);
        if (!strncmp(t->name, NNC_TRAIN_PREFIX, strlen(NNC_TRAIN_PREFIX))) { /* the driver's training state */
            t->info = SIZE_MAX;
            continue;
        }
        size_t k = 0;
        while (k < count && strcmp(infos[k].name, t->name) != 0)
            k++;
        if (k == count && !strict) { /* listed by the caller once the file is known good */
            t->info = SIZE_MAX;
            continue;
        }
        if (k == count)
            return nnc_fail("%s: unexpected tensor '%s' (the model has no such param or state)", path, t->name);
        t->info = k;
        map[k] = i;
        const nnc_tensor_info *in = &infos[k];
        const size_t es = in->dtype == NNC_I64 ? 8 * !strcmp(t->dtype, "I64") : dtype_size(t->dtype);
        if (!es)
            return nnc_fail("%s: tensor '%s': dtype %s, expected %s", path, t->name, t->dtype,
                            in->dtype == NNC_I64 ? "I64" : "F32, F16, BF16 or F64");
        int same = t->ndim == in->ndim;
        for (int d = 0; same && d < t->ndim; d++)
            same = t->shape[d] == in->shape[d];
        if (!same) {
            int64_t want[NNC_MAX_DIMS];
            char got_s[200], want_s[200];
            for (int d = 0; d < in->ndim && d < NNC_MAX_DIMS; d++)
                want[d] = in->shape[d];
            fmt_shape(got_s, sizeof got_s, t->ndim, t->shape);
            fmt_shape(want_s, sizeof want_s, in->ndim, want);
            return nnc_fail("%s: tensor '%s': shape %s, expected %s", path, t->name, got_s, want_s);
        }
        uint64_t need = es * (uint64_t)in->size;
        if (t->begin > t->end)
            return nnc_fail("%s: tensor '%s': data_offsets [%llu, %llu] are reversed", path, t->name,
                            (unsigned long long)t->begin, (unsigned long long)t->end);
        if (t->end - t->begin != need)
            return nnc_fail("%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, "
                            "its shape needs %llu",
                            path, t->name, (unsigned long long)t->begin, (unsigned long long)t->end,
                            (unsigned long long)(t->end - t->begin), (unsigned long long)need);
        if (t->end > data_len)
            return nnc_fail("%s: truncated data: tensor '%s' needs bytes [%llu, %llu) of the "
                            "data section, which has %llu",
                            path, t->name, (unsigned long long)t->begin, (unsigned long long)t->end,
                            (unsigned long long)data_len);
    }
    /* a counter may be missing: PyTorch's own BatchNorm loads checkpoints
     * that predate num_batches_tracked with it at 0 (st_load does too) */
    for (size_t k = 0; k < count && strict; k++)
        if (map[k] == SIZE_MAX && infos[k].dtype != NNC_I64)
            return nnc_fail("%s: missing tensor '%s'", path, infos[k].name);
    /* No two tensors may share bytes: sort by offset, compare neighbours. */
    if (nt > 1) {
        st_tensor **order = malloc(nt * sizeof *order);
        if (!order) {
            errno = ENOMEM;
            return nnc_fail("%s: out of memory", path);
        }
        for (size_t i = 0; i < nt; i++)
            order[i] = &ts[i];
        qsort(order, nt, sizeof *order, cmp_begin);
        for (size_t i = 1; i < nt; i++) {
            if (order[i]->begin == order[i]->end)
                continue;
            /* find the previous non-empty tensor */
            size_t j = i;
            while (j > 0 && order[j - 1]->begin == order[j - 1]->end)
                j--;
            if (j > 0 && order[i]->begin < order[j - 1]->end) {
                int rc = nnc_fail("%s: tensors '%s' and '%s' overlap in the data section", path, order[j - 1]->name,
                                  order[i]->name);
                free(order);
                return rc;
            }
        }
        free(order);
    }
    return 0;
}

/* Opens a checkpoint and parses its header: the open file, the header
 * buffer (which the names point into), the tensors, where the data starts
 * and the file's size; 0, or -1 with nnc_error() set and nothing left open
 * or allocated. */
typedef struct st_file {
    FILE *f;
    char *header;
    st_tensor *ts;
    size_t nt;
    uint64_t data_start, file_size;
} st_file;

static void st_close(st_file *sf)
{
    free(sf->ts);
    free(sf->header);
    if (sf->f)
        fclose(sf->f);
    memset(sf, 0, sizeof *sf);
}

static int st_open(const char *path, st_file *sf, nnc__kv **meta, size_t *nmeta)
{
    int rc = -1;
    char *header = NULL;
    st_tensor *ts = NULL;
    size_t nt = 0;
    memset(sf, 0, sizeof *sf);

    FILE *f = fopen(path, "rb");
    if (!f)
        return nnc_fail("%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        nnc_fail("%s: cannot stat: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        nnc_fail("%s: not a regular file", path);
        goto out;
    }
    uint64_t file_size = (uint64_t)st.st_size;
    unsigned char len8[8];
    if (file_size < 8 || fread(len8, 1, 8, f) != 8) {
        nnc_fail("%s: truncated header length (file has %llu bytes, needs at least 8)", path,
                 (unsigned long long)file_size);
        goto out;
    }
    uint64_t hlen = nnc__load_le64(len8);
    if (hlen > file_size - 8) {
        nnc_fail("%s: header length %llu past end of file (%llu bytes)", path, (unsigned long long)hlen,
                 (unsigned long long)file_size);
        goto out;
    }
    if (hlen > ST_MAX_HEADER) {
        nnc_fail("%s: header length %llu too large (limit %u)", path, (unsigned long long)hlen, ST_MAX_HEADER);
        goto out;
    }
    if (hlen < 2) {
        nnc_fail("%s: bad JSON header: %llu bytes", path, (unsigned long long)hlen);
        goto out;
    }
    header = malloc((size_t)hlen + 1);
    if (!header) {
        nnc_fail("%s: out of memory for a %llu-byte header", path, (unsigned long long)hlen);
        goto out;
    }
    if (fread(header, 1, (size_t)hlen, f) != (size_t)hlen) {
        nnc_fail("%s: cannot read the header: %s", path, ferror(f) ? strerror(errno) : "file shrank while reading");
        goto out;
    }
    header[hlen] = '\0';
    jp p = {header, (size_t)hlen, 0, path};
    if (parse_header(&p, &ts, &nt, meta, nmeta))
        goto out;
    sf->f = f, sf->header = header, sf->ts = ts, sf->nt = nt;
    sf->data_start = 8 + hlen, sf->file_size = file_size;
    return 0;
out:
    free(ts);
    free(header);
    fclose(f);
    return rc;
}

/* Floats of staging a tensor takes: an I64 counter takes two. */
static size_t stage_size(const nnc_tensor_info *in) { return in->dtype == NNC_I64 ? 2 : in->size; }

/* nnc_st_load and nnc_st_load_non_strict: strict 0 skips the file's
 * tensors the model lacks and keeps the model's tensors the file lacks,
 * listing both on stderr after the whole file has been checked */
static int st_load(const char *path, const nnc_tensor_info *infos, size_t count, float *params, float *state,
                   int strict)
{
    int rc = -1;
    size_t *map = NULL;
    float *stage = NULL;
    st_file sf;
    if (st_open(path, &sf, NULL, NULL))
        return -1;
    FILE *f = sf.f;
    st_tensor *ts = sf.ts;
    const size_t nt = sf.nt;
    const uint64_t file_size = sf.file_size;

    map = malloc((count ? count : 1) * sizeof *map);
    if (!map) {
        nnc_fail("%s: out of memory", path);
        goto out;
    }
    const uint64_t data_start = sf.data_start;
    if (validate(path, ts, nt, infos, count, file_size - data_start, map, strict))
        goto out;

    /* Stage every tensor first: only a complete, successful read touches
     * the model. */
    size_t total = 0;
    for (size_t k = 0; k < count; k++) {
        if (!infos[k].trainable && !state && infos[k].size > 0) {
            nnc_fail("%s: tensor '%s': the model has no state array", path, infos[k].name);
            goto out;
        }
        if (infos[k].trainable && !params && infos[k].size > 0) {
            nnc_fail("%s: tensor '%s': the model has no params array", path, infos[k].name);
            goto out;
        }
        total += stage_size(&infos[k]);
    }
    stage = malloc((total ? total : 1) * sizeof *stage);
    if (!stage) {
        nnc_fail("%s: out of memory for %zu floats", path, total);
        goto out;
    }
    size_t at = 0;
    for (size_t k = 0; k < count; k++) {
        if (map[k] == SIZE_MAX) /* missing, non-strict: kept as it is */
            continue;
        const st_tensor *t = &ts[map[k]];
        size_t n = infos[k].size, es = dtype_size(t->dtype);
        if (infos[k].dtype == NNC_I64) { /* one little-endian int64_t */
            unsigned char raw[8];
            if (fseeko(f, (off_t)(data_start + t->begin), SEEK_SET) != 0 || fread(raw, 8, 1, f) != 1) {
                nnc_fail("%s: truncated data reading tensor '%s'", path, infos[k].name);
                goto out;
            }
            const int64_t v = (int64_t)nnc__load_le64(raw);
            memcpy(stage + at, &v, sizeof v);
            at += 2;
            continue;
        }
        if (n > 0) {
            /* F32 straight into the stage; the others through raw bytes */
            unsigned char *raw = es == 4 ? (unsigned char *)(stage + at) : malloc(n * es);
            if (!raw) {
                nnc_fail("%s: out of memory for tensor '%s'", path, infos[k].name);
                goto out;
            }
            const int ok = fseeko(f, (off_t)(data_start + t->begin), SEEK_SET) == 0 && fread(raw, es, n, f) == n;
            if (ok && es == 4)
                nnc__le32_to_host(stage + at, n);
            else if (ok)
                to_float(t->dtype, raw, n, stage + at);
            if (es != 4)
                free(raw);
            if (!ok) {
                nnc_fail("%s: truncated data reading tensor '%s'%s%s", path, infos[k].name, ferror(f) ? ": " : "",
                         ferror(f) ? strerror(errno) : "");
                goto out;
            }
        }
        at += n;
    }
    at = 0;
    for (size_t k = 0; k < count; k++) {
        float *dst = (infos[k].trainable ? params : state);
        if (map[k] == SIZE_MAX) {
            if (strict) { /* a counter the file lacks starts again at 0 */
                const int64_t zero = 0;
                memcpy(dst + infos[k].offset, &zero, sizeof zero);
            }
            continue;
        }
        if (infos[k].dtype == NNC_I64)
            memcpy(dst + infos[k].offset, stage + at, sizeof(int64_t));
        else if (infos[k].size > 0)
            memcpy(dst + infos[k].offset, stage + at, infos[k].size * sizeof(float));
        at += stage_size(&infos[k]);
    }
    if (!strict) { /* PyTorch's load_state_dict(strict=False) lists both */
        for (size_t i = 0; i < nt; i++)
            if (ts[i].info == SIZE_MAX && strncmp(ts[i].name, NNC_TRAIN_PREFIX, strlen(NNC_TRAIN_PREFIX)))
                fprintf(stderr, "%s: ignored tensor '%s' (the model has no such param or state)\n", path, ts[i].name);
        for (size_t k = 0; k < count; k++)
            if (map[k] == SIZE_MAX)
                fprintf(stderr, "%s: missing tensor '%s' (left as it was)\n", path, infos[k].name);
    }
    rc = 0;
out:
    free(stage);
    free(map);
    st_close(&sf);
    return rc;
}

int nnc_st_load(const char *path, const nnc_tensor_info *infos, size_t count, float *params, float *state)
{
    return st_load(path, infos, count, params, state, 1);
}

int nnc_st_load_non_strict(const char *path, const nnc_tensor_info *infos, size_t count, float *params, float *state)
{
    return st_load(path, infos, count, params, state, 0);
}

int nnc__st_read_state(const char *path, nnc__kv **meta, size_t *nmeta, char **keep, const char *const *names,
                       float *const *outs, const size_t *sizes, size_t count)
{
    st_file sf;
    int rc = 0;
    *keep = NULL;
    if (st_open(path, &sf, meta, nmeta))
        return -1;
    for (size_t k = 0; k < count && !rc; k++) {
        const st_tensor *t = NULL;
        for (size_t i = 0; i < sf.nt && !t; i++)
            if (!strcmp(sf.ts[i].name, names[k]))
                t = &sf.ts[i];
        const uint64_t need = 4 * (uint64_t)sizes[k];
        const char *bad = !t                                    ? "missing"
            : strcmp(t->dtype, "F32")                           ? "not F32"
            : t->ndim != 1 || (uint64_t)t->shape[0] != sizes[k] ? "of another size than the model's params"
            : t->begin > t->end || t->end - t->begin != need || t->end > sf.file_size - sf.data_start
            ? "outside the data"
            : NULL;
        if (bad || fseeko(sf.f, (off_t)(sf.data_start + t->begin), SEEK_SET) != 0 ||
            fread(outs[k], 4, sizes[k], sf.f) != sizes[k]) {
            nnc_fail("%s: training state '%s' %s", path, names[k], bad ? bad : "truncated");
            rc = -2;
            break;
        }
        nnc__le32_to_host(outs[k], sizes[k]);
    }
    /* the metadata stays readable on failure too: the caller tells a
     * checkpoint without training state from a damaged one */
    *keep = sf.header; /* the metadata's strings */
    sf.header = NULL;
    st_close(&sf);
    return rc;
}
