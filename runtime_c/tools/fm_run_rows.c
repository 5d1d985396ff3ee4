/*
 * Host tool: evaluates the rows embedded in a generated header (frugalml
 * export-c --embed DATA --rows N) and prints one line per row,
 * "LABEL FEATURES_READ", then "ns_per_prediction X" (timed over repeats).
 *
 *   cc -std=c99 -O2 -I runtime_c/include -I DIR_WITH_MODEL_H \
 *      runtime_c/tools/fm_run_rows.c runtime_c/src/(all .c) -o run_rows
 *   ./run_rows [min_seconds]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model.h"

#ifndef FM_N_ROWS
#error "model.h has no embedded rows: export it with --embed DATA --rows N"
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    double min_seconds = argc > 1 ? atof(argv[1]) : 0.2;
    fm_result r;
    uint32_t i;
    long reps = 1, done = 0;
    double best = 1e30, total = 0.0;
    volatile int32_t sink = 0;

    for (i = 0; i < FM_N_ROWS; ++i) {
        int rc = FM_PREDICT_VEC(FM_ROWS[i], FM_N_FEATURES, &r);
        if (rc != FM_OK) {
            fprintf(stderr, "row %u: error %d\n", (unsigned)i, rc);
            return 1;
        }
        printf("%d %u\n", (int)r.label, (unsigned)r.n_read);
    }
    while (total < min_seconds) {
        double t0 = now_s(), dt;
        long k;
        for (k = 0; k < reps; ++k) {
            for (i = 0; i < FM_N_ROWS; ++i) {
                FM_PREDICT_VEC(FM_ROWS[i], FM_N_FEATURES, &r);
                sink += r.label;
            }
        }
        dt = now_s() - t0;
        total += dt;
        done += reps;
        if (dt / (double)reps < best) {
            best = dt / (double)reps;
        }
        reps *= 2;
    }
    printf("ns_per_prediction %.2f\n", best / (double)FM_N_ROWS * 1e9);
    (void)sink;
    (void)done;
    return 0;
}
