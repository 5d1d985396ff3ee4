/*
 * Prints every field of the fm_result of each embedded row of a generated
 * header (tables or code form), floats as their bit patterns, so two forms
 * and the numpy reference can be compared exactly:
 *   "RC LABEL SCORE_BITS SCORE_Q N_READ COST_BITS STAGE COST_Q"
 * Built as C99 or C++ (-x c++) by tests/test_code_form.py.
 */
#include <stdio.h>
#include <string.h>

#include FM_MODEL_HEADER

static unsigned long bits_of(float v)
{
    unsigned int b;
    memcpy(&b, &v, sizeof b);
    return (unsigned long)b;
}

int main(void)
{
    unsigned int i;
    for (i = 0; i < FM_N_ROWS; ++i) {
        fm_result r;
        int rc;
        memset(&r, 0, sizeof r);
        rc = FM_PREDICT_VEC(FM_ROWS[i], FM_N_FEATURES, &r);
        if (rc != FM_OK) {
            printf("%d\n", rc);
            continue;
        }
        printf("%d %ld %lu %ld %lu %lu %lu %lu\n", rc, (long)r.label, bits_of(r.score), (long)r.score_q,
               (unsigned long)r.n_read, bits_of(r.cost), (unsigned long)r.stage, (unsigned long)r.cost_q);
    }
    return 0;
}
