/* nnc_internal.h — helpers shared between the runtime's own .c files.
 *
 * Not installed and not included by generated code: generated code sees
 * only nnc_runtime.h.  What lives here is plumbing that several runtime
 * files need (atomic file replacement, little-endian conversion, error-state
 * queries for the driver), kept in one place so that every writer is atomic
 * in the same way and every reader converts bytes in the same way.
 */
#ifndef NNC_INTERNAL_H
#define NNC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nnc_runtime.h"

/* ---- error state ---------------------------------------------------------- */

/* The driver clears the error before calling into generated code so that it
 * can tell afterwards whether the failure left a message (a weights file
 * that did not load) or only errno (out of memory). */
void nnc__error_clear(void);
int nnc__error_isset(void);

/* ---- atomic files ---------------------------------------------------------- */

/* A file being written to `<path>.tmp.<pid>` in the destination's own
 * directory (rename(2) is atomic only within one file system), renamed over
 * `path` by nnc__atomic_commit after fflush + fsync.  Whatever happens, the
 * destination holds either its old content or the complete new one. */
typedef struct nnc__atomic {
    FILE *f;
    const char *path;
    char *tmp;  /* malloc'd temp path */
    int failed; /* a write failed: commit will refuse */
    int saved_errno;
} nnc__atomic;

/* 0, or -1 with nnc_error() set ("path: cannot create ...: strerror"). */
int nnc__atomic_open(nnc__atomic *a, const char *path);
/* fwrite that remembers failure, so callers can write a sequence of chunks
 * and check once at commit time. */
void nnc__atomic_write(nnc__atomic *a, const void *p, size_t n);
/* Writes `count` floats or int32s (4-byte words) in little-endian order. */
void nnc__atomic_write_le32(nnc__atomic *a, const void *words, size_t count);
/* Flush, fsync, close, rename; on any failure removes the temp file and
 * returns -1 with nnc_error() set.  Frees a->tmp in every case. */
int nnc__atomic_commit(nnc__atomic *a);
/* Gives up: closes and removes the temp file.  Frees a->tmp. */
void nnc__atomic_abort(nnc__atomic *a);

/* The directory of path ("." when it has none), malloc'd; NULL when out
 * of memory (fileio.c). */
char *nnc__parent_dir(const char *path);

/* ---- byte order ------------------------------------------------------------- */

int nnc__host_is_little_endian(void);
/* Swaps the bytes of `count` 4-byte words in place when the host is
 * big-endian; a no-op on little-endian hosts. */
void nnc__le32_to_host(void *words, size_t count);
uint64_t nnc__load_le64(const unsigned char *p);
uint32_t nnc__load_le32(const unsigned char *p);
uint16_t nnc__load_le16(const unsigned char *p);

/* ---- checkpoints with training state (safetensors.c) --------------------------- */

typedef struct nnc__kv {
    const char *key, *value;
} nnc__kv;

/* nnc_st_write with a __metadata__ object of string pairs first; dtypes
 * (NULL: all F32) may mark an entry NNC_I64, whose data is int64_t. */
int nnc__st_write_meta(const char *path, const nnc_st_entry *e, size_t count, const nnc__kv *meta, size_t nmeta,
                       const nnc_dtype *dtypes);
/* nnc_st_save with `extra` tensors after the model's and __metadata__. */
int nnc__st_save_meta(const char *path, const nnc_tensor_info *infos, size_t count, const float *params,
                      const float *state, const nnc_st_entry *extra, size_t nextra, const nnc__kv *meta, size_t nmeta);
/* Reads a checkpoint's metadata (*meta, malloc'd; its strings live in
 * *keep, malloc'd: free both, on failure too) and the 1-D F32 tensors
 * names[k] of sizes[k] floats into outs[k]; 0, or with nnc_error() set
 * -1 (the file or its header is bad) or -2 (a tensor is missing or bad;
 * the metadata has been read). */
int nnc__st_read_state(const char *path, nnc__kv **meta, size_t *nmeta, char **keep, const char *const *names,
                       float *const *outs, const size_t *sizes, size_t count);

/* ---- the driver (driver.c) ---------------------------------------------------- */

/* nnc_driver_main's checks of the command line (subcommand, options and
 * their values) without reading, running or writing anything: the exit
 * status it would stop with (1 for a usage error, its message printed),
 * or 0 where the work would start.  For the fuzz target (tests/fuzz/). */
int nnc__drv_parse(int argc, char **argv, const nnc_model_desc *desc);

/* ---- the training log (trainlog.c) ------------------------------------------ */

enum { NNC__LOG_CSV, NNC__LOG_JSONL };
typedef struct nnc__log {
    FILE *f;
    int kind; /* NNC__LOG_CSV or NNC__LOG_JSONL */
    const char *const *cols;
    int ncols;
} nnc__log;

/* NNC__LOG_CSV or NNC__LOG_JSONL by the path's extension, -1 for others */
int nnc__log_kind(const char *path);
/* Creates (or, with append, appends to) the log with these columns;
 * 0, or -1 with nnc_error() set. */
int nnc__log_open(nnc__log *l, const char *path, const char *const *cols, int ncols, int append);
/* One row: vals[i] where present[i], the column empty (absent) elsewhere. */
void nnc__log_row(nnc__log *l, const double *vals, const unsigned char *present);
/* 0, or -1 if a write failed */
int nnc__log_close(nnc__log *l);

#endif
