/* load.c — loading a program (load_*): the file named on the command line,
 * everything it imports, and the standard library, parsed into a Program.
 *
 * The standard library comes first, parsed from the string embedded at
 * build time: its layers are then declared before any of the user's, so a
 * user's layer that reuses a standard name is the one reported as the
 * duplicate (elab.c).  An import is searched next to the file that imports
 * it, then along -I in order.  A file reached twice
 * is read once (compared by real path, so that two spellings of one file
 * are one file), and a file that imports itself through a chain of imports
 * is an error rather than endless recursion.  Every file read is recorded
 * for -M, in the order it was read.  With ElabOptions.memfiles the files
 * come from a table in memory instead (the fuzz target, tests/fuzz/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

typedef struct LoadState {
    Program *p;
    const ElabOptions *opt;
    const char **loading; /* the import chain, for cycles */
    int nloading;
} LoadState;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

/* "dir/name", in the arena: paths live as long as the diagnostics. */
static const char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = ast_alloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* The table's file at `path`, or NULL; "./a.nn" is "a.nn". */
static const SrcFile *mem_file(const ElabOptions *opt, const char *path)
{
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    for (int i = 0; i < opt->nmemfiles; i++)
        if (!strcmp(opt->memfiles[i].path, path))
            return &opt->memfiles[i];
    return NULL;
}

/* A file of the program: from the table when there is one, else read. */
static SrcFile *open_file(const ElabOptions *opt, const char *path)
{
    if (!opt->memfiles)
        return diag_load_file(path);
    const SrcFile *m = mem_file(opt, path);
    if (!m) {
        errno = ENOENT;
        return NULL;
    }
    SrcFile *f = ast_alloc(sizeof *f);
    *f = *m;
    f->path = path;
    return f;
}

static int path_exists(const ElabOptions *opt, const char *p)
{
    if (opt->memfiles)
        return mem_file(opt, p) != NULL;
    FILE *f = fopen(p, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static const char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    return ast_strndup(path, (size_t)(slash - path));
}

static void load_file(LoadState *ls, const char *path, Loc from);

static void load_imports(LoadState *ls, Node *file)
{
    const char *dir = dir_of(file->loc.file->path);
    for (int i = 0; i < file->list.n; i++) {
        Node *d = file->list.v[i];
        if (d->kind != ND_IMPORT)
            continue;
        const char *cand = d->str[0] == '/' ? d->str : path_join(dir, d->str);
        const char *found = path_exists(ls->opt, cand) ? cand : NULL;
        for (int k = 0; !found && k < ls->opt->nincdirs; k++) {
            const char *c = path_join(ls->opt->incdirs[k], d->str);
            if (path_exists(ls->opt, c))
                found = c;
        }
        if (!found) {
            diag_error(d->loc, "cannot find imported file '%s'", d->str);
            if (ls->opt->nincdirs == 0)
                diag_note(d->loc, "searched relative to '%s'; add directories with -I", dir);
            continue;
        }
        load_file(ls, found, d->loc);
    }
}

/* Two spellings of one file are the same file: compare real paths. */
static const char *canon(const ElabOptions *opt, const char *p)
{
    if (opt->memfiles) {
        while (p[0] == '.' && p[1] == '/')
            p += 2;
        return p;
    }
    char *r = realpath(p, NULL);
    if (!r)
        return p;
    const char *c = ast_strndup(r, strlen(r));
    free(r);
    return c;
}

static void load_file(LoadState *ls, const char *path, Loc from)
{
    const char *key = canon(ls->opt, path);
    for (int i = 0; i < ls->nloading; i++)
        if (!strcmp(ls->loading[i], key)) {
            diag_error(from, "import cycle: '%s' imports itself through this import", path);
            return;
        }
    for (int i = 0; i < ls->p->ndeps; i++)
        if (!strcmp(canon(ls->opt, ls->p->deps[i]), key))
            return; /* a second import has no effect */
    SrcFile *f = open_file(ls->opt, path);
    if (!f) {
        diag_error(from, "cannot read '%s': %s", path, strerror(errno));
        return;
    }
    ls->p->deps = realloc(ls->p->deps, sizeof(char *) * (size_t)(ls->p->ndeps + 1));
    ls->p->deps[ls->p->ndeps++] = path;
    Node *tree = ast_parse(f);
    if (!tree)
        return;
    if (!ls->p->main)
        ls->p->main = tree;
    ls->loading = realloc(ls->loading, sizeof(char *) * (size_t)(ls->nloading + 1));
    ls->loading[ls->nloading++] = key;
    load_imports(ls, tree);
    ls->nloading--;
    ls->p->files = realloc(ls->p->files, sizeof(Node *) * (size_t)(ls->p->nfiles + 1));
    ls->p->files[ls->p->nfiles++] = tree;
}

Program *load_program(const char *path, const ElabOptions *opt)
{
    Program *p = xcalloc(1, sizeof *p);
    LoadState ls = {p, opt, NULL, 0};
    SrcFile *std = diag_string_file("<std>", nnc_std_source);
    Node *stdtree = ast_parse(std);
    if (!stdtree || diag_errors())
        return NULL;
    p->files = xcalloc(1, sizeof(Node *));
    p->files[p->nfiles++] = stdtree;
    SrcFile *f = open_file(opt, path);
    if (!f) {
        Loc none_loc = {0};
        diag_error(none_loc, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    p->deps = xcalloc(1, sizeof(char *));
    p->deps[p->ndeps++] = path;
    p->main = ast_parse(f);
    if (!p->main)
        return NULL;
    ls.loading = xcalloc(1, sizeof(char *));
    ls.loading[ls.nloading++] = canon(opt, path);
    load_imports(&ls, p->main);
    p->files = realloc(p->files, sizeof(Node *) * (size_t)(p->nfiles + 1));
    p->files[p->nfiles++] = p->main;
    free(ls.loading);
    return diag_errors() ? NULL : p;
}
