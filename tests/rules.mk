# tests/rules.mk -- C tests (Criterion) and Python tests (pytest).
#
#   tests/c/unit_*.c   variant-independent (context switch, stacks): built once, against
#                      the first variant's library (only the objects they use are linked)
#   tests/c/test_*.c   scheduler, sync, workloads: built and run once per variant
#   tests/py/test_*.py the Python tests (pytest): one file per module of harness/driver
#                      (run.py), benchjson, refcheck, targets, and the docs check
#
# Every Criterion test carries its own .timeout; the runner adds --jobs 1 so that tests
# with their own worker threads do not compete on this 2-core machine.  Every binary
# runs even after one fails; the target fails at the end if any did.
#
# SANITIZE=thread: Criterion cannot start under TSan (Snaipe/Criterion#274), so the same
# sources build on Check instead: tests/c/check_compat holds a criterion/*.h that maps
# Criterion's API onto Check, first on the include path, and runner.c, the main().
# Each test runs in its own process; a race report ends it with status 66
# (halt_on_error=1), which fails that test.  handle_segv=0 lets the guard-page death
# tests die of SIGSEGV as they expect; atexit_sleep_ms=100 (TSan's default is 1000, in
# every test process that has threads) keeps ~100 test processes from idling 100 s.
# TSAN_OPTIONS from the environment come last, so they win.  TSAN_STRESS_ITEMS scales
# unit_wsq's 10^7-item stress (its SB_STRESS_ITEMS).
#
# ARCH=aarch64 (the cross build, see the root Makefile): the tests build on Check too,
# and run under qemu-user ($(EMU)).  Criterion is not an option there: Debian 12's
# libcriterion3:arm64 cannot be installed beside the amd64 one (their libnanomsg5
# versions differ), and Criterion's sandbox cannot start a test under qemu-user
# ("Could not spawn test instance").  Emulation runs the tests several times slower,
# so QEMU_TIMEOUT_FACTOR (one number, default in the root Makefile) becomes Check's
# CK_TIMEOUT_MULTIPLIER, which scales every test's .timeout; QEMU_STRESS_ITEMS scales
# the 10^7-item stress tests as TSAN_STRESS_ITEMS does.
#
# On an x86-64 host, `make test` also runs test-aarch64: a sub-make with ARCH=aarch64
# that builds every variant's products for aarch64 and runs the unit tests, the
# check_compat selftest and the variant tests of $(AARCH64_TEST_VARIANTS) under qemu.
# make test-aarch64-all runs every aarch64 test: all variants, bench-smoke, test-shim.
#
# Sanitizer reports (TSan, ASan) go to $(BUILD)/sanitizer-logs/<variant>-<test>.<pid>,
# never into the source tree: every test binary runs through tests/run_test.sh, which
# sets log_path and prints every report a binary wrote once it ends, so CI output still
# shows them.  (check_compat's selftest keeps its deliberate race report on stderr,
# where selftest.sh looks for it.)

SANLOG_DIR := $(if $(SANITIZE),$(abspath $(BUILD))/sanitizer-logs)
RUN_TEST := SANLOG_DIR=$(SANLOG_DIR) EMU='$(EMU)' sh tests/run_test.sh

CRITERION_LIBS := $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null || echo -lcriterion)
CHECK_LIBS     := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck)
COMPAT_OBJ     := $(BUILD)/tests/check_compat_runner.o
COMPAT_SELFTEST := $(BUILD)/tests/check_compat_selftest
ifeq ($(SANITIZE),thread)
TSAN_STRESS_ITEMS ?= 1000000
TEST_FW_CPPFLAGS := -Itests/c/check_compat
TEST_FW_OBJ      := $(COMPAT_OBJ)
TEST_FW_LIBS     := $(COMPAT_OBJ) $(CHECK_LIBS)
TEST_FW_ENV      := TSAN_OPTIONS="halt_on_error=1 handle_segv=0 second_deadlock_stack=1 atexit_sleep_ms=100 $$TSAN_OPTIONS" \
                    SB_STRESS_ITEMS=$(TSAN_STRESS_ITEMS)
TEST_FW_NOTE     := (TSan, on Check: SB_STRESS_ITEMS=$(TSAN_STRESS_ITEMS))
TEST_FW_FIRST    := test-check-compat
else ifneq ($(CROSS),)
QEMU_STRESS_ITEMS ?= 1000000
TEST_FW_CPPFLAGS := -Itests/c/check_compat
TEST_FW_OBJ      := $(COMPAT_OBJ)
TEST_FW_LIBS     := $(COMPAT_OBJ) $(CHECK_LIBS)
TEST_FW_ENV      := CK_TIMEOUT_MULTIPLIER=$(QEMU_TIMEOUT_FACTOR) SB_STRESS_ITEMS=$(QEMU_STRESS_ITEMS) SB_EMULATED=qemu-user
TEST_FW_NOTE     := ($(ARCH) under qemu-user, on Check: timeouts x$(QEMU_TIMEOUT_FACTOR), SB_STRESS_ITEMS=$(QEMU_STRESS_ITEMS))
TEST_FW_FIRST    := test-check-compat
else
TEST_FW_CPPFLAGS :=
TEST_FW_OBJ      :=
TEST_FW_LIBS     := $(CRITERION_LIBS)
TEST_FW_NOTE     :=
TEST_FW_FIRST    :=
ifeq ($(SANITIZE),address)
# ASan's SEGV handler would turn the guard-page death tests' SIGSEGV into exit 1.
TEST_FW_ENV      := ASAN_OPTIONS="handle_segv=0 $$ASAN_OPTIONS"
else
TEST_FW_ENV      :=
endif
endif

# The compat layer and its own test (known outcomes, checked by selftest.sh); any build
# can run it: make test-check-compat.
$(COMPAT_OBJ): tests/c/check_compat/runner.c $(wildcard tests/c/check_compat/criterion/*.h)
	@mkdir -p $(@D)
	$(CC) -Itests/c/check_compat $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(COMPAT_SELFTEST): tests/c/check_compat/selftest.c $(COMPAT_OBJ)
	$(CC) -Itests/c/check_compat $(CPPFLAGS) $(CFLAGS) $< $(COMPAT_OBJ) $(CHECK_LIBS) $(LDLIBS) -o $@
.PHONY: test-check-compat
test-check-compat: $(COMPAT_SELFTEST)
	@echo "== $<$(if $(TEST_FW_NOTE), $(TEST_FW_NOTE))"
	@$(TEST_FW_ENV) SB_EMU="$(EMU)" sh tests/c/check_compat/selftest.sh $< $(if $(filter thread,$(SANITIZE)),tsan)

UNIT_SRCS  := $(wildcard tests/c/unit_*.c)
VTEST_SRCS := $(wildcard tests/c/test_*.c)
WL_SRCS    := workloads/workload.c $(patsubst %,workloads/%.c,$(WORKLOADS))
FIRST_VARIANT := $(firstword $(VARIANTS))
CRITERION_FLAGS ?= --jobs 1 --short-filename

UNIT_BINS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
$(BUILD)/tests/unit_%: tests/c/unit_%.c $(BUILD)/$(FIRST_VARIANT)/libbthread.a $(COMMON_HDRS) $(TEST_FW_OBJ)
	@mkdir -p $(@D)
	$(CC) $(TEST_FW_CPPFLAGS) $(CPPFLAGS) -Ivariants/$(FIRST_VARIANT) $(CFLAGS) $< $(BUILD)/$(FIRST_VARIANT)/libbthread.a $(TEST_FW_LIBS) $(LDLIBS) -o $@

# $(1) = variant: every tests/c/test_*.c links the variant's library and the workloads.
define VARIANT_TEST_RULES
$(BUILD)/$(1)/tests/%: tests/c/%.c $(BUILD)/$(1)/libbthread.a $(WL_SRCS) $(COMMON_HDRS) $(wildcard tests/c/*.h) $(wildcard workloads/*.h) $(TEST_FW_OBJ)
	@mkdir -p $$(@D)
	$$(CC) $$(TEST_FW_CPPFLAGS) $$(CPPFLAGS) -Ivariants/$(1) $$(CFLAGS) $$< $(WL_SRCS) $(BUILD)/$(1)/libbthread.a $$(TEST_FW_LIBS) $$(LDLIBS) -o $$@

$(BUILD)/$(1)/soak: tests/c/soak.c $(BUILD)/$(1)/libbthread.a $(COMMON_HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$< $(BUILD)/$(1)/libbthread.a $$(LDLIBS) -o $$@

test-c-$(1): $(patsubst tests/c/%.c,$(BUILD)/$(1)/tests/%,$(VTEST_SRCS))
	@st=0; for t in $$^; do echo "== $(1): $$$$t$$(if $$(TEST_FW_NOTE), $$(TEST_FW_NOTE))"; $$(TEST_FW_ENV) $$(RUN_TEST) $$$$t $$(CRITERION_FLAGS) || st=1; done; exit $$$$st
.PHONY: test-c-$(1)
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_TEST_RULES,$(v))))

.PHONY: test-unit test-py test-c
test-unit: $(UNIT_BINS) | $(TEST_FW_FIRST)
	@st=0; for t in $^; do echo "== $$t$(if $(TEST_FW_NOTE), $(TEST_FW_NOTE))"; $(TEST_FW_ENV) $(RUN_TEST) $$t $(CRITERION_FLAGS) || st=1; done; exit $$st

test-c: test-unit $(patsubst %,test-c-%,$(VARIANTS))

test-py:
	$(PYTHON) -m pytest -q tests/py

ifeq ($(CROSS),)
test: all test-c test-asm-cross test-py
else
test: all test-c test-asm-cross
endif

# --- aarch64 under qemu-user, from an x86-64 host -----------------------------------
# A sub-make with ARCH=aarch64 (its own build-aarch64/ tree; SANITIZE does not apply).
AARCH64_TEST_VARIANTS ?= $(filter chaselev fair half threadpool,$(VARIANTS))
.PHONY: test-aarch64 test-aarch64-all
test-aarch64:
	$(MAKE) ARCH=aarch64 SANITIZE= all test-unit $(patsubst %,test-c-%,$(AARCH64_TEST_VARIANTS))
test-aarch64-all:
	$(MAKE) ARCH=aarch64 SANITIZE= test
ifeq ($(CROSS)$(HOST_ARCH),x86_64)
test: test-aarch64
endif

# make soak: minutes of mixed load on every variant (tests/c/soak.c: foreign starts,
# timed waits, interrupts, key churn, fd waits; every bthread must run exactly once and
# every wait end).  Not part of make test.  SOAK_SECONDS per variant.
SOAK_SECONDS ?= 30
.PHONY: soak
soak: $(patsubst %,$(BUILD)/%/soak,$(VARIANTS))
	@st=0; for v in $(VARIANTS); do echo "== soak $$v ($(SOAK_SECONDS) s)"; $(TEST_FW_ENV) $(BUILD)/$$v/soak $(SOAK_SECONDS) || st=1; done; exit $$st
