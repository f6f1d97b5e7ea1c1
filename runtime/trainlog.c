/* trainlog.c — the training log of the driver's --log FILE: one row per
 * logged optimizer step, as CSV (a header row naming the columns, then
 * comma-separated values) or JSON lines (one object per row with the same
 * keys), chosen by the file's extension (.csv, .jsonl).
 *
 * A value that a row does not have (the validation columns between
 * epochs) is an empty CSV field and an absent JSON key, so that a plotting
 * tool skips it rather than drawing a zero.  Rows are flushed as they are
 * written: a user can follow a run with tail -f, and a run that is killed
 * keeps its log up to its last step.  Non-finite values (a diverged loss)
 * are written as nan / inf in CSV and as null in JSON, which has no such
 * numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int nnc__log_kind(const char *path)
{
    return ends_with(path, ".csv") ? NNC__LOG_CSV : ends_with(path, ".jsonl") ? NNC__LOG_JSONL : -1;
}

int nnc__log_open(nnc__log *l, const char *path, const char *const *cols, int ncols, int append)
{
    memset(l, 0, sizeof *l);
    l->kind = nnc__log_kind(path);
    if (l->kind < 0)
        return nnc_fail("%s: a log is .csv or .jsonl", path);
    /* appending (a resumed run) to a file that has rows keeps its header */
    long had = 0;
    if (append) {
        FILE *r = fopen(path, "rb");
        if (r) {
            if (fseek(r, 0, SEEK_END) == 0)
                had = ftell(r);
            fclose(r);
        }
    }
    l->f = fopen(path, append ? "ab" : "wb");
    if (!l->f)
        return nnc_fail("%s: cannot write: %s", path, strerror(errno));
    l->cols = cols;
    l->ncols = ncols;
    if (l->kind == NNC__LOG_CSV && had <= 0) {
        for (int i = 0; i < ncols; i++)
            fprintf(l->f, "%s%s", i ? "," : "", cols[i]);
        fprintf(l->f, "\n");
    }
    fflush(l->f);
    return ferror(l->f) ? nnc_fail("%s: cannot write: %s", path, strerror(errno)) : 0;
}

/* %.9g round-trips a float; integers (step, epoch) print without a point */
static void put_value(nnc__log *l, double v)
{
    if (isfinite(v))
        fprintf(l->f, "%.9g", v);
    else if (l->kind == NNC__LOG_JSONL)
        fprintf(l->f, "null");
    else
        fprintf(l->f, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

void nnc__log_row(nnc__log *l, const double *vals, const unsigned char *present)
{
    if (!l->f)
        return;
    if (l->kind == NNC__LOG_CSV) {
        for (int i = 0; i < l->ncols; i++) {
            if (i)
                fputc(',', l->f);
            if (present[i])
                put_value(l, vals[i]);
        }
    } else {
        int first = 1;
        fputc('{', l->f);
        for (int i = 0; i < l->ncols; i++) {
            if (!present[i])
                continue;
            fprintf(l->f, "%s\"%s\": ", first ? "" : ", ", l->cols[i]); /* names are identifiers */
            put_value(l, vals[i]);
            first = 0;
        }
        fputc('}', l->f);
    }
    fputc('\n', l->f);
    fflush(l->f);
}

int nnc__log_close(nnc__log *l)
{
    if (!l->f)
        return 0;
    const int bad = ferror(l->f);
    const int rc = fclose(l->f);
    l->f = NULL;
    return bad || rc ? -1 : 0;
}
