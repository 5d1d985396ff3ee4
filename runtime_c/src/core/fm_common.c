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

const char *fm_strerror(int status)
{
    switch (status) {
    case FM_OK:
        return "success";
    case FM_E_ARG:
        return "bad argument (NULL pointer, wrong input length or scratch size, or a model over the FM_VEC_MAX_* bounds)";
    case FM_E_READ:
        return "the feature callback failed";
    case FM_E_VALUE:
        return "a feature value is NaN or infinite";
    case FM_E_MODEL:
        return "inconsistent model tables";
    case FM_E_BUDGET:
        return "nothing fits the budget";
    case FM_E_WINDOW:
        return "the window is shorter than a feature needs (or longer than its FFT)";
    case FM_E_SAMPLE:
        return "a window sample is NaN or infinite";
    case FM_E_CHANNEL:
        return "a feature reads a channel the window does not have";
    case FM_E_FEATURE:
        return "unknown feature id or parameter";
    default:
        return "unknown status code";
    }
}
