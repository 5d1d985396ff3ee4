/* frugalml runtime: the binary NB walks of fm_nb.c, written once for float32 and q15 (fm_nb.c includes
 * it twice with the macros below set). Each walk stays specialised for its layout (records, two edges a
 * position, any number of edges, the lazy reader): one loop per layout, no per-feature branch on the
 * layout; the parameters only say the numeric type. Not a public header: no include guard on purpose; it
 * undefines its parameters at its end.
 *
 *   NB_MODEL, NB_POS         fm_nb, fm_nb_pos or fm_nb_q15, fm_nb_q15_pos
 *   NB_ACC, NB_TAB, NB_EDGE  the score (thresholds, stop bounds), a table entry, an edge: float, float,
 *                            float or int32_t, int16_t, int32_t
 *   NB_COST                  a cost: float or uint32_t
 *   NB_FN(n)                 nb_f32_n or nb_q15_n
 *   NB_EDGES(m)              the fixed-stride edges: edges or edge_keys
 *   NB_SET_SCORE(out, acc)   after nb_answer: out->score, or out->score (0) and out->score_q
 *   NB_SET_COST(out, c)      after nb_answer: out->cost, or out->cost (0) and out->cost_q
 *   NB_WALK_OUT(out, acc, n, c, s)  the record walks' answer: score, score_q, n_read, cost(_q), stage
 *   NB_REC_VALUE(v, key, x)  the records: v (what the zero test reads: float or bits) and key (what the
 *                            edges compare: the float or fm_nb_key) of value x
 *   NB_REC_BITS(v)           the bits of v
 *   NB_REC_HI_BAD(key)       key past the last edge is infinite or NaN
 *   NB_REC_LO_BAD(key)       key at or below the first edge is infinite or NaN
 *   NB_VEC2_ADD(x)           the two-edge step: value x's entry (t, ep) added to acc, its check to chk
 *   NB_VEC_ADD(x, i)         the any-edges step of position i (e, d, ne, stride): likewise
 *   NB_VEC2_LOCALS(next0), NB_VEC_LOCALS  the two eager walks' score acc, check chk, position i, stop s and
 *                            segment end (next, set to next0, or end), declared in each type's own order (the
 *                            order steers GCC's register choice; the object code stays the same)
 *   NB_CHK_BAD(chk, order, x, n)  the check's test after the walk (1: a non-finite value was read)
 *   NB_VEC_STOP(acc, hi, lo, label)  the any-edges walk's stop test (label 1 or 0 and break, or read on)
 *   NB_RUN_FEATURE(m, i)     the lazy walk: feature of position i, any layout
 *   NB_RUN_ADD(a, e)         the lazy walk's add (q15: saturating)
 */

/* Cost of the first n positions: cum_cost[n], n (no costs) or the sum in reading order. */
static NB_COST NB_FN(cost_at)(const NB_MODEL *m, uint32_t n)
{
    NB_COST cost = 0;
    uint32_t p;
    if (m->cum_cost != NULL) {
        return m->cum_cost[n];
    }
    if (m->costs == NULL) {
        return (NB_COST)n;
    }
    for (p = 0; p < n; ++p) {
        cost += m->costs[nb_feature(m->order, m->pos, sizeof *m->pos, p)];
    }
    return cost;
}

/* The answer of a fixed-stride or lazy walk that read n positions (a macro, as every helper here: the
 * object code stays that of the walks written out). */
#define NB_ANSWER(m, out, label, s, n, acc)             \
    do {                                                \
        nb_answer((out), (label), (s), (n));            \
        NB_SET_SCORE((out), (acc));                     \
        NB_SET_COST((out), NB_FN(cost_at)((m), (n)));   \
        return FM_OK;                                   \
    } while (0)

/* Eager walk over the records: one pointer per position, the segment end is the next stop point (a stop
 * point costs its two compares), n_read is the segment end (no pointer division), the cost one load
 * (cum_cost). A NaN or infinite value lands in the first or the last interval (the edges are finite; a
 * float NaN fails every compare), so only those two paths test it, and return at once. q15: plain adds
 * (a record model cannot saturate, fm_nb_q15_check). */
static int NB_FN(walk)(const NB_MODEL *m, const float *x, fm_result *out)
{
    const NB_POS *const pos = m->pos;
    const NB_POS *r = pos;
    const uint32_t n_stops = m->n_stops;
    uint32_t s = 0, n = n_stops != 0u ? m->stop_at[0] : m->n_used;
    NB_ACC acc = m->d0;
    int32_t label;

    for (;;) {
        const NB_POS *const end = pos + n;
        for (; r != end; ++r) {
            NB_REC_VALUE(v, key, x[r->feature]);
            NB_ACC e;
            if ((NB_REC_BITS(v) << 1) == 0u) {
                e = r->d[0];
            } else if (key > r->edge[1]) {
                if (NB_REC_HI_BAD(key)) {
                    return FM_E_VALUE;
                }
                e = r->d[3];
            } else if (key > r->edge[0]) {
                e = r->d[2];
            } else {
                if (NB_REC_LO_BAD(key)) {
                    return FM_E_VALUE;
                }
                e = r->d[1];
            }
            acc += e;
        }
        r = end; /* (what it is; said so that the compiler need not recompute it) */
        NB_SEGMENT_END(m, acc, n_stops, m->stop_hi, m->stop_lo, s, label);
        n = s != n_stops ? m->stop_at[s] : m->n_used;
    }
    out->label = label;
    NB_WALK_OUT(out, acc, n, m->cum_cost != NULL ? m->cum_cost[n] : (NB_COST)n, s);
    return FM_OK;
}

/* Eager walk for the mean-std layout (two edges per position): the reading order in segments between stop
 * points, each a tight pointer loop without per-feature checks; a stop point costs its two compares. The
 * check chk is one add (float32: the sum of the values read, finite unless a value read is NaN or infinite
 * or the sum overflows, which a rescan tells apart) or one OR (q15) per feature, tested once per prediction.
 * q15: plain int32 adds (the model cannot saturate, see nb_q15_cannot_saturate). */
static int NB_FN(vec2)(const NB_MODEL *m, const float *x, fm_result *out)
{
    const uint32_t *const order = m->order;
    const NB_EDGE *ep = NB_EDGES(m);
    const NB_TAB *t = m->d;
    const uint32_t *const stop_at = m->stop_at;
    const NB_ACC *const stop_hi = m->stop_hi, *const stop_lo = m->stop_lo;
    const uint32_t n_stops = m->n_stops, n_used = m->n_used;
    NB_VEC2_LOCALS(n_stops != 0u ? stop_at[0] : n_used); /* acc, chk, i, s and next */
    int32_t label;

    /* One loop; the segment end is the loop's own end test, so a stop point
     * adds nothing per feature: at i == next, either the end or a stop test. */
    for (;;) {
        if (i != next) {
            NB_VEC2_ADD(x[order[i]]);
            ++i;
            ep += 2;
            t += 4;
            continue;
        }
        NB_SEGMENT_END(m, acc, n_stops, stop_hi, stop_lo, s, label);
        next = s != n_stops ? stop_at[s] : n_used;
    }
    if (NB_CHK_BAD(chk, order, x, i)) {
        return FM_E_VALUE;
    }
    NB_ANSWER(m, out, label, s, i, acc);
}

/* Eager walk, any number of edges (q15: saturating adds). */
static int NB_FN(vec)(const NB_MODEL *m, const float *x, fm_result *out)
{
    const uint32_t *const order = m->order;
    const NB_EDGE *const e = NB_EDGES(m);
    const NB_TAB *const d = m->d;
    const uint32_t ne = m->n_edges, stride = m->n_edges + 2u, n_used = m->n_used, n_stops = m->n_stops;
    NB_VEC_LOCALS; /* acc, chk, i, s and end */
    int32_t label = -1;

    for (;;) {
        end = s < n_stops ? m->stop_at[s] : n_used;
        for (; i < end; ++i) {
            NB_VEC_ADD(x[order[i]], i);
        }
        if (s == n_stops) {
            break;
        }
        ++s;
        NB_VEC_STOP(acc, m->stop_hi[s - 1u], m->stop_lo[s - 1u], label);
    }
    if (NB_CHK_BAD(chk, order, x, i)) {
        return FM_E_VALUE;
    }
    if (label < 0) {
        label = (int32_t)(acc > m->threshold);
        s = 0;
    }
    NB_ANSWER(m, out, label, s, i, acc);
}

/* Lazy walk through the reader, any layout (the reader's values are checked one by one). */
static int NB_FN(run)(const NB_MODEL *m, const fm_reader *in, fm_result *out)
{
    NB_ACC score = m->d0;
    uint32_t i = 0, s = 0;
    int32_t label = -1;

    for (;;) {
        const uint32_t next = s < m->n_stops ? m->stop_at[s] : m->n_used;
        for (; i < next; ++i) {
            uint32_t bits;
            int rc = nb_read(in, NB_RUN_FEATURE(m, i), &bits);
            if (rc != FM_OK) {
                return rc;
            }
            score = NB_RUN_ADD(score, NB_FN(entry)(m, i, bits));
        }
        if (s == m->n_stops) {
            break;
        }
        label = NB_STOP_TEST(score, m->stop_hi[s], m->stop_lo[s]);
        ++s;
        if (label >= 0) {
            break;
        }
    }
    NB_ANSWER(m, out, label >= 0 ? label : (int32_t)(score > m->threshold), label >= 0 ? s : 0u, i,
                         score);
}

/* the parameters, for the next instance */
#undef NB_ANSWER
#undef NB_MODEL
#undef NB_POS
#undef NB_ACC
#undef NB_TAB
#undef NB_EDGE
#undef NB_COST
#undef NB_FN
#undef NB_EDGES
#undef NB_SET_SCORE
#undef NB_SET_COST
#undef NB_WALK_OUT
#undef NB_REC_VALUE
#undef NB_REC_BITS
#undef NB_REC_HI_BAD
#undef NB_REC_LO_BAD
#undef NB_VEC2_LOCALS
#undef NB_VEC_LOCALS
#undef NB_CHK_BAD
#undef NB_VEC2_ADD
#undef NB_VEC_ADD
#undef NB_VEC_STOP
#undef NB_RUN_FEATURE
#undef NB_RUN_ADD
