# asm/rules.mk -- the context switch on the architecture the host cannot run natively.
#
#   make test-asm-cross   the context-switch test, tests/c/unit_fcontext.c, built for
#                         AArch64 (a sub-make with ARCH=aarch64, into its build tree) and
#                         run under qemu-user.  `make test` runs the same test as part of
#                         test-aarch64's test-unit.
#
# The host's own switch (build/asm/fcontext.o) is built by the root Makefile and tested by
# the same tests/c/unit_fcontext.c, whose register checks have one section per
# architecture.  With CC=clang the sub-make uses clang --target=aarch64 (so both
# compilers' assemblers see the AArch64 files).  SANITIZE does not apply here: the cross
# build is plain.  It runs with the loader and C library of the arm64 multiarch packages
# (qemu-aarch64 -L $(AARCH64_LD_PREFIX), the one prefix of every aarch64 run; see the
# root Makefile).  Missing tools are an error, never a skip: the README's test command
# installs them.

AARCH64_GCC     ?= aarch64-linux-gnu-gcc
QEMU_AARCH64    ?= qemu-aarch64
AARCH64_LD_PREFIX ?= /

.PHONY: test-asm-cross asm-cross-tools

# Fails, naming the Debian package, when a tool the cross test needs is missing.
asm-cross-tools:
	@command -v $(AARCH64_GCC) >/dev/null 2>&1 || { echo "test-asm-cross: '$(AARCH64_GCC)' not found: apt-get install gcc-aarch64-linux-gnu (the README's test command installs it)" >&2; exit 1; }
	@test -e $(AARCH64_LD_PREFIX)/lib/ld-linux-aarch64.so.1 || { echo "test-asm-cross: no AArch64 C library under $(AARCH64_LD_PREFIX): dpkg --add-architecture arm64 && apt-get install libc6:arm64 (the README's test command does both)" >&2; exit 1; }
	@command -v $(QEMU_AARCH64) >/dev/null 2>&1 || { echo "test-asm-cross: '$(QEMU_AARCH64)' not found: apt-get install qemu-user (the README's test command installs it)" >&2; exit 1; }

ifeq ($(CROSS),)
test-asm-cross: | asm-cross-tools
	$(MAKE) --no-print-directory ARCH=aarch64 SANITIZE= BUILD=build$(if $(COMPILER),-$(COMPILER))-aarch64 test-unit-fcontext
else
test-asm-cross: test-unit-fcontext
endif
