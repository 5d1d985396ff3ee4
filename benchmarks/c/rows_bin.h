/*
 * The benchmarks' row files, read by the peer harnesses: uint32 rows, uint32 cols, then rows*cols values of
 * one element size (row-major; int16 or float32, as the harness's predict takes them).
 */
#ifndef ROWS_BIN_H
#define ROWS_BIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The rows of `path` (malloc'd, dims[0] rows x dims[1] cols of `elem` bytes), or NULL when it cannot be read. */
static void *rows_bin_read(const char *path, size_t elem, uint32_t dims[2])
{
    FILE *fh = fopen(path, "rb");
    void *X = NULL;
    if (fh == NULL) {
        return NULL;
    }
    if (fread(dims, sizeof dims[0], 2, fh) == 2) {
        const size_t n = (size_t)dims[0] * dims[1];
        X = malloc(n * elem);
        if (X != NULL && fread(X, elem, n, fh) != n) {
            free(X);
            X = NULL;
        }
    }
    fclose(fh);
    return X;
}

#endif
