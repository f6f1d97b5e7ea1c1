/* tests/crash: the runtime's own save in a loop, for check_crash.py to
 * kill.
 *
 *   saver save PATH     writes PATH once with every param k = 1, then
 *                       forever with k = 2, 3, ...; prints "saved k" after
 *                       each save returns
 *   saver check PATH    loads PATH with big_load and prints "k" when every
 *                       param is that same k: a whole checkpoint of one
 *                       save, not a mix of two; exit 1 otherwise
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "big.h"

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "save") && strcmp(argv[1], "check")))
        return 2;
    static big m;
    if (big_init(&m, 1, 0) != 0) {
        perror("big_init");
        return 2;
    }
    float *p = (float *)m.params;
    if (!strcmp(argv[1], "check")) {
        if (big_load(&m, argv[2]) != 0) {
            printf("load failed: %s\n", nnc_error());
            return 1;
        }
        for (size_t i = 1; i < BIG_NUM_PARAMS; i++)
            if (p[i] != p[0]) {
                printf("mixed: param %zu is %g, param 0 %g\n", i, (double)p[i], (double)p[0]);
                return 1;
            }
        printf("%g\n", (double)p[0]);
        return 0;
    }
    for (long k = 1;; k++) {
        for (size_t i = 0; i < BIG_NUM_PARAMS; i++)
            p[i] = (float)k;
        if (big_save(&m, argv[2]) != 0) {
            printf("save failed: %s\n", nnc_error());
            return 1;
        }
        printf("saved %ld\n", k);
        fflush(stdout);
    }
}
