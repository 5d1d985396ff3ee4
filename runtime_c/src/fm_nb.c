#include "fm_nb.h"

/* ---------- shared checks of the layout both numeric types use ---------- */

static int nb_check_layout(uint32_t n_features, uint32_t n_used, const uint32_t *order,
                           const uint8_t *zero_bin, const uint32_t *edge_start, uint32_t n_edges,
                           const uint32_t *table_start, uint32_t n_table, uint32_t n_stops,
                           const uint32_t *stop_at)
{
    uint32_t i, k;
    if (edge_start == NULL || table_start == NULL) {
        return FM_E_MODEL;
    }
    if (n_used > 0 && (order == NULL || zero_bin == NULL)) {
        return FM_E_MODEL;
    }
    if (edge_start[0] != 0 || table_start[0] != 0 || edge_start[n_used] != n_edges ||
        table_start[n_used] != n_table) {
        return FM_E_MODEL;
    }
    for (i = 0; i < n_used; ++i) {
        uint32_t ne;
        if (order[i] >= n_features || zero_bin[i] > 1) {
            return FM_E_MODEL;
        }
        for (k = 0; k < i; ++k) {
            if (order[k] == order[i]) {
                return FM_E_MODEL; /* a feature is read at most once */
            }
        }
        if (edge_start[i + 1] < edge_start[i] || edge_start[i + 1] > n_edges) {
            return FM_E_MODEL;
        }
        ne = edge_start[i + 1] - edge_start[i];
        if (table_start[i + 1] < table_start[i] ||
            table_start[i + 1] - table_start[i] != ne + 1u + zero_bin[i]) {
            return FM_E_MODEL;
        }
    }
    if (n_stops > 0 && stop_at == NULL) {
        return FM_E_MODEL;
    }
    for (k = 0; k < n_stops; ++k) {
        if (stop_at[k] < 1 || stop_at[k] >= n_used || (k > 0 && stop_at[k] <= stop_at[k - 1])) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

static int is_nan(float v)
{
    return v != v;
}

static int finite_f(float v)
{
    return !fm_bits_nonfinite(fm_float_bits(v));
}

static int edges_sorted_f32(const float *e, const uint32_t *start, uint32_t n_used)
{
    uint32_t i, k;
    for (i = 0; i < n_used; ++i) {
        for (k = start[i]; k < start[i + 1]; ++k) {
            if (!finite_f(e[k]) || (k > start[i] && e[k] < e[k - 1])) {
                return 0;
            }
        }
    }
    return 1;
}

int fm_nb_f32_check(const fm_nb_f32 *m, uint32_t n_edges, uint32_t n_table)
{
    uint32_t i;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = nb_check_layout(m->n_features, m->n_used, m->order, m->zero_bin, m->edge_start, n_edges,
                         m->table_start, n_table, m->n_stops, m->stop_at);
    if (rc != FM_OK) {
        return rc;
    }
    if ((n_edges > 0 && m->edges == NULL) || (n_table > 0 && m->d == NULL)) {
        return FM_E_MODEL;
    }
    if (!edges_sorted_f32(m->edges, m->edge_start, m->n_used)) {
        return FM_E_MODEL;
    }
    for (i = 0; i < n_table; ++i) {
        if (!finite_f(m->d[i])) {
            return FM_E_MODEL;
        }
    }
    if (!finite_f(m->d0) || !finite_f(m->threshold)) {
        return FM_E_MODEL;
    }
    if (m->n_stops > 0 && (m->stop_hi == NULL || m->stop_lo == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 0; i < m->n_stops; ++i) {
        if (is_nan(m->stop_hi[i]) || is_nan(m->stop_lo[i])) {
            return FM_E_MODEL;
        }
    }
    if (m->costs != NULL) {
        for (i = 0; i < m->n_features; ++i) {
            if (!finite_f(m->costs[i]) || m->costs[i] < 0.0f) {
                return FM_E_MODEL;
            }
        }
    }
    return FM_OK;
}

int fm_nb_q15_check(const fm_nb_q15 *m, uint32_t n_edges, uint32_t n_table)
{
    uint32_t i, k;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = nb_check_layout(m->n_features, m->n_used, m->order, m->zero_bin, m->edge_start, n_edges,
                         m->table_start, n_table, m->n_stops, m->stop_at);
    if (rc != FM_OK) {
        return rc;
    }
    if ((n_edges > 0 && m->edge_keys == NULL) || (n_table > 0 && m->d == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 0; i < m->n_used; ++i) {
        for (k = m->edge_start[i] + 1; k < m->edge_start[i + 1]; ++k) {
            if (m->edge_keys[k] < m->edge_keys[k - 1]) {
                return FM_E_MODEL;
            }
        }
    }
    if (m->n_stops > 0 && (m->stop_hi == NULL || m->stop_lo == NULL)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---------- float32 evaluation ---------- */

/* Reads feature j through the reader; FM_OK or an error code. */
static int nb_read(const fm_reader *in, uint32_t j, uint32_t *bits)
{
    float v;
    if (in->read(in->ctx, j, &v) != 0) {
        return FM_E_READ;
    }
    *bits = fm_float_bits(v);
    return fm_bits_nonfinite(*bits) ? FM_E_VALUE : FM_OK;
}

/* Bin of a finite value: zero_bin + #{edges < v}, or 0 for an exact zero when
 * zero_bin is set. Branch-free in the value (zeros are common in sparse data). */
static inline uint32_t nb_bin_f32(const float *e, const float *end, uint32_t zero_bin, uint32_t bits)
{
    float v;
    uint32_t cnt = zero_bin, keep;
    memcpy(&v, &bits, sizeof v);
    for (; e < end; ++e) {
        cnt += (uint32_t)(*e < v);
    }
    keep = (uint32_t)0 - (uint32_t)!(zero_bin & (uint32_t)((bits & 0x7fffffffu) == 0u));
    return cnt & keep;
}

/* Cost of the first n features of the reading order, summed in that order. */
static float nb_cost_f32(const float *costs, const uint32_t *order, uint32_t n)
{
    float cost = 0.0f;
    uint32_t p;
    if (costs == NULL) {
        return (float)n;
    }
    for (p = 0; p < n; ++p) {
        cost += costs[order[p]];
    }
    return cost;
}

static int nb_f32_run(const fm_nb_f32 *m, const float *x, const fm_reader *in, fm_result *out)
{
    float score = m->d0;
    uint32_t i = 0, s = 0;
    uint32_t next = m->n_stops > 0 ? m->stop_at[0] : m->n_used;
    int32_t label = -1;

    for (;;) {
        if (x != NULL) {
            for (; i < next; ++i) {
                uint32_t bits = fm_float_bits(x[m->order[i]]);
                if (fm_bits_nonfinite(bits)) {
                    return FM_E_VALUE;
                }
                score += m->d[m->table_start[i] + nb_bin_f32(m->edges + m->edge_start[i],
                                                             m->edges + m->edge_start[i + 1],
                                                             m->zero_bin[i], bits)];
            }
        } else {
            for (; i < next; ++i) {
                uint32_t bits;
                int rc = nb_read(in, m->order[i], &bits);
                if (rc != FM_OK) {
                    return rc;
                }
                score += m->d[m->table_start[i] + nb_bin_f32(m->edges + m->edge_start[i],
                                                             m->edges + m->edge_start[i + 1],
                                                             m->zero_bin[i], bits)];
            }
        }
        if (s == m->n_stops) {
            break;
        }
        if (score > m->stop_hi[s]) {
            label = 1;
        } else if (score < m->stop_lo[s]) {
            label = 0;
        }
        ++s;
        if (label >= 0) {
            break;
        }
        next = s < m->n_stops ? m->stop_at[s] : m->n_used;
    }
    out->label = label >= 0 ? label : (int32_t)(score > m->threshold);
    out->stage = label >= 0 ? s : 0u;
    out->score = score;
    out->score_q = 0;
    out->n_read = i;
    out->cost = nb_cost_f32(m->costs, m->order, i);
    out->cost_q = 0;
    return FM_OK;
}

int fm_nb_f32_predict(const fm_nb_f32 *m, const fm_reader *in, fm_result *out)
{
    if (m == NULL || in == NULL || in->read == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return nb_f32_run(m, NULL, in, out);
}

int fm_nb_f32_predict_vec(const fm_nb_f32 *m, const float *x, uint32_t n, fm_result *out)
{
    if (m == NULL || x == NULL || out == NULL || n != m->n_features) {
        return FM_E_ARG;
    }
    return nb_f32_run(m, x, NULL, out);
}

int fm_nb_f32_predict_batch(const fm_nb_f32 *m, const float *X, uint32_t rows, uint32_t cols,
                            fm_result *out, uint32_t *n_done)
{
    uint32_t r;
    int rc = FM_OK;
    if (m == NULL || (rows > 0 && (X == NULL || out == NULL)) || cols != m->n_features) {
        return FM_E_ARG;
    }
    for (r = 0; r < rows && rc == FM_OK; ++r) {
        rc = nb_f32_run(m, X + (size_t)r * cols, NULL, out + r);
    }
    if (n_done != NULL) {
        *n_done = rc == FM_OK ? rows : r - 1u;
    }
    return rc;
}

/* ---------- q15 evaluation: integer operations only ---------- */

static int32_t sat_add(int32_t a, int32_t b)
{
    if (b > 0 && a > INT32_MAX - b) {
        return INT32_MAX;
    }
    if (b < 0 && a < INT32_MIN - b) {
        return INT32_MIN;
    }
    return a + b;
}

static inline uint32_t nb_bin_q15(const int32_t *e, const int32_t *end, uint32_t zero_bin, uint32_t bits)
{
    int32_t key = fm_key_bits(bits);
    uint32_t cnt = zero_bin, keep;
    for (; e < end; ++e) {
        cnt += (uint32_t)(*e < key);
    }
    keep = (uint32_t)0 - (uint32_t)!(zero_bin & (uint32_t)(key == 0));
    return cnt & keep;
}

static uint32_t nb_cost_q(const uint16_t *costs, const uint32_t *order, uint32_t n)
{
    uint32_t cost = 0, p;
    if (costs == NULL) {
        return n;
    }
    for (p = 0; p < n; ++p) {
        cost += costs[order[p]];
    }
    return cost;
}

static int nb_q15_run(const fm_nb_q15 *m, const float *x, const fm_reader *in, fm_result *out)
{
    int32_t score = m->d0;
    uint32_t i = 0, s = 0;
    uint32_t next = m->n_stops > 0 ? m->stop_at[0] : m->n_used;
    int32_t label = -1;

    for (;;) {
        for (; i < next; ++i) {
            uint32_t bits;
            if (x != NULL) {
                bits = fm_float_bits(x[m->order[i]]);
                if (fm_bits_nonfinite(bits)) {
                    return FM_E_VALUE;
                }
            } else {
                int rc = nb_read(in, m->order[i], &bits);
                if (rc != FM_OK) {
                    return rc;
                }
            }
            score = sat_add(score, m->d[m->table_start[i] + nb_bin_q15(m->edge_keys + m->edge_start[i],
                                                                        m->edge_keys + m->edge_start[i + 1],
                                                                        m->zero_bin[i], bits)]);
        }
        if (s == m->n_stops) {
            break;
        }
        if (score > m->stop_hi[s]) {
            label = 1;
        } else if (score < m->stop_lo[s]) {
            label = 0;
        }
        ++s;
        if (label >= 0) {
            break;
        }
        next = s < m->n_stops ? m->stop_at[s] : m->n_used;
    }
    out->label = label >= 0 ? label : (int32_t)(score > m->threshold);
    out->stage = label >= 0 ? s : 0u;
    out->score = 0.0f;
    out->score_q = score;
    out->n_read = i;
    out->cost = 0.0f;
    out->cost_q = nb_cost_q(m->costs, m->order, i);
    return FM_OK;
}

int fm_nb_q15_predict(const fm_nb_q15 *m, const fm_reader *in, fm_result *out)
{
    if (m == NULL || in == NULL || in->read == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return nb_q15_run(m, NULL, in, out);
}

int fm_nb_q15_predict_vec(const fm_nb_q15 *m, const float *x, uint32_t n, fm_result *out)
{
    if (m == NULL || x == NULL || out == NULL || n != m->n_features) {
        return FM_E_ARG;
    }
    return nb_q15_run(m, x, NULL, out);
}

int fm_nb_q15_predict_batch(const fm_nb_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                            fm_result *out, uint32_t *n_done)
{
    uint32_t r;
    int rc = FM_OK;
    if (m == NULL || (rows > 0 && (X == NULL || out == NULL)) || cols != m->n_features) {
        return FM_E_ARG;
    }
    for (r = 0; r < rows && rc == FM_OK; ++r) {
        rc = nb_q15_run(m, X + (size_t)r * cols, NULL, out + r);
    }
    if (n_done != NULL) {
        *n_done = rc == FM_OK ? rows : r - 1u;
    }
    return rc;
}
