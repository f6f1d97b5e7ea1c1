/* prepare_digits.c — turns the UCI handwritten digits CSV into .npy files
 * for the examples and tests.
 *
 * Usage: prepare_digits digits.csv.gz OUTDIR
 *
 * Reads the 1797 lines of 64 grey levels (0..16) and a class (0..9),
 * shuffles them with the runtime's RNG seeded 42 (Fisher–Yates from the
 * end, j = nnc_rng_below(i + 1)), and writes the first 1437 as the training
 * set and the last 360 as the test set: x_{train,test}.npy f32 [N, 64] with
 * pixels divided by 16, y_{train,test}.npy i32 [N], and the same pixels as
 * images x_{train,test}_img.npy f32 [N, 1, 8, 8] for convolutional models.
 * Using the runtime's own RNG makes the split identical on every machine
 * and reproducible from Python (tests/runtime/nnc_rng_ref.py).  The input
 * is validated completely before anything is written; a bad input is one
 * line on stderr and exit status 2 (1 for a usage error).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnc_runtime.h"

enum { ROWS = 1797, PIXELS = 64, TRAIN = 1437, TEST = ROWS - TRAIN, SEED = 42 };

static const char *prog = "prepare_digits";

/* popen runs a shell: quote the path as '...', with ' written as '\''. */
static char *gzip_command(const char *path)
{
    size_t n = strlen(path);
    char *cmd = malloc(4 * n + 64);
    if (!cmd)
        return NULL;
    char *w = cmd + sprintf(cmd, "gzip -dc -- '");
    for (const char *p = path; *p; p++) {
        if (*p == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    strcpy(w, "' 2>/dev/null");
    return cmd;
}

/* One line: 64 integers in [0, 16] and a class in [0, 9], comma-separated. */
static int parse_line(const char *path, long lineno, char *line, unsigned char *pix, int32_t *label)
{
    char *p = line;
    for (int f = 0; f <= PIXELS; f++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno) {
            fprintf(stderr, "%s: %s: line %ld: field %d is not an integer\n", prog, path, lineno, f + 1);
            return -1;
        }
        long hi = f < PIXELS ? 16 : 9;
        if (v < 0 || v > hi) {
            fprintf(stderr, "%s: %s: line %ld: field %d: value %ld out of range [0, %ld]\n", prog, path, lineno, f + 1,
                    v, hi);
            return -1;
        }
        if (f < PIXELS)
            pix[f] = (unsigned char)v;
        else
            *label = (int32_t)v;
        p = end;
        if (f < PIXELS) {
            if (*p != ',') {
                fprintf(stderr, "%s: %s: line %ld: %d fields, expected %d\n", prog, path, lineno, f + 1, PIXELS + 1);
                return -1;
            }
            p++;
        }
    }
    while (*p == '\r' || *p == '\n')
        p++;
    if (*p) {
        fprintf(stderr, "%s: %s: line %ld: more than %d fields\n", prog, path, lineno, PIXELS + 1);
        return -1;
    }
    return 0;
}

static int write_split(const char *dir, const char *split, const unsigned char (*pix)[PIXELS], const int32_t *labels,
                       const uint32_t *idx, int n)
{
    size_t len = strlen(dir) + 32;
    char *path = malloc(len);
    float *x = malloc((size_t)n * PIXELS * sizeof *x);
    int32_t *y = malloc((size_t)n * sizeof *y);
    int rc = -1;
    if (!path || !x || !y) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < PIXELS; k++)
            x[(size_t)i * PIXELS + k] = (float)pix[idx[i]][k] / 16.0f;
        y[i] = labels[idx[i]];
    }
    const int64_t flat[2] = {n, PIXELS}, img[4] = {n, 1, 8, 8}, lab[1] = {n};
    snprintf(path, len, "%s/x_%s.npy", dir, split);
    if (nnc_npy_write(path, NNC_F32, 2, flat, x))
        goto fail;
    snprintf(path, len, "%s/x_%s_img.npy", dir, split);
    if (nnc_npy_write(path, NNC_F32, 4, img, x))
        goto fail;
    snprintf(path, len, "%s/y_%s.npy", dir, split);
    if (nnc_npy_write(path, NNC_I32, 1, lab, y))
        goto fail;
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "%s: %s\n", prog, nnc_error());
out:
    free(path);
    free(x);
    free(y);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIGITS.csv.gz OUTDIR\n", prog);
        return 1;
    }
    const char *src = argv[1], *dir = argv[2];
    int rc = 2;
    unsigned char(*pix)[PIXELS] = malloc(ROWS * sizeof *pix);
    int32_t *labels = malloc(ROWS * sizeof *labels);
    uint32_t *perm = malloc(ROWS * sizeof *perm);
    char *cmd = gzip_command(src);
    char *line = NULL;
    size_t cap = 0;
    FILE *in = NULL;
    if (!pix || !labels || !perm || !cmd) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto out;
    }
    /* Open it ourselves first: a clear message for a missing file rather
     * than gzip's. */
    FILE *probe = fopen(src, "rb");
    if (!probe) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", prog, src, strerror(errno));
        goto out;
    }
    fclose(probe);
    in = popen(cmd, "r");
    if (!in) {
        fprintf(stderr, "%s: %s: cannot run gzip: %s\n", prog, src, strerror(errno));
        goto out;
    }
    long lines = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, in)) >= 0) {
        lines++;
        if (lines > ROWS)
            continue; /* counted, reported below */
        if (parse_line(src, lines, line, pix[lines - 1], &labels[lines - 1]))
            goto out;
    }
    int status = pclose(in);
    in = NULL;
    if (status != 0) {
        fprintf(stderr, "%s: %s: not a readable gzip file\n", prog, src);
        goto out;
    }
    if (lines != ROWS) {
        fprintf(stderr, "%s: %s: %ld lines, expected %d\n", prog, src, lines, ROWS);
        goto out;
    }

    nnc_rng r;
    nnc_rng_seed(&r, SEED);
    for (uint32_t i = 0; i < ROWS; i++)
        perm[i] = i;
    for (uint32_t i = ROWS - 1; i > 0; i--) {
        uint32_t j = nnc_rng_below(&r, i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }

    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s: cannot create directory: %s\n", prog, dir, strerror(errno));
        goto out;
    }
    if (write_split(dir, "train", (const unsigned char(*)[PIXELS])pix, labels, perm, TRAIN) ||
        write_split(dir, "test", (const unsigned char(*)[PIXELS])pix, labels, perm + TRAIN, TEST))
        goto out;
    rc = 0;
out:
    if (in)
        pclose(in);
    free(line);
    free(cmd);
    free(pix);
    free(labels);
    free(perm);
    return rc;
}
