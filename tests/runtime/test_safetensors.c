/* test_safetensors.c — checkpoints round-trip, reject every kind of bad
 * file with one line and an untouched model, and are replaced atomically.
 *
 * Bad files are crafted byte by byte (header length, JSON, data) so that
 * each rejection path of nnc_st_load is reached on purpose.  The atomic
 * write is checked where it matters: a write that fails half-way (file size
 * limit, rename onto a directory, missing directory) must leave the old
 * destination byte-identical and no temporary file behind.
 * Usage: test_safetensors SCRATCH_DIR
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "nnc_runtime.h"

static char dir[512];

static const char *path_of(const char *name)
{
    static char buf[8][1024];
    static int k = 0;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* params: w [3,4] at 0, b [3] at 12, loss [] at 15; state: s [2] at 0. */
static const nnc_tensor_info infos[4] = {
    {"w", 2, {3, 4}, 0, 12, 1, 0, NNC_F32},
    {"b", 1, {3}, 12, 3, 1, 0, NNC_F32},
    {"loss", 0, {0}, 15, 1, 1, 0, NNC_F32},
    {"s", 1, {2}, 0, 2, 0, 0, NNC_F32},
};

static float P[16], S[2];

static void fill(void)
{
    for (int i = 0; i < 16; i++)
        P[i] = (float)i * 0.25f - 1.0f;
    S[0] = 3.0f;
    S[1] = -4.5f;
}

/* Writes a file: 8-byte length (hlen, or strlen(json) when hlen < 0), the
 * JSON, then `ndata` bytes of the reference data (w, b, loss, s). */
static void craft(const char *name, long long hlen, const char *json, size_t ndata)
{
    unsigned char data[72];
    memcpy(data, P, 64);
    memcpy(data + 64, S, 8);
    FILE *f = fopen(path_of(name), "wb");
    unsigned long long len = hlen < 0 ? strlen(json) : (unsigned long long)hlen;
    for (int k = 0; k < 8; k++)
        fputc((int)((len >> (8 * k)) & 0xFF), f);
    fwrite(json, 1, strlen(json), f);
    fwrite(data, 1, ndata < sizeof data ? ndata : sizeof data, f);
    fclose(f);
}

#define GOOD_W "\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]}"
#define GOOD_B "\"b\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[48,60]}"
#define GOOD_L "\"loss\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[60,64]}"
#define GOOD_S "\"s\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[64,72]}"

static int count_temps(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* A load that must fail: -1, one line naming the file and containing
 * `what`, model untouched. */
static void expect_reject(const char *name, const char *what, int line)
{
    float p[16], s[2];
    for (int i = 0; i < 16; i++)
        p[i] = 100.0f + (float)i;
    s[0] = s[1] = 55.0f;
    float p0[16], s0[2];
    memcpy(p0, p, sizeof p);
    memcpy(s0, s, sizeof s);
    int rc = nnc_st_load(path_of(name), infos, 4, p, s);
    const char *e = nnc_error();
    CHECKF(rc == -1, "line %d: %s loaded", line, name);
    CHECKF(strstr(e, path_of(name)) == e, "line %d: message does not start with the file: %s", line, e);
    CHECKF(strstr(e, what) != NULL, "line %d: message '%s' lacks '%s'", line, e, what);
    CHECKF(strchr(e, '\n') == NULL, "line %d: message has a newline", line);
    CHECKF(memcmp(p, p0, sizeof p) == 0 && memcmp(s, s0, sizeof s) == 0, "line %d: model changed by a failed load",
           line);
}

static void expect_load(const char *name, int line)
{
    float p[16] = {0}, s[2] = {0};
    int rc = nnc_st_load(path_of(name), infos, 4, p, s);
    CHECKF(rc == 0, "line %d: %s: %s", line, name, nnc_error());
    CHECKF(memcmp(p, P, sizeof p) == 0 && memcmp(s, S, sizeof s) == 0, "line %d: %s: wrong values", line, name);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_safetensors SCRATCH_DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    mkdir(dir, 0777);
    fill();

    /* ---- round trip */
    CHECK(nnc_st_save(path_of("good.safetensors"), infos, 4, P, S) == 0);
    CHECK(file_size(path_of("good.safetensors")) > 8 + 72);
    CHECK((file_size(path_of("good.safetensors")) - 72) % 8 == 0); /* data 8-aligned */
    expect_load("good.safetensors", __LINE__);
    CHECK(count_temps() == 0);

    /* Hand-written file in another tensor order, with __metadata__ first
     * and in the middle is not allowed twice, but once anywhere is fine. */
    craft("meta.safetensors", -1,
          "{\"__metadata__\":{\"format\":\"pt\",\"x\":\"y\"}," GOOD_S "," GOOD_B "," GOOD_L "," GOOD_W "}   ", 72);
    expect_load("meta.safetensors", __LINE__);
    craft("ws.safetensors", -1, "{ \n\t" GOOD_W " ,\r\n \"__metadata__\" : { } , " GOOD_B "," GOOD_L "," GOOD_S " }",
          72);
    expect_load("ws.safetensors", __LINE__);
    /* Escapes in names decode: "\u0077" is "w". */
    craft("esc.safetensors", -1,
          "{\"\\u0077\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]}," GOOD_B "," GOOD_L "," GOOD_S "}",
          72);
    expect_load("esc.safetensors", __LINE__);

    /* ---- rejections */
    expect_reject("missing.safetensors", "cannot open", __LINE__);
    {
        FILE *f = fopen(path_of("short.safetensors"), "wb");
        fwrite("\x10\x00\x00", 1, 3, f);
        fclose(f);
    }
    expect_reject("short.safetensors", "truncated header length", __LINE__);
    craft("past.safetensors", 5000, "{" GOOD_W "}", 72);
    expect_reject("past.safetensors", "past end of file", __LINE__);
    craft("huge.safetensors", (long long)1 << 62, "{}", 0);
    expect_reject("huge.safetensors", "past end of file", __LINE__);

    static const char *bad_json[] = {
        "{\"w\":{\"dtype\":\"F32\",",                                            /* cut short */
        "{\"w\" {}}",                                                            /* no colon */
        "{} x",                                                                  /* trailing garbage */
        "{'w':{}}",                                                              /* single quotes */
        "[1,2]",                                                                 /* not an object */
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48],}}",  /* trailing comma */
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[-3,4],\"data_offsets\":[0,48]}}",  /* negative */
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[3.0,4],\"data_offsets\":[0,48]}}", /* float dim */
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[03,4],\"data_offsets\":[0,48]}}",  /* leading 0 */
        "{\"w\\x\":{}}",                                                         /* bad escape */
        "{\"\\ud800\":{}}",                                                      /* lone surrogate */
        "{\"\\u0000\":{}}",                                                      /* NUL in a name */
        "{\"a\x01\":{}}",                                                        /* control character */
        "{\"a\xff\":{}}",                                                        /* invalid UTF-8 */
        "{\"__metadata__\":[]}",                                                 /* metadata not an object */
        "{\"__metadata__\":{\"a\":tru}}",                                        /* bad literal */
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999999],\"data_offsets\":[0,48]}}",
    };
    for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "badjson%zu.safetensors", i);
        craft(name, -1, bad_json[i], 72);
        expect_reject(name, "", __LINE__);
        const char *e = nnc_error();
        CHECKF(strstr(e, "JSON") || strstr(e, "integer") || strstr(e, "too large") || strstr(e, "metadata"),
               "bad JSON %zu: message '%s'", i, e);
    }
    /* Deep nesting inside __metadata__ is refused, not a stack overflow. */
    {
        char deep[4096] = "{\"__metadata__\":{\"a\":";
        for (int i = 0; i < 1000; i++)
            strcat(deep, "[");
        strcat(deep, "}");
        craft("deep.safetensors", -1, deep, 72);
        expect_reject("deep.safetensors", "nested too deeply", __LINE__);
    }
    craft("dtype.safetensors", -1,
          "{\"w\":{\"dtype\":\"I32\",\"shape\":[3,4],\"data_offsets\":[0,48]}," GOOD_B "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("dtype.safetensors", "tensor 'w': dtype I32, expected F32, F16, BF16 or F64", __LINE__);
    /* a converted dtype's size is checked against its own width: 3x4 halves are 24 bytes */
    craft("halfsize.safetensors", -1,
          "{\"w\":{\"dtype\":\"F16\",\"shape\":[3,4],\"data_offsets\":[0,48]}," GOOD_B "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("halfsize.safetensors", "tensor 'w': data_offsets [0, 48] hold 48 bytes, its shape needs 24",
                  __LINE__);
    craft("shape.safetensors", -1,
          "{\"w\":{\"dtype\":\"F32\",\"shape\":[4,3],\"data_offsets\":[0,48]}," GOOD_B "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("shape.safetensors", "tensor 'w': shape [4, 3], expected [3, 4]", __LINE__);
    craft("scalar.safetensors", -1,
          "{" GOOD_W "," GOOD_B ",\"loss\":{\"dtype\":\"F32\",\"shape\":[1],"
          "\"data_offsets\":[60,64]}," GOOD_S "}",
          72);
    expect_reject("scalar.safetensors", "tensor 'loss': shape [1], expected []", __LINE__);
    craft("missing_b.safetensors", -1, "{" GOOD_W "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("missing_b.safetensors", "missing tensor 'b'", __LINE__);
    craft("extra.safetensors", -1,
          "{" GOOD_W "," GOOD_B "," GOOD_L "," GOOD_S
          ",\"z\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
          72);
    expect_reject("extra.safetensors", "unexpected tensor 'z'", __LINE__);
    craft("dup.safetensors", -1, "{" GOOD_W "," GOOD_W "," GOOD_B "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("dup.safetensors", "duplicate tensor 'w'", __LINE__);
    craft("incons.safetensors", -1,
          "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,44]}," GOOD_B "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("incons.safetensors", "hold 44 bytes, its shape needs 48", __LINE__);
    craft("reversed.safetensors", -1,
          "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[48,0]}," GOOD_B "," GOOD_L "," GOOD_S "}", 72);
    expect_reject("reversed.safetensors", "reversed", __LINE__);
    craft("range.safetensors", -1,
          "{" GOOD_W "," GOOD_B "," GOOD_L ",\"s\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1000,1008]}}",
          72);
    expect_reject("range.safetensors", "needs bytes [1000, 1008)", __LINE__);
    craft("overlap.safetensors", -1,
          "{" GOOD_W ",\"b\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[40,52]}," GOOD_L "," GOOD_S "}", 72);
    expect_reject("overlap.safetensors", "overlap", __LINE__);
    craft("trunc.safetensors", -1, "{" GOOD_W "," GOOD_B "," GOOD_L "," GOOD_S "}", 68);
    expect_reject("trunc.safetensors", "truncated data", __LINE__);
    craft("unknownfield.safetensors", -1,
          "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48],\"x\":1}," GOOD_B "," GOOD_L "," GOOD_S
          "}",
          72);
    expect_reject("unknownfield.safetensors", "unknown field 'x'", __LINE__);
    craft("nooffsets.safetensors", -1, "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4]}," GOOD_B "," GOOD_L "," GOOD_S "}",
          72);
    expect_reject("nooffsets.safetensors", "missing data_offsets", __LINE__);
    mkdir(path_of("adir.safetensors"), 0777);
    expect_reject("adir.safetensors", "not a regular file", __LINE__);

    /* ---- writer validation: nothing written for bad entries */
    {
        nnc_st_entry e[2] = {{"a", 1, {2}, P}, {"a", 1, {2}, P}};
        CHECK(nnc_st_write(path_of("dupw.safetensors"), e, 2) == -1);
        CHECK(strstr(nnc_error(), "duplicate tensor 'a'") != NULL);
        CHECK(file_size(path_of("dupw.safetensors")) == -1);
        nnc_st_entry m = {"__metadata__", 1, {2}, P};
        CHECK(nnc_st_write(path_of("metaw.safetensors"), &m, 1) == -1);
        CHECK(file_size(path_of("metaw.safetensors")) == -1);
    }
    /* Names needing JSON escapes round-trip. */
    {
        nnc_st_entry e = {"odd \"name\"\\x", 1, {3}, P};
        nnc_tensor_info in = {"odd \"name\"\\x", 1, {3}, 0, 3, 1, 0, NNC_F32};
        float got[3] = {0};
        CHECK(nnc_st_write(path_of("odd.safetensors"), &e, 1) == 0);
        CHECK(nnc_st_load(path_of("odd.safetensors"), &in, 1, got, NULL) == 0);
        CHECK(memcmp(got, P, sizeof got) == 0);
    }
    /* A model whose state tensor has nowhere to go. */
    CHECK(nnc_st_load(path_of("good.safetensors"), infos, 4, P, NULL) == -1);

    /* ---- atomic replacement */
    CHECK(count_temps() == 0);
    /* Missing directory: error naming the file, nothing created. */
    CHECK(nnc_st_save(path_of("nodir/x.safetensors"), infos, 4, P, S) == -1);
    CHECK(strstr(nnc_error(), "nodir/x.safetensors") != NULL);
    /* Destination is a directory: the rename fails, the temp is removed. */
    CHECK(nnc_st_save(path_of("adir.safetensors"), infos, 4, P, S) == -1);
    CHECK(count_temps() == 0);
    /* A write that fails half-way (file size limit, as a full disk would)
     * leaves the old file byte-identical and no temp file. */
    {
        enum { BIG = 100000 };
        float *big = calloc(BIG, sizeof *big);
        nnc_st_entry e = {"big", 1, {BIG}, big};
        const char *dst = path_of("good.safetensors");
        long before = file_size(dst);
        FILE *f = fopen(dst, "rb");
        char *old = malloc((size_t)before);
        CHECK(fread(old, 1, (size_t)before, f) == (size_t)before);
        fclose(f);
        struct rlimit saved, lim;
        getrlimit(RLIMIT_FSIZE, &saved);
        lim = saved;
        lim.rlim_cur = 4096;
        signal(SIGXFSZ, SIG_IGN);
        CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
        int rc = nnc_st_write(dst, &e, 1);
        setrlimit(RLIMIT_FSIZE, &saved);
        CHECK(rc == -1);
        CHECKF(strstr(nnc_error(), "write failed") != NULL, "%s", nnc_error());
        CHECK(file_size(dst) == before);
        char *now = malloc((size_t)before);
        f = fopen(dst, "rb");
        CHECK(fread(now, 1, (size_t)before, f) == (size_t)before);
        fclose(f);
        CHECK(memcmp(old, now, (size_t)before) == 0);
        CHECK(count_temps() == 0);
        expect_load("good.safetensors", __LINE__);
        /* And with room to write, the big file replaces it completely. */
        big[BIG - 1] = 42.0f;
        CHECK(nnc_st_write(dst, &e, 1) == 0);
        nnc_tensor_info bi = {"big", 1, {BIG}, 0, BIG, 1, 0, NNC_F32};
        float *back = calloc(BIG, sizeof *back);
        CHECK(nnc_st_load(dst, &bi, 1, back, NULL) == 0);
        CHECK(back[BIG - 1] == 42.0f);
        CHECK(count_temps() == 0);
        free(back);
        free(old);
        free(now);
        free(big);
    }
    /* Temp files of killed saves: the next save of the same path deletes
     * those whose process is gone, and keeps a live process's, another
     * path's, and names that only look alike. */
    {
        pid_t dead = fork();
        if (dead == 0)
            _exit(0);
        waitpid(dead, NULL, 0);
        char stale[1100], live[1100], other[1100], odd[1100];
        snprintf(stale, sizeof stale, "%s.tmp.%ld", path_of("k.safetensors"), (long)dead);
        snprintf(live, sizeof live, "%s.tmp.%ld", path_of("k.safetensors"), (long)getppid());
        snprintf(other, sizeof other, "%s.tmp.%ld", path_of("j.safetensors"), (long)dead);
        snprintf(odd, sizeof odd, "%s.tmp.%ldx", path_of("k.safetensors"), (long)dead);
        const char *all[4] = {stale, live, other, odd};
        for (int i = 0; i < 4; i++)
            fclose(fopen(all[i], "wb"));
        CHECK(nnc_st_save(path_of("k.safetensors"), infos, 4, P, S) == 0);
        CHECKF(file_size(stale) < 0, "%s is still there", stale);
        CHECK(file_size(live) == 0 && file_size(other) == 0 && file_size(odd) == 0);
        expect_load("k.safetensors", __LINE__);
        for (int i = 1; i < 4; i++)
            remove(all[i]);
        CHECK(count_temps() == 0);
    }
    return check_summary("test_safetensors");
}
