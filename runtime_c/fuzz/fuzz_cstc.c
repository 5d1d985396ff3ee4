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

/* The q15 model's shifts, read after its thresholds: one w_shift byte per node into w_shift_, then in_shift. */
#define fz_no_shifts(m, in, nn, w_shift_) ((void)(m), (void)(nn))
static void cstc_q15_shifts(fm_cstc_q15 *m, fz_in *in, uint32_t nn, uint8_t *w_shift_)
{
    uint32_t i;
    for (i = 0; i < nn; ++i) {
        w_shift_[i] = fz_byte(in);
    }
    m->w_shift = w_shift_;
    m->in_shift = fz_byte(in);
}

/* Builds CSTC m (struct T): the tables of the common part, the weights read by FW into weight_ (field W),
 * the biases by FB into bias_ (B), the thresholds by FT into thr_ (TH), then SHIFTS (the q15 shifts), the
 * optional costs by FC into costs_; runs the accepted model through fz_run (suffix SFX: f32 or q15). */
#define CSTC_RUN(T, SFX, PTRS, FW, weight_, W, FB, bias_, B, FT, thr_, TH, SHIFTS, FC, costs_)           \
    do {                                                                                                  \
        T m;                                                                                              \
        fz_ctx k = {&m, &memo};                                                                           \
        const fz_nulls nulls = FZ_NULLS(&m, PTRS, check_##SFX, raw_##SFX);                                \
        FW(&in, weight_, nt);                                                                             \
        FB(&in, bias_, ns);                                                                               \
        FT(&in, thr_, nn);                                                                                \
        SHIFTS(&m, &in, nn, w_shift);                                                                     \
        m.n_features = nf;                                                                                \
        m.n_nodes = nn;                                                                                   \
        m.term_start = term_start;                                                                        \
        m.feature = feature;                                                                              \
        m.W = weight_;                                                                                    \
        m.B = bias_;                                                                                      \
        m.TH = thr_;                                                                                      \
        m.upper = upper;                                                                                  \
        m.lower = lower;                                                                                  \
        m.costs = FZ_OPTIONAL(&in, FC, costs_, nf);                                                       \
        m.n_classes = nk;                                                                                 \
        m.n_class_scorers = ncs;                                                                          \
        m.class_first = class_first;                                                                      \
        if (check_##SFX(&m) == FM_OK) {                                                                   \
            fz_run(&in, &k, nf, eager_##SFX, lazy_##SFX, batch_##SFX, &nulls, 0, max_label);              \
        }                                                                                                 \
    } while (0)

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
        CSTC_RUN(fm_cstc, f32, cstc_ptrs, fz_floats, weight, weight, fz_floats, bias, bias, fz_floats, threshold,
                 threshold, fz_no_shifts, fz_floats, costs);
    } else {
        CSTC_RUN(fm_cstc_q15, q15, cstc_q15_ptrs, fz_i16s, weight_q, weight_q, fz_i32s, bias_q, bias_q, fz_i32s,
                 threshold_q, threshold_q, cstc_q15_shifts, fz_u16s, costs_q);
    }
    return 0;
}
