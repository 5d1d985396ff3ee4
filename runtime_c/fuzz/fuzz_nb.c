/* libFuzzer harness: naive Bayes tables (fm_nb.h), float32 and q15 (fixed-stride tables, records, and the
 * q15 step stream built from the records). */
#include "fuzz_build.h"

static const size_t nb_ptrs[] = {offsetof(fm_nb, order),   offsetof(fm_nb, edges),   offsetof(fm_nb, d),
                                 offsetof(fm_nb, stop_at), offsetof(fm_nb, stop_hi), offsetof(fm_nb, stop_lo),
                                 offsetof(fm_nb, costs),   offsetof(fm_nb, pos),     offsetof(fm_nb, cum_cost)};
static const size_t nb_q15_ptrs[] = {offsetof(fm_nb_q15, order),    offsetof(fm_nb_q15, edge_keys),
                                     offsetof(fm_nb_q15, d),        offsetof(fm_nb_q15, stop_at),
                                     offsetof(fm_nb_q15, stop_hi),  offsetof(fm_nb_q15, stop_lo),
                                     offsetof(fm_nb_q15, costs),    offsetof(fm_nb_q15, pos),
                                     offsetof(fm_nb_q15, cum_cost), offsetof(fm_nb_q15, hot)};

FZ_CHECK_ADAPTER(f32, fm_nb, fm_nb)
FZ_CHECK_ADAPTER(q15, fm_nb_q15, fm_nb_q15)
FZ_PLAIN_ADAPTERS(f32, fm_nb, fm_nb)
FZ_PLAIN_ADAPTERS(q15, fm_nb_q15, fm_nb_q15)

/* The q15 step stream (fm_nb.h) of record model m, as the header writer emits it (pyruntime/nb/records.py
 * hot_steps): position steps with raw-bit thresholds, a step leaving where a stop point precedes its position
 * or both edges are < 0, then the end step. A mode byte may XOR one fuzzed word into one step, so that the
 * check also meets streams the writer would not emit (returns 1 then). */
static int fz_hot_steps(fz_in *in, const fm_nb_q15 *m, fm_nb_q15_hot *hot)
{
    uint32_t p, k;
    for (p = 0; p < m->n_used; ++p) {
        const fm_nb_q15_pos *r = &m->pos[p];
        fm_nb_q15_hot *h = &hot[p];
        int leave = r->edge[1] < -1; /* a key of -1 is -0.0 */
        for (k = 0; k < m->n_stops; ++k) {
            leave |= m->stop_at[k] == p;
        }
        h->feature = r->feature;
        h->d12 = (uint32_t)(uint16_t)r->d[2] << 16 | (uint16_t)r->d[1];
        h->d30 = (uint32_t)(uint16_t)r->d[3] << 16 | (uint16_t)r->d[0];
        if (leave) {
            h->above[0] = (uint32_t)r->edge[0];
            h->above[1] = 0u;
            h->key = r->edge[1];
        } else {
            for (k = 0; k < 2u; ++k) {
                h->above[k] = r->edge[k] > 0 ? (uint32_t)r->edge[k] + 1u : 1u;
            }
            h->key = r->edge[0] < -1 ? r->edge[0] : INT32_MAX;
        }
    }
    memset(&hot[m->n_used], 0, sizeof hot[0]);
    if (fz_byte(in) & 1u) {
        uint32_t word[6];
        const uint32_t j = fz_byte(in) % (m->n_used + 1u), w = fz_byte(in) % 6u;
        memcpy(word, &hot[j], sizeof word);
        word[w] ^= fz_u32raw(in);
        memcpy(&hot[j], word, sizeof word);
        return 1;
    }
    return 0;
}

#ifdef FZ_STATS
static unsigned long fz_hot_rows;
__attribute__((destructor)) static void fz_hot_stats(void)
{
    fprintf(stderr, "fz_stats_hot: %lu rows of step streams predicted as their records\n", fz_hot_rows);
}
#endif

/* The step stream predicts as the records it was built from: the same result or error, row by row. */
static void fz_hot_same(fz_in *in, const fm_nb_q15 *steps, const fm_nb_q15 *records, uint32_t nf)
{
    uint32_t row;
    for (row = 0; row < FZ_ROWS; ++row) {
        float x[FZ_MAX_FEATURES];
        fm_result a, b;
        int ra, rb;
        fz_floats(in, x, nf);
        ra = fm_nb_q15_predict_vec(steps, x, nf, &a);
        rb = fm_nb_q15_predict_vec(records, x, nf, &b);
        fz_require(ra == rb && (ra != FM_OK || fz_same(&a, &b)));
        FZ_COUNT(fz_hot_rows);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_nb_arrays a;
    int q = fz_byte(&in) & 1u;
    uint32_t nf = fz_dim(&in, FZ_MAX_FEATURES);
    if (!q) {
        fm_nb m;
        const fz_nulls nulls = FZ_NULLS(&m, nb_ptrs, check_f32, eager_f32);
        fz_nb(&in, &a, &m, nf);
        if (fm_nb_check(&m) == FM_OK) {
            fz_run(&in, &m, nf, eager_f32, lazy_f32, batch_f32, &nulls, 0, 1);
        }
    } else {
        fm_nb_q15 m;
        fm_nb_q15_hot hot[FZ_NB_MAX_USED + 1u];
        const fz_nulls nulls = FZ_NULLS(&m, nb_q15_ptrs, check_q15, eager_q15);
        fz_nb_q15(&in, &a, &m, nf);
        if (m.pos != NULL && (fz_byte(&in) & 1u)) { /* the step stream of the same records */
            const fm_nb_q15 records = m;
            const int broken = fz_hot_steps(&in, &m, hot);
            m.hot = hot;
            m.pos = NULL;
            if (!broken && fm_nb_q15_check(&m) == FM_OK && fm_nb_q15_check(&records) == FM_OK) {
                fz_hot_same(&in, &m, &records, nf);
            }
        }
        if (fm_nb_q15_check(&m) == FM_OK) {
            fz_run(&in, &m, nf, eager_q15, lazy_q15, batch_q15, &nulls, 0, 1);
        }
    }
    return 0;
}
