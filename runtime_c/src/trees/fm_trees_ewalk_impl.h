/* frugalml runtime: the eager marked walks of fm_trees.c (fm_trees.h, "Eager walks"), written once for
 * float32 and q15 (fm_trees.c includes it three times with the macros below set: the float32 split
 * dictionary's walks, float32, q15; each include ends by undefining them). Not a public header: no
 * include guard on purpose. The steps (FM_STEP0, FM_WALK_LEVELS_HEAP) and leaf sums are fm_trees.c's
 * macros over the hooks below.
 *
 *   E_MODEL, E_EAGER         fm_trees / fm_trees_q15 and their eager state
 *   E_IN                     what the walk compares: float (x) or uint16_t (the biased keys)
 *   E_TH, E_LEAF, E_ACC      threshold, leaf and score types (float / uint16_t, float / int16_t,
 *                            float / int32_t)
 *   E_NAME(n), E_WALK        ewalk_f32_n / ewalk_q_n and the dispatch ewalk_f32 / ewalk_q, declared
 *                            E_WALK_STORAGE (static / FM_WALK)
 *   E_FN(n)                  fm_trees_n or fm_trees_q15_n (public)
 *   E_THRS(m), E_LEAVES(m), E_BASE(m)  the threshold, leaf and base score arrays
 *   E_RIGHT(k, t)            1 iff input k goes right of threshold t (any-layout walk)
 *   E_RIGHT0(k, t)           the same as 0 / 1 of type size_t (0-based depth walk)
 *   E_SAT_ADD(a, v)          a + v, saturating in q15 (float32: a + v)
 *   E_Q                      0 (float32) or 1 (q15): q15 also has saturating one-output walks
 *                            (ewalk_q_iss, _ess), saturates its several-output walks, tests for
 *                            overflow before the dispatch's unsaturated walks and sums the 0-based
 *                            depth walk's two leaves a step at once (integers: any order)
 *   E_HEAP                   1: the 1-based heap depth walk with E_HEAP_KEY(k, f) (a declaration or
 *                            nothing), E_HEAP_IN(k, f) (the step's input), E_HEAP_TH (the threshold's
 *                            register type), E_HEAP_ROOT / E_HEAP_STEP(l, k, t) (fm_port.h's carry steps);
 *                            0: the 0-based one
 *   E_MARKS_START(m, x, e)   eager_start's marks (float32 cleared; q15 cleared with the keys of x)
 *   E_WALK_X, E_WALK_X_NULL, E_WALK_IN(x, e)  eager_walk's x parameter and its NULL test (float32;
 *                            q15 none) and what it compares (x or e->keys)
 *   E_MAYBE_NONFINITE(x, e, n)  eager_finish: nonzero when some feature may not be finite
 *   E_FINISH_COSTS(m), E_COSTS(m)  eager_finish: float32 reads m->costs before the non-finite test's
 *                            calls (a declaration, `costs`), q15 after (nothing, (m)->costs)
 *   E_MARKED_COST(costs, mark, n, res)  res->cost or res->cost_q of the marked features
 *   E_FEATS(m)               the per-node split array the walks step through (feature, or the split codes)
 *   E_FEAT(fe, i), E_THR(th, i)  node i's feature and threshold (fe[i], th[i]; the split dictionary:
 *                            d_sf[fe[i]], d_st[fe[i]], th unused)
 *   E_DICT_VARS(m)           declares d_sf, d_st with the dictionary, else nothing
 *   E_DICT                   1: the float32 split dictionary's walks only (E_WALK reached through
 *                            E_DICT_DISPATCH of the float32 instance; no public functions), else 0
 *   E_DICT_DISPATCH          float32: the walk of tables with a dictionary (a statement), else nothing
 */

/* Complete trees of depth D (constant), one output (acc) or several (single 0: scores): trees
 * [first, end). q15: no saturation (taken when no sum can overflow, q_no_overflow). */
#if E_HEAP
FM_WALK E_ACC E_NAME(depth)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                            E_ACC acc, uint32_t D, E_ACC *scores, int single)
{
    const uint16_t *to = m->tree_output + first; /* read when !single (several outputs) */
    const uint32_t I = (1u << D) - 1u;
    E_DICT_VARS(m)
    const size_t one = 1u;
    const uint16_t *fe = FM_HEAP_BASE(uint16_t, E_FEATS(m) + (size_t)first * I, 1u);
    const E_TH *th = FM_HEAP_BASE(E_TH, E_THRS(m) + (size_t)first * I, 1u);
    const E_LEAF *lf = FM_HEAP_BASE(E_LEAF, E_LEAVES(m) + (size_t)first * (I + 1u), I + 1u);
    uint32_t t;
    /* two trees per iteration (the second one's nodes at fe + I, its leaves at lf + I + 1) */
    for (t = (end - first) / 2u; t != 0u; --t) {
        size_t i;
        FM_WALK_LEVELS_HEAP(i);
        FM_LEAF_ADD((E_ACC)lf[i]);
        fe += I;
        th += I;
        lf += I + 1u;
        FM_WALK_LEVELS_HEAP(i);
        FM_LEAF_ADD((E_ACC)lf[i]);
        fe += I;
        th += I;
        lf += I + 1u;
    }
    if ((end - first) & 1u) {
        size_t i;
        FM_WALK_LEVELS_HEAP(i);
        FM_LEAF_ADD((E_ACC)lf[i]);
    }
    return acc;
}

#else
FM_WALK E_ACC E_NAME(depth)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                            E_ACC acc, uint32_t D, E_ACC *scores, int single)
{
    const uint16_t *to = m->tree_output + first; /* read when !single (several outputs) */
    const uint32_t I = (1u << D) - 1u;
    E_DICT_VARS(m)
    const uint16_t *fe = E_FEATS(m) + (size_t)first * I;
    const E_TH *th = E_THRS(m) + (size_t)first * I;
    const E_LEAF *lf = E_LEAVES(m) + (size_t)first * (I + 1u);
    uint32_t t;
    /* two trees per iteration off the same pointers (the second at node I, leaf I + 1) */
    for (t = (end - first) / 2u; t != 0u; --t) {
        size_t i = 0u;
        size_t j = I;
        FM_WALK_LEVELS(FM_STEP0, i, 0u);
#if E_Q
        FM_WALK_LEVELS(FM_STEP0, j, I);
        if (single) {
            acc += (int32_t)lf[i - I] + (int32_t)lf[j - I + 1u]; /* no overflow: q_no_overflow */
        } else {
            FM_LEAF_ADD((int32_t)lf[i - I]);
            FM_LEAF_ADD((int32_t)lf[j - I + 1u]);
        }
#else
        FM_LEAF_ADD(lf[i - I]);
        FM_WALK_LEVELS(FM_STEP0, j, I);
        FM_LEAF_ADD(lf[j - I + 1u]);
#endif
        fe += 2u * I;
        th += 2u * I;
        lf += 2u * (I + 1u);
    }
    if ((end - first) & 1u) {
        size_t i = 0u;
        FM_WALK_LEVELS(FM_STEP0, i, 0u);
        FM_LEAF_ADD((E_ACC)lf[i - I]);
    }
    return acc;
}
#endif

/* Any layout, one or several outputs: trees [first, end); sat: saturate every one-output addition
 * (several outputs always use E_SAT_ADD). */
FM_WALK void E_NAME(any)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                         E_ACC *scores, int implicit, int single, int sat)
{
    const uint32_t *ne = m->node_end;
    uint32_t start = (first == 0u) ? 0u : ne[first - 1u];
    const uint16_t *fe = E_FEATS(m) + start;
    const E_TH *th = E_THRS(m) + start;
    const uint32_t *ch = implicit ? NULL : m->child + start;
    const E_LEAF *lf = E_LEAVES(m) + start + first;
    const uint16_t *to = m->tree_output;
    E_ACC acc = scores[0];
    uint32_t t;
    E_DICT_VARS(m)
    for (t = first; t < end; ++t) {
        const uint32_t stop = ne[t];
        const uint32_t n_inner = stop - start;
        uint32_t i = 0u;
        E_ACC v;
        while (i < n_inner) {
            const uint32_t f = E_FEAT(fe, i);
            const uint32_t r = E_RIGHT(in[f], E_THR(th, i)) ? 1u : 0u;
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

/* Trees [first, end) of any model: the depth-specialized walks where they apply (q15: when no sum can
 * overflow), else the any-layout ones. */
#define FM_EWALK_LAYOUT(implicit, explicit_)                                                                  \
    do {                                                                                                      \
        if (m->child == NULL) {                                                                               \
            E_NAME(implicit)(m, first, end, in, mark, scores);                                                \
        } else {                                                                                              \
            E_NAME(explicit_)(m, first, end, in, mark, scores);                                               \
        }                                                                                                     \
    } while (0)
#define FM_EWALK_DEPTH_CASE(D)                                                                                \
    case D##u:                                                                                                \
        scores[0] = E_NAME(d##D)(m, first, end, in, mark, scores[0]);                                         \
        return
FM_WALK void E_NAME(plain)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                            E_ACC *scores)
{
    if (first >= end) {
        return;
    }
#if E_Q
    if (m->n_outputs != 1u) {
        uint32_t o, ok = m->depth == 3u;
        for (o = 0; o < m->n_outputs && ok; ++o) {
            ok = q_no_overflow(scores[o], end - first);
        }
        if (ok) {
            E_NAME(m3)(m, first, end, in, mark, scores);
        } else {
            FM_EWALK_LAYOUT(im, em);
        }
        return;
    }
    if (!q_no_overflow(scores[0], end - first)) {
        FM_EWALK_LAYOUT(iss, ess);
        return;
    }
#else
    if (m->n_outputs == 1u) {
#endif
        switch (m->depth) {
            FM_EWALK_DEPTH_CASE(1);
            FM_EWALK_DEPTH_CASE(2);
            FM_EWALK_DEPTH_CASE(3);
            FM_EWALK_DEPTH_CASE(4);
        default:
            break;
        }
        FM_EWALK_LAYOUT(is, es);
#if !E_Q
    } else if (m->depth == 3u) {
        E_NAME(m3)(m, first, end, in, mark, scores);
    } else {
        FM_EWALK_LAYOUT(im, em);
    }
#endif
}

/* The walk of one run's splits (features fe, thresholds th, children ch or NULL: the implicit layout; n_inner
 * nodes): the local index of the leaf reached, i - n_inner. */
FM_WALK uint32_t E_NAME(run_walk)(const E_MODEL *m, const uint16_t *fe, const E_TH *th, const uint32_t *ch,
                                  uint32_t n_inner, const E_IN *in, uint8_t *mark)
{
    uint32_t i = 0u;
    E_DICT_VARS(m)
    (void)m;
    if (ch == NULL) {
        while (i < n_inner) {
            const uint32_t f = E_FEAT(fe, i);
            const uint32_t r = E_RIGHT(in[f], E_THR(th, i)) ? 1u : 0u;
            mark[f] = 1u;
            i = 2u * i + 1u + r;
        }
    } else {
        while (i < n_inner) {
            const uint32_t f = E_FEAT(fe, i);
            const uint32_t r = E_RIGHT(in[f], E_THR(th, i)) ? 1u : 0u;
            mark[f] = 1u;
            i = ch[i] + r;
        }
    }
    return i - n_inner;
}

/* Outputs j0 .. j1-1 add leaf lf[0], lf[step], ... (tree j of a run adds to output j); q15 saturating when sat. */
#if E_Q
#define E_RUN_ADD(lf, step, j0, j1, sat)                                                                      \
    do {                                                                                                      \
        uint32_t j_;                                                                                          \
        if (sat) {                                                                                            \
            for (j_ = (j0); j_ < (j1); ++j_) {                                                                \
                scores[j_] = E_SAT_ADD(scores[j_], (E_ACC)(lf)[0]);                                           \
                (lf) += (step);                                                                               \
            }                                                                                                 \
        } else {                                                                                              \
            for (j_ = (j0); j_ < (j1); ++j_) {                                                                \
                scores[j_] = scores[j_] + (E_ACC)(lf)[0];                                                     \
                (lf) += (step);                                                                               \
            }                                                                                                 \
        }                                                                                                     \
    } while (0)
#else
#define E_RUN_ADD(lf, step, j0, j1, sat)                                                                      \
    do {                                                                                                      \
        uint32_t j_;                                                                                          \
        (void)(sat);                                                                                          \
        for (j_ = (j0); j_ < (j1); ++j_) {                                                                    \
            scores[j_] = scores[j_] + (E_ACC)(lf)[0];                                                         \
            (lf) += (step);                                                                                   \
        }                                                                                                     \
    } while (0)
#endif

/* Part of one run: the run of first tree rs (its first node slot start, its first split sp) walked, trees
 * rs + j0 .. rs + j1 - 1 add their leaves (a slice that starts or ends inside the run). */
static FM_NOINLINE void E_NAME(run_part)(const E_MODEL *m, uint32_t rs, uint32_t j0, uint32_t j1, uint32_t start,
                                         uint32_t sp, const E_IN *in, uint8_t *mark, E_ACC *scores, int sat)
{
    const uint32_t n_inner = m->node_end[rs] - start;
    const size_t step = (size_t)n_inner + 1u;
    const uint32_t k = E_NAME(run_walk)(m, E_FEATS(m) + sp, E_THRS(m) + sp, m->child == NULL ? NULL : m->child + sp,
                                        n_inner, in, mark);
    const E_LEAF *lf = E_LEAVES(m) + start + rs + k + (size_t)j0 * step;
    E_RUN_ADD(lf, step, j0, j1, sat);
}

/* Runs of R = m->run trees with equal splits (fm_trees.h, `run`), trees [first, end): each run's splits are walked
 * once, then tree j of the run adds the leaf at the same place (its leaves follow the previous tree's, n_inner + 1
 * apart) to output j, in tree order; a run the slice starts or ends inside adds the leaves of its trees in the
 * slice (E_NAME(run_part)). shared (a constant: m->shared_splits) picks the split layout, one out-of-line function
 * per layout and saturation below. q15: sat saturates every addition (as the reference); 0 when no sum can
 * overflow (q_no_overflow). */
FM_WALK void E_NAME(runs)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                          E_ACC *scores, int sat, int shared)
{
    const uint32_t R = m->run;
    const uint32_t *ne = m->node_end;
    uint32_t t;
    uint32_t start;
    uint32_t sp;
    run_start(ne, m->tree_output, R, (uint32_t)shared, first, &t, &start, &sp);
    if (t != first || end - t < R) { /* the slice starts (or ends) inside the first run */
        const uint32_t j1 = (end - t < R) ? end - t : R;
        E_NAME(run_part)(m, t, first - t, j1, start, sp, in, mark, scores, sat);
        if (j1 < R) {
            return;
        }
        sp += shared ? ne[t] - start : ne[t + R - 1u] - start;
        start = ne[t + R - 1u];
        t += R;
    }
    if (end - t >= R) { /* whole runs (t <= end): pointers that advance by a run */
        const uint16_t *fe = E_FEATS(m) + (shared ? sp : start);
        const E_TH *th = E_THRS(m) + (shared ? sp : start);
        const uint32_t *ch = (m->child == NULL) ? NULL : m->child + (shared ? sp : start);
        const E_LEAF *lb = E_LEAVES(m) + start + t;
        do {
            const uint32_t n_inner = ne[t] - start;
            const size_t step = (size_t)n_inner + 1u;
            const size_t adv = shared ? (size_t)n_inner : (size_t)n_inner * R;
            const E_LEAF *lf = lb + E_NAME(run_walk)(m, fe, th, ch, n_inner, in, mark);
            E_RUN_ADD(lf, step, 0u, R, sat);
            fe += adv;
            th += adv;
            if (ch != NULL) {
                ch += adv;
            }
            lb += step * R;
            start += n_inner * R;
            if (shared) {
                sp += n_inner;
            }
            t += R;
        } while (end - t >= R);
    }
    if (t < end) { /* the slice ends inside this run */
        E_NAME(run_part)(m, t, 0u, end - t, start, shared ? sp : start, in, mark, scores, sat);
    }
}

#define FM_EWALK_RUNS(name, sat, shared)                                                                      \
    static FM_NOINLINE void name(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark, \
                                 E_ACC *scores)                                                               \
    {                                                                                                         \
        E_NAME(runs)(m, first, end, in, mark, scores, sat, shared);                                           \
    }
FM_EWALK_RUNS(E_NAME(runs_s), 0, 1)
FM_EWALK_RUNS(E_NAME(runs_c), 0, 0)
#if E_Q
FM_EWALK_RUNS(E_NAME(runs_ss), 1, 1)
FM_EWALK_RUNS(E_NAME(runs_sc), 1, 0)
#endif

/* m->run > 1: trees [first, end) by the runs' walk of the tables' layout. Out of line and reached by a tail call:
 * E_WALK stays the per-tree walk plus one test for tables without runs. */
static FM_NOINLINE void E_NAME(with_runs)(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in,
                                          uint8_t *mark, E_ACC *scores)
{
    if (first >= end) {
        return;
    }
#if E_Q
    {
        uint32_t o;
        int sat = 0;
        for (o = 0; o < m->run && !sat; ++o) {
            sat = !q_no_overflow(scores[o], end - first); /* at most end - first additions per output */
        }
        if (sat) {
            if (m->shared_splits) {
                E_NAME(runs_ss)(m, first, end, in, mark, scores);
            } else {
                E_NAME(runs_sc)(m, first, end, in, mark, scores);
            }
            return;
        }
    }
#endif
    if (m->shared_splits) {
        E_NAME(runs_s)(m, first, end, in, mark, scores);
    } else {
        E_NAME(runs_c)(m, first, end, in, mark, scores);
    }
}

/* Trees [first, end): E_NAME(with_runs) for tables with runs of equal trees, else the per-tree walks. */
E_WALK_STORAGE void E_WALK(const E_MODEL *m, uint32_t first, uint32_t end, const E_IN *in, uint8_t *mark,
                           E_ACC *scores)
{
    E_DICT_DISPATCH
    if (m->run > 1u) {
        E_NAME(with_runs)(m, first, end, in, mark, scores);
        return;
    }
    E_NAME(plain)(m, first, end, in, mark, scores);
}

#if !E_DICT
int E_FN(eager_start)(const E_MODEL *m, const float *x, E_EAGER *e, E_ACC *scores, fm_result *res)
{
    uint32_t o;
    if (!E_FN(eager_ok)(m) || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    zero_result(res);
    E_MARKS_START(m, x, e);
    for (o = 0; o < m->n_outputs; ++o) {
        scores[o] = E_BASE(m)[o];
    }
    return FM_OK;
}

int E_FN(eager_walk)(const E_MODEL *m, uint32_t first_tree, uint32_t end_tree, E_WALK_X E_EAGER *e, E_ACC *scores)
{
    if (m == NULL || E_WALK_X_NULL e == NULL || scores == NULL || first_tree > end_tree || end_tree > m->n_trees) {
        return FM_E_ARG;
    }
    E_WALK(m, first_tree, end_tree, E_WALK_IN(x, e), (uint8_t *)e->mark, scores);
    return FM_OK;
}

int E_FN(eager_finish)(const E_MODEL *m, const float *x, const E_EAGER *e, const E_ACC *scores, fm_result *res)
{
    const uint8_t *mark;
    uint32_t n;
    if (m == NULL || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    mark = (const uint8_t *)e->mark;
    n = m->n_features;
    E_FINISH_COSTS(m)
    /* the marked features tested only when some feature may not be finite */
    if (E_MAYBE_NONFINITE(x, e, n) && marked_nonfinite(x, mark, n)) {
        return FM_E_VALUE;
    }
    res->n_read = marks_count(e->mark, n);
    E_MARKED_COST(E_COSTS(m), mark, n, res);
    return E_FN(finish)(m, scores, res);
}
#endif /* !E_DICT */

/* The split dictionary's instance leaves float32's other hooks defined: the float32 instance follows it. */
#if !E_DICT
#undef E_MODEL
#undef E_EAGER
#undef E_IN
#undef E_LEAF
#undef E_ACC
#undef E_FN
#undef E_LEAVES
#undef E_BASE
#undef E_RIGHT
#undef E_RIGHT0
#undef E_SAT_ADD
#undef E_Q
#undef E_HEAP
#undef E_HEAP_KEY
#undef E_HEAP_IN
#undef E_HEAP_TH
#undef E_HEAP_ROOT
#undef E_HEAP_STEP
#undef E_MARKS_START
#undef E_WALK_X
#undef E_WALK_X_NULL
#undef E_WALK_IN
#undef E_MAYBE_NONFINITE
#undef E_MARKED_COST
#undef E_FINISH_COSTS
#undef E_COSTS
#endif
#undef E_TH
#undef E_NAME
#undef E_WALK
#undef E_WALK_STORAGE
#undef E_THRS
#undef E_FEATS
#undef E_FEAT
#undef E_THR
#undef E_DICT_VARS
#undef E_DICT_DISPATCH
#undef FM_EWALK_LAYOUT
#undef FM_EWALK_DEPTH_CASE
#undef FM_EWALK_ANY
#undef FM_EWALK_DEPTH
#undef E_RUN_ADD
#undef FM_EWALK_RUNS
#undef E_DICT
