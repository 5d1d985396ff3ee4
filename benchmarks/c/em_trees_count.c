/*
 * Instruction-count harness (valgrind callgrind) for an emlearn tree
 * ensemble header (emlearn.convert(...).save(name="peer")), saved as
 * emlearn_model.h next to this build. Rows: a binary file of uint32 rows,
 * uint32 cols, then rows*cols int16 (row-major). Predicts every row N times
 * (argv[2], default 1) and prints the number of positive answers.
 * Run under: valgrind --tool=callgrind --toggle-collect=peer_predict
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "emlearn_model.h"
#include "rows_bin.h"

typedef int32_t (*predict_fn)(const int16_t *, int32_t);

int main(int argc, char **argv)
{
    volatile predict_fn predict = peer_predict; /* keeps the call out of line (callgrind toggle) */
    uint32_t dims[2], i;
    int16_t *X;
    long reps = argc > 2 ? atol(argv[2]) : 1, r;
    long positive = 0;
    if (argc < 2 || (X = rows_bin_read(argv[1], sizeof *X, dims)) == NULL) {
        fprintf(stderr, "usage: %s ROWS.bin [reps]\n", argv[0]);
        return 2;
    }
    for (r = 0; r < reps; ++r) {
        for (i = 0; i < dims[0]; ++i) {
            positive += predict(X + (size_t)i * dims[1], (int32_t)dims[1]) > 0;
        }
    }
    printf("%ld\n", positive);
    free(X);
    return 0;
}
