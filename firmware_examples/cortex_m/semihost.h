/*
 * ARM semihosting (bkpt 0xAB on M-profile): console output and exit code.
 * Works under QEMU (-semihosting-config enable=on) and through a debug probe
 * (OpenOCD "arm semihosting enable"); on a free-running board without a
 * debugger attached, bkpt faults, so keep semihosting to test builds.
 */
#ifndef FM_SEMIHOST_H
#define FM_SEMIHOST_H

#include <stdint.h>

/* Writes a NUL-terminated string to the host console. */
void sh_write0(const char *s);

/* Ends the program; the host (QEMU) exits with status `code`. Never returns. */
void sh_exit(int code);

#endif /* FM_SEMIHOST_H */
