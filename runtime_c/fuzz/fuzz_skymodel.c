/* libFuzzer harness: budget-indexed models over float32 tables (fm_skymodel); the body is
 * fuzz_skymodel_body.h, shared with fuzz_skymodel_q15.c. */
#define SKY_T fm_skymodel
#define SKY_FN(n) fm_skymodel_##n
#define SKY_NB_T fm_nb
#define SKY_LIN_T fm_linear
#define SKY_NB fz_nb
#define SKY_LIN fz_linear
#define SKY_COST_T float
#define SKY_COSTS fz_floats
#define SKY_SAME_SCALE(to, from) ((void)(to), (void)(from))
#include "fuzz_skymodel_body.h"
