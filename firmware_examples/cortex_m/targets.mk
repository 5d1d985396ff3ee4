# CPU flags, default QEMU machine and linker memory map per TARGET (shared by
# the cortex_m and arduino Makefiles). In: TARGET, optional MACHINE. Out: CPU, MACHINE, LDMAP.
ifeq ($(TARGET),cortex-m0)
  CPU := -mcpu=cortex-m0 -mthumb -mfloat-abi=soft
  MACHINE ?= microbit
else ifeq ($(TARGET),cortex-m3)
  CPU := -mcpu=cortex-m3 -mthumb -mfloat-abi=soft
  MACHINE ?= mps2-an385
else ifeq ($(TARGET),cortex-m4f)
  CPU := -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
  MACHINE ?= mps2-an386
else ifeq ($(TARGET),cortex-m33)
  CPU := -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard
  MACHINE ?= mps2-an505
else
  $(error unknown TARGET '$(TARGET)': use cortex-m0, cortex-m3, cortex-m4f or cortex-m33)
endif

# Linker memory map per QEMU machine (FLASH/RAM origins and sizes).
LD_mps2-an385 := mps2
LD_mps2-an386 := mps2
LD_mps2-an500 := mps2
LD_mps2-an505 := an505
LD_microbit := microbit
LD_lm3s6965evb := lm3s6965evb
LDMAP := $(LD_$(MACHINE))
ifeq ($(LDMAP),)
  $(error no memory map for MACHINE '$(MACHINE)' (known: mps2-an385 mps2-an386 mps2-an500 mps2-an505 microbit lm3s6965evb))
endif

