/* fuzz_file.h — the runtime's readers take a path: each input is written
 * to a file of this process's own under /dev/shm (memory; /tmp where
 * there is none), overwritten input after input. */
#ifndef NNC_FUZZ_FILE_H
#define NNC_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_path[256];

static void fuzz_file_cleanup(void) { remove(fuzz_path); }

/* The path holding the input, or NULL when it could not be written. */
static const char *fuzz_file(const uint8_t *data, size_t size, const char *ext)
{
    if (!fuzz_path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_path, sizeof fuzz_path, "%s/nnc-fuzz-%ld%s", dir, (long)getpid(), ext);
        atexit(fuzz_file_cleanup);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f)
        return NULL;
    int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok)
        return NULL;
    return fuzz_path;
}

#endif
