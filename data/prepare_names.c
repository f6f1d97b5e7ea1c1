/* prepare_names.c — turns a list of names (one a line) into next-character
 * training data for a character-level language model (models/names_gpt.nn).
 *
 * Usage: prepare_names NAMES.txt OUTDIR
 *
 * Vocabulary: token 0 is '.', the start and end token; tokens 1.. are the
 * distinct characters of the file in increasing byte order (for
 * data/names.txt: '-', then 'a'..'z', 28 tokens in all).  OUTDIR/vocab.txt
 * holds one token a line, line i (from 0) being the character of token i.
 *
 * Sequences: a name c1..cn becomes, over a context of CTX = 16 positions,
 *     ids    = [start, c1, ..., cn, pad...]
 *     labels = [c1, ..., cn, end, -100...]
 * so labels[t] is the character that follows ids[0..t].  Padding ids are 0
 * (the '.' token) and their labels -100, which cross_entropy ignores.  A
 * name longer than CTX - 1 = 15 characters is cut: ids = [start, c1..c15],
 * labels = [c1..c16] (no end token).  The longest name of data/names.txt
 * has exactly 15 characters, so none is cut there.
 *
 * Split: the names (in file order) are shuffled with the runtime's RNG
 * seeded 42 (Fisher–Yates from the end, j = nnc_rng_below(i + 1), as
 * prepare_digits); the first N - N/10 are the training set, the last N/10
 * the test set.  Files, in OUTDIR (created with its parents):
 * ids_train.npy, y_train.npy, ids_test.npy, y_test.npy (int32 [N, 16]) and
 * vocab.txt.
 *
 * The input is validated completely before anything is written: every line
 * must be a non-empty name of printable ASCII characters other than ' ' and
 * '.' (a final "\r" is dropped), and there must be at least 10 names.  A bad
 * input is one line on stderr and exit status 2 (1 for a usage error).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnc_runtime.h"

enum {
    CTX = 16,       /* positions per sequence: the start token + 15 characters */
    IGNORE = -100,  /* the label cross_entropy ignores */
    SEED = 42,      /* of the shuffle */
    MIN_NAMES = 10, /* so that the 10% test set is not empty */
};

#define START_END '.'

static const char *prog = "prepare_names";

/* The names, read whole: one malloc'd string each. */
typedef struct names {
    char **v;
    size_t n, cap;
    size_t longest;
} names;

static void names_free(names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* Reads and validates every line of `path`; marks the characters seen in
 * `seen`.  0, or -1 after printing the one-line error. */
static int read_names(const char *path, names *s, unsigned char seen[256])
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", prog, path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    int rc = -1;
    while ((got = getline(&line, &cap, in)) >= 0) {
        lineno++;
        size_t len = (size_t)got;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > 0 && line[len - 1] == '\r')
            len--;
        if (len == 0) {
            fprintf(stderr, "%s: %s: line %ld: empty name\n", prog, path, lineno);
            goto out;
        }
        for (size_t k = 0; k < len; k++) {
            unsigned char c = (unsigned char)line[k];
            if (c <= ' ' || c > '~' || c == START_END) {
                fprintf(stderr,
                        "%s: %s: line %ld: column %zu: byte 0x%02x is not allowed in a name "
                        "(printable ASCII other than ' ' and '%c')\n",
                        prog, path, lineno, k + 1, c, START_END);
                goto out;
            }
            seen[c] = 1;
        }
        if (s->n == s->cap) {
            size_t ncap = s->cap ? 2 * s->cap : 1024;
            char **nv = realloc(s->v, ncap * sizeof *nv);
            if (!nv)
                goto oom;
            s->v = nv;
            s->cap = ncap;
        }
        char *name = malloc(len + 1);
        if (!name)
            goto oom;
        memcpy(name, line, len);
        name[len] = '\0';
        s->v[s->n++] = name;
        if (len > s->longest)
            s->longest = len;
    }
    if (ferror(in)) {
        fprintf(stderr, "%s: %s: read error: %s\n", prog, path, strerror(errno));
        goto out;
    }
    if (s->n < MIN_NAMES) {
        fprintf(stderr, "%s: %s: %zu names, need at least %d\n", prog, path, s->n, MIN_NAMES);
        goto out;
    }
    rc = 0;
    goto out;
oom:
    fprintf(stderr, "%s: out of memory\n", prog);
out:
    free(line);
    fclose(in);
    return rc;
}

/* Writes ids_<split>.npy and y_<split>.npy for the names idx[0..n). */
static int write_split(const char *dir, const char *split, const names *s, const int32_t token[256],
                       const uint32_t *idx, size_t n)
{
    size_t plen = strlen(dir) + 32;
    char *path = malloc(plen);
    int32_t(*ids)[CTX] = malloc(n * sizeof *ids);
    int32_t(*y)[CTX] = malloc(n * sizeof *y);
    int rc = -1;
    if (!path || !ids || !y) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = s->v[idx[i]];
        size_t len = strlen(name);
        ids[i][0] = 0; /* start */
        for (int t = 0; t < CTX; t++) {
            /* label t is character t + 1 of the name (1-based), or the end
             * token right after the last one, or padding */
            if ((size_t)t < len)
                y[i][t] = token[(unsigned char)name[t]];
            else if ((size_t)t == len)
                y[i][t] = 0; /* end */
            else
                y[i][t] = IGNORE;
            /* id t + 1 is label t: the input is the labels shifted right */
            if (t + 1 < CTX)
                ids[i][t + 1] = (size_t)t < len ? y[i][t] : 0;
        }
    }
    const int64_t shape[2] = {(int64_t)n, CTX};
    snprintf(path, plen, "%s/ids_%s.npy", dir, split);
    if (nnc_npy_write(path, NNC_I32, 2, shape, ids))
        goto fail;
    snprintf(path, plen, "%s/y_%s.npy", dir, split);
    if (nnc_npy_write(path, NNC_I32, 2, shape, y))
        goto fail;
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "%s: %s\n", prog, nnc_error());
out:
    free(path);
    free(ids);
    free(y);
    return rc;
}

/* vocab.txt: one token a line, through a temporary file and a rename. */
static int write_vocab(const char *dir, const char *chars, int count)
{
    size_t plen = strlen(dir) + 64;
    char *path = malloc(plen), *tmp = malloc(plen);
    int rc = -1;
    if (!path || !tmp) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto out;
    }
    snprintf(path, plen, "%s/vocab.txt", dir);
    snprintf(tmp, plen, "%s/vocab.txt.tmp.%ld", dir, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "%s: %s: cannot create: %s\n", prog, tmp, strerror(errno));
        goto out;
    }
    for (int i = 0; i < count; i++)
        fprintf(f, "%c\n", chars[i]);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: %s: cannot write: %s\n", prog, path, strerror(errno));
        remove(tmp);
        goto out;
    }
    rc = 0;
out:
    free(path);
    free(tmp);
    return rc;
}

/* mkdir -p: creates dir and its missing parents.  0, or -1 with errno. */
static int make_dirs(const char *dir)
{
    char *p = malloc(strlen(dir) + 1);
    if (!p)
        return -1;
    strcpy(p, dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s NAMES.txt OUTDIR\n", prog);
        return 1;
    }
    const char *src = argv[1], *dir = argv[2];
    names s = {0};
    unsigned char seen[256] = {0};
    uint32_t *perm = NULL;
    int rc = 2;
    if (read_names(src, &s, seen))
        goto out;
    if (s.n > UINT32_MAX) {
        fprintf(stderr, "%s: %s: too many names\n", prog, src);
        goto out;
    }

    /* The vocabulary: '.' then the characters seen, in byte order. */
    char chars[256];
    int32_t token[256];
    int vocab = 0;
    chars[vocab++] = START_END;
    for (int c = 0; c < 256; c++) {
        token[c] = -1;
        if (seen[c]) {
            token[c] = vocab;
            chars[vocab++] = (char)c;
        }
    }

    /* The fixed shuffle and the 90/10 split. */
    perm = malloc(s.n * sizeof *perm);
    if (!perm) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto out;
    }
    for (uint32_t i = 0; i < s.n; i++)
        perm[i] = i;
    nnc_rng r;
    nnc_rng_seed(&r, SEED);
    for (uint32_t i = (uint32_t)s.n - 1; i > 0; i--) {
        uint32_t j = nnc_rng_below(&r, i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    size_t test = s.n / 10, train = s.n - test;

    if (make_dirs(dir) != 0) {
        fprintf(stderr, "%s: %s: cannot create directory: %s\n", prog, dir, strerror(errno));
        goto out;
    }
    if (write_split(dir, "train", &s, token, perm, train) || write_split(dir, "test", &s, token, perm + train, test) ||
        write_vocab(dir, chars, vocab))
        goto out;
    size_t cut = 0;
    for (size_t i = 0; i < s.n; i++)
        cut += strlen(s.v[i]) > CTX - 1;
    printf("%s: %zu names (longest %zu characters, %zu cut to %d), vocabulary %d tokens; "
           "%zu train, %zu test, context %d\n",
           src, s.n, s.longest, cut, CTX - 1, vocab, train, test, CTX);
    rc = 0;
out:
    free(perm);
    names_free(&s);
    return rc;
}
