/* fuzz_safetensors.c — libFuzzer target: the runtime's safetensors reader
 * (runtime/safetensors.c) on one file: nnc_st_load and its non-strict
 * variant into a small model's params and state (the tensors of
 * tests/runtime/fake_model.c and an i64 counter, as BatchNorm's), and
 * nnc__st_read_state, the driver's reader of a checkpoint's metadata and
 * optimizer moments.  Either must accept the file or fail with one
 * message, never crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "nnc_internal.h"
#include "nnc_runtime.h"

static const nnc_tensor_info infos[5] = {
    {"w", 2, {2, 3}, 0, 6, 1, 0, NNC_F32},
    {"b", 1, {2}, 6, 2, 1, 0, NNC_F32},
    {"e", 2, {4, 2}, 8, 8, 1, 0, NNC_F32},
    {"seen", 1, {1}, 0, 1, 0, 0, NNC_F32},
    {"bn.num_batches_tracked", 0, {0}, 2, 1, 0, 0, NNC_I64},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".safetensors");
    if (!path)
        return 0;
    float params[16];
    _Alignas(8) float state[4]; /* the counter: 8 bytes at float 2 */
    nnc_st_load(path, infos, 5, params, state);
    nnc_st_load_non_strict(path, infos, 5, params, state);

    static const char *const names[2] = {NNC_TRAIN_PREFIX "optimizer.m", NNC_TRAIN_PREFIX "optimizer.v"};
    float m[16], v[16];
    float *const outs[2] = {m, v};
    const size_t sizes[2] = {16, 16};
    nnc__kv *meta = NULL;
    size_t nmeta = 0;
    char *keep = NULL;
    if (nnc__st_read_state(path, &meta, &nmeta, &keep, names, outs, sizes, 2) != -1) {
        /* every key and value must be a readable string */
        static volatile size_t total;
        for (size_t i = 0; i < nmeta; i++)
            total += strlen(meta[i].key) + strlen(meta[i].value);
    }
    free(meta);
    free(keep);
    return 0;
}
