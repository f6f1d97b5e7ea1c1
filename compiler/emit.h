/* emit.h — C emission (emit_*): the header, the model's C file and the
 * command-line driver of generated-c.md. */
#ifndef NNC_EMIT_H
#define NNC_EMIT_H

#include "ir.h"

typedef struct EmitOptions {
    int driver;         /* also <prefix>_main.c */
    int f64;            /* double precision (gradient checks only) */
    int check_numerics; /* --check-numerics: stop each pass at its first non-finite value */
} EmitOptions;

typedef struct EmitFile {
    char *name; /* "digits.h" */
    char *text;
    size_t len;
} EmitFile;

/* Emits the files of one model into memory; main.c writes them when the
 * whole run had no error.  Returns the number of files (up to 3). */
int emit_model(const Model *m, const EmitOptions *opt, EmitFile *files);

#endif
