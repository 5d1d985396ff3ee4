/* libFuzzer harness: budget-indexed models over q15 tables (fm_skymodel_q15); the body is
 * fuzz_skymodel_body.h, shared with fuzz_skymodel.c. */
#define SKY_T fm_skymodel_q15
#define SKY_FN(n) fm_skymodel_q15_##n
#define SKY_NB_T fm_nb_q15
#define SKY_LIN_T fm_linear_q15
#define SKY_NB fz_nb_q15
#define SKY_LIN fz_linear_q15
#define SKY_COST_T uint16_t
#define SKY_COSTS fz_u16s
#define SKY_SAME_SCALE(to, from) ((to)->in_shift = (from)->in_shift, (to)->w_shift = (from)->w_shift)
#include "fuzz_skymodel_body.h"
