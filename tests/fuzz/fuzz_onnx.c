/* fuzz_onnx.c — libFuzzer target: `nnc import` on one .onnx file, the
 * whole of it in memory, as import_main (compiler/main.c) runs it:
 *
 *     read (onnx_load, the --dump=onnx printer)  ->  the unsupported-op check
 *         ->  fold (fold_run, --dump=fold)  ->  lift (lift_run, source_print)
 *         ->  the in-memory compile of the source (lift_compiles)
 *         ->  the weights file (lift_safetensors)
 *
 * with nothing written.  A file is imported or refused with exactly one
 * error line, at whichever stage refuses it; a source that lift printed
 * must compile (when it does not, `nnc import` blames itself: the target
 * aborts on it).  No stage may crash, read out of bounds, overflow, leak or
 * allocate without bound.  The loss (none, cross_entropy, mse) is the
 * input's size modulo 3.
 *
 * The reader runs twice: first alone, then freed with onnx_free, when
 * nothing it allocated may be left (onnx.c frees what it allocates; the
 * target aborts on a leftover, which LeakSanitizer cannot see since
 * fuzz_alloc's table points to it); then again for the pipeline.  fold,
 * lift and the compiler leave their memory to exit, as the compiler does:
 * after each input the compiler's state is reset (diag_reset, elab_reset,
 * ast_reset) and what the input allocated is freed (fuzz_alloc.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "elab.h"
#include "fuzz_alloc.h"
#include "fuzz_file.h"
#include "onnx.h"
#include "onnx_import.h"
#include "source.h"

static FILE *sink;

/* One error line, or the input is a finding. */
static void one_error(const char *stage)
{
    if (diag_errors() != 1) {
        fprintf(stderr, "fuzz_onnx: %s refused the file with %d error lines, not one\n", stage, diag_errors());
        abort();
    }
}

/* The reader alone: accepted or refused with one line, nothing left. */
static void read_only(const char *path)
{
    OnnxStatus status;
    OnnxModel *m = onnx_load(path, &status);
    if (m) {
        onnx_dump(m, sink);
        const OnnxNode *n = onnx_first_unsupported(m);
        if (n)
            onnx_report_unsupported(m, n);
        onnx_free(m);
    } else if (status == ONNX_OK) {
        abort();
    } else {
        one_error("the reader");
    }
    diag_reset();
    if (nnc_fuzz_live() != 0) {
        fprintf(stderr, "fuzz_onnx: %zu blocks of the reader still live after onnx_free\n", nnc_fuzz_live());
        abort();
    }
}

/* The stages after the reader, as import_main runs them. */
static void import(const OnnxModel *m, LiftLoss loss)
{
    if (onnx_first_unsupported(m))
        return;
    FoldStatus st;
    Fold *fold = fold_run(m, &st);
    if (!fold) {
        one_error("fold");
        return;
    }
    fold_dump(fold, sink);
    Lift *lift = lift_run(fold, "Model", loss, &st);
    if (!lift) {
        one_error("lift");
        return;
    }
    if (diag_errors())
        abort(); /* lift succeeded after reporting an error */
    char *text;
    size_t len;
    FILE *mf = open_memstream(&text, &len);
    if (!mf)
        abort();
    source_print(lift->file, mf);
    fclose(mf);
    if (lift_compiles("model.nn", text, len) != 0) {
        fprintf(stderr, "fuzz_onnx: the imported source does not compile:\n%s\n", text);
        diag_reset();
        diag_set_output(stderr);
        lift_compiles("model.nn", text, len);
        abort();
    }
    free(text); /* open_memstream's: not recorded, freed here */
    size_t wlen;
    free(lift_safetensors(lift, &wlen));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink) {
        sink = fopen("/dev/null", "w");
        diag_set_output(sink);
    }
    const char *path = fuzz_file(data, size, ".onnx");
    if (!path)
        return 0;
    read_only(path);
    OnnxStatus status;
    OnnxModel *m = onnx_load(path, &status);
    if (m) {
        static const LiftLoss losses[3] = {LIFT_LOSS_NONE, LIFT_LOSS_CROSS_ENTROPY, LIFT_LOSS_MSE};
        import(m, losses[size % 3]);
        onnx_free(m);
    }
    elab_reset();
    diag_reset();
    ast_reset();
    nnc_fuzz_free_all();
    return 0;
}
