#include "semihost.h"

#define SYS_WRITE0 0x04u
#define SYS_EXIT 0x18u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static uint32_t sh_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void sh_write0(const char *s)
{
    (void)sh_call(SYS_WRITE0, s);
}

void sh_exit(int code)
{
    /* SYS_EXIT_EXTENDED passes the full exit code; SYS_EXIT on M-profile
     * only says "success" (the fallback if the host lacks the extension). */
    const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    (void)sh_call(SYS_EXIT_EXTENDED, block);
    (void)sh_call(SYS_EXIT, (const void *)(uintptr_t)ADP_STOPPED_APPLICATION_EXIT);
    for (;;) {
    }
}
