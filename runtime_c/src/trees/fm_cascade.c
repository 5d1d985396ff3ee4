/* frugalml runtime: cascades of tree-ensemble stages with early exits (see fm_cascade.h).
 * The float32 and q15 variants are one body, fm_cascade_impl.h, included
 * twice. */
#include "fm_cascade.h"
#include "fm_port.h"
#include "fm_batch.h"

/* ---- load-time checks ------------------------------------------------ */

static int stages_valid(uint32_t n_stages, const uint32_t *stage_end, uint32_t n_trees, uint32_t exit_rule,
                        uint32_t n_outputs)
{
    uint32_t s;
    uint32_t prev = 0u;
    if (n_stages == 0u || stage_end == NULL) {
        return 0;
    }
    for (s = 0; s < n_stages; ++s) {
        if (stage_end[s] < prev || stage_end[s] > n_trees) {
            return 0;
        }
        prev = stage_end[s];
    }
    if (prev != n_trees) {
        return 0;
    }
    if (exit_rule == FM_EXIT_SCORE) {
        return n_outputs == 1u;
    }
    if (exit_rule == FM_EXIT_MARGIN) {
        return n_outputs >= 2u;
    }
    return 0;
}

static int32_t sat_gap_q(int32_t a, int32_t b)
{
    const int64_t d = (int64_t)a - (int64_t)b;
    return d > (int64_t)INT32_MAX ? INT32_MAX : (int32_t)d;
}

/* ---- float32 ------------------------------------------------------------ */
#define CS_MODEL fm_cascade
#define CS_EAGER fm_trees_eager
#define CS_SCORE float
#define CS_FN(n) fm_cascade_##n
#define CS_TR_FN(n) fm_trees_##n
#define CS_UPPER(m) ((m)->exit_upper)
#define CS_LOWER(m) ((m)->exit_lower)
#define CS_NAN(v) ((v) != (v))
#define CS_GAP(a, b) ((a) - (b))
#define CS_EAGER_WALK(t, first, end, x, e, scores) fm_trees_eager_walk((t), (first), (end), (x), (e), (scores))
#define CS_Q 0
#include "fm_cascade_impl.h"
#undef CS_MODEL
#undef CS_EAGER
#undef CS_SCORE
#undef CS_FN
#undef CS_TR_FN
#undef CS_UPPER
#undef CS_LOWER
#undef CS_NAN
#undef CS_GAP
#undef CS_EAGER_WALK
#undef CS_Q

/* ---- q15 ---------------------------------------------------------------- */
#define CS_MODEL fm_cascade_q15
#define CS_EAGER fm_trees_q15_eager
#define CS_SCORE int32_t
#define CS_FN(n) fm_cascade_q15_##n
#define CS_TR_FN(n) fm_trees_q15_##n
#define CS_UPPER(m) ((m)->exit_upper_q)
#define CS_LOWER(m) ((m)->exit_lower_q)
#define CS_NAN(v) 0
#define CS_GAP(a, b) sat_gap_q((a), (b))
#define CS_EAGER_WALK(t, first, end, x, e, scores) fm_trees_q15_eager_walk((t), (first), (end), (e), (scores))
#define CS_Q 1
#include "fm_cascade_impl.h"
