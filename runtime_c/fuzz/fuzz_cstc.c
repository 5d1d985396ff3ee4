/* libFuzzer harness: cost-sensitive trees of classifiers (fm_cstc.h), float32 and q15, binary and K-class
 * leaves (n_classes 0, 2, 3..CSTC_MAX_CLASSES, or an invalid 250..255; class scorers after the node scorers,
 * class_first near the valid range). The last entry of term_start gives the length of feature/weight (the
 * tables' contract): the harness sets it to the length it filled; every other entry is fuzzed. */
#include "fuzz_build.h"
#include "fm_cstc.h"

#define CSTC_MAX_NODES 7u
#define CSTC_MAX_TERMS 16u
#define CSTC_MAX_CLASSES 12u
#define CSTC_MAX_CLASS_SCORERS 24u
#define CSTC_MAX_SCORERS (CSTC_MAX_NODES + CSTC_MAX_CLASS_SCORERS)

FZ_VEC_ADAPTER(raw_f32, fm_cstc, fm_cstc, fz_self)
FZ_VEC_ADAPTER(raw_q15, fm_cstc_q15, fm_cstc_q15, fz_self)
FZ_VEC_ADAPTER(eager_f32, fm_cstc, fm_cstc, fz_ctx_model)
FZ_VEC_ADAPTER(eager_q15, fm_cstc_q15, fm_cstc_q15, fz_ctx_model)
FZ_MEMO_ADAPTERS(f32, fm_cstc, fm_cstc)
FZ_MEMO_ADAPTERS(q15, fm_cstc_q15, fm_cstc_q15)

static const size_t cstc_ptrs[] = {offsetof(fm_cstc, term_start), offsetof(fm_cstc, feature), offsetof(fm_cstc, weight),
                                   offsetof(fm_cstc, bias),       offsetof(fm_cstc, threshold), offsetof(fm_cstc, upper),
                                   offsetof(fm_cstc, lower),      offsetof(fm_cstc, costs),
                                   offsetof(fm_cstc, class_first)};
static const size_t cstc_q15_ptrs[] = {
    offsetof(fm_cstc_q15, term_start),  offsetof(fm_cstc_q15, feature), offsetof(fm_cstc_q15, weight_q),
    offsetof(fm_cstc_q15, bias_q),      offsetof(fm_cstc_q15, threshold_q), offsetof(fm_cstc_q15, w_shift),
    offsetof(fm_cstc_q15, upper),       offsetof(fm_cstc_q15, lower),       offsetof(fm_cstc_q15, costs),
    offsetof(fm_cstc_q15, class_first)};

FZ_CHECK_ADAPTER(f32, fm_cstc, fm_cstc)
FZ_CHECK_ADAPTER(q15, fm_cstc_q15, fm_cstc_q15)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint32_t term_start[CSTC_MAX_SCORERS + 1u], class_first[CSTC_MAX_NODES];
    int32_t feature[CSTC_MAX_TERMS], upper[CSTC_MAX_NODES], lower[CSTC_MAX_NODES];
    int32_t bias_q[CSTC_MAX_SCORERS], threshold_q[CSTC_MAX_NODES];
    float weight[CSTC_MAX_TERMS], bias[CSTC_MAX_SCORERS], threshold[CSTC_MAX_NODES], costs[FZ_MAX_FEATURES];
    float values[FZ_MAX_FEATURES + 1];
    int16_t weight_q[CSTC_MAX_TERMS];
    uint16_t costs_q[FZ_MAX_FEATURES];
    uint8_t w_shift[CSTC_MAX_NODES], seen[FZ_MAX_FEATURES + 1];
    fm_memo memo;
    int q = fz_byte(&in) & 1u;
    uint32_t i, nf = fz_dim(&in, FZ_MAX_FEATURES), nn = fz_dim(&in, CSTC_MAX_NODES);
    uint32_t nt = fz_dim(&in, CSTC_MAX_TERMS);
    const uint8_t kb = fz_byte(&in);
    const uint32_t nk = kb < 64u ? 0u : kb < 96u ? 2u : kb < 250u ? 3u + kb % (CSTC_MAX_CLASSES - 2u) : kb;
    /* class scorers: mostly one or two leaves' worth (nk or 2 nk), sometimes one more or fewer */
    const uint8_t cb = nk >= 3u ? fz_byte(&in) : 0u;
    const uint32_t ncs_raw = nk >= 3u ? nk * (1u + (cb & 1u)) + ((cb >> 1) % 3u) - 1u : 0u;
    const uint32_t ncs = ncs_raw > CSTC_MAX_CLASS_SCORERS ? CSTC_MAX_CLASS_SCORERS : ncs_raw;
    const uint32_t ns = nn + (nk >= 3u && nk <= CSTC_MAX_CLASSES ? ncs : 0u); /* scorers the tables hold */
    const int32_t max_label = nk >= 3u ? (int32_t)nk - 1 : 1;
    fm_memo_init(&memo, values, seen, nf);
    fz_u32s(&in, term_start, nn);
    for (i = nn; i < ns; ++i) { /* the class scorers' ranges: small steps (a raw u32 each is never monotone) */
        const uint32_t next = (i > 0u ? term_start[i - 1u] : 0u) + fz_byte(&in) % 3u;
        term_start[i] = next > nt ? nt : next;
    }
    term_start[ns] = nt;
    fz_i32s(&in, feature, nt);
    fz_i32s(&in, upper, nn);
    fz_i32s(&in, lower, nn);
    for (i = 0; i < nn; ++i) { /* nn - 1 .. nn + ncs: valid up to ns - nk */
        class_first[i] = nn + fz_byte(&in) % (ncs + 2u) - (nn > 0u ? 1u : 0u);
    }
    if (!q) {
        fm_cstc m;
        fz_ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, cstc_ptrs, check_f32, raw_f32);
        fz_floats(&in, weight, nt);
        fz_floats(&in, bias, ns);
        fz_floats(&in, threshold, nn);
        m.n_features = nf;
        m.n_nodes = nn;
        m.term_start = term_start;
        m.feature = feature;
        m.weight = weight;
        m.bias = bias;
        m.threshold = threshold;
        m.upper = upper;
        m.lower = lower;
        m.costs = FZ_OPTIONAL(&in, fz_floats, costs, nf);
        m.n_classes = nk;
        m.n_class_scorers = ncs;
        m.class_first = class_first;
        if (fm_cstc_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_f32, lazy_f32, batch_f32, &nulls, 0, max_label);
        }
    } else {
        fm_cstc_q15 m;
        fz_ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, cstc_q15_ptrs, check_q15, raw_q15);
        fz_i16s(&in, weight_q, nt);
        fz_i32s(&in, bias_q, ns);
        fz_i32s(&in, threshold_q, nn);
        for (i = 0; i < nn; ++i) {
            w_shift[i] = fz_byte(&in);
        }
        m.n_features = nf;
        m.n_nodes = nn;
        m.term_start = term_start;
        m.feature = feature;
        m.weight_q = weight_q;
        m.bias_q = bias_q;
        m.threshold_q = threshold_q;
        m.w_shift = w_shift;
        m.upper = upper;
        m.lower = lower;
        m.in_shift = fz_byte(&in);
        m.costs = FZ_OPTIONAL(&in, fz_u16s, costs_q, nf);
        m.n_classes = nk;
        m.n_class_scorers = ncs;
        m.class_first = class_first;
        if (fm_cstc_q15_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_q15, lazy_q15, batch_q15, &nulls, 0, max_label);
        }
    }
    return 0;
}
