/* test_isa.c — which instruction set the runtime runs (runtime/isa.c) and
 * the kernels' dispatch on it (runtime/dispatch.c).
 *
 * nnc_isa() chooses once per process, so each case runs in a child with
 * its own NNC_ISA, stderr caught: unset or empty gives the best the CPU
 * has (computed here with __builtin_cpu_supports, as isa.c does), with no
 * message; generic gives generic; avx2 and avx512 give themselves where
 * the CPU has them, else the best it has and one line saying so; an
 * unknown value gives the best and one line naming it.  The choice then
 * stays, whatever NNC_ISA becomes.  Where the kernels are built per
 * instruction set (NNC_TEST_ISA_VARIANTS), nnc_conv_direct_ok() answers
 * for the one chosen: 1 at avx512 and avx2, 0 at generic.  And
 * nnc_isa_fma_narrow() is 1 at avx2, and at avx512 on an AMD family 25
 * CPU (Zen 4: its 512-bit FMAs run as two halves), else 0;
 * nnc_isa_wino_early() is 1 where that is, and at avx512 on any AMD CPU;
 * nnc_isa_pack_at() is 1 at avx2 and avx512 on any CPU but AMD's, and
 * nnc_isa_conv_rows() at avx512 on any CPU but AMD's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "nnc_runtime.h"

static nnc_isa_kind cpu_best(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return v4 ? NNC_ISA_AVX512 : v3 ? NNC_ISA_AVX2 : NNC_ISA_GENERIC;
#else
    return NNC_ISA_GENERIC;
#endif
}

/* The CPU's maker, family and model, from /proc/cpuinfo rather than
 * cpuid as isa.c reads them (all 0 or -1 without it) */
typedef struct {
    int amd, intel, family, model;
} cpu_id;

static cpu_id read_cpuinfo(void)
{
    cpu_id id = {0, 0, -1, -1};
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return id;
    char line[512];
    while (fgets(line, sizeof line, f) && (id.family < 0 || id.model < 0 || (!id.amd && !id.intel))) {
        if (!strncmp(line, "vendor_id", 9)) {
            id.amd = strstr(line, "AuthenticAMD") != NULL;
            id.intel = strstr(line, "GenuineIntel") != NULL;
        } else if (!strncmp(line, "cpu family", 10) && strchr(line, ':'))
            id.family = atoi(strchr(line, ':') + 1);
        else if (!strncmp(line, "model\t", 6) && strchr(line, ':'))
            id.model = atoi(strchr(line, ':') + 1);
    }
    fclose(f);
    return id;
}

/* A CPU whose AVX-512 FMAs are no wider than AVX2's, by isa.c's rule: an
 * AMD CPU of family 25 (0x19: Zen 3 and 4; only Zen 4 has AVX-512), or an
 * Intel client core with AVX-512 (family 6, models 102, 125, 126, 140,
 * 141, 167).  This project's machines check the AMD rule and the Intel
 * server one (narrow 0); the client models are not among them. */
static int fma512_narrow(const cpu_id *id)
{
    if (id->amd)
        return id->family == 25;
    const int m = id->model;
    return id->intel && id->family == 6 && (m == 102 || m == 125 || m == 126 || m == 140 || m == 141 || m == 167);
}

/* nnc_isa() in a child under NNC_ISA=env (unset if NULL): its answer,
 * nnc_conv_direct_ok(), and what it printed on stderr */
typedef struct {
    int isa, direct, stable, narrow, early, pack, rows;
    char err[512];
} outcome;

static outcome run(const char *env)
{
    outcome o = {-1, -1, 0, -1, -1, -1, -1, ""};
    int fd[2];
    if (pipe(fd)) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        if (env)
            setenv("NNC_ISA", env, 1);
        else
            unsetenv("NNC_ISA");
        const nnc_isa_kind k = nnc_isa();
        const int direct = nnc_conv_direct_ok();
        setenv("NNC_ISA", k == NNC_ISA_GENERIC ? "avx512" : "generic", 1); /* too late: the choice stays */
        const int stable = nnc_isa() == k, narrow = nnc_isa_fma_narrow(), early = nnc_isa_wino_early(),
                  pack = nnc_isa_pack_at(), rows = nnc_isa_conv_rows();
        fflush(stderr);
        _exit(k * 64 + rows * 32 + pack * 16 + early * 8 + narrow * 4 + direct * 2 + stable);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd[0], o.err + n, sizeof o.err - 1 - n)) > 0)
        n += (size_t)r;
    o.err[n] = 0;
    close(fd[0]);
    int st;
    if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) < 192) {
        o.isa = WEXITSTATUS(st) / 64;
        o.rows = WEXITSTATUS(st) / 32 % 2;
        o.pack = WEXITSTATUS(st) / 16 % 2;
        o.early = WEXITSTATUS(st) / 8 % 2;
        o.narrow = WEXITSTATUS(st) / 4 % 2;
        o.direct = WEXITSTATUS(st) / 2 % 2;
        o.stable = WEXITSTATUS(st) % 2;
    }
    return o;
}

/* env asks for `want` (or for nothing that exists: -1) */
static void check_case(const char *env, int want)
{
    const int best = (int)cpu_best(), expect = want < 0 || want > best ? best : want;
    const int warns = env && *env && (want < 0 || want > best);
    const outcome o = run(env);
    const char *shown = env ? env : "(unset)";
    CHECKF(o.isa == expect, "NNC_ISA=%s: nnc_isa() %d, expected %d (%s)", shown, o.isa, expect,
           nnc_isa_name((nnc_isa_kind)expect));
    CHECKF(o.stable, "NNC_ISA=%s: nnc_isa() changed with the environment after its first answer", shown);
    CHECKF(warns ? strstr(o.err, "nnc: NNC_ISA=") != NULL && strstr(o.err, nnc_isa_name((nnc_isa_kind)expect)) != NULL
                 : o.err[0] == 0,
           "NNC_ISA=%s: stderr '%s', expected %s", shown, o.err, warns ? "one line naming the set used" : "nothing");
    if (warns && want < 0)
        CHECKF(strstr(o.err, "is not avx512, avx2 or generic") != NULL, "NNC_ISA=%s: '%s' does not say why", shown,
               o.err);
    const cpu_id id = read_cpuinfo();
    const int narrow = expect == NNC_ISA_AVX2 || (expect == NNC_ISA_AVX512 && fma512_narrow(&id));
    CHECKF(o.narrow == narrow, "NNC_ISA=%s: nnc_isa_fma_narrow() %d, expected %d", shown, o.narrow, narrow);
    const int early = narrow || (expect == NNC_ISA_AVX512 && id.amd);
    CHECKF(o.early == early, "NNC_ISA=%s: nnc_isa_wino_early() %d, expected %d", shown, o.early, early);
    const int pack = expect != NNC_ISA_GENERIC && !id.amd;
    CHECKF(o.pack == pack, "NNC_ISA=%s: nnc_isa_pack_at() %d, expected %d", shown, o.pack, pack);
    const int rows = expect == NNC_ISA_AVX512 && !id.amd;
    CHECKF(o.rows == rows, "NNC_ISA=%s: nnc_isa_conv_rows() %d, expected %d", shown, o.rows, rows);
#if defined(NNC_TEST_ISA_VARIANTS)
    CHECKF(o.direct == (expect != NNC_ISA_GENERIC), "NNC_ISA=%s: nnc_conv_direct_ok() %d at %s", shown, o.direct,
           nnc_isa_name((nnc_isa_kind)expect));
#endif
    printf("NNC_ISA=%-8s -> %s%s\n", shown, o.isa >= 0 ? nnc_isa_name((nnc_isa_kind)o.isa) : "(failed)",
           warns ? " (with a warning)" : "");
}

int main(void)
{
    printf("this CPU: %s\n", nnc_isa_name(cpu_best()));
    check_case(NULL, NNC_ISA_AVX512);
    check_case("", NNC_ISA_AVX512);
    check_case("generic", NNC_ISA_GENERIC);
    check_case("avx2", NNC_ISA_AVX2);
    check_case("avx512", NNC_ISA_AVX512);
    check_case("sse9", -1);
    check_case("AVX2", -1); /* names are lower case */
    CHECK(!strcmp(nnc_isa_name(NNC_ISA_GENERIC), "generic") && !strcmp(nnc_isa_name(NNC_ISA_AVX2), "avx2") &&
          !strcmp(nnc_isa_name(NNC_ISA_AVX512), "avx512"));
    return check_summary("test_isa");
}
