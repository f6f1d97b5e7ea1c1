/* fuzz_onnx.c — libFuzzer target: the ONNX reader of `nnc import`
 * (compiler/onnx.c) on one file: onnx_load, then on a model it accepts
 * the --dump=onnx printer and the unsupported-op report, then onnx_free.
 * The reader must accept the file or reject it with one message, and
 * never crash, read out of bounds, leak or allocate without bound.
 *
 * onnx.c is compiled with fuzz_alloc.h like the rest of the compiler, but
 * unlike the compiler it frees what it allocates: anything still recorded
 * after onnx_free and diag_reset is a leak, and the target aborts on it
 * (LeakSanitizer cannot see it, since fuzz_alloc's table points to it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "fuzz_alloc.h"
#include "fuzz_file.h"
#include "onnx.h"

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink) {
        sink = fopen("/dev/null", "w");
        diag_set_output(sink);
    }
    const char *path = fuzz_file(data, size, ".onnx");
    if (!path)
        return 0;
    OnnxStatus status;
    OnnxModel *m = onnx_load(path, &status);
    if (m) {
        onnx_dump(m, sink);
        const OnnxNode *n = onnx_first_unsupported(m);
        if (n)
            onnx_report_unsupported(m, n);
        onnx_free(m);
    } else if (status == ONNX_OK || diag_errors() != 1) {
        abort(); /* a rejected file gets exactly one message */
    }
    diag_reset();
    if (nnc_fuzz_live() != 0) {
        fprintf(stderr, "fuzz_onnx: %zu blocks of the reader still live after onnx_free\n", nnc_fuzz_live());
        abort();
    }
    return 0;
}
