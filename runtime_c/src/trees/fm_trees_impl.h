/* frugalml runtime: the memo walk and the prediction calls of fm_trees.c,
 * written once for float32 and q15 (fm_trees.c includes it three times with the
 * macros below set: the float32 split dictionary's walk, float32, q15; each include
 * ends by undefining them). Not a public header: no include guard on purpose.
 * The eager marked walks (ewalk_*, fm_trees*_eager_*) are the other body,
 * fm_trees_ewalk_impl.h.
 *
 *   T_MODEL                  fm_trees or fm_trees_q15
 *   T_SCORE                  float or int32_t (a score, table units)
 *   T_TH, T_LEAF             a threshold's and a leaf's table type (float / uint16_t, float / int16_t)
 *   T_FN(n)                  fm_trees_n or fm_trees_q15_n (public)
 *   T_PRIV(n)                n_f32 or n_q (file-private; touch, predict_marked come from fm_trees.c)
 *   T_BASE(m), T_THRS(m), T_LEAVES(m)  the base score, threshold and leaf arrays
 *   T_DECISION(m)            the one-output decision threshold
 *   T_SET_SCORE(res, v)      res->score or res->score_q
 *   T_ACC                    the walk_state field of the one-output sum (acc or acc_q)
 *   T_ACC_INIT(st, scores)   both walk_state sums: T_ACC from scores[0], the other 0
 *   T_VALUES_OF(env)         the walk's typed views of env->values (float32: values; q15: keys, values)
 *   T_STEP(i, c, f, t, eager)  i = c (the left child) + 1 iff feature f goes right of threshold t
 *                            (q15 compares 16-bit keys, eager from memo->keys, lazy from the float
 *                            values; the key first, as a statement)
 *   T_LEAF_ADD(a, l)         a + leaf l (q15: saturating)
 *   T_WALK_VALUES(x, memo)   env->values of an eager walk (float32: x, q15: memo->keys)
 *   T_MEMO_GET               fm_memo_get or fm_memo_get_q
 *   T_Q                      0 (float32) or 1 (q15): q15's eager memo walk needs the key cache
 *                            (accumulate_vec refuses a memo without keys, batch rows read through a
 *                            reader then) and its predict_vec is always the marked walk
 *   T_FEATS(m)               the per-node split array the walk steps through (feature, or the split codes)
 *   T_FEAT(fe, i), T_THR(th, i)  node i's feature and threshold (fe[i], th[i]; the split dictionary:
 *                            d_sf[fe[i]], d_st[fe[i]], th unused)
 *   T_DICT_VARS(obj)         declares d_sf, d_st from obj (m or env) with the dictionary, else nothing
 *   T_DICT                   1: the float32 split dictionary's walks only (accumulate_d, reached through
 *                            T_DICT_DISPATCH of the float32 instance; no public functions), else 0
 *   T_DICT_DISPATCH          float32: the walk of tables with a dictionary (a statement), else nothing
 */

#if !T_DICT

int T_FN(begin)(const T_MODEL *m, T_SCORE *scores)
{
    uint32_t o;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    for (o = 0; o < m->n_outputs; ++o) {
        scores[o] = T_BASE(m)[o];
    }
    return FM_OK;
}
#endif

FM_WALK uint32_t T_PRIV(run)(walk_state *st, const walk_env *env, int implicit, int single, int eager)
{
    const uint16_t *fe = st->fe;
    const T_TH *th = (const T_TH *)st->th;
    const uint32_t *ch = st->ch;
    const T_LEAF *lf = (const T_LEAF *)st->lf;
    const uint32_t *ne = st->ne;
    const uint16_t *to = st->to;
    const uint32_t *const ne_end = env->ne_end;
    T_VALUES_OF(env);
    T_DICT_VARS(env)
    const uint8_t *seen = env->seen;
    const uint8_t epoch = env->epoch;
    T_SCORE *scores = (T_SCORE *)env->scores;
    uint32_t prev = st->prev;
    uint32_t n_inner = st->n_inner;
    uint32_t i = st->i;
    T_SCORE acc = st->T_ACC;
    if (!st->active) {
        return FM_WALK_DONE;
    }
    for (;;) {
        while (i < n_inner) {
            const uint32_t f = T_FEAT(fe, i);
            if (FM_UNLIKELY(seen[f] != epoch) && !(eager && stamp_eager(env, f, T_Q))) {
                st->fe = fe;
                st->th = th;
                st->ch = ch;
                st->lf = lf;
                st->ne = ne;
                st->to = to;
                st->prev = prev;
                st->n_inner = n_inner;
                st->i = i;
                st->T_ACC = acc;
                return T_FEAT(fe, i);
            }
            T_STEP(i, (implicit ? 2u * i + 1u : ch[i]), f, T_THR(th, i), eager);
        }
        if (single) {
            acc = T_LEAF_ADD(acc, lf[i - n_inner]);
        } else {
            scores[*to] = T_LEAF_ADD(scores[*to], lf[i - n_inner]);
        }
        ++to;
        fe += n_inner;
        th += n_inner;
        if (!implicit) {
            ch += n_inner;
        }
        lf += n_inner + 1u;
        if (ne == ne_end) {
            break;
        }
        n_inner = *ne - prev;
        prev = *ne;
        ++ne;
        i = 0u;
    }
    st->active = 0;
    st->T_ACC = acc;
    return FM_WALK_DONE;
}

FM_RUN_VARIANT(T_PRIV(run_ise), T_PRIV(run), 1, 1, 1)
FM_RUN_VARIANT(T_PRIV(run_ie), T_PRIV(run), 1, 0, 1)
FM_RUN_VARIANT(T_PRIV(run_se), T_PRIV(run), 0, 1, 1)
FM_RUN_VARIANT(T_PRIV(run_e), T_PRIV(run), 0, 0, 1)
FM_RUN_VARIANT(T_PRIV(run_is), T_PRIV(run), 1, 1, 0)
FM_RUN_VARIANT(T_PRIV(run_i), T_PRIV(run), 1, 0, 0)
FM_RUN_VARIANT(T_PRIV(run_s), T_PRIV(run), 0, 1, 0)
FM_RUN_VARIANT(T_PRIV(run_n), T_PRIV(run), 0, 0, 0)

/* The memo walk over runs of m->run trees with equal splits (fm_trees.h, `run`): trees p->t .. end-1 (any
 * trees: a slice may start or end inside a run), resumable like run above: returns a feature this prediction has
 * not used yet (the walk stands at tree p->t, local node p->i; p->start and p->split: its run's first node slot
 * and first split, run_start), or FM_WALK_DONE. Each run's splits are walked once, then tree j of the run, for
 * each j in the slice, adds the leaf at the same place to output j, in tree order. implicit (a constant:
 * m->child == NULL) picks the layout, one out-of-line function per layout below (E_NAME(runs) has one loop
 * per layout too). */
FM_WALK uint32_t T_PRIV(runs)(const T_MODEL *m, run_pos *p, uint32_t end, const walk_env *env, int implicit,
                              int eager)
{
    const uint32_t R = m->run;
    const uint8_t *seen = env->seen;
    const uint8_t epoch = env->epoch;
    T_SCORE *scores = (T_SCORE *)env->scores;
    T_VALUES_OF(env);
    T_DICT_VARS(m)
    while (p->t < end) {
        const uint32_t j0 = m->tree_output[p->t]; /* tree p->t is tree j0 of its run */
        const uint32_t rs = p->t - j0;
        const uint32_t s = p->start;
        const uint32_t n_inner = m->node_end[rs] - s;
        const uint32_t sp = p->split;
        const uint16_t *fe = T_FEATS(m) + sp;
        const T_TH *th = T_THRS(m) + sp;
        const uint32_t *ch = implicit ? NULL : m->child + sp;
        const uint32_t j1 = (end - rs < R) ? end - rs : R;
        const T_LEAF *lf;
        uint32_t k = p->i;
        uint32_t j;
        while (k < n_inner) {
            const uint32_t f = T_FEAT(fe, k);
            if (seen[f] != epoch && !(eager && stamp_eager(env, f, T_Q))) {
                p->i = k;
                return f;
            }
            T_STEP(k, (implicit ? 2u * k + 1u : ch[k]), f, T_THR(th, k), eager);
        }
        lf = T_LEAVES(m) + s + rs + (k - n_inner);
        for (j = j0; j < j1; ++j) { /* tree j of a run adds to output j */
            scores[j] = T_LEAF_ADD(scores[j], lf[(size_t)j * (n_inner + 1u)]);
        }
        p->start = m->node_end[rs + j1 - 1u]; /* the next run's (read only after a whole run) */
        p->split = m->shared_splits ? sp + n_inner : p->start;
        p->t = rs + j1;
        p->i = 0u;
    }
    return FM_WALK_DONE;
}

static FM_NOINLINE uint32_t T_PRIV(runs_i)(const T_MODEL *m, run_pos *p, uint32_t end, const walk_env *env,
                                           int eager)
{
    return T_PRIV(runs)(m, p, end, env, 1, eager);
}

static FM_NOINLINE uint32_t T_PRIV(runs_e)(const T_MODEL *m, run_pos *p, uint32_t end, const walk_env *env,
                                           int eager)
{
    return T_PRIV(runs)(m, p, end, env, 0, eager);
}

/* What a memo walk over trees ..end_tree reads besides its state (x != NULL: eager, else the memo's values). */
static void T_PRIV(env_init)(walk_env *env, const T_MODEL *m, uint32_t end_tree, const float *x, fm_memo *memo,
                             T_SCORE *scores, fm_result *res)
{
    env->ne_end = m->node_end + end_tree;
    env->values = (x != NULL) ? (const void *)T_WALK_VALUES(x, memo) : (const void *)memo->values;
    env->seen = memo->seen;
    env->epoch = memo->epoch;
    env->scores = scores;
    env->x = x;
    env->memo = memo;
    env->res = res;
    env->costs = m->costs;
#if T_DICT
    env->split_feature = m->split_feature;
    env->split_threshold = m->split_threshold;
#endif
}

/* The feature f a memo walk stopped at: stamped from x (eager) or read through r (lazy). */
static int T_PRIV(fetch)(const T_MODEL *m, const fm_reader *r, const float *x, fm_memo *memo, uint32_t f,
                         fm_result *res)
{
    float v;
    if (x != NULL) {
        return T_PRIV(touch)(memo, m->costs, x, f, res);
    }
    return T_MEMO_GET(memo, r, m->costs, f, &v, res);
}

/* x != NULL: eager, else lazy through r. Trees first..end-1 one by one (see T_PRIV(accumulate)). */
static int T_PRIV(accumulate_trees)(const T_MODEL *m, uint32_t first_tree, uint32_t end_tree, const fm_reader *r,
                                    const float *x, fm_memo *memo, T_SCORE *scores, fm_result *res)
{
    static const run_fn runs[8] = {T_PRIV(run_n), T_PRIV(run_s),  T_PRIV(run_i),  T_PRIV(run_is),
                                   T_PRIV(run_e), T_PRIV(run_se), T_PRIV(run_ie), T_PRIV(run_ise)};
    const int single = m->n_outputs == 1u;
    const run_fn run = runs[(x != NULL ? 4 : 0) + (m->child == NULL ? 2 : 0) + (single ? 1 : 0)];
    walk_state st;
    walk_env env;
    walk_init(&st, T_FEATS(m), T_THRS(m), sizeof(T_TH), m->child, T_LEAVES(m), sizeof(T_LEAF), m->node_end,
              m->tree_output, first_tree, end_tree);
    T_ACC_INIT(st, scores);
    T_PRIV(env_init)(&env, m, end_tree, x, memo, scores, res);
    for (;;) {
        const uint32_t f = run(&st, &env);
        int rc;
        if (f == FM_WALK_DONE) {
            break;
        }
        rc = T_PRIV(fetch)(m, r, x, memo, f, res);
        if (rc != FM_OK) {
            return rc;
        }
    }
    if (single) {
        scores[0] = st.T_ACC;
    }
    return FM_OK;
}

/* x != NULL: eager, else lazy through r: tables with runs by T_PRIV(runs) (every tree of the slice, each run's
 * splits walked once), else tree by tree. */
static int T_PRIV(accumulate)(const T_MODEL *m, uint32_t first_tree, uint32_t end_tree, const fm_reader *r,
                              const float *x, fm_memo *memo, T_SCORE *scores, fm_result *res)
{
    run_pos p;
    uint32_t rs;
    walk_env env;
    T_DICT_DISPATCH
    if (m->run <= 1u) {
        return T_PRIV(accumulate_trees)(m, first_tree, end_tree, r, x, memo, scores, res);
    }
    if (first_tree >= end_tree) {
        return FM_OK;
    }
    T_PRIV(env_init)(&env, m, end_tree, x, memo, scores, res);
    run_start(m->node_end, m->tree_output, m->run, m->shared_splits, first_tree, &rs, &p.start, &p.split);
    p.t = first_tree;
    p.i = 0u;
    for (;;) {
        const uint32_t f = (m->child == NULL) ? T_PRIV(runs_i)(m, &p, end_tree, &env, x != NULL)
                                              : T_PRIV(runs_e)(m, &p, end_tree, &env, x != NULL);
        int rc;
        if (f == FM_WALK_DONE) {
            return FM_OK;
        }
        rc = T_PRIV(fetch)(m, r, x, memo, f, res);
        if (rc != FM_OK) {
            return rc;
        }
    }
}

#if !T_DICT
int T_FN(accumulate)(const T_MODEL *m, uint32_t first_tree, uint32_t end_tree, const fm_reader *r, fm_memo *memo,
                     T_SCORE *scores, fm_result *res)
{
    if (m == NULL || r == NULL ||
        !args_ok(m, scores, res, memo, first_tree, end_tree, m->n_trees, m->n_features)) {
        return FM_E_ARG;
    }
    return T_PRIV(accumulate)(m, first_tree, end_tree, r, NULL, memo, scores, res);
}

int T_FN(accumulate_vec)(const T_MODEL *m, uint32_t first_tree, uint32_t end_tree, const float *x, fm_memo *memo,
                         T_SCORE *scores, fm_result *res)
{
    if (m == NULL || x == NULL ||
        !args_ok(m, scores, res, memo, first_tree, end_tree, m->n_trees, m->n_features) ||
        (T_Q && memo->keys == NULL)) {
        return FM_E_ARG;
    }
    return T_PRIV(accumulate)(m, first_tree, end_tree, NULL, x, memo, scores, res);
}

int T_FN(finish)(const T_MODEL *m, const T_SCORE *scores, fm_result *res)
{
    uint32_t o;
    uint32_t best = 0u;
    if (m == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    if (m->n_outputs == 1u) {
        T_SET_SCORE(res, scores[0]);
        res->label = (scores[0] > T_DECISION(m)) ? 1 : 0;
        return FM_OK;
    }
    for (o = 1; o < m->n_outputs; ++o) {
        if (scores[o] > scores[best]) {
            best = o;
        }
    }
    T_SET_SCORE(res, scores[best]);
    res->label = (int32_t)best;
    return FM_OK;
}

/* One memo prediction into rc: start, begin, ACCUMULATE (accumulate or accumulate_vec) of every tree from
 * src (the reader or x), finish. */
#define T_MEMO_PREDICT(ACCUMULATE, src)                                                                       \
    do {                                                                                                      \
        fm_memo_start(memo, res);                                                                             \
        rc = T_FN(begin)(m, scores);                                                                          \
        if (rc == FM_OK) {                                                                                    \
            rc = ACCUMULATE(m, 0u, m->n_trees, src, memo, scores, res);                                       \
        }                                                                                                     \
        if (rc == FM_OK) {                                                                                    \
            rc = T_FN(finish)(m, scores, res);                                                                \
        }                                                                                                     \
    } while (0)

int T_FN(predict)(const T_MODEL *m, const fm_reader *r, fm_memo *memo, T_SCORE *scores, fm_result *res)
{
    int rc;
    if (m == NULL || memo == NULL || res == NULL) {
        return FM_E_ARG;
    }
    T_MEMO_PREDICT(T_FN(accumulate), r);
    return rc;
}

static int T_PRIV(predict_eager)(const T_MODEL *m, const float *x, fm_memo *memo, T_SCORE *scores, fm_result *res)
{
    int rc;
    if (T_FN(eager_ok)(m)) {
        return T_PRIV(predict_marked)(m, x, scores, res);
    }
    T_MEMO_PREDICT(T_FN(accumulate_vec), x);
    return rc;
}

size_t T_FN(scratch_size)(const T_MODEL *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, m->n_outputs, T_Q);
}

int T_FN(scratch_init)(const T_MODEL *m, void *buf, size_t size, fm_memo *memo, T_SCORE **scores)
{
    FM_SCRATCH_INIT_SCORES(T_SCORE, m, m->n_features, m->n_outputs, T_Q, buf, size, memo, scores);
}

static int T_PRIV(row)(const void *model, const float *x, uint32_t i, void *work, fm_result *out)
{
    const T_MODEL *m = (const T_MODEL *)model;
    const fm_batch_work *w = (const fm_batch_work *)work;
    fm_vector v;
    fm_reader r;
    (void)i;
    if (!T_Q || w->memo->keys != NULL || T_FN(eager_ok)(m)) {
        return T_PRIV(predict_eager)(m, x, w->memo, (T_SCORE *)w->scores, out);
    }
    r = fm_vector_reader(&v, x, m->n_features);
    return T_FN(predict)(m, &r, w->memo, (T_SCORE *)w->scores, out);
}

int T_FN(predict_batch)(const T_MODEL *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                        T_SCORE *scores, fm_result *out, uint32_t *n_done)
{
    FM_BATCH_MEMO_ROWS(T_PRIV(row), m, m->n_features, X, rows, cols, memo, scores, out, n_done);
}

/* The memo walk with stack scratch, in its own frame; q15 never takes it. */
static FM_NOINLINE int T_PRIV(predict_vec_memo)(const T_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    FM_VEC_STACK_MEMO(T_SCORE, scores, memo, n);
    return T_PRIV(predict_eager)(m, x, &memo, scores, out);
}

int T_FN(predict_vec)(const T_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    T_SCORE scores[FM_VEC_MAX_OUTPUTS];
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_VEC_MAX_FEATURES ||
        m->n_outputs > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    if (T_Q || T_FN(eager_ok)(m)) { /* every q15 table with n <= the maximum is eager_ok */
        return T_PRIV(predict_marked)(m, x, scores, out);
    }
    return T_PRIV(predict_vec_memo)(m, x, n, out);
}

#undef T_MEMO_PREDICT
#endif /* !T_DICT */

/* The split dictionary's instance leaves float32's other hooks defined: the float32 instance follows it. */
#if !T_DICT
#undef T_MODEL
#undef T_SCORE
#undef T_LEAF
#undef T_FN
#undef T_BASE
#undef T_LEAVES
#undef T_DECISION
#undef T_SET_SCORE
#undef T_ACC
#undef T_ACC_INIT
#undef T_VALUES_OF
#undef T_STEP
#undef T_LEAF_ADD
#undef T_WALK_VALUES
#undef T_MEMO_GET
#undef T_Q
#endif
#undef T_TH
#undef T_PRIV
#undef T_THRS
#undef T_FEATS
#undef T_FEAT
#undef T_THR
#undef T_DICT_VARS
#undef T_DICT_DISPATCH
#undef T_DICT
