/* elab.h — elaboration (elab_*): imports, hparams, instantiation, shape
 * inference, and lowering of a model to one IR graph per entry point.
 */
#ifndef NNC_ELAB_H
#define NNC_ELAB_H

#include "ir.h"

typedef struct Define {
    const char *name;
    const char *value;        /* literal syntax: 3, 0.5, true, [1,2] */
} Define;

typedef struct ElabOptions {
    const char **incdirs;
    int nincdirs;
    const Define *defs;
    int ndefs;
    const char *prefix;       /* --prefix, or NULL */
    const char *model;        /* --model: the one model to compile, or NULL */
} ElabOptions;

typedef struct Program {
    Node **files;             /* every parsed file, the standard library first */
    int nfiles;
    Node *main;               /* the file named on the command line */
    const char **deps;        /* every file read (for -M), without the std */
    int ndeps;
} Program;

/* Parses `path` and everything it imports (along -I); NULL on errors. */
Program *elab_load(const char *path, const ElabOptions *opt);
/* Elaborates every model declared in the main file into *models. */
int elab_models(Program *p, const ElabOptions *opt, Model ***models);

/* The standard library's source (std.nn, embedded at build time). */
extern const char nnc_std_source[];

#endif
