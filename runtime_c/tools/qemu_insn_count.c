/*
 * Instruction-counting plugin for QEMU's TCG plugin API, version 1 (QEMU 7.x).
 * Debian ships the API in its QEMU binaries but no header, so the few
 * declarations used are written out below from the API's documented
 * signatures. Counts every guest instruction executed (inline add per
 * translated block, so counts repeat exactly) and writes the total to the
 * file named by the argument out=PATH (default: stderr) when QEMU exits.
 *
 *   qemu-system-arm ... -plugin runtime_c/build/qemu_insn_count.so,out=/tmp/n
 *
 * With mark=HEXADDR (a function's address, e.g. fm_profile_mark of
 * tools/fm_feat_profile.c, Thumb bit ignored), it also writes the running
 * count each time the instruction at that address executes, one line
 * "mark N" each, in order: the difference of two marks is what ran between
 * them (plus a constant, the mark's own block, that cancels in differences
 * of differences; the profile subtracts an empty measurement).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);

static uint64_t insns;   /* one guest CPU in the machines used: a plain counter */
static char out_path[4096];
static int written;
#define MAX_MARKS 65536
static uint64_t mark_addr; /* 0: no marks */
static uint64_t marks[MAX_MARKS];
static size_t n_marks, lost_marks;

static void on_mark(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    (void)userdata;
    if (n_marks < MAX_MARKS) {
        marks[n_marks++] = insns;
    } else {
        ++lost_marks;
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t i, n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, (uint64_t)n);
    for (i = 0; mark_addr != 0u && i < n; ++i) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if ((qemu_plugin_insn_vaddr(insn) & ~(uint64_t)1) == mark_addr) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
        }
    }
}

static void report(void)
{
    FILE *f;
    if (written) {
        return;
    }
    written = 1;
    f = out_path[0] != '\0' ? fopen(out_path, "w") : stderr;
    if (f == NULL) {
        fprintf(stderr, "qemu_insn_count: cannot write %s\n", out_path);
        return;
    }
    fprintf(f, "insns %llu\n", (unsigned long long)insns);
    {
        size_t i;
        for (i = 0; i < n_marks; ++i) {
            fprintf(f, "mark %llu\n", (unsigned long long)marks[i]);
        }
        if (lost_marks != 0u) {
            fprintf(f, "lost_marks %llu\n", (unsigned long long)lost_marks);
        }
    }
    if (f != stderr) {
        fclose(f);
    }
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    report();
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    int i;
    (void)info;
    for (i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "out=", 4) == 0 && strlen(argv[i] + 4) < sizeof out_path) {
            strcpy(out_path, argv[i] + 4);
        } else if (strncmp(argv[i], "mark=", 5) == 0) {
            mark_addr = strtoull(argv[i] + 5, NULL, 16) & ~(uint64_t)1;
        } else {
            fprintf(stderr, "qemu_insn_count: unknown argument '%s' (use out=PATH, mark=HEXADDR)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    atexit(report); /* semihosting exit() may not run the plugin's atexit callbacks */
    return 0;
}
