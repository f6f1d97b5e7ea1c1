/* The generated forward with an out-of-range id: NaN in that row's output,
 * finite elsewhere (run under ASan by the test: no out-of-bounds read). */
#include <math.h>
#include <stdio.h>

#include "ids.h"

int main(void)
{
    ids m;
    if (ids_init(&m, 2, 1) != 0)
        return 2;
    const int32_t in[2][3] = {{0, 4, 1}, {2, 5, -7}};
    float out[2][3][5];
    ids_forward(&m, 2, in, out);
    int ok = 1;
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 5; k++)
            ok &= !isnan(out[0][t][k]) && isnan(out[1][1][k]) && isnan(out[1][2][k]) && !isnan(out[1][0][k]);
    printf("out-of-range ids give NaN rows: %s\n", ok ? "yes" : "no");
    ids_release(&m);
    return ok ? 0 : 1;
}
