# schedbench -- one Makefile over the fixed layout.
#
#   make                 build every variant: build/<v>/libbthread.a, bthread.pc, bench
#   make test            build and run every test on every variant (+ aarch64 under qemu)
#   make run             the default sweep, its simulated companions, the performance
#                        targets (./run.py run --sim epyc16,twosocket64 --targets)
#   make map             the policy map: which policy wins where, measured at 1-2 workers and
#                        SIMULATED on the machine models (./run.py map --jobs $(MAP_JOBS))
#   make list-variants   the variants the build finds (variants/*/variant.h)
#   make list-workloads  the workloads the build finds (workloads/*.c)
#   make hooks V=<v>     every policy hook as variant <v> resolves it
#   make soak            minutes of mixed load on every variant (tests/c/soak.c; not in test)
#   CC=clang, SANITIZE=address|thread  select the compiler / a sanitizer build
#   ARCH=aarch64         cross-build everything for AArch64 into build-aarch64/ (also
#                        chosen by CC=aarch64-linux-gnu-gcc); its tests run under qemu-user
#   make test-aarch64-all  every aarch64 test, all variants (make test runs a subset)
#
# Variants and workloads are found by wildcard: adding variants/<name>/variant.h adds a
# variant everywhere (build, tests, run.py) with no list edited by hand.

CC       ?= cc
CXX      ?= c++
ifeq ($(CC),clang)
CXX      := clang++
endif
SANITIZE ?=
PYTHON   ?= /usr/bin/python3
PKG_CONFIG ?= pkg-config

# --- the target architecture ---------------------------------------------------------
# ARCH=aarch64 on an x86-64 host (or CC=aarch64-linux-gnu-gcc, which implies it) builds
# with the Debian cross compilers, the arm64 pkg-config and Debian's arm64 libraries
# (multiarch: /usr/lib/aarch64-linux-gnu, installed by .ci/install-deps), and runs what
# it built under qemu-user: $(EMU) prefixes every command that runs a product.
# CC=clang works too (clang --target=aarch64-linux-gnu, into build-clang-aarch64/).
HOST_ARCH := $(shell uname -m)
# qemu-user runs aarch64 binaries without binfmt_misc (here and in asm/rules.mk).  They
# find their loader, /lib/ld-linux-aarch64.so.1, and their libraries in the arm64
# multiarch packages (libc6:arm64 and the rest, in /lib and /usr/lib/aarch64-linux-gnu,
# where that loader looks by default): -L / tells qemu to look up the loader and every
# file the program opens in the host's own tree.  One prefix for every aarch64 run:
# with -L /usr/aarch64-linux-gnu (the cross toolchain's sysroot) the sysroot's loader
# would find the multiarch libc.so.6 of another glibc build and can hang (it did, in
# unit_fcontext's fork-and-_exit check).
QEMU_AARCH64 ?= qemu-aarch64
AARCH64_LD_PREFIX ?= /
ifneq ($(filter aarch64-linux-gnu-%,$(notdir $(firstword $(CC)))),)
ARCH     ?= aarch64
endif
ARCH     ?= $(HOST_ARCH)
ifeq ($(ARCH),$(HOST_ARCH))
CROSS    :=
EMU      :=
else ifeq ($(ARCH),aarch64)
CROSS    := aarch64-linux-gnu
ifneq ($(SANITIZE),)
$(error SANITIZE=$(SANITIZE) with ARCH=aarch64: the sanitizers do not run under qemu-user; use a native build)
endif
ifneq ($(filter clang%,$(notdir $(firstword $(CC)))),)
override CC := clang --target=$(CROSS)
CXX      := clang++ --target=$(CROSS)
else
ifeq ($(origin CC),default)
CC       := $(CROSS)-gcc
endif
CXX      := $(CROSS)-g++
endif
PKG_CONFIG := $(CROSS)-pkg-config
AR       := $(CROSS)-ar
# QEMU_TIMEOUT_FACTOR scales every test's .timeout (SBTEST_TIMEOUT_FACTOR, see
# tests/rules.mk; emulation runs them about 5x slower here).
EMU      := $(QEMU_AARCH64) -L $(AARCH64_LD_PREFIX)
QEMU_TIMEOUT_FACTOR ?= 5
else
$(error ARCH=$(ARCH): the build knows the host's own ($(HOST_ARCH)) and aarch64)
endif

VARIANTS  := $(sort $(patsubst variants/%/variant.h,%,$(wildcard variants/*/variant.h)))
WORKLOADS := $(sort $(patsubst workloads/%.c,%,$(filter-out workloads/workload.c,$(wildcard workloads/*.c))))

# gcc builds go to build/, others to build-<compiler>[-<arch>][-<sanitizer>]/ (gcc for
# aarch64: build-aarch64/), so they never mix.
COMPILER := $(if $(filter clang%,$(notdir $(firstword $(CC)))),clang,)
BUILD    ?= build$(if $(COMPILER),-$(COMPILER))$(if $(CROSS),-$(ARCH))$(if $(SANITIZE),-$(SANITIZE))
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer)

OPT      ?= -O2
WARN     := -Wall -Wextra -Werror
# A frame larger than a stack's guard page could jump it and land in the stack below:
# where the compiler can, it probes every page of a large frame (README: Stacks).  A
# compile probe decides, so a compiler without the flag still builds.
# On aarch64, gcc assumes a 64 KiB guard unless told the real one (4 KiB: 2^12), and
# would probe only every 64 KiB.  SB_STACK_CLASH_PROTECTION tells the tests it is on.
CLASH_FLAGS := -fstack-clash-protection $(if $(filter aarch64,$(ARCH)),--param stack-clash-protection-guard-size=12)
CLASH    := $(shell echo 'int x;' | $(CC) $(CLASH_FLAGS) -Werror -x c -c - -o /dev/null 2>/dev/null && echo $(CLASH_FLAGS) -DSB_STACK_CLASH_PROTECTION)
CPPFLAGS += -D_GNU_SOURCE -Iasm -Icommon -Iworkloads -Iharness/bench -Iharness
CFLAGS   := -std=gnu11 $(OPT) -g $(WARN) -pthread $(CLASH) $(SANFLAGS) $(EXTRA_CFLAGS)
CXXFLAGS := -std=c++17 $(OPT) -g $(WARN) -pthread $(CLASH) $(SANFLAGS) $(EXTRA_CFLAGS)
# `make bundle` links its copy of the binaries (BUNDLE=1, into build-bundle/) with an
# rpath that finds the shared libraries shipped beside them (build/lib/ of the bundle:
# ../lib from build/<v>/bench, ../../lib from build/ref/<r>/bench); DT_RPATH, not
# RUNPATH, so that it also serves the libraries' own dependencies.
ifdef BUNDLE
LINK_RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../lib:$$ORIGIN/../../lib'
endif
LDLIBS   := -pthread -lhwloc -lm $(SANFLAGS) $(LINK_RPATH)

.PHONY: all test run list-variants list-workloads clean
all:

list-variants:
	@for v in $(VARIANTS); do echo $$v; done
# make hooks V=<variant>: every hook of common/policy.h as that variant resolves it
.PHONY: hooks
hooks:
	@$(if $(V),CC='$(CC)' $(PYTHON) -m harness.driver.hooks $(V),echo "usage: make hooks V=<variant> (make list-variants)"; exit 2)
list-workloads:
	@for w in $(WORKLOADS); do echo $$w; done

# --- the context switch (asm/) ------------------------------------------------------
ASM_OBJ := $(BUILD)/asm/fcontext.o
$(ASM_OBJ): asm/fcontext.S $(wildcard asm/*.S asm/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SANFLAGS) -c $< -o $@

# --- one library per variant ---------------------------------------------------------
COMMON_SRCS := $(wildcard common/*.c)
COMMON_HDRS := $(wildcard common/*.h asm/*.h)

# $(1) = variant name
define VARIANT_RULES
$(BUILD)/$(1)/obj/%.o: common/%.c $(COMMON_HDRS) variants/$(1)/variant.h $(wildcard variants/$(1)/*.h)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) -Ivariants/$(1) -DVARIANT_NAME='"$(1)"' $$(CFLAGS) -c $$< -o $$@

$(BUILD)/$(1)/libbthread.a: $(patsubst common/%.c,$(BUILD)/$(1)/obj/%.o,$(COMMON_SRCS)) $(ASM_OBJ)
	rm -f $$@
	$(AR) rcs $$@ $$^

$(BUILD)/$(1)/bthread.pc: Makefile
	@mkdir -p $$(@D)
	@printf 'prefix=%s\nName: bthread-$(1)\nDescription: schedbench bthread, variant $(1)\nVersion: 0.1\nCflags: -I$$$${prefix}/common -pthread\nLibs: $$$${prefix}/$(BUILD)/$(1)/libbthread.a -pthread -lhwloc -lm\n' "$$(CURDIR)" > $$@

all: $(BUILD)/$(1)/libbthread.a $(BUILD)/$(1)/bthread.pc
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_RULES,$(v))))

# Each folder that builds more (asm tests, harness, tests) keeps its rules beside its
# sources.  The workloads have none of their own: harness/bench/rules.mk links them into each
# bench and tests/rules.mk into each test.  `include`, not `-include`: a missing file is
# an error, never a silently smaller build.
include asm/rules.mk harness/bench/rules.mk harness/ref/rules.mk harness/ref/go/rules.mk \
        harness/sim/rules.mk tests/rules.mk

run: all refs sim
	$(PYTHON) run.py run --sim epyc16,twosocket64 --targets

# the policy map (harness/driver/policymap.py): the measured part alone on this machine,
# then the SIMULATED part MAP_JOBS at once; MAP_ARGS for more (--engine dask --scheduler ...)
MAP_JOBS ?= 2
.PHONY: map
map: all refs sim
	$(PYTHON) run.py map --jobs $(MAP_JOBS) $(MAP_ARGS)

# --- make bundle: one archive to measure on another Linux machine (harness/driver/bundle.py)
# ARCH=aarch64 makes the aarch64 flavour (the variants' benches; the reference rows are
# not built for aarch64): its libraries are listed by the aarch64 loader under qemu.
BUNDLE_BUILD := build-bundle$(if $(CROSS),-$(ARCH))
BUNDLE_OUT ?= build/schedbench-bundle-$(ARCH).tar.gz
BUNDLE_LDD := $(if $(CROSS),$(EMU) /lib/ld-linux-aarch64.so.1 --list,ldd)
.PHONY: bundle
bundle:
	$(MAKE) --no-print-directory BUNDLE=1 ARCH=$(ARCH) BUILD=$(BUNDLE_BUILD) all $(if $(CROSS),,refs)
	$(PYTHON) -m harness.driver.bundle --build $(BUNDLE_BUILD) --out $(BUNDLE_OUT) \
	  --arch $(ARCH) --ldd '$(BUNDLE_LDD)' $(if $(CROSS),--no-references) \
	  --compiler "$$($(CC) --version | head -1)"
# the archive unpacked into a fresh directory, a tiny sweep from there (tests/bundle_smoke.sh;
# the aarch64 flavour: its benches run under qemu-user from there, see the script)
.PHONY: bundle-smoke
bundle-smoke: bundle
	$(if $(CROSS),SB_EMU='$(EMU)') sh tests/bundle_smoke.sh $(BUNDLE_OUT)

clean:
	rm -rf build build-*
