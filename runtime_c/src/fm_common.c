#include "frugalml.h"

int fm_vector_read(void *ctx, uint32_t index, float *value)
{
    const fm_vector *v = (const fm_vector *)ctx;
    if (v == NULL || value == NULL || index >= v->n) {
        return 1;
    }
    *value = v->x[index];
    return 0;
}
