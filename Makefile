# schedbench -- one Makefile over the fixed layout.
#
#   make                 build every variant: build/<v>/libbthread.a, bthread.pc, bench
#   make test            build and run every test on every variant (+ aarch64 under qemu)
#   make run             the default sweep (./run.py run)
#   make list-variants   the variants the build finds (variants/*/variant.h)
#   make list-workloads  the workloads the build finds (workloads/*.c)
#   make soak            minutes of mixed load on every variant (tests/c/soak.c; not in test)
#   CC=clang, SANITIZE=address|thread  select the compiler / a sanitizer build
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

VARIANTS  := $(sort $(patsubst variants/%/variant.h,%,$(wildcard variants/*/variant.h)))
WORKLOADS := $(sort $(patsubst workloads/%.c,%,$(filter-out workloads/workload.c,$(wildcard workloads/*.c))))

# gcc builds go to build/, others to build-<compiler>[-<sanitizer>]/, so they never mix.
COMPILER := $(if $(filter clang%,$(notdir $(CC))),clang,)
BUILD    ?= build$(if $(COMPILER),-$(COMPILER))$(if $(SANITIZE),-$(SANITIZE))
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer)

OPT      ?= -O2
WARN     := -Wall -Wextra -Werror
# A frame larger than a stack's guard page could jump it and land in the stack below:
# where the compiler can, it probes every page of a large frame (README: Stacks).  A
# compile probe decides, so a compiler without the flag still builds.
CLASH    := $(shell echo 'int x;' | $(CC) -fstack-clash-protection -Werror -x c -c - -o /dev/null 2>/dev/null && echo -fstack-clash-protection)
CPPFLAGS += -D_GNU_SOURCE -Iasm -Icommon -Iworkloads -Iharness
CFLAGS   := -std=gnu11 $(OPT) -g $(WARN) -pthread $(CLASH) $(SANFLAGS) $(EXTRA_CFLAGS)
CXXFLAGS := -std=c++17 $(OPT) -g $(WARN) -pthread $(CLASH) $(SANFLAGS) $(EXTRA_CFLAGS)
LDLIBS   := -pthread -lhwloc -lm $(SANFLAGS)

.PHONY: all test run list-variants list-workloads clean
all:

list-variants:
	@for v in $(VARIANTS); do echo $$v; done
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
	ar rcs $$@ $$^

$(BUILD)/$(1)/bthread.pc: Makefile
	@mkdir -p $$(@D)
	@printf 'prefix=%s\nName: bthread-$(1)\nDescription: schedbench bthread, variant $(1)\nVersion: 0.1\nCflags: -I$$$${prefix}/common -pthread\nLibs: $$$${prefix}/$(BUILD)/$(1)/libbthread.a -pthread -lhwloc -lm\n' "$$(CURDIR)" > $$@

all: $(BUILD)/$(1)/libbthread.a $(BUILD)/$(1)/bthread.pc
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_RULES,$(v))))

# Each folder that builds more (asm tests, harness, workloads, tests) keeps its rules
# beside its sources.
-include asm/rules.mk harness/rules.mk workloads/rules.mk tests/rules.mk

run: all refs
	$(PYTHON) run.py run

clean:
	rm -rf build build-*
