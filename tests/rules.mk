# tests/rules.mk -- C tests (Criterion) and Python tests (pytest).
#
#   tests/c/unit_*.c   variant-independent (context switch, stacks): built once, against
#                      the first variant's library (only the objects they use are linked)
#   tests/c/test_*.c   scheduler, sync, workloads: built and run once per variant
#   tests/py/test_*.py run.py's tests (pytest)
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

CRITERION_LIBS := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)
CHECK_LIBS     := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)
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
	@$(TEST_FW_ENV) sh tests/c/check_compat/selftest.sh $< $(if $(filter thread,$(SANITIZE)),tsan)

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
$(BUILD)/$(1)/tests/%: tests/c/%.c $(BUILD)/$(1)/libbthread.a $(WL_SRCS) $(COMMON_HDRS) $(wildcard tests/c/*.h) workloads/workload.h $(TEST_FW_OBJ)
	@mkdir -p $$(@D)
	$$(CC) $$(TEST_FW_CPPFLAGS) $$(CPPFLAGS) -Ivariants/$(1) $$(CFLAGS) $$< $(WL_SRCS) $(BUILD)/$(1)/libbthread.a $$(TEST_FW_LIBS) $$(LDLIBS) -o $$@

$(BUILD)/$(1)/soak: tests/c/soak.c $(BUILD)/$(1)/libbthread.a $(COMMON_HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$< $(BUILD)/$(1)/libbthread.a $$(LDLIBS) -o $$@

test-c-$(1): $(patsubst tests/c/%.c,$(BUILD)/$(1)/tests/%,$(VTEST_SRCS))
	@st=0; for t in $$^; do echo "== $(1): $$$$t$$(if $$(TEST_FW_NOTE), $$(TEST_FW_NOTE))"; $$(TEST_FW_ENV) $$$$t $$(CRITERION_FLAGS) || st=1; done; exit $$$$st
.PHONY: test-c-$(1)
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_TEST_RULES,$(v))))

.PHONY: test-unit test-py test-c
test-unit: $(UNIT_BINS) | $(TEST_FW_FIRST)
	@st=0; for t in $^; do echo "== $$t$(if $(TEST_FW_NOTE), $(TEST_FW_NOTE))"; $(TEST_FW_ENV) $$t $(CRITERION_FLAGS) || st=1; done; exit $$st

test-c: test-unit $(patsubst %,test-c-%,$(VARIANTS))

test-py:
	$(PYTHON) -m pytest -q tests/py

test: all test-c test-asm-cross test-py

# make soak: minutes of mixed load on every variant (tests/c/soak.c: foreign starts,
# timed waits, interrupts, key churn, fd waits; every bthread must run exactly once and
# every wait end).  Not part of make test.  SOAK_SECONDS per variant.
SOAK_SECONDS ?= 30
.PHONY: soak
soak: $(patsubst %,$(BUILD)/%/soak,$(VARIANTS))
	@st=0; for v in $(VARIANTS); do echo "== soak $$v ($(SOAK_SECONDS) s)"; $(TEST_FW_ENV) $(BUILD)/$$v/soak $(SOAK_SECONDS) || st=1; done; exit $$st
