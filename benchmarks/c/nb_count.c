/*
 * Instruction-count harness (valgrind callgrind) over a generated model.h
 * with embedded rows: predicts N rows (argv[1], default FM_N_ROWS; rows are
 * reused cyclically) and prints the total number of features read.
 * Run under: valgrind --tool=callgrind --toggle-collect=fm_nb_predict_vec
 */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : (long)FM_N_ROWS;
    long r;
    unsigned long features = 0;
    fm_result res;
    for (r = 0; r < n; ++r) {
        if (FM_PREDICT_VEC(FM_ROWS[r % (long)FM_N_ROWS], FM_N_FEATURES, &res) != FM_OK) {
            fprintf(stderr, "row %ld: error\n", r);
            return 1;
        }
        features += res.n_read;
    }
    printf("%lu\n", features);
    return 0;
}
