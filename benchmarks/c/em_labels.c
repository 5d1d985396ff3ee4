/*
 * Label and instruction-count harness (valgrind callgrind) for an emlearn
 * classifier header (emlearn.convert(...).save(name="peer")), saved as
 * emlearn_model.h next to this build. Rows: a binary file of uint32 rows,
 * uint32 cols, then rows*cols values of EM_FEATURE_T (int16_t for emlearn's
 * trees, float for its Gaussian NB; -DEM_FEATURE_T=float), row-major.
 * Predicts every row once and prints one label per line.
 * Run under: valgrind --tool=callgrind --toggle-collect=peer_predict
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emlearn_model.h"

#ifndef EM_FEATURE_T
#define EM_FEATURE_T int16_t
#endif

typedef int32_t (*predict_fn)(const EM_FEATURE_T *, int32_t);

/* The whole rows file in one malloc'd buffer (NULL on failure); *size gets its length. */
static unsigned char *slurp(const char *path, long *size)
{
    unsigned char *buf = NULL;
    FILE *fh = fopen(path, "rb");
    if (fh != NULL && fseek(fh, 0, SEEK_END) == 0 && (*size = ftell(fh)) >= 8 && fseek(fh, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)*size);
        if (buf != NULL && fread(buf, 1, (size_t)*size, fh) != (size_t)*size) {
            free(buf);
            buf = NULL;
        }
    }
    if (fh != NULL) {
        fclose(fh);
    }
    return buf;
}

int main(int argc, char **argv)
{
    volatile predict_fn predict = peer_predict; /* keeps the call out of line (callgrind toggle) */
    uint32_t dims[2], i;
    long size = 0;
    unsigned char *buf = argc > 1 ? slurp(argv[1], &size) : NULL;
    const EM_FEATURE_T *X;
    if (buf == NULL) {
        fprintf(stderr, "usage: %s ROWS.bin\n", argv[0]);
        return 2;
    }
    memcpy(dims, buf, sizeof dims);
    if ((size_t)size != sizeof dims + (size_t)dims[0] * dims[1] * sizeof *X) {
        free(buf);
        return 2;
    }
    X = (const EM_FEATURE_T *)(const void *)(buf + sizeof dims);
    for (i = 0; i < dims[0]; ++i) {
        printf("%d\n", (int)predict(X + (size_t)i * dims[1], (int32_t)dims[1]));
    }
    free(buf);
    return 0;
}
