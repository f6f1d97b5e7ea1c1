/* Checks `from`: the file's values arrive in the typed fields; a missing
 * or mismatched file makes init fail with -1, errno EINVAL and a message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "from_file.h"

int main(int argc, char **argv)
{
    (void)argc;
    from_file m;
    if (!strcmp(argv[1], "good")) {
        if (from_file_init(&m, 2, 1) != 0) {
            fprintf(stderr, "init failed: %s\n", nnc_error());
            return 1;
        }
        int bad = 0;
        for (int o = 0; o < 3; o++)
            for (int i = 0; i < 4; i++)
                bad += m.params->enc.weight[o][i] != (float)(o * 4 + i) * 0.5f;
        for (int o = 0; o < 3; o++)
            bad += m.params->enc.bias[o] != -(float)o;
        int inited = 0;
        for (int i = 0; i < 2 * 3; i++)
            inited += ((float *)m.params->head.weight)[i] != 0.0f;
        printf("from: %d wrong values, head initialized: %s\n", bad, inited ? "yes" : "no");
        from_file_release(&m);
        return bad == 0 && inited ? 0 : 1;
    }
    int rc = from_file_init(&m, 2, 1);
    printf("init with a bad file: %d, errno %s, %s\n", rc, errno == EINVAL ? "EINVAL" : "other", nnc_error());
    return rc == -1 && errno == EINVAL ? 0 : 1;
}
