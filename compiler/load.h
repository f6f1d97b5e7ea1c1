/* load.h — loading a program (load_*): the file named on the command
 * line, every file it imports (along -I) and the embedded standard
 * library, each parsed into a syntax tree.
 *
 * The front end's options live here too because loading is the first
 * stage that reads them: load.c uses the -I directories, and model
 * assembly (model.c) the -D values, --prefix and --model.
 */
#ifndef NNC_LOAD_H
#define NNC_LOAD_H

#include "ast.h"

typedef struct Define {
    const char *name;
    const char *value; /* an expression: 3, 0.5, true, [1,2], relu (model.c) */
} Define;

typedef struct ElabOptions {
    const char **incdirs;
    int nincdirs;
    const Define *defs;
    int ndefs;
    const char *prefix; /* --prefix, or NULL */
    const char *model;  /* --model: the one model to compile, or NULL */
    /* When set, files are read from this table instead of the disk: the
     * input and its imports are looked up by path ("./" prefixes aside).
     * The fuzz target (tests/fuzz/) compiles several files in memory. */
    const SrcFile *memfiles;
    int nmemfiles;
    int f64; /* --precision=f64: state slots are doubles (an i64 counter takes one) */
} ElabOptions;

typedef struct Program {
    Node **files; /* every parsed file, the standard library first */
    int nfiles;
    Node *main;        /* the file named on the command line */
    const char **deps; /* every file read (for -M), without the std */
    int ndeps;
} Program;

/* Parses `path` and everything it imports (along -I); NULL on errors. */
Program *load_program(const char *path, const ElabOptions *opt);

/* The standard library's source (std.nn, embedded at build time). */
extern const char nnc_std_source[];

#endif
