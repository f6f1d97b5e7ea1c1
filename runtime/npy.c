/* npy.c — NumPy .npy arrays, the driver's data format.
 *
 * The driver reads inputs and labels and writes predictions as .npy files
 * so that data moves to and from NumPy and PyTorch with np.save/np.load and
 * nothing else.  Only what the models use is supported: little-endian
 * float32 ("<f4") and int32 ("<i4") in C order, format versions 1.0, 2.0
 * and 3.0.  The header is a Python dict literal; it is parsed strictly (the
 * three keys numpy writes, nothing else) with every length bounds-checked,
 * and the data size must match the shape exactly, so that a truncated or
 * mislabelled file is an error naming the file rather than garbage in a
 * training run.  Writes are atomic (see fileio.c).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* A header longer than this is not one numpy would write for <= 8 dims. */
#define NPY_MAX_HEADER (1u << 20)

/* ---- header parsing ---------------------------------------------------------------- */

typedef struct hp {
    const char *s;
    size_t n, i;
    const char *path;
} hp;

static int hp_fail(hp *p, const char *what)
{
    return nnc_fail("%s: bad .npy header at byte %zu: %s", p->path, p->i, what);
}

static int hp_peek(hp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
    return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

/* A Python string literal without escapes ('<f4' or "<f4"), copied into
 * out (at most cap-1 characters). */
static int hp_string(hp *p, char *out, size_t cap)
{
    int q = hp_peek(p);
    if (q != '\'' && q != '"')
        return hp_fail(p, "expected a string");
    p->i++;
    size_t k = 0;
    while (p->i < p->n && p->s[p->i] != (char)q) {
        if (p->s[p->i] == '\\' || (unsigned char)p->s[p->i] < 0x20)
            return hp_fail(p, "unexpected character in string");
        if (k + 1 >= cap)
            return hp_fail(p, "string too long");
        out[k++] = p->s[p->i++];
    }
    if (p->i >= p->n)
        return hp_fail(p, "unterminated string");
    p->i++;
    out[k] = '\0';
    return 0;
}

static int hp_word(hp *p, const char *w)
{
    size_t len = strlen(w);
    if (p->n - p->i >= len && memcmp(p->s + p->i, w, len) == 0) {
        p->i += len;
        return 1;
    }
    return 0;
}

/* (d0, d1, ...) with numpy's trailing comma for 1-tuples; () for 0-D. */
static int hp_shape(hp *p, int *ndim, int64_t *shape)
{
    if (hp_peek(p) != '(')
        return hp_fail(p, "expected a shape tuple");
    p->i++;
    *ndim = 0;
    for (;;) {
        int c = hp_peek(p);
        if (c == ')') {
            p->i++;
            break;
        }
        if (c < '0' || c > '9')
            return hp_fail(p, "expected a non-negative dimension");
        if (*ndim >= NNC_MAX_DIMS)
            return nnc_fail("%s: more than %d dimensions", p->path, NNC_MAX_DIMS);
        int64_t v = 0;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
            v = v * 10 + (p->s[p->i] - '0');
            if (v > INT64_C(1) << 40)
                return hp_fail(p, "dimension too large");
            p->i++;
        }
        shape[(*ndim)++] = v;
        c = hp_peek(p);
        if (c == ',') {
            p->i++;
        } else if (c != ')') {
            return hp_fail(p, "expected ',' or ')'");
        }
    }
    /* "(3)" is an int in Python, not a tuple: numpy never writes it. */
    return 0;
}

static int parse_npy_header(hp *p, char *descr, size_t descr_cap, int *fortran, int *ndim, int64_t *shape)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (hp_peek(p) != '{')
        return hp_fail(p, "expected '{'");
    p->i++;
    for (;;) {
        int c = hp_peek(p);
        if (c == '}') {
            p->i++;
            break;
        }
        char key[32];
        if (hp_string(p, key, sizeof key))
            return -1;
        if (hp_peek(p) != ':')
            return hp_fail(p, "expected ':'");
        p->i++;
        if (strcmp(key, "descr") == 0 && !have_descr++) {
            if (hp_string(p, descr, descr_cap))
                return -1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran++) {
            hp_peek(p);
            if (hp_word(p, "True"))
                *fortran = 1;
            else if (hp_word(p, "False"))
                *fortran = 0;
            else
                return hp_fail(p, "fortran_order must be True or False");
        } else if (strcmp(key, "shape") == 0 && !have_shape++) {
            if (hp_shape(p, ndim, shape))
                return -1;
        } else {
            return nnc_fail("%s: bad .npy header: unexpected or repeated key '%s'", p->path, key);
        }
        c = hp_peek(p);
        if (c == ',') {
            p->i++;
        } else if (c != '}') {
            return hp_fail(p, "expected ',' or '}'");
        }
    }
    if (hp_peek(p) != -1)
        return hp_fail(p, "characters after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
        return nnc_fail("%s: bad .npy header: missing '%s'", p->path,
                        !have_descr         ? "descr"
                            : !have_fortran ? "fortran_order"
                                            : "shape");
    return 0;
}

/* ---- reading --------------------------------------------------------------------------- */

int nnc_npy_read(const char *path, nnc_array *out)
{
    memset(out, 0, sizeof *out);
    int rc = -1;
    char *header = NULL;
    void *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return nnc_fail("%s: cannot open: %s", path, strerror(errno));

    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f);
    if (got < 6 || memcmp(pre, npy_magic, 6) != 0) {
        nnc_fail("%s: not a .npy file (bad magic)", path);
        goto out;
    }
    if (got < 10) {
        nnc_fail("%s: truncated .npy header", path);
        goto out;
    }
    int major = pre[6], minor = pre[7];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = nnc__load_le16(pre + 8);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            nnc_fail("%s: truncated .npy header", path);
            goto out;
        }
        hlen = nnc__load_le32(pre + 8);
        hstart = 12;
    } else {
        nnc_fail("%s: unsupported .npy format version %d.%d", path, major, minor);
        goto out;
    }
    if (minor != 0) {
        nnc_fail("%s: unsupported .npy format version %d.%d", path, major, minor);
        goto out;
    }
    if (hlen > NPY_MAX_HEADER) {
        nnc_fail("%s: .npy header length %zu too large", path, hlen);
        goto out;
    }
    header = malloc(hlen + 1);
    if (!header) {
        nnc_fail("%s: out of memory", path);
        goto out;
    }
    if (fread(header, 1, hlen, f) != hlen) {
        nnc_fail("%s: truncated .npy header", path);
        goto out;
    }
    header[hlen] = '\0';

    char descr[32] = "";
    int fortran = 0, ndim = 0;
    int64_t shape[NNC_MAX_DIMS];
    hp p = {header, hlen, 0, path};
    if (parse_npy_header(&p, descr, sizeof descr, &fortran, &ndim, shape))
        goto out;
    nnc_dtype dtype;
    if (strcmp(descr, "<f4") == 0) {
        dtype = NNC_F32;
    } else if (strcmp(descr, "<i4") == 0) {
        dtype = NNC_I32;
    } else {
        nnc_fail("%s: dtype '%s' not supported (expected '<f4' or '<i4')", path, descr);
        goto out;
    }
    if (fortran && ndim > 1) {
        /* A Fortran-order array of 0 or 1 dims is laid out like C order;
         * numpy writes fortran_order True for those only when asked to. */
        nnc_fail("%s: Fortran-order arrays are not supported (save a C-order copy)", path);
        goto out;
    }
    int64_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] != 0 && count > (INT64_C(1) << 60) / shape[d]) {
            nnc_fail("%s: shape too large", path);
            goto out;
        }
        count *= shape[d];
    }
    uint64_t need = 4 * (uint64_t)count;

    /* For a regular file, compare sizes before allocating, so that a
     * corrupt shape cannot make us allocate terabytes. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        uint64_t have = (uint64_t)st.st_size > hstart + hlen ? (uint64_t)st.st_size - hstart - hlen : 0;
        if (have < need) {
            nnc_fail("%s: truncated data (expected %llu bytes, got %llu)", path, (unsigned long long)need,
                     (unsigned long long)have);
            goto out;
        }
        if (have > need) {
            nnc_fail("%s: %llu bytes after the array data (shape needs %llu)", path, (unsigned long long)(have - need),
                     (unsigned long long)need);
            goto out;
        }
    }
    if (need > SIZE_MAX - 1) {
        nnc_fail("%s: array too large", path);
        goto out;
    }
    data = malloc(need ? (size_t)need : 1);
    if (!data) {
        nnc_fail("%s: out of memory for %llu bytes", path, (unsigned long long)need);
        goto out;
    }
    got = fread(data, 1, (size_t)need, f);
    if (got != need) {
        if (ferror(f))
            nnc_fail("%s: read error: %s", path, strerror(errno));
        else
            nnc_fail("%s: truncated data (expected %llu bytes, got %zu)", path, (unsigned long long)need, got);
        goto out;
    }
    if (fgetc(f) != EOF) {
        nnc_fail("%s: extra bytes after the array data", path);
        goto out;
    }
    nnc__le32_to_host(data, (size_t)count);
    out->dtype = dtype;
    out->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        out->shape[d] = shape[d];
    out->count = count;
    out->data = data;
    data = NULL;
    rc = 0;
out:
    free(data);
    free(header);
    fclose(f);
    return rc;
}

void nnc_array_free(nnc_array *a)
{
    if (!a)
        return;
    free(a->data);
    a->data = NULL;
    a->count = 0;
    a->ndim = 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

int nnc_npy_write(const char *path, nnc_dtype dtype, int ndim, const int64_t *shape, const void *data)
{
    if (dtype != NNC_F32 && dtype != NNC_I32)
        return nnc_fail("%s: unsupported dtype %d", path, (int)dtype);
    if (ndim < 0 || ndim > NNC_MAX_DIMS)
        return nnc_fail("%s: %d dims (at most %d)", path, ndim, NNC_MAX_DIMS);
    /* The dict exactly as numpy.lib.format writes it, so that files are
     * byte-identical to np.save's for the same array. */
    char dict[512];
    size_t k = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                                dtype == NNC_F32 ? "<f4" : "<i4");
    uint64_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return nnc_fail("%s: negative dim %lld", path, (long long)shape[d]);
        count *= (uint64_t)shape[d];
        k += (size_t)snprintf(dict + k, sizeof dict - k, d ? ", %lld" : "%lld", (long long)shape[d]);
    }
    k += (size_t)snprintf(dict + k, sizeof dict - k, "%s), }", ndim == 1 ? "," : "");
    if (count > 0 && !data)
        return nnc_fail("%s: no data", path);

    /* Version 1.0: its 16-bit header length always suffices for at most
     * 8 dims.  As numpy does, pad with spaces so that magic + length +
     * dict is a multiple of 64 bytes, and end the dict with '\n'. */
    const size_t pre = 10;
    size_t hlen = (pre + k + 1 + 63) / 64 * 64 - pre;
    char header[640];
    if (hlen > sizeof header)
        return nnc_fail("%s: header too long", path);
    memcpy(header, dict, k);
    memset(header + k, ' ', hlen - k - 1);
    header[hlen - 1] = '\n';

    unsigned char prefix[10];
    memcpy(prefix, npy_magic, 6);
    prefix[6] = 1;
    prefix[7] = 0;
    prefix[8] = (unsigned char)(hlen & 0xFF);
    prefix[9] = (unsigned char)(hlen >> 8);

    nnc__atomic a;
    if (nnc__atomic_open(&a, path) != 0)
        return -1;
    nnc__atomic_write(&a, prefix, pre);
    nnc__atomic_write(&a, header, hlen);
    nnc__atomic_write_le32(&a, data, (size_t)count);
    return nnc__atomic_commit(&a);
}
