/* The eager (marked) walks of fm_trees / fm_trees_q15 against the lazy memo walks on random complete
 * depth-3 ensembles: same status, label, score, n_read and cost. Thresholds and inputs share a small grid
 * (x == t, -0.0 against 0.0), with NaN and infinite inputs. Built for the host by `make test` and, by
 * tests/test_trees_runtime.py, for 32-bit Arm (Thumb-2 and Arm state, where the walks use their
 * compare-and-carry steps) and AArch64 under qemu-user. */
#include <stdio.h>
#include <string.h>

#include "fm_trees.h"
#include "trees_fixture.h"

#define NF 40u
#define NT 33u
#define NI 7u /* internal nodes of a depth-3 tree */

static uint32_t rng_state = 777u;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static int read_vec(void *ctx, uint32_t j, float *v)
{
    *v = ((const float *)ctx)[j];
    return 0;
}

static float from_bits(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

int main(void)
{
    static const float grid[9] = {-2.0f, -1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f, 3.0f, -0.0f};
    static uint32_t node_end[NT];
    static uint16_t feature[NT * NI], out[NT], thr_q[NT * NI];
    static float thr[NT * NI], leaf[NT * (NI + 1u)];
    static int16_t leaf_q[NT * (NI + 1u)];
    const float base = 0.125f;
    const int32_t base_q = 5;
    uint32_t round, i, errors = 0u, failed = 0u;
    for (round = 0; round < 3000u; ++round) {
        fm_trees m;
        fm_trees_q15 q;
        fm_result a, b;
        fm_memo memo;
        fm_reader r;
        float x[NF], values[NF], scores[1];
        uint8_t seen[NF];
        int16_t keys[NF];
        int32_t scores_q[1];
        int ra, rb;
        const uint32_t nt = 1u + next_u32() % NT;
        for (i = 0; i < nt; ++i) {
            node_end[i] = (i + 1u) * NI;
            out[i] = 0u;
        }
        for (i = 0; i < nt * NI; ++i) {
            feature[i] = (uint16_t)(next_u32() % NF);
            thr[i] = grid[next_u32() % 9u];
            thr_q[i] = (uint16_t)fm_ukey16(fm_float_bits(thr[i]));
        }
        for (i = 0; i < nt * (NI + 1u); ++i) {
            leaf[i] = (float)(int32_t)(next_u32() % 64u) / 16.0f - 2.0f;
            leaf_q[i] = (int16_t)((int32_t)(next_u32() % 2000u) - 1000);
        }
        for (i = 0; i < NF; ++i) {
            const uint32_t k = next_u32() % 12u;
            x[i] = k < 9u ? grid[k] : (float)((int32_t)(next_u32() % 200u) - 100) / 37.0f;
        }
        if (next_u32() % 10u == 0u) {
            x[next_u32() % NF] = from_bits(0x7fc00000u);
        }
        if (next_u32() % 10u == 0u) {
            x[next_u32() % NF] = from_bits(0xff800000u);
        }
        TREES_TABLES(m, NF, 1u, nt, nt * NI, node_end, feature, out, threshold, thr, leaf, leaf, base_score, &base, NULL);
        m.decision_threshold = 0.3f;
        m.depth = 3u;
        m.exact_costs = 1u;
        TREES_TABLES(q, NF, 1u, nt, nt * NI, node_end, feature, out, threshold_q, thr_q, leaf_q, leaf_q, base_q, &base_q,
                     NULL);
        q.shift = 4u;
        q.depth = 3u;
        if (fm_trees_check(&m) != FM_OK || fm_trees_q15_check(&q) != FM_OK) {
            printf("test_trees_eager: tables rejected\n");
            return 1;
        }
        r.read = read_vec;
        r.ctx = x;
        fm_memo_init(&memo, values, seen, NF);
        ra = fm_trees_predict_vec(&m, x, NF, &a);
        rb = fm_trees_predict(&m, &r, &memo, scores, &b);
        failed += ra != FM_OK;
        if (ra != rb || (ra == FM_OK && (a.label != b.label || a.score != b.score || a.n_read != b.n_read ||
                                         a.cost != b.cost))) {
            if (errors++ < 5u) {
                printf("float32 round %u: status %d / %d, label %d / %d, n_read %u / %u\n", (unsigned)round, ra, rb,
                       (int)a.label, (int)b.label, (unsigned)a.n_read, (unsigned)b.n_read);
            }
        }
        fm_memo_init(&memo, values, seen, NF);
        fm_memo_set_keys(&memo, keys);
        ra = fm_trees_q15_predict_vec(&q, x, NF, &a);
        rb = fm_trees_q15_predict(&q, &r, &memo, scores_q, &b);
        if (ra != rb || (ra == FM_OK && (a.label != b.label || a.score_q != b.score_q || a.n_read != b.n_read ||
                                         a.cost_q != b.cost_q))) {
            if (errors++ < 5u) {
                printf("q15 round %u: status %d / %d, label %d / %d, n_read %u / %u\n", (unsigned)round, ra, rb,
                       (int)a.label, (int)b.label, (unsigned)a.n_read, (unsigned)b.n_read);
            }
        }
    }
    if (errors != 0u || failed == 0u || failed == round) {
        printf("test_trees_eager: %u mismatches (%u non-finite rounds)\n", (unsigned)errors, (unsigned)failed);
        return 1;
    }
    printf("test_trees_eager: eager == lazy on %u rounds (%u non-finite)\n", (unsigned)round, (unsigned)failed);
    return 0;
}
