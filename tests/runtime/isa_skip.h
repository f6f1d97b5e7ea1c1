/* isa_skip.h — for the kernel tests that ctest runs once per instruction
 * set (CMakeLists.txt here: runtime.<test>.<isa> under NNC_ISA=<isa>):
 * whether the runtime runs another set than the one asked for, the CPU
 * lacking it, in which case the test exits 77, which ctest reports as
 * skipped.  Prints the set that runs.
 */
#ifndef NNC_TEST_ISA_SKIP_H
#define NNC_TEST_ISA_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_runtime.h"

enum { ISA_SKIP = 77 };

static inline int isa_skip(const char *test)
{
    const char *want = getenv("NNC_ISA"), *have = nnc_isa_name(nnc_isa());
    if (want && *want && strcmp(want, have)) {
        printf("%s: skipped: NNC_ISA=%s, and this CPU runs %s\n", test, want, have);
        return 1;
    }
    printf("%s: instruction set %s\n", test, have);
    return 0;
}

#endif
