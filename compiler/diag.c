/* diag.c — source files and diagnostics (diag_*).
 *
 * Prints errors the way clang does (spec §9):
 *
 *     model.nn:3:12: error: expected ')', got ';'
 *         fc: Dense(units: 3;
 *                           ^
 *     model.nn:3:14: note: to match this '('
 *
 * The source line is echoed with its tabs, and the caret line copies the
 * tabs, so the caret lands under the right character whatever the tab width.
 * After MAX_ERRORS errors the rest are counted but no longer printed: a
 * broken file should not bury the first, most useful message.
 */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_ERRORS = 50,      /* printed before "too many errors" */
    MAX_SHOWN_LINE = 200, /* longer source lines are shown as a window */
};

static int nerrors;
static int muted;  /* the current error was not printed: nor its notes */
static FILE *sink; /* where diagnostics go; NULL: stderr */

#define OUT (sink ? sink : stderr)

/* ---- source files ------------------------------------------------------ */

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) {
        fputs("nnc: error: out of memory\n", stderr);
        exit(1);
    }
    return memcpy(p, s, n);
}

SrcFile *diag_load_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(fp);
            errno = ENOMEM;
            return NULL;
        }
        len += fread(buf + len, 1, cap - 1 - len, fp);
        if (len < cap - 1)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    if (ferror(fp)) {
        int e = errno ? errno : EIO;
        free(buf);
        fclose(fp);
        errno = e;
        return NULL;
    }
    fclose(fp);
    buf[len] = '\0';

    SrcFile *f = malloc(sizeof *f);
    if (!f) {
        free(buf);
        errno = ENOMEM;
        return NULL;
    }
    f->path = dup_string(path);
    f->text = buf;
    f->len = len;
    return f;
}

SrcFile *diag_string_file(const char *name, const char *text)
{
    SrcFile *f = malloc(sizeof *f);
    if (!f) {
        fputs("nnc: error: out of memory\n", stderr);
        exit(1);
    }
    f->path = dup_string(name);
    f->text = text;
    f->len = strlen(text);
    return f;
}

/* ---- lines and columns ----------------------------------------------------
 * The token dump asks for every token's line in order, so remember where
 * the last answer was and scan on from there: linear over a whole file. */

static struct {
    const SrcFile *file;
    size_t off; /* a line start at or before the last query */
    int line;
} cache;

static size_t clamp_off(const SrcFile *f, int off)
{
    if (off < 0)
        return 0;
    return (size_t)off > f->len ? f->len : (size_t)off;
}

/* Line number and start offset of the line that holds `off`. */
static int line_of(const SrcFile *f, size_t off, size_t *start)
{
    size_t pos = 0;
    int line = 1;
    if (cache.file == f && cache.off <= off) {
        pos = cache.off;
        line = cache.line;
    }
    size_t ls = pos;
    for (const char *p; (p = memchr(f->text + pos, '\n', off - pos));) {
        pos = (size_t)(p - f->text) + 1;
        ls = pos;
        line++;
    }
    cache.file = f;
    cache.off = ls;
    cache.line = line;
    *start = ls;
    return line;
}

void diag_linecol(Loc loc, int *line, int *col)
{
    if (!loc.file) {
        *line = *col = 0;
        return;
    }
    size_t off = clamp_off(loc.file, loc.off), start;
    *line = line_of(loc.file, off, &start);
    *col = (int)(off - start) + 1;
}

/* ---- printing ------------------------------------------------------------ */

/* Echoes the source line holding `loc`, then a caret line: '^' under the
 * first byte, '~' under the rest of the span as far as the line goes. */
static void show_source(Loc loc)
{
    const SrcFile *f = loc.file;
    size_t off = clamp_off(f, loc.off), start;
    line_of(f, off, &start);
    const char *nl = memchr(f->text + start, '\n', f->len - start);
    size_t end = nl ? (size_t)(nl - f->text) : f->len;
    if (end > start && f->text[end - 1] == '\r')
        end--;
    size_t span = loc.len > 0 ? (size_t)loc.len : 1;
    size_t span_end = off + span;

    /* A very long line (minified or binary junk) is cut to a window around
     * the caret rather than printed whole for every error. */
    size_t from = start, to = end;
    int cut_left = 0, cut_right = 0;
    if (end - start > MAX_SHOWN_LINE) {
        if (off > start + MAX_SHOWN_LINE / 2) {
            from = off - MAX_SHOWN_LINE / 2;
            cut_left = 1;
        }
        if (end > from + MAX_SHOWN_LINE) {
            to = from + MAX_SHOWN_LINE;
            cut_right = 1;
        }
    }

    /* Control characters would upset the terminal and the caret alignment;
     * they are shown as '?'.  UTF-8 passes through unchanged. */
    if (cut_left)
        fputs("...", OUT);
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)f->text[i];
        fputc(c == '\t' || c >= 0x20 ? (c == 0x7f ? '?' : c) : '?', OUT);
    }
    if (cut_right)
        fputs("...", OUT);
    fputc('\n', OUT);

    if (cut_left)
        fputs("   ", OUT);
    for (size_t i = from; i < off && i < to; i++) {
        unsigned char c = (unsigned char)f->text[i];
        if (c == '\t')
            fputc('\t', OUT);
        else if ((c & 0xC0) != 0x80) /* one column per UTF-8 character */
            fputc(' ', OUT);
    }
    fputc('^', OUT);
    for (size_t i = off + 1; i < span_end && i < to; i++) {
        unsigned char c = (unsigned char)f->text[i];
        if ((c & 0xC0) != 0x80)
            fputc(c == '\t' ? '\t' : '~', OUT);
    }
    fputc('\n', OUT);
}

static void report(Loc loc, const char *kind, const char *fmt, va_list ap)
{
    if (loc.file) {
        int line, col;
        diag_linecol(loc, &line, &col);
        fprintf(OUT, "%s:%d:%d: %s: ", loc.file->path, line, col, kind);
    } else {
        fprintf(OUT, "nnc: %s: ", kind);
    }
    vfprintf(OUT, fmt, ap);
    fputc('\n', OUT);
    if (loc.file)
        show_source(loc);
}

/* The elaborator runs once per entry point (train, eval, infer), so one
 * mistake can be met three times: an error already reported at the same
 * place with the same text is counted but not printed again, nor its notes. */
static char **seen;
static int nseen;

static int seen_before(Loc loc, const char *fmt, va_list ap)
{
    char msg[512];
    va_list cp;
    va_copy(cp, ap);
    vsnprintf(msg, sizeof msg, fmt, cp);
    va_end(cp);
    char *key = malloc(strlen(msg) + 64);
    if (!key)
        return 0;
    sprintf(key, "%p:%d:%s", (const void *)loc.file, loc.off, msg);
    for (int i = 0; i < nseen; i++)
        if (!strcmp(seen[i], key)) {
            free(key);
            return 1;
        }
    char **grown = realloc(seen, sizeof(char *) * (size_t)(nseen + 1));
    if (!grown) {
        free(key);
        return 0;
    }
    seen = grown;
    seen[nseen++] = key;
    return 0;
}

static Loc (*user_site)(Loc);
static void diag_verror_at(Loc loc, const char *fmt, va_list ap);

void diag_set_user_site(Loc (*fn)(Loc)) { user_site = fn; }

void diag_verror(Loc loc, const char *fmt, va_list ap)
{
    Loc site = user_site ? user_site(loc) : loc;
    if (site.file != loc.file || site.off != loc.off) {
        va_list cp;
        va_copy(cp, ap);
        diag_verror_at(site, fmt, cp);
        va_end(cp);
        if (!muted)
            diag_note(loc, "inside the standard library");
        return;
    }
    diag_verror_at(loc, fmt, ap);
}

static void diag_verror_at(Loc loc, const char *fmt, va_list ap)
{
    nerrors++;
    if (seen_before(loc, fmt, ap)) {
        muted = 1;
        return;
    }
    muted = nerrors > MAX_ERRORS;
    if (nerrors == MAX_ERRORS + 1)
        fprintf(OUT,
                "nnc: error: too many errors (%d), not reporting "
                "the rest\n",
                MAX_ERRORS);
    if (!muted)
        report(loc, "error", fmt, ap);
}

void diag_error(Loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(loc, fmt, ap);
    va_end(ap);
}

void diag_note(Loc loc, const char *fmt, ...)
{
    if (muted)
        return;
    va_list ap;
    va_start(ap, fmt);
    report(loc, "note", fmt, ap);
    va_end(ap);
}

int diag_errors(void) { return nerrors; }

void diag_set_output(FILE *out) { sink = out; }

void diag_reset(void)
{
    for (int i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    seen = NULL;
    nseen = nerrors = muted = 0;
    memset(&cache, 0, sizeof cache);
    user_site = NULL;
}

/* ---- suggestions ------------------------------------------------------------ */

enum { MAX_NAME = 64 }; /* longer names are not typos of anything */

/* Levenshtein distance over bytes, two rows. */
static int edit_distance(const char *a, size_t n, const char *b, size_t m)
{
    int row[2][MAX_NAME + 1];
    for (size_t j = 0; j <= m; j++)
        row[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int *prev = row[(i - 1) & 1], *cur = row[i & 1];
        cur[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            cur[j] = d;
        }
    }
    return row[n & 1][m];
}

const char *diag_closest(const char *name, const char *const *cands, int n)
{
    size_t len = strlen(name);
    if (len == 0 || len > MAX_NAME)
        return NULL;
    /* A third of the length (at least one edit) is a plausible typo;
     * more and the suggestion is noise. */
    int limit = len / 3 > 1 ? (int)(len / 3) : 1;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        size_t m = strlen(cands[i]);
        if (m > MAX_NAME || (m > len ? m - len : len - m) > (size_t)limit)
            continue;
        int d = edit_distance(name, len, cands[i], m);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}
