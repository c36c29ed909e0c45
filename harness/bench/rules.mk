# harness/bench/rules.mk -- the benchmark binaries (included by the root Makefile).
#
#   build/<v>/bench         every workload (workloads/*.c) and every harness benchmark
#                           (harness/bench/*.c) on variant <v>, via the Google Benchmark shim
#   build/ref/boost_switch  Boost.Context's switch round trip, the reference row
#   make bench-switch       run both switch round trips in alternation, print the ratio
#                           of medians (SWITCH_VARIANT, SWITCH_ROUNDS, SWITCH_REPS)
#   make bench-smoke        every variant's bench once at the workloads' `test` sizes,
#                           then check its JSON (context, counters, no errors); part of
#                           `make test`
#   make test-shim          harness/bench/selftest/shim_check.c: every shim.h call against
#                           exact expected values; part of `make test`
#
# The bench driver (driver.c, bench_main.c) and the workloads use only the public
# headers (bthread.h, butex.h) and header-only helpers (timeutil.h), so they are
# compiled once and linked with each variant's libbthread.a.  A harness benchmark is any
# harness/bench/*.c file: it registers itself from a constructor (see bench_switch.c); the two
# that measure an internal (bench_stack.c: stack.h, bench_switch.c: fcontext.h) say so.

HARNESS_SRCS := $(wildcard harness/bench/*.c)
BENCH_WL_SRCS := workloads/workload.c $(patsubst %,workloads/%.c,$(WORKLOADS))
BENCH_OBJS := $(patsubst %.c,$(BUILD)/benchobj/%.o,$(HARNESS_SRCS) $(BENCH_WL_SRCS))
BENCH_HDRS := $(wildcard harness/bench/*.h workloads/*.h) $(COMMON_HDRS)
SHIM_OBJ := $(BUILD)/benchobj/harness/bench/shim.o
BENCH_LIBS := -lbenchmark

# The run record (the JSON context) names the flags and the revision it was built from
# ("-dirty" when the measured code differs from that revision: the pathspecs of
# meta.json's code_dirty, measured_code() in harness/driver/config.py).  The stamp file
# changes only when either string does, and bench_main.o depends on it, so a commit or a
# flag change rebuilds it and the record never names a stale revision.  Binaries are
# linked to a temporary name and renamed: a sweep that is running keeps the file it
# started (make never writes into an executing binary).
ifndef GIT_REV
GIT_REV := $(shell r=$$(git rev-parse --short HEAD 2>/dev/null) && \
             { git diff --quiet HEAD -- asm common variants workloads harness Makefile \
                 ':(exclude)*.py' ':(exclude)*.md' ':(exclude)harness/machines' 2>/dev/null || \
               r=$$r-dirty; echo $$r; } || echo unknown)
endif
BENCH_CFLAGS_STR = $(strip $(CC) $(CFLAGS))
BENCH_DEFS = -DSCHEDBENCH_CFLAGS='"$(BENCH_CFLAGS_STR)"' -DSCHEDBENCH_GIT_REV='"$(GIT_REV)"'
BENCH_STAMP := $(BUILD)/benchobj/buildinfo.stamp
$(BENCH_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(BENCH_CFLAGS_STR) $(GIT_REV)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:

$(SHIM_OBJ): harness/bench/shim.cc harness/bench/shim.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(BUILD)/benchobj/harness/bench/bench_main.o: CPPFLAGS += $(BENCH_DEFS)
$(BUILD)/benchobj/harness/bench/bench_main.o: $(BENCH_STAMP)
$(BUILD)/benchobj/%.o: %.c $(BENCH_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# $(1) = variant
define BENCH_RULES
$(BUILD)/$(1)/bench: $(BENCH_OBJS) $(SHIM_OBJ) $(BUILD)/$(1)/libbthread.a
	$$(CXX) $$(CXXFLAGS) $(BENCH_OBJS) $(SHIM_OBJ) $(BUILD)/$(1)/libbthread.a $$(BENCH_LIBS) $$(LDLIBS) -o $$@.tmp
	mv -f $$@.tmp $$@

all: $(BUILD)/$(1)/bench
endef
$(foreach v,$(VARIANTS),$(eval $(call BENCH_RULES,$(v))))

$(BUILD)/ref/boost_switch: harness/ref/boost_switch.cc $(SHIM_OBJ)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) $< $(SHIM_OBJ) -lboost_context $(BENCH_LIBS) $(LDLIBS) -o $@
# Not in the cross build (ARCH=aarch64): Boost.Context for arm64 is not installed.
ifeq ($(CROSS),)
all: $(BUILD)/ref/boost_switch
endif

# --- make bench-switch ---------------------------------------------------------------
SWITCH_VARIANT ?= $(if $(filter chaselev,$(VARIANTS)),chaselev,$(firstword $(VARIANTS)))
SWITCH_ROUNDS ?= 3
SWITCH_REPS ?= 5
SWITCH_DIR := $(BUILD)/bench-switch
.PHONY: bench-switch
bench-switch: $(BUILD)/$(SWITCH_VARIANT)/bench $(BUILD)/ref/boost_switch
	@rm -rf $(SWITCH_DIR) && mkdir -p $(SWITCH_DIR)
	@set -e; for r in $$(seq $(SWITCH_ROUNDS)); do \
	  for b in ours:$(BUILD)/$(SWITCH_VARIANT)/bench boost:$(BUILD)/ref/boost_switch; do \
	    echo "== round $$r: $${b#*:}"; \
	    $${b#*:} --benchmark_filter='^switch/roundtrip$$' \
	      --benchmark_repetitions=$(SWITCH_REPS) --benchmark_display_aggregates_only=true \
	      --benchmark_out=$(SWITCH_DIR)/$${b%%:*}-$$r.json --benchmark_out_format=json; \
	  done; \
	done
	$(PYTHON) -m harness.driver.benchjson ratio --name switch/roundtrip \
	  --ours $(SWITCH_DIR)/ours-*.json --ref $(SWITCH_DIR)/boost-*.json

# --- make bench-smoke ----------------------------------------------------------------
SMOKE_WORKERS ?= 2
# a hang is a failure, not a stuck CI: each variant's smoke run (seconds) gets this long
SMOKE_TIMEOUT ?= 600
.PHONY: bench-smoke
bench-smoke: $(patsubst %,$(BUILD)/%/bench,$(VARIANTS))
	@mkdir -p $(BUILD)/bench-smoke
	@set -e; for v in $(VARIANTS); do \
	  echo "== bench-smoke: $$v"; \
	  timeout $(SMOKE_TIMEOUT) $(EMU) $(BUILD)/$$v/bench --smoke --workers $(SMOKE_WORKERS) --benchmark_min_time=0.001 \
	    --benchmark_filter='-^(switch|stack)/' --benchmark_format=json \
	    --benchmark_out=$(BUILD)/bench-smoke/$$v.json --benchmark_out_format=json >/dev/null; \
	  $(PYTHON) -m harness.driver.benchjson check --workers $(SMOKE_WORKERS) --variant $$v \
	    --workloads "$(WORKLOADS)" $(BUILD)/bench-smoke/$$v.json; \
	done
test: bench-smoke

# --- make test-shim: every shim.h call, checked against exact values ------------------
SHIM_CHECK := $(BUILD)/harness-selftest/shim_check
$(SHIM_CHECK): harness/bench/selftest/shim_check.c harness/bench/shim.h $(SHIM_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@.o
	$(CXX) $(CXXFLAGS) $@.o $(SHIM_OBJ) $(BENCH_LIBS) $(LDLIBS) -o $@
.PHONY: test-shim
test-shim: $(SHIM_CHECK)
	$(EMU) $(SHIM_CHECK) --benchmark_out=$(SHIM_CHECK).json --benchmark_out_format=json >/dev/null
	$(PYTHON) -m harness.driver.benchjson shimcheck $(SHIM_CHECK).json
test: test-shim
