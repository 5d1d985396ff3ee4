/* The reader the unit tests' lazy walks read through (test_trees, test_cascade, test_gated): it counts the
 * requests per feature and logs their order (the first 8), and fails when told to or past n features. */
#ifndef READER_FIXTURE_H
#define READER_FIXTURE_H

#include <string.h>

#include "frugalml.h"

typedef struct {
    const float *x;
    uint32_t n;
    uint32_t calls[8];
    uint32_t order[8];
    uint32_t n_calls;
    int fail;
} log_reader;

static int log_read(void *ctx, uint32_t index, float *value)
{
    log_reader *lr = (log_reader *)ctx;
    if (lr->fail || index >= lr->n) {
        return 1;
    }
    if (index < 8u) {
        lr->calls[index]++;
    }
    if (lr->n_calls < 8u) {
        lr->order[lr->n_calls] = index;
    }
    lr->n_calls++;
    *value = lr->x[index];
    return 0;
}

static void log_init(log_reader *lr, const float *x, uint32_t n)
{
    memset(lr, 0, sizeof *lr);
    lr->x = x;
    lr->n = n;
}

#endif /* READER_FIXTURE_H */
