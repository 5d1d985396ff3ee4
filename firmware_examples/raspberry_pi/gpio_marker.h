/*
 * Optional GPIO phase marker (libgpiod 1.x, as in Raspberry Pi OS bookworm):
 * a line driven high while the workload runs lets a scope or a logging meter
 * align the measured current with the prediction phase. Built with
 * -DFM_GPIOD and -lgpiod (make GPIO=1); without it, asking for a marker is
 * an error and no marker is a no-op.
 */
#ifndef FM_GPIO_MARKER_H
#define FM_GPIO_MARKER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FM_GPIOD
#include <gpiod.h>
#endif

typedef struct {
#ifdef FM_GPIOD
    struct gpiod_chip *chip;
    struct gpiod_line *line;
#endif
    int active;
} fm_gpio_marker;

/* spec "CHIP:LINE" (e.g. "gpiochip0:17") or NULL for no marker; 0 on success. */
static int fm_gpio_open(fm_gpio_marker *g, const char *spec)
{
    memset(g, 0, sizeof *g);
    if (spec == NULL) {
        return 0;
    }
#ifdef FM_GPIOD
    {
        char chip[64];
        const char *colon = strchr(spec, ':');
        char *end;
        unsigned long offset;
        size_t n = colon ? (size_t)(colon - spec) : 0;
        if (colon == NULL || n == 0 || n >= sizeof chip) {
            fprintf(stderr, "fm_pi: -g wants CHIP:LINE, e.g. gpiochip0:17\n");
            return 1;
        }
        memcpy(chip, spec, n);
        chip[n] = '\0';
        offset = strtoul(colon + 1, &end, 10);
        if (*end != '\0') {
            fprintf(stderr, "fm_pi: bad GPIO line number in %s\n", spec);
            return 1;
        }
        g->chip = gpiod_chip_open_lookup(chip);
        g->line = g->chip ? gpiod_chip_get_line(g->chip, (unsigned)offset) : NULL;
        if (g->line == NULL || gpiod_line_request_output(g->line, "frugalml", 0) != 0) {
            fprintf(stderr, "fm_pi: cannot drive GPIO %s\n", spec);
            if (g->chip) {
                gpiod_chip_close(g->chip);
            }
            return 1;
        }
        g->active = 1;
        return 0;
    }
#else
    fprintf(stderr, "fm_pi: built without libgpiod (make GPIO=1); cannot drive %s\n", spec);
    return 1;
#endif
}

static void fm_gpio_set(fm_gpio_marker *g, int value)
{
#ifdef FM_GPIOD
    if (g->active) {
        (void)gpiod_line_set_value(g->line, value);
    }
#else
    (void)g;
    (void)value;
#endif
}

static void fm_gpio_close(fm_gpio_marker *g)
{
#ifdef FM_GPIOD
    if (g->active) {
        gpiod_line_release(g->line);
        gpiod_chip_close(g->chip);
    }
#endif
    g->active = 0;
}

#endif /* FM_GPIO_MARKER_H */
