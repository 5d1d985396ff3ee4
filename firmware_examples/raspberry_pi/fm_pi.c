/*
 * frugalml on a Raspberry Pi (or any Linux): predictions from a generated
 * model header, one line per row, "LABEL FEATURES_READ", plus " COST" for
 * kinds with feature costs (FM_REPORTS_COST; text of fm_cost_text.h),
 * exactly as `frugalml predict MODEL DATA` prints them.
 *
 *   fm_pi                      the rows embedded in the header (--embed DATA)
 *   fm_pi FILE | fm_pi -       rows from a text file or stdin: numbers separated
 *                              by commas, spaces, tabs or semicolons, one row per
 *                              line; a non-numeric first line (CSV header), blank
 *                              lines and lines starting with '#' are skipped
 *   -q                         do not print the predictions
 *   -n N                       workload: predict the rows N more times
 *   -s SECONDS                 workload: predict the rows for at least SECONDS
 *   -g CHIP:LINE               (GPIO=1 builds) drive a GPIO line high during the
 *                              workload, low otherwise: a marker for a scope or
 *                              logging meter, e.g. -g gpiochip0:17
 *
 * After a workload it prints {"predictions": N, "seconds": T} as its last
 * line (the format of python -m pyruntime.workload, read by power_bench).
 * Exit code: 0 success, 1 a prediction failed, 2 bad usage or bad input.
 */
#define _POSIX_C_SOURCE 200112L
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FM_MODEL_HEADER
#define FM_MODEL_HEADER "model.h"
#endif
#include FM_MODEL_HEADER

#include "fm_cost_text.h"
#include "gpio_marker.h"

/* Rows held in memory for the workload (a file's rows beyond it are still
 * predicted and printed, but only the first ones are looped). */
#ifndef FM_MAX_ROWS
#define FM_MAX_ROWS 256u
#endif

typedef struct {
    const float *rows;   /* row-major [n_rows][FM_N_FEATURES] */
    uint32_t n_rows;
} row_set;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int predict_print(const float *x, unsigned long row, int quiet)
{
    fm_result r;
    int rc = FM_PREDICT_VEC(x, FM_N_FEATURES, &r);
    if (!FM_ANSWERED(rc)) { /* FM_E_BUDGET (nothing fits) is an answer: label -1, as predict prints it */
        fprintf(stderr, "fm_pi: row %lu: prediction failed (error %d: %s)\n", row, rc, fm_strerror(rc));
        return 1;
    }
    if (!quiet) {
#if FM_REPORTS_COST
        char cost[FM_COST_TEXT_SIZE];
        printf("%s %u %s\n", FM_LABEL_TEXT(r.label), (unsigned)r.n_read, fm_cost_text(cost, FM_RESULT_COST(&r)));
#else
        printf("%s %u\n", FM_LABEL_TEXT(r.label), (unsigned)r.n_read);
#endif
    }
    return 0;
}

/* Reads one field (up to a separator or newline) into tok, at most cap - 1
 * characters kept; returns the character that ended it (EOF, '\n' or a
 * separator). *len counts every character of the field, so *len >= cap says it
 * was too long to keep whole (the caller refuses it: a cut number would parse
 * as another number). */
static int read_token(FILE *in, char *tok, size_t cap, size_t *len)
{
    int c;
    *len = 0;
    while ((c = getc(in)) != EOF && c != '\n' && c != ',' && c != ';' && c != ' ' && c != '\t' &&
           c != '\r') {
        if (*len + 1 < cap) {
            tok[*len] = (char)c;
        }
        ++*len;
    }
    tok[*len < cap ? *len : cap - 1] = '\0';
    return c;
}

static void skip_line(FILE *in, int last)
{
    int c = last;
    while (c != '\n' && c != EOF) {
        c = getc(in);
    }
}

/* Parses a text number; 0 on success. As `frugalml predict` reads it: to the
 * nearest double, then to float (strtof rounds once, straight to float, and
 * about half the float midpoints a float64 prints, e.g. 6.186421632766724,
 * land on the other float: then a threshold between the two split the row
 * the other way). */
static int parse_float(const char *tok, float *v)
{
    char *end;
    errno = 0;
    *v = (float)strtod(tok, &end);
    return (end == tok || *end != '\0') ? 1 : 0;
}

/* Predicts every row of a text stream; keeps the first `cap` rows in store
 * for the workload. Returns 0, 1 (prediction failed) or 2 (bad input). */
static int run_stream(FILE *in, const char *name, int quiet, float *store, uint32_t cap, uint32_t *n_kept)
{
    float x[FM_N_FEATURES] = {0.0f}; /* set before use; zeroed so gcc -O2 sees it (a model reading nothing) */
    char tok[128];
    unsigned long line = 0, rows = 0;
    int c = 0;
    *n_kept = 0;
    while (c != EOF) {
        uint32_t n = 0;
        int bad = 0;
        size_t len;
        ++line;
        for (;;) {
            c = read_token(in, tok, sizeof tok, &len);
            if (len > 0) {
                if (tok[0] == '#' && n == 0) {
                    skip_line(in, c);
                    c = '\n';
                    break;
                }
                if (n >= FM_N_FEATURES || len >= sizeof tok || parse_float(tok, &x[n]) != 0) {
                    bad = len >= sizeof tok ? 2 : 1;
                    skip_line(in, c);
                    c = c == EOF ? EOF : '\n';
                    break;
                }
                ++n;
            }
            if (c == '\n' || c == EOF) {
                break;
            }
        }
        if (bad && line == 1 && n == 0) {
            continue; /* CSV header (its names may be long) */
        }
        if (bad == 2) {
            fprintf(stderr, "fm_pi: %s line %lu: a field longer than %u characters (write numbers shorter)\n", name,
                    line, (unsigned)(sizeof tok - 1));
            return 2;
        }
        if (bad || (n != 0 && n != FM_N_FEATURES)) {
            fprintf(stderr, "fm_pi: %s line %lu: expected %u numbers\n", name, line, (unsigned)FM_N_FEATURES);
            return 2;
        }
        if (n == 0) {
            continue;
        }
        if (predict_print(x, rows++, quiet) != 0) {
            return 1;
        }
        if (*n_kept < cap) {
            memcpy(store + (size_t)*n_kept * FM_N_FEATURES, x, sizeof x);
            ++*n_kept;
        }
    }
    return 0;
}

static int workload(const row_set *rs, unsigned long repeat, double seconds, const char *gpio)
{
    fm_gpio_marker marker;
    unsigned long done = 0, n;
    volatile int32_t sink = 0;
    double t0, elapsed;
    fm_result r;
    uint32_t i;
    if (rs->n_rows == 0) {
        fprintf(stderr, "fm_pi: no rows for the workload\n");
        return 2;
    }
    if (fm_gpio_open(&marker, gpio) != 0) {
        return 2;
    }
    fm_gpio_set(&marker, 1);
    t0 = now_s();
    for (n = 0;; ++n) {
        if (repeat > 0 ? n >= repeat : (n > 0 && now_s() - t0 >= seconds)) {
            break;
        }
        for (i = 0; i < rs->n_rows; ++i) {
            /* a failed prediction leaves out unspecified (code form): count it as label -1 */
            int rc = FM_PREDICT_VEC(rs->rows + (size_t)i * FM_N_FEATURES, FM_N_FEATURES, &r);
            sink += FM_ANSWERED(rc) ? r.label : -1;
        }
        done += rs->n_rows;
    }
    elapsed = now_s() - t0;
    fm_gpio_set(&marker, 0);
    fm_gpio_close(&marker);
    printf("{\"predictions\": %lu, \"seconds\": %.6f}\n", done, elapsed);
    (void)sink;
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: fm_pi [-q] [-n REPEAT | -s SECONDS] [-g CHIP:LINE] [FILE | -]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static float store[FM_MAX_ROWS * FM_N_FEATURES];
    unsigned long repeat = 0;
    double seconds = 0.0;
    const char *gpio = NULL, *path = NULL;
    int quiet = 0, rc = 0, i;
    row_set rs = {NULL, 0};

    for (i = 1; i < argc; ++i) {
        char *end;
        if (strcmp(argv[i], "-q") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            repeat = strtoul(argv[++i], &end, 10);
            if (*end != '\0' || repeat == 0) {
                return usage();
            }
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            seconds = strtod(argv[++i], &end);
            if (*end != '\0' || !(seconds > 0.0)) {
                return usage();
            }
        } else if (strcmp(argv[i], "-g") == 0 && i + 1 < argc) {
            gpio = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return usage();
        } else if (path == NULL) {
            path = argv[i];
        } else {
            return usage();
        }
    }

    if (path != NULL) {
        FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
        if (in == NULL) {
            fprintf(stderr, "fm_pi: cannot open %s: %s\n", path, strerror(errno));
            return 2;
        }
        rc = run_stream(in, path, quiet, store, FM_MAX_ROWS, &rs.n_rows);
        rs.rows = store;
        if (in != stdin) {
            fclose(in);
        }
    } else {
#ifdef FM_N_ROWS
        uint32_t r;
        for (r = 0; r < FM_N_ROWS && rc == 0; ++r) {
            rc = predict_print(FM_ROWS[r], r, quiet);
        }
        rs.rows = &FM_ROWS[0][0];
        rs.n_rows = FM_N_ROWS;
#else
        fprintf(stderr, "fm_pi: the header has no embedded rows (export-c --embed); give FILE or -\n");
        return 2;
#endif
    }
    if (rc == 0 && (repeat > 0 || seconds > 0.0)) {
        fflush(stdout);
        rc = workload(&rs, repeat, seconds, gpio);
    } else if (rc == 0 && gpio != NULL) {
        fprintf(stderr, "fm_pi: -g needs a workload (-n or -s)\n");
        rc = 2;
    }
    return rc;
}
