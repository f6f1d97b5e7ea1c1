/* <p>_init checks max_batch times the model's sizes in 64 bits before it
 * allocates anything: too large a max_batch is -1 with errno EOVERFLOW,
 * no allocation made, and nothing leaked (generated-c.md).
 *
 * digits' largest batched tensor holds 128 floats per example (its
 * hidden layer; the input has 64), so one tensor of max_batch examples
 * fits for max_batch <= 2147483647 / 128 = 16777215 and not above.  The
 * allocator is wrapped (as in tests/noalloc) to count the calls: a
 * refused init must make none, so neither ASan's allocator limits nor
 * the machine's memory can decide the outcome. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "digits.h"

#include "../runtime/count_allocs.h"

static int refused(int max_batch)
{
    digits m;
    long before = allocs;
    errno = 0;
    int r = digits_init(&m, max_batch, 1);
    if (r != -1 || errno != EOVERFLOW || allocs != before) {
        fprintf(stderr, "FAIL: digits_init(max_batch %d) = %d, errno %d (want -1, EOVERFLOW %d), %ld allocations\n",
                max_batch, r, errno, EOVERFLOW, allocs - before);
        if (r == 0)
            digits_release(&m);
        return 0;
    }
    return 1;
}

int main(void)
{
    int ok = refused(INT_MAX) && refused(16777216) && refused(1 << 30);
    /* a normal max_batch still works, and init's own calls are counted */
    digits m;
    long before = allocs;
    if (digits_init(&m, 64, 1) != 0 || allocs == before) {
        fprintf(stderr, "FAIL: digits_init(max_batch 64) failed or was not counted\n");
        return 1;
    }
    digits_release(&m);
    if (!ok)
        return 1;
    printf("init refuses max_batch 2147483647, 16777216 and 1073741824 with EOVERFLOW, allocating nothing\n");
    return 0;
}
