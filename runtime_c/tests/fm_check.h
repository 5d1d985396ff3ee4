/* What every runtime_c unit test program shares: CHECK(cond) reports a failed check with its place and
 * counts it; fm_check_done(name) prints the verdict ("NAME: all checks passed", or the failure count on
 * stderr) and gives main's exit status; fm_check_verdict(name, passed) the same with another pass line. */
#ifndef FM_CHECK_H
#define FM_CHECK_H

#include <stdio.h>

static int failures = 0;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                               \
        }                                                                             \
    } while (0)

static inline int fm_check_verdict(const char *name, const char *passed)
{
    if (failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, failures);
        return 1;
    }
    printf("%s: %s\n", name, passed);
    return 0;
}

static inline int fm_check_done(const char *name)
{
    return fm_check_verdict(name, "all checks passed");
}

#endif /* FM_CHECK_H */
