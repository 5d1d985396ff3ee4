/*
 * Timing harness for an emlearn-generated Gaussian NB header (emlearn's
 * convert() + save(name="peer")), saved as emlearn_model.h next to this
 * build. Rows come from a binary file: uint32 rows, uint32 cols, then
 * rows*cols float32 (row-major). Prints one label per row, then
 * "ns_per_prediction X" (best of doubling repeats, at least argv[2] seconds;
 * 0 skips the timing, for callgrind runs).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "emlearn_model.h"
#include "rows_bin.h"

typedef int32_t (*predict_fn)(const float *, int32_t);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    volatile predict_fn predict = peer_predict; /* keeps the call out of line (callgrind toggle) */
    uint32_t dims[2], i;
    float *X;
    double min_seconds = argc > 2 ? atof(argv[2]) : 0.2, best = 1e30, total = 0.0;
    long reps = 1;
    volatile int32_t sink = 0;

    if (argc < 2 || (X = rows_bin_read(argv[1], sizeof *X, dims)) == NULL) {
        fprintf(stderr, "usage: %s ROWS.bin [min_seconds]\n", argv[0]);
        return 2;
    }
    for (i = 0; i < dims[0]; ++i) {
        printf("%d\n", (int)predict(X + (size_t)i * dims[1], (int32_t)dims[1]));
    }
    while (total < min_seconds) {
        double t0 = now_s(), dt;
        long k;
        for (k = 0; k < reps; ++k) {
            for (i = 0; i < dims[0]; ++i) {
                sink += predict(X + (size_t)i * dims[1], (int32_t)dims[1]);
            }
        }
        dt = now_s() - t0;
        total += dt;
        if (dt / (double)reps < best) {
            best = dt / (double)reps;
        }
        reps *= 2;
    }
    if (min_seconds > 0) {
        printf("ns_per_prediction %.2f\n", best / (double)dims[0] * 1e9);
    }
    free(X);
    (void)sink;
    return 0;
}
