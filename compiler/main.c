/* main.c — the nnc command line and the pipeline:
 *
 *     lex + parse (grammar/, load.c)  ->  elaborate (model.c, elab.c, inst.c, prims.c)
 *         ->  autodiff (grad.c)  ->  the batch across processes (dist.c)
 *         ->  plan: peepholes, folds, fusion (plan.c)
 *         ->  kernel selection (kernel.c)  ->  memory plan (plan.c)
 *         ->  emit C (emit*.c)
 *
 * Each stage can be dumped with --dump=tokens|ast|ir|grad|dist|plan, and the
 * tree written back as source with --dump=source (source.c).  Output
 * files are written only when the whole run had no error, each atomically
 * (a temporary file renamed into place).
 *
 * `nnc import MODEL.onnx` is a pipeline of its own (import_main):
 *
 *     read + check the ONNX file (onnx.c)  ->  the ops the import maps (onnx_ops.def)
 *         ->  fold: shapes and constants (onnx_fold.c)  ->  lift: the syntax tree (onnx_lift.c)
 *         ->  print it (source.c)  ->  compile it in memory (lift_compiles)  ->  write
 *
 * dumped with --dump=onnx|fold|source; tests/fuzz/fuzz_onnx.c runs the same
 * stages in memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ast.h"
#include "dist.h"
#include "emit.h"
#include "grad.h"
#include "kernel.h"
#include "load.h"
#include "model.h"
#include "plan.h"
#include "source.h"
#include "view.h"
#ifdef NNC_ONNX
#include "onnx.h"
#include "onnx_import.h"
#endif

#ifndef NNC_VERSION
#define NNC_VERSION "0.0.0"
#endif

static const char usage_text[] =
    "usage: nnc [options] model.nn\n"
    "       nnc import MODEL.onnx [-o DIR] [--name NAME] [--loss KIND] [--dump=onnx|fold|source]\n"
    "\n"
    "Compiles a model written in the nn language into C that trains.\n"
    "'nnc import' turns an ONNX model into NAME.nn and NAME.safetensors in DIR.\n"
    "\n"
    "options:\n"
    "  -o DIR             write the generated files into DIR (default: .)\n"
    "  --emit=KIND        c: <prefix>.h and <prefix>.c (default);\n"
    "                     driver or all: also <prefix>_main.c, the command-line driver;\n"
    "                     dot: only <prefix>.dot, a Graphviz picture of the model\n"
    "  --summary          print a table of the model's fields (layer, output shape, params,\n"
    "                     FLOPs per example) with totals, and write nothing\n"
    "  --model NAME       compile only model NAME of the file (default: every model in it)\n"
    "  --prefix P         name the files and C symbols P instead of the model name in snake_case\n"
    "  -D NAME=VALUE      override a model hparam (VALUE an expression of the language:\n"
    "                     128, 0.5, true, [1, 2], relu, Dense(units: 3))\n"
    "  -I DIR             search DIR for imported files (after the importing file's directory)\n"
    "  --dump=STAGE       print a stage to stdout and stop: tokens, ast, ir, grad, dist or plan,\n"
    "                     or source (the file parsed and written back in the canonical layout)\n"
    "                     (import: onnx, the graph as read; fold, every value's shape and the\n"
    "                     constants; source, the .nn it would write)\n"
    "  --print-std        print the standard library's source and exit\n"
    "  -M                 print the make rule of the output files' dependencies (the model file\n"
    "                     and everything it imports) to stdout, and write nothing else\n"
    "  --depfile FILE     also write that rule to FILE while compiling (as gcc -MD -MF)\n"
    "  --precision=f64    emit double-precision code (for gradient checks; no save/load/driver)\n"
    "  --check-numerics   emit code that stops each pass at the first NaN or infinity an op\n"
    "                     writes, naming the op, the tensor and its .nn line\n"
    "  --version          print the version and exit\n"
    "  --help             print this help and exit\n"
    "\n"
    "import options (and -o DIR, --dump=onnx|fold|source):\n"
    "  --name NAME        name the files NAME.nn and NAME.safetensors and the model NAME in\n"
    "                     CamelCase (default: the file's stem in snake_case)\n"
    "  --loss KIND        cross_entropy, mse or none (default): the loss the model gets\n"
    "\n"
    "exit status: 0 on success, 1 on any error (nothing is written then); for import,\n"
    "1 when the model uses an op (the message names it, its opset and the node) or a feature\n"
    "nnc does not map, 2 when the file is not valid ONNX (truncated, not protobuf,\n"
    "a missing initializer, shapes that do not agree or that are dynamic beyond the batch):\n"
    "one line naming the file and the problem, and nothing written\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "nnc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'nnc --help' for usage)\n");
    return 1;
}

/* Writes `len` bytes to dir/name (or to name when dir is NULL) through a
 * temporary file and a rename. */
static int write_atomic(const char *dir, const char *name, const char *text, size_t len)
{
    size_t n = (dir ? strlen(dir) : 0) + strlen(name) + 32;
    char *path = malloc(n), *tmp = malloc(n + 16);
    if (!path || !tmp)
        abort();
    if (dir)
        snprintf(path, n, "%s/%s", dir, name);
    else
        snprintf(path, n, "%s", name);
    snprintf(tmp, n + 16, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok) {
        fprintf(stderr, "nnc: error: cannot write '%s': %s\n", path, strerror(errno));
        remove(tmp);
    }
    free(path);
    free(tmp);
    return ok ? 0 : -1;
}

/* -D NAME=VALUE (or -DNAME=VALUE): 0, or -1 when there is no NAME=. */
static int add_define(ElabOptions *opt, Define *defs, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return -1;
    defs[opt->ndefs].name = ast_strndup(v, (size_t)(eq - v));
    defs[opt->ndefs++].value = eq + 1;
    return 0;
}

/* mkdir -p: the output directory and its missing parents. */
static int make_dirs(const char *dir)
{
    char *p = ast_strndup(dir, strlen(dir));
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* A path in a make rule: spaces, '#', '$' and ':' escaped as make wants. */
static void dep_path(FILE *f, const char *p)
{
    for (; *p; p++) {
        if (*p == ' ' || *p == '#' || *p == ':' || *p == '\\')
            fputc('\\', f);
        if (*p == '$')
            fputc('$', f);
        fputc(*p, f);
    }
}

/* "out/digits.h out/digits.c: models/digits.nn lib/blocks.nn", plus an
 * empty rule per dependency so a deleted import does not break make. */
static char *dep_rule(const Program *prog, const char *outdir, Model **models, int n, int driver)
{
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    for (int i = 0; i < n; i++) {
        const char *suffixes[3] = {".h", ".c", "_main.c"};
        for (int k = 0; k < (driver ? 3 : 2); k++) {
            if (i || k)
                fputc(' ', f);
            dep_path(f, outdir);
            fputc('/', f);
            dep_path(f, models[i]->prefix);
            fputs(suffixes[k], f);
        }
    }
    fputc(':', f);
    for (int i = 0; i < prog->ndeps; i++) {
        fputs(" \\\n  ", f);
        dep_path(f, prog->deps[i]);
    }
    fputc('\n', f);
    for (int i = 1; i < prog->ndeps; i++) {
        fputc('\n', f);
        dep_path(f, prog->deps[i]);
        fputs(":\n", f);
    }
    fclose(f);
    return text;
}

#ifdef NNC_ONNX
/* The last step of import: the written source must compile (parse and
 * elaborate, warnings included) before NAME.nn and NAME.safetensors are
 * written, each atomically.  A failure here is the importer's bug, and it
 * says so. */
static int import_write(const char *input, const char *outdir, const char *name, const char *text, size_t len,
                        const Lift *lift)
{
    char *nn = malloc(strlen(name) + 16), *st = malloc(strlen(name) + 16);
    if (!nn || !st)
        abort();
    sprintf(nn, "%s.nn", name);
    sprintf(st, "%s.safetensors", name);
    if (lift_compiles(nn, text, len) != 0) {
        fprintf(stderr,
                "nnc: error: %s: the imported source does not compile (a bug of nnc import; the source is "
                "above with --dump=source)\n",
                input);
        return 1;
    }
    size_t wlen;
    char *weights = lift_safetensors(lift, &wlen);
    if (make_dirs(outdir) != 0) {
        fprintf(stderr, "nnc: error: cannot create output directory '%s': %s\n", outdir, strerror(errno));
        return 1;
    }
    if (write_atomic(outdir, st, weights, wlen) != 0 || write_atomic(outdir, nn, text, len) != 0)
        return 1;
    return 0;
}
#endif

/* nnc import MODEL.onnx [-o DIR] [--name NAME] [--loss KIND] [--dump=onnx|fold|source]:
 * argv[0] is "import". */
static int import_main(int argc, char **argv)
{
    const char *input = NULL, *outdir = ".", *name = NULL, *loss = "none";
    int dump = 0, options = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            fputs(usage_text, stdout);
            return 0;
        } else if (options && (!strcmp(a, "-o") || !strcmp(a, "--name") || !strcmp(a, "--loss"))) {
            if (i + 1 >= argc)
                return usage_error("'%s' needs an argument", a);
            const char *v = argv[++i];
            if (a[1] == 'o')
                outdir = v;
            else if (a[2] == 'n')
                name = v;
            else
                loss = v;
        } else if (options && !strncmp(a, "-o", 2)) {
            outdir = a + 2;
        } else if (options && !strncmp(a, "--name=", 7)) {
            name = a + 7;
        } else if (options && !strncmp(a, "--loss=", 7)) {
            loss = a + 7;
        } else if (options && !strncmp(a, "--dump=", 7)) {
            if (!strcmp(a + 7, "onnx"))
                dump = 1;
            else if (!strcmp(a + 7, "fold"))
                dump = 2;
            else if (!strcmp(a + 7, "source"))
                dump = 3;
            else
                return usage_error("unknown --dump stage '%s' for import (onnx, fold, source)", a + 7);
        } else if (options && !strcmp(a, "--")) {
            options = 0;
        } else if (options && a[0] == '-' && a[1]) {
            return usage_error("unknown import option '%s'", a);
        } else if (input) {
            return usage_error("more than one input file ('%s')", a);
        } else {
            input = a;
        }
    }
    if (!input)
        return usage_error("%s", "import needs an ONNX file");
    if (strcmp(loss, "cross_entropy") && strcmp(loss, "mse") && strcmp(loss, "none"))
        return usage_error("unknown --loss '%s' (cross_entropy, mse, none)", loss);
    if (!outdir[0])
        return usage_error("%s", "-o needs a directory");
#ifndef NNC_ONNX
    (void)dump;
    (void)name;
    fputs("nnc: error: this nnc was built without ONNX import (NNC_ONNX is OFF: needs protobuf-c-compiler, "
          "libprotobuf-c-dev and libonnx-dev)\n",
          stderr);
    return 1;
#else
    if (name && !onnx_name_ok(name))
        return usage_error("--name '%s' is not snake_case (a lower-case letter, then lower-case letters, digits "
                           "and '_')",
                           name);
    char *stem = name ? NULL : onnx_default_name(input);
    char *model = onnx_model_name(name ? name : stem);
    if ((!name && !stem) || !model)
        abort();

    /* read and check the file */
    OnnxStatus status;
    OnnxModel *om = onnx_load(input, &status);
    if (!om)
        return status == ONNX_ERR_READ ? 1 : 2;
    if (dump == 1) {
        printf("import as %s (model %s), loss %s\n", name ? name : stem, model, loss);
        onnx_dump(om, stdout);
        return 0;
    }

    /* every op must map to the language (onnx_ops.def) */
    const OnnxNode *n = onnx_first_unsupported(om);
    if (n) {
        onnx_report_unsupported(om, n);
        return 1;
    }

    /* shapes and constants */
    FoldStatus fst;
    Fold *fold = fold_run(om, &fst);
    if (!fold)
        return fst == FOLD_UNSUPPORTED ? 1 : 2;
    if (dump == 2) {
        fold_dump(fold, stdout);
        return 0;
    }

    /* the syntax tree, nested by module names */
    LiftLoss lk = !strcmp(loss, "cross_entropy") ? LIFT_LOSS_CROSS_ENTROPY
        : !strcmp(loss, "mse")                   ? LIFT_LOSS_MSE
                                                 : LIFT_LOSS_NONE;
    Lift *lift = lift_run(fold, model, lk, &fst);
    if (!lift)
        return fst == FOLD_UNSUPPORTED ? 1 : 2;
    char *text;
    size_t tlen;
    FILE *mf = open_memstream(&text, &tlen);
    source_print(lift->file, mf);
    fclose(mf);
    if (dump == 3) {
        fputs(text, stdout);
        return 0;
    }
    return import_write(input, outdir, name ? name : stem, text, tlen, lift);
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "import"))
        return import_main(argc - 1, argv + 1);
    const char *input = NULL, *outdir = ".", *dump = NULL, *depfile = NULL;
    int deps_only = 0, summary = 0, dot = 0;
    EmitOptions eopt = {0, 0, 0};
    ElabOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.incdirs = calloc((size_t)argc, sizeof(char *));
    Define *defs = calloc((size_t)argc, sizeof(Define));
    if (!opt.incdirs || !defs)
        abort();
    opt.defs = defs;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("nnc %s\n", NNC_VERSION);
            return 0;
        } else if (!strcmp(a, "--print-std")) {
            fputs(nnc_std_source, stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "-I") || !strcmp(a, "-D") || !strcmp(a, "--prefix")) {
            if (i + 1 >= argc)
                return usage_error("'%s' needs an argument", a);
            const char *v = argv[++i];
            if (a[1] == 'o')
                outdir = v;
            else if (a[1] == 'I')
                opt.incdirs[opt.nincdirs++] = v;
            else if (a[1] == '-')
                opt.prefix = v;
            else if (add_define(&opt, defs, v) != 0)
                return usage_error("-D needs NAME=VALUE, got '%s'", v);
        } else if (!strncmp(a, "-D", 2) || !strncmp(a, "-I", 2)) {
            const char *v = a + 2;
            if (a[1] == 'I') {
                opt.incdirs[opt.nincdirs++] = v;
                continue;
            }
            if (add_define(&opt, defs, v) != 0)
                return usage_error("-D needs NAME=VALUE, got '%s'", v);
        } else if (!strcmp(a, "--summary")) {
            summary = 1;
        } else if (!strcmp(a, "-M")) {
            deps_only = 1;
        } else if (!strcmp(a, "--depfile") || !strcmp(a, "-MF")) {
            if (i + 1 >= argc)
                return usage_error("'%s' needs an argument", a);
            depfile = argv[++i];
        } else if (!strncmp(a, "--depfile=", 10)) {
            depfile = a + 10;
        } else if (!strncmp(a, "--emit=", 7)) {
            const char *k = a + 7;
            dot = !strcmp(k, "dot");
            if (!strcmp(k, "c") || dot)
                eopt.driver = 0;
            else if (!strcmp(k, "driver") || !strcmp(k, "all"))
                eopt.driver = 1;
            else
                return usage_error("unknown --emit kind '%s' (c, driver, all, dot)", k);
        } else if (!strncmp(a, "--dump=", 7)) {
            dump = a + 7;
            if (strcmp(dump, "tokens") && strcmp(dump, "ast") && strcmp(dump, "source") && strcmp(dump, "ir") &&
                strcmp(dump, "grad") && strcmp(dump, "dist") && strcmp(dump, "plan"))
                return usage_error("unknown --dump stage '%s' (tokens, ast, source, ir, grad, dist, plan)", dump);
        } else if (!strcmp(a, "--model")) {
            if (i + 1 >= argc)
                return usage_error("'%s' needs an argument", a);
            opt.model = argv[++i];
        } else if (!strncmp(a, "--model=", 8)) {
            opt.model = a + 8;
        } else if (!strncmp(a, "--prefix=", 9)) {
            opt.prefix = a + 9;
        } else if (!strcmp(a, "--precision=f64")) {
            eopt.f64 = opt.f64 = 1;
        } else if (!strcmp(a, "--precision=f32")) {
            eopt.f64 = opt.f64 = 0;
        } else if (!strcmp(a, "--check-numerics")) {
            eopt.check_numerics = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (input) {
            return usage_error("more than one input file ('%s')", a);
        } else {
            input = a;
        }
    }
    if (!input)
        return usage_error("%s", "no input file");
    if (eopt.check_numerics && eopt.f64)
        return usage_error("%s", "--check-numerics applies to float code, not --precision=f64");

    /* lex and parse: the file and its imports (the tokens and the source
     * are of the one file, and need no imports) */
    if (dump && (!strcmp(dump, "tokens") || !strcmp(dump, "source"))) {
        SrcFile *f = diag_load_file(input);
        if (!f) {
            fprintf(stderr, "nnc: error: cannot read '%s': %s\n", input, strerror(errno));
            return 1;
        }
        if (!strcmp(dump, "tokens")) {
            ast_dump_tokens(f, stdout);
            return diag_errors() ? 1 : 0;
        }
        Node *tree = ast_parse(f);
        if (!tree || diag_errors())
            return 1;
        source_print(tree, stdout);
        return 0;
    }
    Program *prog = load_program(input, &opt);
    if (!prog)
        return 1;
    if (dump && !strcmp(dump, "ast")) {
        ast_dump(prog->main, stdout);
        return 0;
    }

    /* elaborate: hparams, instantiation, shape inference, IR */
    Model **models;
    int nmodels = model_elaborate(prog, &opt, &models);
    if (diag_errors())
        return 1;

    /* the views need only the elaborated model */
    if (summary) {
        for (int i = 0; i < nmodels; i++) {
            if (i)
                putchar('\n');
            view_summary(models[i], stdout);
        }
        return 0;
    }
    if (dot && !dump && !deps_only) {
        if (make_dirs(outdir) != 0) {
            fprintf(stderr, "nnc: error: cannot create output directory '%s': %s\n", outdir, strerror(errno));
            return 1;
        }
        for (int i = 0; i < nmodels; i++) {
            char *text;
            size_t len;
            FILE *f = open_memstream(&text, &len);
            view_dot(models[i], f);
            fclose(f);
            char *name = malloc(strlen(models[i]->prefix) + 8);
            sprintf(name, "%s.dot", models[i]->prefix);
            if (write_atomic(outdir, name, text, len) != 0)
                return 1;
        }
        return 0;
    }

    /* autodiff, then plan every graph */
    for (int i = 0; i < nmodels; i++) {
        Model *m = models[i];
        if (dump && !strcmp(dump, "ir")) {
            Graph *gs[2] = {m->infer, m->train};
            for (int k = 0; k < 2; k++)
                if (gs[k])
                    ir_dump(m, gs[k], stdout, 0);
            continue;
        }
        if (m->train)
            grad_build(m, m->train);
        if (dump && !strcmp(dump, "grad")) {
            if (m->train)
                ir_dump(m, m->train, stdout, 1);
            continue;
        }
        /* (m->eval is m->infer: forward and eval share it) */
        Graph *gs[2] = {m->infer, m->train};
        /* the batch split across processes (f64 code runs in one) */
        for (int k = 0; k < 2; k++)
            if (gs[k] && !eopt.f64)
                dist_plan(m, gs[k]);
        if (dump && !strcmp(dump, "dist")) {
            for (int k = 0; k < 2; k++)
                if (gs[k])
                    ir_dump(m, gs[k], stdout, 0);
            continue;
        }
        for (int k = 0; k < 2; k++)
            if (gs[k]) {
                plan_rewrite(m, gs[k]);
                kernel_select(gs[k], eopt.f64);
                plan_groups(m, gs[k], !eopt.f64 && !eopt.check_numerics);
                plan_memory(m, gs[k]);
            }
        if (dump)
            for (int k = 0; k < 2; k++)
                if (gs[k])
                    plan_dump(m, gs[k], stdout);
    }
    if (dump)
        return 0;

    if (deps_only) {
        char *rule = dep_rule(prog, outdir, models, nmodels, eopt.driver);
        fputs(rule, stdout);
        return 0;
    }

    /* emit everything in memory, then write only if nothing failed */
    EmitFile *files = calloc((size_t)nmodels * 3 + 1, sizeof(EmitFile));
    int nfiles = 0;
    for (int i = 0; i < nmodels; i++)
        nfiles += emit_model(models[i], &eopt, files + nfiles);
    if (diag_errors())
        return 1;
    if (make_dirs(outdir) != 0) {
        fprintf(stderr, "nnc: error: cannot create output directory '%s': %s\n", outdir, strerror(errno));
        return 1;
    }
    for (int i = 0; i < nfiles; i++)
        if (write_atomic(outdir, files[i].name, files[i].text, files[i].len) != 0)
            return 1;
    if (depfile) {
        char *rule = dep_rule(prog, outdir, models, nmodels, eopt.driver);
        if (write_atomic(NULL, depfile, rule, strlen(rule)) != 0)
            return 1;
    }
    return 0;
}
