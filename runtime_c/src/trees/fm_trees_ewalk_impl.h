/* frugalml runtime: the eager marked walk of any layout (fm_trees.c), written
 * once for float32 and q15 (fm_trees.c includes it twice with the macros
 * below set). Not a public header: no include guard on purpose.
 *
 *   E_MODEL                  fm_trees or fm_trees_q15
 *   E_IN                     what the walk compares: float (x) or uint16_t (the biased keys)
 *   E_TH, E_LEAF, E_ACC      threshold, leaf and score types (float / uint16_t, float / int16_t,
 *                            float / int32_t)
 *   E_NAME(n)                ewalk_f32_n or ewalk_q_n
 *   E_THRS(m), E_LEAVES(m)   the threshold and leaf arrays
 *   E_RIGHT(k, t)            1 iff input k goes right of threshold t
 *   E_SAT_ADD(a, v)          a + v, saturating in q15 (float32: a + v)
 *   E_Q                      0 (float32) or 1 (q15): q15 also has saturating one-output walks
 *                            (ewalk_q_iss, _ess) and saturates its several-output walks
 * Uses E_NAME(depth), the port-specific depth-specialized walk defined before the include; the
 * dispatch (ewalk_f32, ewalk_q) follows it in fm_trees.c (q15 tests for overflow first).
 */

/* Any layout, one or several outputs: trees [first, end); sat: saturate every one-output addition
 * (several outputs always use E_SAT_ADD). */
FM_WALK void E_NAME(any)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                         E_ACC *scores, int implicit, int single, int sat)
{
    const uint32_t *ne = m->node_end;
    uint32_t start = (first == 0u) ? 0u : ne[first - 1u];
    const uint16_t *fe = m->feature + start;
    const E_TH *th = E_THRS(m) + start;
    const uint32_t *ch = implicit ? NULL : m->child + start;
    const E_LEAF *lf = E_LEAVES(m) + start + first;
    const uint16_t *to = m->tree_output;
    E_ACC acc = scores[0];
    uint32_t t;
    for (t = first; t < end; ++t) {
        const uint32_t stop = ne[t];
        const uint32_t n_inner = stop - start;
        uint32_t i = 0u;
        E_ACC v;
        while (i < n_inner) {
            const uint32_t f = fe[i];
            const uint32_t r = E_RIGHT(in[f], th[i]) ? 1u : 0u;
            mark[f] = 1u;
            i = (implicit ? 2u * i + 1u : ch[i]) + r;
        }
        v = (E_ACC)lf[i - n_inner];
        if (single) {
            acc = sat ? E_SAT_ADD(acc, v) : acc + v;
        } else {
            scores[to[t]] = E_SAT_ADD(scores[to[t]], v);
        }
        fe += n_inner;
        th += n_inner;
        if (!implicit) {
            ch += n_inner;
        }
        lf += n_inner + 1u;
        start = stop;
    }
    if (single) {
        scores[0] = acc;
    }
}

/* One out-of-line function per variant. */
#define FM_EWALK_ANY(name, implicit, single, sat)                                                             \
    static FM_NOINLINE void name(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,  \
                                 E_ACC *scores)                                                               \
    {                                                                                                         \
        E_NAME(any)(m, first, end, in, mark, scores, implicit, single, sat);                                  \
    }

#define FM_EWALK_DEPTH(name, D)                                                                               \
    static FM_NOINLINE E_ACC name(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,  \
                                  E_ACC acc)                                                                  \
    {                                                                                                         \
        return E_NAME(depth)(m, first, end, in, mark, acc, D, NULL, 1);                                       \
    }
FM_EWALK_DEPTH(E_NAME(d1), 1u)
FM_EWALK_DEPTH(E_NAME(d2), 2u)
FM_EWALK_DEPTH(E_NAME(d3), 3u)
FM_EWALK_DEPTH(E_NAME(d4), 4u)

/* Several outputs, complete trees of depth 3 (a K-class forest of depth-3 trees, one per class a round;
 * q15: taken when no sum can overflow, q_no_overflow of every score). */
static FM_NOINLINE void E_NAME(m3)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                                   E_ACC *scores)
{
    (void)E_NAME(depth)(m, first, end, in, mark, 0, 3u, scores, 0);
}

FM_EWALK_ANY(E_NAME(is), 1, 1, 0)
FM_EWALK_ANY(E_NAME(es), 0, 1, 0)
#if E_Q
FM_EWALK_ANY(E_NAME(iss), 1, 1, 1)
FM_EWALK_ANY(E_NAME(ess), 0, 1, 1)
#endif
FM_EWALK_ANY(E_NAME(im), 1, 0, E_Q)
FM_EWALK_ANY(E_NAME(em), 0, 0, E_Q)
