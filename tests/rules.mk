# tests/rules.mk -- C tests (tests/c/sbtest) and Python tests (pytest).
#
#   tests/c/unit_*.c   variant-independent (context switch, stacks, the reference rows'
#                      headers in harness/ref/): built once, against the first variant's
#                      library (only the objects they use are linked)
#   tests/c/test_*.c   scheduler, sync, workloads: built and run once per variant
#                      (test_cxx_wrappers.c with its C++ half, test_cxx_wrappers.cpp)
#   tests/c/sbtest/    the test framework: sbtest.h (Criterion's spelling: Test, cr_assert_eq,
#                      ...) and sbtest.c, the main() of every test binary; its own test
#                      (selftest.c, checked by selftest.sh) runs first: make test-sbtest
#   tests/py/test_*.py the Python tests (pytest): one file per module of harness/driver
#                      (run.py), benchjson, refcheck, targets, and the docs check
#
# The runner forks one process per test and runs them one at a time, so that tests with
# their own worker threads do not compete on a 2-core machine; every test carries its own
# .timeout, past which it is killed and fails.  Every binary runs even after one fails;
# the target fails at the end if any did.  TEST_FLAGS go to every binary, e.g.
# TEST_FLAGS='--filter fcontext/*'.  The same framework serves every build below.
#
# SANITIZE=thread: a race report ends a test process with status 66 (halt_on_error=1),
# which fails that test.  handle_segv=0 lets the guard-page death tests die of SIGSEGV
# as they expect; atexit_sleep_ms=100 (TSan's default is 1000, in every test process
# that has threads) keeps ~100 test processes from idling 100 s.  TSAN_OPTIONS from the
# environment come last, so they win.  TSAN_STRESS_ITEMS scales the 10^7-item stress
# tests of the deques, unit_wsq and unit_ws_deque (their SB_STRESS_ITEMS).
#
# ARCH=aarch64 (the cross build, see the root Makefile): the tests run under qemu-user
# ($(EMU)).  Emulation runs them several times slower, so QEMU_TIMEOUT_FACTOR (one
# number, default in the root Makefile) becomes SBTEST_TIMEOUT_FACTOR, which scales every
# test's .timeout; QEMU_STRESS_ITEMS scales the 10^7-item stress tests as
# TSAN_STRESS_ITEMS does, and SB_EMULATED=qemu-user lets a test run fewer rounds of a
# race (sb_rounds in sbtest.h: qemu-user runs guest loads and stores in the host's
# order, so a longer race shows nothing more there) or skip, saying why, what the
# emulator cannot run.  unit_fcontext checks the context switch of the architecture it
# is built for, so the aarch64 build's test-unit is the AArch64 ABI test.
#
# On an x86-64 host, `make test` also runs test-aarch64: a sub-make with ARCH=aarch64
# that builds every variant's products for aarch64 and runs the framework's self-test,
# the unit tests and every variant's whole C suite under qemu (a new variant included).
# make test-aarch64-all runs every aarch64 test: the same, bench-smoke, test-shim.
#
# Sanitizer reports (TSan, ASan) go to $(BUILD)/sanitizer-logs/<variant>-<test>.<pid>,
# never into the source tree: every test binary runs through tests/run_test.sh, which
# sets log_path and prints every report a binary wrote once it ends, so CI output still
# shows them.  (The self-test keeps its deliberate race report on stderr, where
# selftest.sh looks for it.)

SANLOG_DIR := $(if $(SANITIZE),$(abspath $(BUILD))/sanitizer-logs)
RUN_TEST := SANLOG_DIR=$(SANLOG_DIR) EMU='$(EMU)' sh tests/run_test.sh

SBTEST_OBJ      := $(BUILD)/tests/sbtest.o
SBTEST_SELFTEST := $(BUILD)/tests/sbtest_selftest
TEST_FW_CPPFLAGS := -Itests/c/sbtest
ifeq ($(SANITIZE),thread)
TSAN_STRESS_ITEMS ?= 1000000
TEST_FW_ENV      := TSAN_OPTIONS="halt_on_error=1 handle_segv=0 second_deadlock_stack=1 atexit_sleep_ms=100 $$TSAN_OPTIONS" \
                    SB_STRESS_ITEMS=$(TSAN_STRESS_ITEMS)
TEST_FW_NOTE     := (TSan: SB_STRESS_ITEMS=$(TSAN_STRESS_ITEMS))
else ifneq ($(CROSS),)
QEMU_STRESS_ITEMS ?= 1000000
TEST_FW_ENV      := SBTEST_TIMEOUT_FACTOR=$(QEMU_TIMEOUT_FACTOR) SB_STRESS_ITEMS=$(QEMU_STRESS_ITEMS) SB_EMULATED=qemu-user
TEST_FW_NOTE     := ($(ARCH) under qemu-user: timeouts x$(QEMU_TIMEOUT_FACTOR), SB_STRESS_ITEMS=$(QEMU_STRESS_ITEMS))
else ifeq ($(SANITIZE),address)
# ASan's SEGV handler would turn the guard-page death tests' SIGSEGV into exit 1.
TEST_FW_ENV      := ASAN_OPTIONS="handle_segv=0 $$ASAN_OPTIONS"
TEST_FW_NOTE     :=
else
TEST_FW_ENV      :=
TEST_FW_NOTE     :=
endif

$(SBTEST_OBJ): tests/c/sbtest/sbtest.c tests/c/sbtest/sbtest.h
	@mkdir -p $(@D)
	$(CC) $(TEST_FW_CPPFLAGS) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(SBTEST_SELFTEST): tests/c/sbtest/selftest.c $(SBTEST_OBJ)
	$(CC) $(TEST_FW_CPPFLAGS) $(CPPFLAGS) $(CFLAGS) $< $(SBTEST_OBJ) $(LDLIBS) -o $@
.PHONY: test-sbtest
test-sbtest: $(SBTEST_SELFTEST)
	@echo "== $<$(if $(TEST_FW_NOTE), $(TEST_FW_NOTE))"
	@$(TEST_FW_ENV) SB_EMU="$(EMU)" sh tests/c/sbtest/selftest.sh $< $(if $(filter thread,$(SANITIZE)),tsan)

UNIT_SRCS  := $(wildcard tests/c/unit_*.c)
VTEST_SRCS := $(wildcard tests/c/test_*.c)
# the workloads use only the public API: compiled once (the benches' own objects,
# harness/bench/rules.mk), linked into every variant's tests
WL_OBJS    := $(patsubst %.c,$(BUILD)/benchobj/%.o,$(BENCH_WL_SRCS))
FIRST_VARIANT := $(firstword $(VARIANTS))
TEST_FLAGS ?=

UNIT_BINS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
$(BUILD)/tests/unit_%: tests/c/unit_%.c $(BUILD)/$(FIRST_VARIANT)/libbthread.a $(COMMON_HDRS) $(wildcard harness/ref/*.h) harness/ref/fn_workloads.c tests/c/sbtest/sbtest.h $(SBTEST_OBJ)
	@mkdir -p $(@D)
	$(CC) $(TEST_FW_CPPFLAGS) $(CPPFLAGS) -Ivariants/$(FIRST_VARIANT) $(CFLAGS) $< $(BUILD)/$(FIRST_VARIANT)/libbthread.a $(SBTEST_OBJ) $(LDLIBS) -o $@

# $(1) = variant: every tests/c/test_*.c links the variant's library and the workloads.
define VARIANT_TEST_RULES
$(BUILD)/$(1)/tests/%: tests/c/%.c $(BUILD)/$(1)/libbthread.a $(WL_OBJS) $(COMMON_HDRS) $(wildcard tests/c/*.h) $(wildcard workloads/*.h) tests/c/sbtest/sbtest.h $(SBTEST_OBJ)
	@mkdir -p $$(@D)
	$$(CC) $$(TEST_FW_CPPFLAGS) $$(CPPFLAGS) -Ivariants/$(1) $$(CFLAGS) $$< $(WL_OBJS) $(BUILD)/$(1)/libbthread.a $(SBTEST_OBJ) $$(LDLIBS) -o $$@

$(BUILD)/$(1)/soak: tests/c/soak.c $(BUILD)/$(1)/libbthread.a $(COMMON_HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$< $(BUILD)/$(1)/libbthread.a $$(LDLIBS) -o $$@

test-c-$(1): $(patsubst tests/c/%.c,$(BUILD)/$(1)/tests/%,$(VTEST_SRCS))
	@st=0; for t in $$^; do echo "== $(1): $$$$t$$(if $$(TEST_FW_NOTE), $$(TEST_FW_NOTE))"; $$(TEST_FW_ENV) $$(RUN_TEST) $$$$t $$(TEST_FLAGS) || st=1; done; exit $$$$st
.PHONY: test-c-$(1)
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_TEST_RULES,$(v))))

# The C++ test (bthread.hpp, brpc's C++ wrappers): tests/c/test_cxx_wrappers.c is an
# sbtest file like the others, whose tests call the checks that test_cxx_wrappers.cpp
# makes with $(CXX).  That object is built once (the header is inline over the C API, the
# same for every variant); each variant's binary is linked by $(CXX), for the C++
# runtime.  These explicit rules take the place of the pattern rule above for this test.
CXX_TEST_OBJ := $(BUILD)/tests/test_cxx_wrappers_cpp.o
$(CXX_TEST_OBJ): tests/c/test_cxx_wrappers.cpp common/bthread.hpp $(COMMON_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

define VARIANT_CXX_TEST_RULES
$(BUILD)/$(1)/tests/test_cxx_wrappers: tests/c/test_cxx_wrappers.c $(CXX_TEST_OBJ) $(BUILD)/$(1)/libbthread.a $(COMMON_HDRS) tests/c/sbtest/sbtest.h $(SBTEST_OBJ)
	@mkdir -p $$(@D)
	$$(CC) $$(TEST_FW_CPPFLAGS) $$(CPPFLAGS) -Ivariants/$(1) $$(CFLAGS) -c $$< -o $$@.o
	$$(CXX) $$(CXXFLAGS) $$@.o $(CXX_TEST_OBJ) $(BUILD)/$(1)/libbthread.a $(SBTEST_OBJ) $$(LDLIBS) -o $$@
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_CXX_TEST_RULES,$(v))))

.PHONY: test-unit test-py test-c
test-unit: $(UNIT_BINS) | test-sbtest
	@st=0; for t in $^; do echo "== $$t$(if $(TEST_FW_NOTE), $(TEST_FW_NOTE))"; $(TEST_FW_ENV) $(RUN_TEST) $$t $(TEST_FLAGS) || st=1; done; exit $$st

# one unit test binary alone: make test-unit-fcontext
test-unit-%: $(BUILD)/tests/unit_% | test-sbtest
	@echo "== $<$(if $(TEST_FW_NOTE), $(TEST_FW_NOTE))"
	@$(TEST_FW_ENV) $(RUN_TEST) $< $(TEST_FLAGS)

test-c: test-unit $(patsubst %,test-c-%,$(VARIANTS))

test-py:
	$(PYTHON) -m pytest -q tests/py

ifeq ($(CROSS),)
test: all test-c test-py
else
test: all test-c
endif

# --- aarch64 under qemu-user, from an x86-64 host -----------------------------------
# A sub-make with ARCH=aarch64 (its own build-aarch64/ tree; SANITIZE does not apply).
.PHONY: test-aarch64 test-aarch64-all
test-aarch64:
	$(MAKE) ARCH=aarch64 SANITIZE= all test-c
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
