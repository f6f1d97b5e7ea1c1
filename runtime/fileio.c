/* fileio.c — atomic file replacement and little-endian helpers.
 *
 * Checkpoints and arrays are written the same way everywhere: into a
 * temporary file next to the destination, flushed and fsync'ed, then
 * renamed over the destination.  rename(2) within one directory is atomic,
 * so a crash, a full disk or a killed process leaves either the old file or
 * the complete new one, never a torn file that a later load would misread.
 * A process killed mid-save (kill -9, a power cut) leaves its temporary
 * file, `<path>.tmp.<pid>`, beside the destination: the next save to the
 * same path deletes the ones whose process is gone (remove_stale_temps).
 * On-disk numbers are little-endian (safetensors and "<f4"/"<i4" .npy), so
 * the byte-order helpers make the formats right on big-endian hosts too.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

/* (nnc_internal.h) */
char *nnc__parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (dir) {
        memcpy(dir, slash ? path : ".", n);
        dir[n] = '\0';
    }
    return dir;
}

/* Deletes `<path>.tmp.<pid>` files that a killed save of the same path
 * left behind: those whose pid is not a live process (kill(pid, 0) fails
 * with ESRCH).  A live pid's file is left alone, whoever owns it: it may be
 * another process saving the same path right now.  Best effort: a
 * directory that cannot be read keeps its files. */
static void remove_stale_temps(const char *path)
{
    char *dir = nnc__parent_dir(path);
    if (!dir)
        return;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const size_t blen = strlen(base), dlen = strlen(dir);
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));) {
        const char *nm = de->d_name;
        if (strncmp(nm, base, blen) || strncmp(nm + blen, ".tmp.", 5))
            continue;
        const char *digits = nm + blen + 5;
        char *end;
        errno = 0;
        long pid = strtol(digits, &end, 10);
        if (errno || *end || end == digits || digits[0] < '1' || digits[0] > '9' || pid <= 0 || pid == (long)getpid() ||
            (pid_t)pid != pid)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char *full = malloc(dlen + strlen(nm) + 2);
        if (!full)
            break;
        sprintf(full, "%s/%s", dir, nm);
        unlink(full);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
}

int nnc__atomic_open(nnc__atomic *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    size_t len = strlen(path) + 32;
    a->tmp = malloc(len);
    if (!a->tmp)
        return nnc_fail("%s: out of memory", path);
    snprintf(a->tmp, len, "%s.tmp.%ld", path, (long)getpid());
    remove_stale_temps(path);
    /* O_EXCL so that a symlink planted at the temp name is never followed;
     * a leftover temp of a crashed process that had our pid is stale and
     * can go. */
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0 && errno == EEXIST) {
        unlink(a->tmp);
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    }
    if (fd < 0) {
        int e = errno;
        nnc_fail("%s: cannot create %s: %s", path, a->tmp, strerror(e));
        free(a->tmp);
        a->tmp = NULL;
        errno = e;
        return -1;
    }
    a->f = fdopen(fd, "wb");
    if (!a->f) {
        int e = errno;
        close(fd);
        unlink(a->tmp);
        nnc_fail("%s: cannot open %s: %s", path, a->tmp, strerror(e));
        free(a->tmp);
        a->tmp = NULL;
        errno = e;
        return -1;
    }
    return 0;
}

void nnc__atomic_write(nnc__atomic *a, const void *p, size_t n)
{
    if (a->failed || n == 0)
        return;
    if (fwrite(p, 1, n, a->f) != n) {
        a->failed = 1;
        a->saved_errno = errno ? errno : EIO;
    }
}

void nnc__atomic_write_le32(nnc__atomic *a, const void *words, size_t count)
{
    if (nnc__host_is_little_endian()) {
        nnc__atomic_write(a, words, count * 4);
        return;
    }
    /* Big-endian host: swap through a small stack buffer so that writing
     * never allocates. */
    const unsigned char *src = words;
    unsigned char buf[4096];
    while (count > 0) {
        size_t k = count < sizeof buf / 4 ? count : sizeof buf / 4;
        for (size_t i = 0; i < k; i++) {
            buf[4 * i + 0] = src[4 * i + 3];
            buf[4 * i + 1] = src[4 * i + 2];
            buf[4 * i + 2] = src[4 * i + 1];
            buf[4 * i + 3] = src[4 * i + 0];
        }
        nnc__atomic_write(a, buf, 4 * k);
        src += 4 * k;
        count -= k;
    }
}

/* Makes the rename itself durable.  Best effort: some file systems refuse
 * fsync on a directory, and the data is already safe in the file. */
static void fsync_parent_dir(const char *path)
{
    char *dir = nnc__parent_dir(path);
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int nnc__atomic_commit(nnc__atomic *a)
{
    int e = 0;
    const char *what = NULL;
    if (a->failed) {
        e = a->saved_errno;
        what = "write failed";
    } else if (fflush(a->f) != 0) {
        e = errno;
        what = "write failed";
    } else if (fsync(fileno(a->f)) != 0) {
        e = errno;
        what = "fsync failed";
    }
    if (fclose(a->f) != 0 && !what) {
        e = errno;
        what = "close failed";
    }
    a->f = NULL;
    if (!what && rename(a->tmp, a->path) != 0) {
        e = errno;
        what = "cannot rename the temporary file over it";
    }
    if (what) {
        unlink(a->tmp);
        nnc_fail("%s: %s: %s", a->path, what, strerror(e));
        free(a->tmp);
        a->tmp = NULL;
        errno = e;
        return -1;
    }
    fsync_parent_dir(a->path);
    free(a->tmp);
    a->tmp = NULL;
    return 0;
}

void nnc__atomic_abort(nnc__atomic *a)
{
    int e = errno;
    if (a->f)
        fclose(a->f);
    a->f = NULL;
    if (a->tmp)
        unlink(a->tmp);
    free(a->tmp);
    a->tmp = NULL;
    errno = e;
}

int nnc__host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

void nnc__le32_to_host(void *words, size_t count)
{
    if (nnc__host_is_little_endian())
        return;
    unsigned char *p = words;
    for (size_t i = 0; i < count; i++, p += 4) {
        unsigned char t0 = p[0], t1 = p[1];
        p[0] = p[3];
        p[1] = p[2];
        p[2] = t1;
        p[3] = t0;
    }
}

uint64_t nnc__load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint32_t nnc__load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint16_t nnc__load_le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
