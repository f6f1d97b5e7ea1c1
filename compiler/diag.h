/* diag.h — source files, locations and diagnostics (diag_*).
 *
 * Every stage reports through here so that all errors share one format
 * (spec §9): `file:line:col: error: message`, the source line, a caret
 * under the span, then `note:` lines.  Errors are counted, not fatal, so one
 * run reports everything it can; main.c checks diag_errors() between stages
 * and writes no output when it is non-zero.
 */
#ifndef NNC_DIAG_H
#define NNC_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* A loaded source file.  `text` is NUL-terminated; `len` excludes the NUL. */
typedef struct SrcFile {
    const char *path; /* as the user or the import named it */
    const char *text;
    size_t len;
} SrcFile;

/* A span of source: byte offset and length inside `file`.  file == NULL
 * means "no location" (command-line problems). */
typedef struct Loc {
    const SrcFile *file;
    int off;
    int len;
} Loc;

/* Reads `path` into a new SrcFile; NULL (with errno) when it can't. */
SrcFile *diag_load_file(const char *path);
/* A SrcFile over an in-memory string (the standard library, -D values). */
SrcFile *diag_string_file(const char *name, const char *text);

/* 1-based line and column of a location (column counts bytes). */
void diag_linecol(Loc loc, int *line, int *col);

/* error:, then note: lines attached to the last error.  Messages are
 * lower-case without a final period; user text is quoted with '…'. */
void diag_error(Loc loc, const char *fmt, ...);
void diag_note(Loc loc, const char *fmt, ...);
void diag_verror(Loc loc, const char *fmt, va_list ap);
int diag_errors(void); /* errors reported so far */

/* Diagnostics go to `out` (NULL: stderr, the default). */
void diag_set_output(FILE *out);
/* Forgets every error and what was printed, for a new compilation in the
 * same process (the fuzz target, tests/fuzz/): the files loaded so far
 * are the caller's to free. */
void diag_reset(void);

/* An error inside the standard library is reported where the user's code
 * reached it: `user_site` maps a location to that place (or returns it
 * unchanged); the library's own line follows as a note. */
void diag_set_user_site(Loc (*user_site)(Loc));

/* "did you mean 'x'?" helper: the candidate closest to `name` by edit
 * distance, or NULL when none is close enough to be a plausible typo. */
const char *diag_closest(const char *name, const char *const *cands, int n);

#endif
