/*
 * Bare-metal count harness for an emlearn classifier on Cortex-M (the peer's rows of
 * benchmarks/runtime.py and benchmarks/mc/peers_k.py under QEMU, benchmarks/common/emlearn_m.py):
 * firmware_examples/cortex_m builds it with APP=this file and
 * MODEL= a header holding emlearn's C (name "peer": inline or loadable forest, Gaussian NB) and the
 * rows as its predict call takes them, int16 or float
 * (PEER_ROWS[PEER_N_ROWS][PEER_N_FEATURES], FM_N_ROWS for benchmarks/common/qemu_count.py).
 * Predicts every row FM_REPEAT times (read through a volatile, so images of every REPEAT run the
 * same code), prints the number of positive answers once, exits 0.
 */
#include <stdint.h>

#include "semihost.h"

#ifndef FM_MODEL_HEADER
#define FM_MODEL_HEADER "emlearn_model.h"
#endif
#include FM_MODEL_HEADER

#ifndef FM_REPEAT
#define FM_REPEAT 1
#endif

int main(void)
{
    static const volatile uint32_t repeat = (uint32_t)FM_REPEAT;
    const uint32_t n_repeat = repeat;
    uint32_t rep, i, positive = 0u;
    char line[12];
    char *p = line + sizeof line;
    for (rep = 0; rep < n_repeat; ++rep) {
        for (i = 0; i < PEER_N_ROWS; ++i) {
            positive += peer_predict(PEER_ROWS[i], PEER_N_FEATURES) > 0 ? 1u : 0u;
        }
    }
    *--p = '\0';
    *--p = '\n';
    do {
        *--p = (char)('0' + positive % 10u);
        positive /= 10u;
    } while (positive != 0u);
    sh_write0(p);
    return 0;
}
