/* fuzz_npy.c — libFuzzer target: the runtime's .npy reader,
 * nnc_npy_read (runtime/npy.c), on one file.  It must accept the file,
 * with every element of its data readable, or fail with one message. */
#include <stdint.h>
#include <string.h>

#include "fuzz_file.h"
#include "nnc_runtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".npy");
    if (!path)
        return 0;
    nnc_array a;
    if (nnc_npy_read(path, &a) == 0) {
        /* touch the whole array, so a short buffer is an ASan report */
        int64_t n = 1;
        for (int k = 0; k < a.ndim; k++)
            n *= a.shape[k];
        if (n != a.count)
            __builtin_trap();
        static volatile unsigned char sum;
        for (int64_t i = 0; i < a.count * 4; i++)
            sum ^= ((const unsigned char *)a.data)[i];
        nnc_array_free(&a);
    }
    return 0;
}
