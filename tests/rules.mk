# tests/rules.mk -- C tests (Criterion) and Python tests (pytest).
#
#   tests/c/unit_*.c   variant-independent (context switch, stacks): built once, against
#                      the first variant's library (only the objects they use are linked)
#   tests/c/test_*.c   scheduler, sync, workloads: built and run once per variant
#   tests/py/test_*.py run.py's tests (pytest)
#
# Every Criterion test carries its own .timeout; the runner adds --jobs 1 so that tests
# with their own worker threads do not compete on this 2-core machine.

CRITERION_LIBS := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)
UNIT_SRCS  := $(wildcard tests/c/unit_*.c)
VTEST_SRCS := $(wildcard tests/c/test_*.c)
WL_SRCS    := workloads/workload.c $(patsubst %,workloads/%.c,$(WORKLOADS))
FIRST_VARIANT := $(firstword $(VARIANTS))
CRITERION_FLAGS ?= --jobs 1 --short-filename

UNIT_BINS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
$(BUILD)/tests/unit_%: tests/c/unit_%.c $(BUILD)/$(FIRST_VARIANT)/libbthread.a $(COMMON_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ivariants/$(FIRST_VARIANT) $(CFLAGS) $< $(BUILD)/$(FIRST_VARIANT)/libbthread.a $(CRITERION_LIBS) $(LDLIBS) -o $@

# $(1) = variant: every tests/c/test_*.c links the variant's library and the workloads.
define VARIANT_TEST_RULES
$(BUILD)/$(1)/tests/%: tests/c/%.c $(BUILD)/$(1)/libbthread.a $(WL_SRCS) $(COMMON_HDRS) workloads/workload.h
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) -Ivariants/$(1) $$(CFLAGS) $$< $(WL_SRCS) $(BUILD)/$(1)/libbthread.a $$(CRITERION_LIBS) $$(LDLIBS) -o $$@

test-c-$(1): $(patsubst tests/c/%.c,$(BUILD)/$(1)/tests/%,$(VTEST_SRCS))
	@set -e; for t in $$^; do echo "== $(1): $$$$t"; $$$$t $$(CRITERION_FLAGS); done
.PHONY: test-c-$(1)
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_TEST_RULES,$(v))))

.PHONY: test-unit test-py test-c
test-unit: $(UNIT_BINS)
	@set -e; for t in $^; do echo "== $$t"; $$t $(CRITERION_FLAGS); done

test-c: test-unit $(patsubst %,test-c-%,$(VARIANTS))

test-py:
	$(PYTHON) -m pytest -q tests/py

test: all test-c test-asm-cross test-py
