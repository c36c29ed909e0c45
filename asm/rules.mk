# asm/rules.mk -- the context switch on the architecture the host cannot run natively.
#
#   make test-asm-cross   cross-compile asm/fcontext.S for AArch64 together with
#                         tests/asm_cross/abi_arm64.c into $(BUILD)/aarch64/, and run the
#                         ABI test under qemu-user. Part of `make test`.
#
# The host's own switch (build/asm/fcontext.o) is built by the root Makefile and tested by
# tests/c/unit_fcontext.c. With CC=clang the cross build uses clang --target=aarch64 (so
# both compilers' assemblers see the AArch64 files); either way it links against the
# gcc cross toolchain's sysroot. SANITIZE does not apply here: the cross build is plain.
# It runs with the loader and C library of the arm64 multiarch packages (qemu-aarch64
# -L $(AARCH64_LD_PREFIX), the one prefix of every aarch64 run; see the root Makefile).
# Missing tools are an error, never a skip: the README's test command installs them.

AARCH64_GCC     ?= aarch64-linux-gnu-gcc
QEMU_AARCH64    ?= qemu-aarch64
AARCH64_LD_PREFIX ?= /
ifneq ($(findstring clang,$(CC)),)
AARCH64_CC      ?= $(CC) --target=aarch64-linux-gnu
else
AARCH64_CC      ?= $(AARCH64_GCC)
endif
AARCH64_CFLAGS  := -std=gnu11 $(OPT) -g $(WARN) -D_GNU_SOURCE -Iasm
A64             := $(BUILD)/aarch64

.PHONY: test-asm-cross asm-cross-tools

# Fails, naming the Debian package, when a tool the cross test needs is missing.
asm-cross-tools:
	@command -v $(AARCH64_GCC) >/dev/null 2>&1 || { echo "test-asm-cross: '$(AARCH64_GCC)' not found: apt-get install gcc-aarch64-linux-gnu (the README's test command installs it)" >&2; exit 1; }
	@test -e $(AARCH64_LD_PREFIX)/lib/ld-linux-aarch64.so.1 || { echo "test-asm-cross: no AArch64 C library under $(AARCH64_LD_PREFIX): dpkg --add-architecture arm64 && apt-get install libc6:arm64 (the README's test command does both)" >&2; exit 1; }
	@command -v $(QEMU_AARCH64) >/dev/null 2>&1 || { echo "test-asm-cross: '$(QEMU_AARCH64)' not found: apt-get install qemu-user (the README's test command installs it)" >&2; exit 1; }

$(A64)/fcontext.o: asm/fcontext.S $(wildcard asm/*.S asm/*.h) | asm-cross-tools
	@mkdir -p $(@D)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -c $< -o $@

$(A64)/abi_arm64: tests/asm_cross/abi_arm64.c asm/fcontext.h $(A64)/fcontext.o | asm-cross-tools
	@mkdir -p $(@D)
	$(AARCH64_CC) $(AARCH64_CFLAGS) $< $(A64)/fcontext.o -o $@

test-asm-cross: $(A64)/abi_arm64 | asm-cross-tools
	@echo "== $< (qemu-aarch64)"
	$(QEMU_AARCH64) -L $(AARCH64_LD_PREFIX) $<
