#include "fm_nb.h"

/* ---------- checks of tables loaded at run time ---------- */

static int finite_f(float v)
{
    return !fm_bits_nonfinite(fm_float_bits(v));
}

static int nb_check_common(uint32_t n_features, uint32_t n_used, const uint32_t *order, uint32_t n_stops,
                           const uint32_t *stop_at)
{
    uint32_t i, k;
    if (n_used > 0 && order == NULL) {
        return FM_E_MODEL;
    }
    for (i = 0; i < n_used; ++i) {
        if (order[i] >= n_features) {
            return FM_E_MODEL;
        }
        for (k = 0; k < i; ++k) {
            if (order[k] == order[i]) {
                return FM_E_MODEL; /* a feature is read at most once */
            }
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

int fm_nb_check(const fm_nb *m)
{
    uint32_t i, n_edges, n_table;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = nb_check_common(m->n_features, m->n_used, m->order, m->n_stops, m->stop_at);
    if (rc != FM_OK) {
        return rc;
    }
    n_edges = m->n_used * m->n_edges;
    n_table = m->n_used * (m->n_edges + 2u);
    if ((n_edges > 0 && m->edges == NULL) || (n_table > 0 && m->d == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 0; i < n_edges; ++i) {
        /* NaN never compares; +inf is the padding */
        if (m->edges[i] != m->edges[i] || (i % m->n_edges != 0 && m->edges[i] < m->edges[i - 1])) {
            return FM_E_MODEL;
        }
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
        if (m->stop_hi[i] != m->stop_hi[i] || m->stop_lo[i] != m->stop_lo[i]) {
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

int fm_nb_q15_check(const fm_nb_q15 *m)
{
    uint32_t i, n_edges, n_table;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = nb_check_common(m->n_features, m->n_used, m->order, m->n_stops, m->stop_at);
    if (rc != FM_OK) {
        return rc;
    }
    n_edges = m->n_used * m->n_edges;
    n_table = m->n_used * (m->n_edges + 2u);
    if ((n_edges > 0 && m->edge_keys == NULL) || (n_table > 0 && m->d == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 1; i < n_edges; ++i) {
        if (i % m->n_edges != 0 && m->edge_keys[i] < m->edge_keys[i - 1]) {
            return FM_E_MODEL;
        }
    }
    if (m->n_stops > 0 && (m->stop_hi == NULL || m->stop_lo == NULL)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---------- shared pieces ---------- */

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

/* Table slot of a finite value: 0 for an exact zero, else 1 + #{edges < v}.
 * Branch-free in the value (zeros are common in sparse data). */
static inline uint32_t nb_slot_f32(const float *e, uint32_t n_edges, uint32_t bits)
{
    float v;
    uint32_t c, cnt = 1u;
    memcpy(&v, &bits, sizeof v);
    for (c = 0; c < n_edges; ++c) {
        cnt += (uint32_t)(e[c] < v);
    }
    return cnt & ((uint32_t)0 - (uint32_t)((bits & 0x7fffffffu) != 0u));
}

static inline uint32_t nb_slot_q15(const int32_t *e, uint32_t n_edges, uint32_t bits)
{
    int32_t key = fm_key_bits(bits);
    uint32_t c, cnt = 1u;
    for (c = 0; c < n_edges; ++c) {
        cnt += (uint32_t)(e[c] < key);
    }
    return cnt & ((uint32_t)0 - (uint32_t)(key != 0));
}

static inline int32_t sat_add(int32_t a, int32_t b)
{
    if (b > 0 && a > INT32_MAX - b) {
        return INT32_MAX;
    }
    if (b < 0 && a < INT32_MIN - b) {
        return INT32_MIN;
    }
    return a + b;
}

/* ---------- float32 evaluation ---------- */

/* Adds positions [i, end) of a float vector to *score; FM_OK or FM_E_VALUE.
 * The mean-std layout (two edges) gets its own loop without an inner loop. */
static int nb_f32_span_vec(const fm_nb *m, const float *x, uint32_t i, uint32_t end, float *score)
{
    const uint32_t *const order = m->order;
    const float *const edges = m->edges;
    const float *const d = m->d;
    const uint32_t ne = m->n_edges, stride = m->n_edges + 2u;
    float acc = *score;
    if (ne == 2u) {
        for (; i < end; ++i) {
            float v = x[order[i]];
            uint32_t bits = fm_float_bits(v);
            uint32_t slot = 1u + (uint32_t)(edges[2u * i] < v) + (uint32_t)(edges[2u * i + 1u] < v);
            if (fm_bits_nonfinite(bits)) {
                return FM_E_VALUE;
            }
            slot &= (uint32_t)0 - (uint32_t)((bits & 0x7fffffffu) != 0u);
            acc += d[4u * i + slot];
        }
    } else {
        for (; i < end; ++i) {
            uint32_t bits = fm_float_bits(x[order[i]]);
            if (fm_bits_nonfinite(bits)) {
                return FM_E_VALUE;
            }
            acc += d[stride * i + nb_slot_f32(edges + ne * i, ne, bits)];
        }
    }
    *score = acc;
    return FM_OK;
}

/* The same through the lazy reader. */
static int nb_f32_span_read(const fm_nb *m, const fm_reader *in, uint32_t i, uint32_t end, float *score)
{
    const uint32_t ne = m->n_edges, stride = m->n_edges + 2u;
    for (; i < end; ++i) {
        uint32_t bits;
        int rc = nb_read(in, m->order[i], &bits);
        if (rc != FM_OK) {
            return rc;
        }
        *score += m->d[stride * i + nb_slot_f32(m->edges + ne * i, ne, bits)];
    }
    return FM_OK;
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

static int nb_f32_run(const fm_nb *m, const float *x, const fm_reader *in, fm_result *out)
{
    float score = m->d0;
    uint32_t i = 0, s = 0;
    int32_t label = -1;

    for (;;) {
        uint32_t next = s < m->n_stops ? m->stop_at[s] : m->n_used;
        int rc = x != NULL ? nb_f32_span_vec(m, x, i, next, &score) : nb_f32_span_read(m, in, i, next, &score);
        if (rc != FM_OK) {
            return rc;
        }
        i = next;
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

int fm_nb_predict(const fm_nb *m, const fm_reader *in, fm_result *out)
{
    if (m == NULL || in == NULL || in->read == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return nb_f32_run(m, NULL, in, out);
}

int fm_nb_predict_vec(const fm_nb *m, const float *x, uint32_t n, fm_result *out)
{
    if (m == NULL || x == NULL || out == NULL || n != m->n_features) {
        return FM_E_ARG;
    }
    return nb_f32_run(m, x, NULL, out);
}

int fm_nb_predict_batch(const fm_nb *m, const float *X, uint32_t rows, uint32_t cols,
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

/* Adds positions [i, end) to *score (saturating); features from x when given, else the reader. */
static int nb_q15_span(const fm_nb_q15 *m, const float *x, const fm_reader *in, uint32_t i, uint32_t end,
                       int32_t *score)
{
    const uint32_t *const order = m->order;
    const int32_t *const keys = m->edge_keys;
    const int16_t *const d = m->d;
    const uint32_t ne = m->n_edges, stride = m->n_edges + 2u;
    int32_t acc = *score;
    if (x != NULL && ne == 2u) {
        for (; i < end; ++i) {
            uint32_t bits = fm_float_bits(x[order[i]]);
            int32_t key = fm_key_bits(bits);
            uint32_t slot = 1u + (uint32_t)(keys[2u * i] < key) + (uint32_t)(keys[2u * i + 1u] < key);
            if (fm_bits_nonfinite(bits)) {
                return FM_E_VALUE;
            }
            slot &= (uint32_t)0 - (uint32_t)(key != 0);
            acc = sat_add(acc, d[4u * i + slot]);
        }
    } else {
        for (; i < end; ++i) {
            uint32_t bits;
            if (x != NULL) {
                bits = fm_float_bits(x[order[i]]);
                if (fm_bits_nonfinite(bits)) {
                    return FM_E_VALUE;
                }
            } else {
                int rc = nb_read(in, order[i], &bits);
                if (rc != FM_OK) {
                    return rc;
                }
            }
            acc = sat_add(acc, d[stride * i + nb_slot_q15(keys + ne * i, ne, bits)]);
        }
    }
    *score = acc;
    return FM_OK;
}

static int nb_q15_run(const fm_nb_q15 *m, const float *x, const fm_reader *in, fm_result *out)
{
    int32_t score = m->d0;
    uint32_t i = 0, s = 0;
    int32_t label = -1;

    for (;;) {
        uint32_t next = s < m->n_stops ? m->stop_at[s] : m->n_used;
        int rc = nb_q15_span(m, x, in, i, next, &score);
        if (rc != FM_OK) {
            return rc;
        }
        i = next;
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
