/*
 * Energy workload of the whole pipeline (docs/power.md, benchmarks/energy.py --workload-cmd): loops
 * FM_PREDICT_WINDOW over the raw windows embedded in the generated header (export-c --embed DATA with raw
 * windows), lazily or eagerly, for at least SECONDS, and prints {"predictions": N, "seconds": T} as its last
 * line, the power_bench workload contract.
 *
 *     fm_window_workload MODE SECONDS      MODE: a word or path ending in "lazy" or "eager"
 *
 * Host or Pi (POSIX clock_gettime); built with -DFM_MODEL_HEADER="model.h" and the runtime sources.
 * Exit 2 on bad arguments, 1 when a prediction fails.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include FM_MODEL_HEADER

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int main(int argc, char **argv)
{
    static uint64_t scratch[FM_WINDOW_SCRATCH_WORDS];
    double seconds, t0, elapsed;
    unsigned long n = 0;
    int eager;
    uint32_t i, labels = 0;
    if (argc != 3 || (!ends_with(argv[1], "lazy") && !ends_with(argv[1], "eager"))) {
        fprintf(stderr, "usage: %s lazy|eager SECONDS\n", argv[0]);
        return 2;
    }
    eager = ends_with(argv[1], "eager");
    seconds = atof(argv[2]);
    t0 = now();
    do {
        for (i = 0; i < FM_N_WINDOWS; ++i) {
            fm_result r;
            if (FM_PREDICT_WINDOW(FM_WINDOWS[i], FM_PLAN_CHANNELS, FM_WINDOW_LEN, scratch, sizeof scratch, eager,
                                  &r) != FM_OK) {
                fprintf(stderr, "error: window %u: prediction failed\n", (unsigned)i);
                return 1;
            }
            labels += (uint32_t)r.label;
        }
        n += FM_N_WINDOWS;
        elapsed = now() - t0;
    } while (elapsed < seconds);
    printf("labels %u\n{\"predictions\": %lu, \"seconds\": %.6f}\n", (unsigned)labels, n, elapsed);
    return 0;
}
