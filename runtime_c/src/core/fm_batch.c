/* frugalml runtime: the batch row loop of every family (see fm_batch.h). */
#include "fm_batch.h"

int fm_batch_rows(int args_ok, fm_row_fn row, const void *model, const float *X, uint32_t rows, uint32_t cols,
                  void *work, fm_result *out, uint32_t *n_done)
{
    uint32_t i;
    int rc = FM_OK;
    if (n_done != NULL) {
        *n_done = 0u;
    }
    if (!args_ok || (rows > 0u && (X == NULL || out == NULL))) {
        return FM_E_ARG;
    }
    for (i = 0; i < rows; ++i) {
        rc = row(model, X + (size_t)i * cols, i, work, &out[i]);
        if (rc != FM_OK) {
            break;
        }
    }
    if (n_done != NULL) {
        *n_done = i;
    }
    return rc;
}
