/* fuzz_compiler.c — libFuzzer target: the whole compiler on one input.
 *
 * The input is one or more .nn files: the first is main.nn, and a line
 * "--- NAME" starts the file NAME, so that `import "NAME"` finds it (the
 * files are served from memory through ElabOptions.memfiles; nothing is
 * read from the disk).  Each input runs nnc's pipeline as main.c does,
 * every stage on every model: load (lex, parse, imports), the files
 * written back as source (--dump=source), elaborate, the
 * summary and dot views, autodiff, planning, kernel selection, the memory
 * plan, the dumps and emission with the driver, all in memory.  The
 * diagnostics go to /dev/null.  Then the compiler's state is reset
 * (diag_reset, elab_reset, ast_reset) and whatever the input allocated is
 * freed (fuzz_alloc.h), so the next input starts as a fresh process would.
 *
 * Every input is compiled: huge `for` ranges, `* n` repeats and tensor
 * sizes end at the compile-time limits (language.md, "Limits").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elab.h"
#include "emit.h"
#include "fuzz_alloc.h"
#include "grad.h"
#include "kernel.h"
#include "load.h"
#include "model.h"
#include "plan.h"
#include "source.h"
#include "view.h"

enum { MAX_FILES = 8 };

static FILE *sink;

/* A line "--- NAME" at d[j]: NAME (malloc'd) in *name, and where the
 * next line starts. */
static size_t read_marker(const uint8_t *d, size_t n, size_t j, const char **name)
{
    size_t s = j + 4, e = s;
    while (e < n && d[e] != '\n')
        e++;
    char *nm = malloc(e - s + 1);
    memcpy(nm, d + s, e - s);
    nm[e - s] = 0;
    *name = nm;
    return e < n ? e + 1 : n;
}

static int is_marker(const uint8_t *d, size_t n, size_t j)
{
    return (j == 0 || d[j - 1] == '\n') && n - j >= 4 && !memcmp(d + j, "--- ", 4);
}

/* Splits the input into files at lines "--- NAME" (the first file is
 * main.nn unless a marker names it).  Texts and names are malloc'd
 * copies, the texts NUL-terminated. */
static int split_files(const uint8_t *d, size_t n, SrcFile *files)
{
    int nf = 0;
    const char *name = "main.nn";
    size_t start = is_marker(d, n, 0) ? read_marker(d, n, 0, &name) : 0;
    for (;;) {
        size_t j = start;
        while (j < n && !is_marker(d, n, j))
            j++;
        char *t = malloc(j - start + 1);
        memcpy(t, d + start, j - start);
        t[j - start] = 0;
        files[nf].path = name;
        files[nf].text = t;
        files[nf++].len = j - start;
        if (j >= n || nf == MAX_FILES)
            return nf;
        start = read_marker(d, n, j, &name);
    }
}

static void compile(SrcFile *files, int nf, int driver, int f64)
{
    ElabOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.memfiles = files;
    opt.nmemfiles = nf;
    opt.f64 = f64;
    Program *prog = load_program(files[0].path, &opt);
    if (!prog)
        return;
    for (int i = 0; i < prog->nfiles; i++)
        source_print(prog->files[i], sink);
    Model **models;
    int nmodels = model_elaborate(prog, &opt, &models);
    if (diag_errors())
        return;
    for (int i = 0; i < nmodels; i++) {
        view_summary(models[i], sink);
        view_dot(models[i], sink);
    }
    for (int i = 0; i < nmodels; i++) {
        Model *m = models[i];
        Graph *gs[2] = {m->infer, m->train};
        for (int k = 0; k < 2; k++)
            if (gs[k])
                ir_dump(m, gs[k], sink, 0);
        if (m->train) {
            grad_build(m, m->train);
            ir_dump(m, m->train, sink, 1);
        }
        for (int k = 0; k < 2; k++)
            if (gs[k]) {
                plan_rewrite(m, gs[k]);
                kernel_select(gs[k], f64);
                plan_groups(m, gs[k], !f64);
                plan_memory(m, gs[k]);
                plan_dump(m, gs[k], sink);
            }
    }
    EmitOptions eopt = {driver, f64};
    EmitFile *out = calloc((size_t)nmodels * 3 + 1, sizeof(EmitFile));
    int nout = 0;
    for (int i = 0; i < nmodels; i++)
        nout += emit_model(models[i], &eopt, out + nout);
    for (int i = 0; i < nout; i++)
        free(out[i].text); /* open_memstream's: not recorded, freed here */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink) {
        sink = fopen("/dev/null", "w");
        diag_set_output(sink);
    }
    SrcFile files[MAX_FILES];
    int nf = split_files(data, size, files);
    if (nf > 0) {
        /* one bit of the input picks the precision: f64 has no driver */
        int f64 = size > 0 && (data[size - 1] & 0x80);
        compile(files, nf, !f64, f64);
    }
    elab_reset();
    diag_reset();
    ast_reset();
    nnc_fuzz_free_all();
    return 0;
}
