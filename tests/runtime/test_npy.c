/* test_npy.c — .npy arrays round-trip and bad files are rejected by name.
 *
 * Covers what the driver relies on: <f4 and <i4 arrays of 0 to 4 dims
 * (including empty ones) written and read back exactly, the header layout
 * numpy writes (version 1.0, 64-byte aligned, '\n'-terminated), version
 * 2.0 and 3.0 headers written by hand, and one-line errors that name the
 * file for every malformed input.  check_npy.py covers files from numpy.
 * Usage: test_npy SCRATCH_DIR
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "nnc_runtime.h"

static char dir[512];

static const char *path_of(const char *name)
{
    static char buf[4][1024];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Writes magic + version + header (padded as numpy pads it when pad) +
 * `ndata` bytes of 0..n floats. */
static void craft(const char *name, const char *magic, int major, const char *dict,
                  size_t ndata)
{
    FILE *f = fopen(path_of(name), "wb");
    size_t pre = major == 1 ? 10 : 12;
    size_t hlen = (pre + strlen(dict) + 1 + 63) / 64 * 64 - pre;
    fwrite(magic, 1, 6, f);
    fputc(major, f);
    fputc(0, f);
    fputc((int)(hlen & 0xFF), f);
    fputc((int)((hlen >> 8) & 0xFF), f);
    if (major != 1) {
        fputc(0, f);
        fputc(0, f);
    }
    fputs(dict, f);
    for (size_t i = strlen(dict); i + 1 < hlen; i++)
        fputc(' ', f);
    fputc('\n', f);
    for (size_t i = 0; i < ndata / 4; i++) {
        float v = (float)i;
        fwrite(&v, 4, 1, f);
    }
    for (size_t i = 0; i < ndata % 4; i++)
        fputc(0, f);
    fclose(f);
}

static void expect_reject(const char *name, const char *what, int line)
{
    nnc_array a;
    int rc = nnc_npy_read(path_of(name), &a);
    const char *e = nnc_error();
    CHECKF(rc == -1, "line %d: %s was accepted", line, name);
    CHECKF(strstr(e, path_of(name)) == e, "line %d: message does not start with the file: %s",
           line, e);
    CHECKF(strstr(e, what) != NULL, "line %d: message '%s' lacks '%s'", line, e, what);
    CHECKF(strchr(e, '\n') == NULL, "line %d: newline in message", line);
    CHECKF(a.data == NULL, "line %d: data left allocated", line);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_npy SCRATCH_DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    mkdir(dir, 0777);
    const char *M = "\x93NUMPY";

    /* ---- round trips */
    {
        float f[60];
        int32_t i32[7] = {0, -1, 2147483647, -2147483647 - 1, 5, 6, 7};
        for (int k = 0; k < 60; k++)
            f[k] = (float)k * 0.1f - 2.0f;
        struct {
            const char *name;
            nnc_dtype t;
            int ndim;
            int64_t shape[4];
            const void *data;
        } cases[] = {
            {"f2.npy", NNC_F32, 2, {3, 5}, f},
            {"f4.npy", NNC_F32, 4, {2, 3, 2, 5}, f},
            {"f0.npy", NNC_F32, 0, {0}, f},
            {"empty.npy", NNC_F32, 2, {0, 4}, f},
            {"i1.npy", NNC_I32, 1, {7}, i32},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            CHECK(nnc_npy_write(path_of(cases[c].name), cases[c].t, cases[c].ndim,
                                cases[c].shape, cases[c].data) == 0);
            nnc_array a;
            CHECKF(nnc_npy_read(path_of(cases[c].name), &a) == 0, "%s", nnc_error());
            CHECK(a.dtype == cases[c].t && a.ndim == cases[c].ndim);
            int64_t count = 1;
            for (int d = 0; d < a.ndim; d++) {
                CHECK(a.shape[d] == cases[c].shape[d]);
                count *= cases[c].shape[d];
            }
            CHECK(a.count == count);
            CHECK(count == 0 || memcmp(a.data, cases[c].data, (size_t)count * 4) == 0);
            nnc_array_free(&a);
            CHECK(a.data == NULL);
        }
        /* The header as numpy writes it. */
        FILE *fp = fopen(path_of("f2.npy"), "rb");
        unsigned char head[128];
        CHECK(fread(head, 1, 128, fp) == 128);
        fclose(fp);
        CHECK(memcmp(head, M, 6) == 0 && head[6] == 1 && head[7] == 0);
        size_t hlen = head[8] | (size_t)head[9] << 8;
        CHECK((10 + hlen) % 64 == 0);
        CHECK(head[10 + hlen - 1] == '\n');
        const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }";
        CHECK(memcmp(head + 10, dict, strlen(dict)) == 0);
        fp = fopen(path_of("i1.npy"), "rb");
        CHECK(fread(head, 1, 128, fp) == 128);
        fclose(fp);
        dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (7,), }";
        CHECK(memcmp(head + 10, dict, strlen(dict)) == 0);
    }

    /* ---- versions 2.0 and 3.0, and header spellings numpy accepts */
    {
        craft("v2.npy", M, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
        craft("v3.npy", M, 3, "{\"descr\": \"<i4\", \"shape\": (6,), \"fortran_order\": False}",
              24);
        craft("f1d.npy", M, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", 24);
        nnc_array a;
        CHECKF(nnc_npy_read(path_of("v2.npy"), &a) == 0, "%s", nnc_error());
        CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.dtype == NNC_F32);
        CHECK(((float *)a.data)[5] == 5.0f);
        nnc_array_free(&a);
        CHECKF(nnc_npy_read(path_of("v3.npy"), &a) == 0, "%s", nnc_error());
        CHECK(a.ndim == 1 && a.shape[0] == 6 && a.dtype == NNC_I32);
        nnc_array_free(&a);
        /* A 1-D Fortran-order array is laid out as a C-order one. */
        CHECKF(nnc_npy_read(path_of("f1d.npy"), &a) == 0, "%s", nnc_error());
        nnc_array_free(&a);
    }

    /* ---- rejections */
    expect_reject("nofile.npy", "cannot open", __LINE__);
    craft("magic.npy", "\x93NUMPZ", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
          24);
    expect_reject("magic.npy", "bad magic", __LINE__);
    craft("v4.npy", M, 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", 24);
    expect_reject("v4.npy", "version 4.0", __LINE__);
    craft("fortran.npy", M, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24);
    expect_reject("fortran.npy", "Fortran", __LINE__);
    craft("f8.npy", M, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24);
    expect_reject("f8.npy", "dtype '<f8'", __LINE__);
    craft("be.npy", M, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", 24);
    expect_reject("be.npy", "dtype '>f4'", __LINE__);
    craft("trunc.npy", M, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20);
    expect_reject("trunc.npy", "truncated data (expected 24 bytes, got 20)", __LINE__);
    craft("extra.npy", M, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 24);
    expect_reject("extra.npy", "4 bytes after the array data", __LINE__);
    craft("nokey.npy", M, 1, "{'descr': '<f4', 'shape': (6,), }", 24);
    expect_reject("nokey.npy", "missing 'fortran_order'", __LINE__);
    craft("badkey.npy", M, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}",
          24);
    expect_reject("badkey.npy", "'x'", __LINE__);
    craft("syntax.npy", M, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [6], }", 24);
    expect_reject("syntax.npy", "bad .npy header", __LINE__);
    craft("neg.npy", M, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", 24);
    expect_reject("neg.npy", "bad .npy header", __LINE__);
    craft("dims.npy", M, 1,
          "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6), }", 24);
    expect_reject("dims.npy", "more than 8 dimensions", __LINE__);
    craft("huge.npy", M, 1,
          "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", 24);
    expect_reject("huge.npy", "truncated data", __LINE__);
    {
        FILE *f = fopen(path_of("cut.npy"), "wb");
        fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 17, f);
        fclose(f);
    }
    expect_reject("cut.npy", "truncated .npy header", __LINE__);
    {
        FILE *f = fopen(path_of("tiny.npy"), "wb");
        fwrite("\x93NU", 1, 3, f);
        fclose(f);
    }
    expect_reject("tiny.npy", "bad magic", __LINE__);

    /* ---- writer errors */
    {
        float x = 1;
        int64_t s = 1;
        CHECK(nnc_npy_write(path_of("nodir/x.npy"), NNC_F32, 1, &s, &x) == -1);
        CHECK(strstr(nnc_error(), "nodir/x.npy") != NULL);
        CHECK(nnc_npy_write(path_of("bad.npy"), NNC_F32, 9, &s, &x) == -1);
    }
    return check_summary("test_npy");
}
