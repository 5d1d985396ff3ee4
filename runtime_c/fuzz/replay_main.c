/*
 * Replay driver: runs a harness's LLVMFuzzerTestOneInput once on each file
 * named on the command line, without libFuzzer. Linked with any compiler
 * (gcc or clang, sanitizers or --coverage / -fprofile-instr-generate), it
 * replays the committed corpora and crash inputs in `make test`, and gives
 * the coverage build of `make fuzz-cov` (see the Makefile).
 *
 * Usage: replay_NAME FILE...   exit 0 when every file ran (a broken
 * invariant aborts, as under libFuzzer); exit 2 when a file cannot be read.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FZ_REPLAY_MAX (1u << 20) /* libFuzzer's default -max_len is far below this */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, uint8_t *buf)
{
    size_t n;
    int err;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 2;
    }
    n = fread(buf, 1, FZ_REPLAY_MAX, f);
    err = ferror(f) || (n == FZ_REPLAY_MAX && fgetc(f) != EOF);
    fclose(f);
    if (err) {
        fprintf(stderr, "replay: cannot read %s (error or longer than %u bytes)\n", path, FZ_REPLAY_MAX);
        return 2;
    }
    (void)LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

int main(int argc, char **argv)
{
    static uint8_t buf[FZ_REPLAY_MAX];
    int i;
    for (i = 1; i < argc; ++i) {
        if (replay_file(argv[i], buf) != 0) {
            return 2;
        }
    }
    fprintf(stderr, "replay: %d input(s) ran\n", argc - 1);
    return 0;
}
