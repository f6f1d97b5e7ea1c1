/* The C API of models built with --check-numerics (docs/generated-c.md,
 * "Checking numerics"): fwd_div.nn divides by zero in its forward pass,
 * bwd_sqrt.nn has a finite forward pass whose gradient is infinite.  The
 * expected locations are read from the .nn files (the line and column of
 * `/` and of `sqrt`), not from the generated code.
 *
 * usage: numerics_api DIR_OF_THE_NN_FILES */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_sqrt.h"
#include "fwd_div.h"

static int failures;
#define CHECK(c, ...) \
    do { \
        if (!(c)) { \
            failures++; \
            printf("FAIL line %d: ", __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
        } \
    } while (0)

/* "<dir>/<file>:<line>:<col>" of the first `needle` in the file */
static void where(const char *dir, const char *file, const char *needle, char *out, size_t cap)
{
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("cannot read %s\n", path);
        exit(2);
    }
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        const char *p = line[0] == '/' ? NULL : strstr(line, needle);
        if (p) {
            snprintf(out, cap, "%s:%d:%d", file, ln, (int)(p - line) + 1);
            fclose(f);
            return;
        }
    }
    printf("no '%s' in %s\n", needle, path);
    exit(2);
}

/* msg names the location (its path ends with `loc`), then says `rest` */
static int says(const char *msg, const char *loc, const char *rest)
{
    if (!msg)
        return 0;
    const char *colon = strstr(msg, ": non-finite");
    if (!colon || (size_t)(colon - msg) < strlen(loc) || strncmp(colon - strlen(loc), loc, strlen(loc)))
        return 0;
    return !strcmp(colon + 2, rest);
}

enum { B = 6 };

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    static float xs[B][4], ys[B][2], out[B][2];
    const float(*x)[4] = (const float(*)[4])xs, (*y)[2] = (const float(*)[2])ys;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < 4; j++)
            xs[i][j] = 0.25f + (float)(i * 4 + j) / 8.0f; /* positive: x / (x - x) = +inf */
    char loc[1200];

    /* forward: train_forward returns NaN and names the division */
    fwd_div f;
    if (fwd_div_init(&f, B, 1) != 0)
        return 2;
    where(argv[1], "fwd_div.nn", "/ (x - x)", loc, sizeof loc);
    CHECK(!fwd_div_numerics_error(&f), "a new model has no message");
    const float lf = fwd_div_train_forward(&f, B, x, y);
    const char *msg = fwd_div_numerics_error(&f);
    CHECK(isnan(lf), "train_forward returns NaN, got %g", lf);
    CHECK(says(msg, loc, "non-finite value (inf) at [0][0] of z (f32[6,4]) from div, in the forward pass"),
          "forward message: %s (at %s)", msg ? msg : "(null)", loc);
    /* backward after a stopped training pass leaves the gradients */
    float *g = (float *)f.grads;
    for (int i = 0; i < FWD_DIV_NUM_PARAMS; i++)
        g[i] = 7.0f;
    fwd_div_backward(&f);
    int kept = 1;
    for (int i = 0; i < FWD_DIV_NUM_PARAMS; i++)
        kept &= g[i] == 7.0f;
    CHECK(kept, "backward after a stopped training pass must not run");
    CHECK(fwd_div_numerics_error(&f) == msg, "backward keeps the training pass's message");
    /* inference: the output is left as it was; eval gives NaN */
    for (int i = 0; i < B; i++)
        out[i][0] = out[i][1] = 5.0f;
    fwd_div_forward(&f, B, x, out);
    CHECK(out[0][0] == 5.0f && out[B - 1][1] == 5.0f, "forward must not write the output after a failed check");
    CHECK(says(fwd_div_numerics_error(&f), loc,
               "non-finite value (inf) at [0][0] of z (f32[6,4]) from div, in the forward pass"),
          "forward's message: %s", fwd_div_numerics_error(&f));
    float le = 0;
    fwd_div_eval(&f, 3, x, y, &le, NULL);
    CHECK(isnan(le), "eval's loss NaN, got %g", le);
    CHECK(says(fwd_div_numerics_error(&f), loc,
               "non-finite value (inf) at [0][0] of z (f32[3,4]) from div, in the forward pass"),
          "eval's message: %s", fwd_div_numerics_error(&f));
    fwd_div_release(&f);

    /* backward only: a finite loss, then the gradient of sqrt at 0 */
    bwd_sqrt b;
    if (bwd_sqrt_init(&b, B, 1) != 0)
        return 2;
    where(argv[1], "bwd_sqrt.nn", "sqrt(", loc, sizeof loc);
    const float lb = bwd_sqrt_train_forward(&b, B, x, y);
    CHECK(isfinite(lb) && !bwd_sqrt_numerics_error(&b), "bwd_sqrt's forward pass is finite (%g, %s)", lb,
          bwd_sqrt_numerics_error(&b));
    bwd_sqrt_backward(&b);
    msg = bwd_sqrt_numerics_error(&b);
    CHECK(msg && strstr(msg, "in the backward pass") && strstr(msg, " at [0][0] of ") && strstr(msg, "(f32[6,8])"),
          "backward message: %s", msg ? msg : "(null)");
    CHECK(msg && strstr(msg, loc) && strstr(msg, loc)[strlen(loc)] == ':', "backward message at %s: %s", loc,
          msg ? msg : "(null)");
    /* a pass that runs through clears the message */
    bwd_sqrt_forward(&b, B, x, out);
    CHECK(!bwd_sqrt_numerics_error(&b), "forward clears the message: %s", bwd_sqrt_numerics_error(&b));
    bwd_sqrt_eval(&b, B, x, y, &le, NULL);
    CHECK(isfinite(le) && !bwd_sqrt_numerics_error(&b), "eval is finite");
    bwd_sqrt_release(&b);

    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
