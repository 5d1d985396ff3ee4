/*
 * Bare-metal self-test: evaluates the model on the rows embedded in the
 * generated header (or, when the header embeds raw windows and the model's
 * extraction plan, on the windows: the whole pipeline, features computed on
 * the device as the model reads them, FM_PREDICT_WINDOW; -DFM_ROWS_ONLY=1
 * keeps the rows) and prints one line per row over semihosting,
 * "LABEL FEATURES_READ", plus " COST" for kinds with feature costs
 * (FM_REPORTS_COST; text of fm_cost_text.h), exactly as
 * `frugalml predict MODEL DATA --rows N`.
 *
 * Exit code (main's return value, passed to the host by the start-up code):
 * 0 all rows predicted, 1 a prediction failed (an "error ROW CODE" line says
 * which). No C library, no heap, no mutable globals: the tables and rows are
 * const (flash); the only RAM is the stack.
 *
 * Build options (-D...):
 *   FM_MODEL_HEADER="/abs/path/model.h"  the generated header (default "model.h")
 *   FM_REPEAT=N                          evaluate the rows N times (workload for
 *                                        power or cycle measurements); prints once
 */
#include <stdint.h>

#include "semihost.h"

#ifndef FM_MODEL_HEADER
#define FM_MODEL_HEADER "model.h"
#endif
#include FM_MODEL_HEADER

#include "fm_cost_text.h"

#ifndef FM_N_ROWS
/* One error, not a cascade of undeclared names after it: the rest of the file is in the #else. */
#error "the model header has no embedded rows: export it with --embed DATA --rows N"
#else

#if defined(FM_N_WINDOWS) && defined(FM_PREDICT_WINDOW) && !defined(FM_ROWS_ONLY)
#define FM_USE_WINDOWS 1
#define FM_N_INPUTS FM_N_WINDOWS
#else
#define FM_USE_WINDOWS 0
#define FM_N_INPUTS FM_N_ROWS
#endif

#ifndef FM_REPEAT
#define FM_REPEAT 1
#endif

/* Decimal text of v at the end of buf[12]; returns the first character. */
static char *fmt_int(char *end, int32_t v)
{
    uint32_t u = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    *--end = '\0';
    do {
        *--end = (char)('0' + u % 10u);
        u /= 10u;
    } while (u != 0u);
    if (v < 0) {
        *--end = '-';
    }
    return end;
}

/* Copies s to dst, returns the end (the NUL written). */
static char *append(char *dst, const char *s)
{
    while (*s != '\0') {
        *dst++ = *s++;
    }
    *dst = '\0';
    return dst;
}

/* "PREFIX A B\n", or "PREFIX A B COST\n" when cost is not NULL. */
static void print_line(const char *prefix, const char *label, int32_t b, const char *cost)
{
    char line[48 + FM_COST_TEXT_SIZE + FM_LABEL_TEXT_MAX], num[12];
    char *p = append(line, prefix);
    p = append(p, label);
    p = append(p, " ");
    p = append(p, fmt_int(num + sizeof num, b));
    if (cost != NULL) {
        p = append(p, " ");
        p = append(p, cost);
    }
    (void)append(p, "\n");
    sh_write0(line);
}

/* "error ROW STATUS: message\n" (fm_strerror) */
static void print_error(int32_t row, int rc)
{
    char line[40], num[12];
    char *p = append(line, "error ");
    p = append(p, fmt_int(num + sizeof num, row));
    p = append(p, " ");
    p = append(p, fmt_int(num + sizeof num, (int32_t)rc));
    (void)append(p, ": ");
    sh_write0(line);
    sh_write0(fm_strerror(rc));
    sh_write0("\n");
}

int main(void)
{
    fm_result r;
    uint32_t i, rep;
#if FM_USE_WINDOWS
    uint64_t scratch[FM_WINDOW_SCRATCH_WORDS]; /* the feature context, the model's memo (stack) */
#endif

    /* Read through a volatile const (flash): the code is the same for every
     * FM_REPEAT, so instruction counts of two builds differ by the rows only. */
    static const volatile uint32_t repeat = (uint32_t)FM_REPEAT;
    const uint32_t n_repeat = repeat;

    for (rep = 0; rep < n_repeat; ++rep) {
        for (i = 0; i < FM_N_INPUTS; ++i) {
#if FM_USE_WINDOWS
            int rc = FM_PREDICT_WINDOW(FM_WINDOWS[i], FM_PLAN_CHANNELS, FM_WINDOW_LEN, scratch, sizeof scratch, 0, &r);
#else
            int rc = FM_PREDICT_VEC(FM_ROWS[i], FM_N_FEATURES, &r);
#endif
            if (!FM_ANSWERED(rc)) { /* FM_E_BUDGET (nothing fits) is an answer: label -1, as predict prints */
                print_error((int32_t)i, rc);
                return 1;
            }
            if (rep == 0) {
#if FM_REPORTS_COST
                char cost[FM_COST_TEXT_SIZE];
                print_line("", FM_LABEL_TEXT(r.label), (int32_t)r.n_read, fm_cost_text(cost, FM_RESULT_COST(&r)));
#else
                print_line("", FM_LABEL_TEXT(r.label), (int32_t)r.n_read, NULL);
#endif
            }
        }
    }
    return 0;
}

#endif /* FM_N_ROWS */
