#!/usr/bin/env bash
# Installs the cross compilers, QEMU and valgrind the firmware and C tests use,
# when missing. Never fails the build: tests that need a missing tool skip
# with the reason.
set -u
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have aarch64-linux-gnu-gcc || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
have arm-linux-gnueabihf-gcc || need+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
have qemu-aarch64 || need+=(qemu-user)
have arm-none-eabi-gcc || need+=(gcc-arm-none-eabi libnewlib-arm-none-eabi)
have arm-none-eabi-g++ || need+=(libstdc++-arm-none-eabi-newlib)
have qemu-system-arm || need+=(qemu-system-arm)
have valgrind || need+=(valgrind)
have clang || need+=(clang)
have sigrok-cli || need+=(sigrok-cli)
# libFuzzer and the sanitizer runtimes of clang (runtime_c/fuzz); Debian ships them apart from clang
fuzzer_links() {
  have clang && printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    | clang -x c -fsanitize=fuzzer,address,undefined - -o /dev/null >/dev/null 2>&1
}
if ! fuzzer_links; then
  v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  need+=("libclang-rt-${v:-14}-dev")
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! have apt-get; then
  echo "toolchains: missing ${need[*]} and cannot install (not root or no apt-get); those tests will skip"
  exit 0
fi
echo "toolchains: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
(apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null) \
  || echo "toolchains: install failed; the tests that need them will skip"
exit 0
