/* cpu_probe.c — is the machine in its slow two-thread mode right now?
 *
 *   cc -O2 -pthread bench/src/cpu_probe.c -o cpu_probe && ./cpu_probe
 *
 * Prints the round trip of one cache line bounced between CPU 0 and CPU 1
 * (a store of a counter and a spin on it), and how fast each CPU alone
 * reads a 64 MB buffer.  On the 2-core EPYC VM of bench/README.md the
 * round trip is 56-76 ns in the fast mode and 330-390 ns in the slow one,
 * where CPU 1 also reads at about half CPU 0's rate (12 against 21 GB/s):
 * it then runs on another NUMA node than the VM's memory.  Run it before
 * and after a 2-thread benchmark to tell which mode the run saw.  Linux
 * only (sched_setaffinity); needs 2 CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BOUNCES = 200000, BUF_FLOATS = 16 << 20 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static _Alignas(64) atomic_long flag;

static void *pong(void *arg)
{
    (void)arg;
    pin(1);
    for (long i = 0; i < BOUNCES; i++) {
        while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

/* GB/s of summing buf on `cpu`, best of 5 passes */
typedef struct {
    int cpu;
    const float *buf;
    double gbs;
} read_job;

static void *read_pass(void *arg)
{
    read_job *j = arg;
    pin(j->cpu);
    double best = 1e30;
    volatile float sink = 0;
    for (int r = 0; r < 5; r++) {
        const double t0 = now();
        float s[16] = {0};
        for (long i = 0; i < BUF_FLOATS; i += 16)
            for (int k = 0; k < 16; k++)
                s[k] += j->buf[i + k];
        const double t = now() - t0;
        best = t < best ? t : best;
        for (int k = 0; k < 16; k++)
            sink += s[k];
    }
    j->gbs = (double)BUF_FLOATS * sizeof(float) / best / 1e9;
    return NULL;
}

int main(void)
{
    if (pin(0) != 0) {
        fprintf(stderr, "cpu_probe: cannot run on CPU 0\n");
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, pong, NULL) != 0)
        return 1;
    const double t0 = now();
    for (long i = 0; i < BOUNCES; i++) {
        atomic_store_explicit(&flag, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 2)
            ;
    }
    const double rt = (now() - t0) / BOUNCES;
    pthread_join(t, NULL);

    float *buf = malloc(sizeof(float) * BUF_FLOATS);
    if (!buf)
        return 1;
    for (long i = 0; i < BUF_FLOATS; i++)
        buf[i] = (float)(i & 7);
    double gbs[2];
    for (int cpu = 0; cpu < 2; cpu++) {
        read_job j = {cpu, buf, 0};
        if (pthread_create(&t, NULL, read_pass, &j) != 0)
            return 1;
        pthread_join(t, NULL);
        gbs[cpu] = j.gbs;
    }
    free(buf);
    printf("cache-line round trip CPU 0 <-> 1: %.0f ns; 64 MB read: CPU 0 %.1f GB/s, CPU 1 %.1f GB/s\n", rt * 1e9,
           gbs[0], gbs[1]);
    return 0;
}
