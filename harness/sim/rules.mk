# harness/sim/rules.mk -- the simulation build (included by the root Makefile).
#
#   make sim        build-sim/<v>/simbench for every variant: the unchanged common/*.c
#                   and variants/<v>/variant.h, and the workloads, compiled with -DSB_SIM
#                   and harness/sim/sim.h force-included (threads, futex, clock and the
#                   atomics become the simulated machine's: harness/sim/README.md)
#   make test-sim   the simulator's tests (pytest on tests/sim); part of `make test`
#
# The engine (sim_engine.c, sim_model.c) is compiled without sim.h: it implements it.

SIM_BUILD  := build-sim$(if $(COMPILER),-$(COMPILER))
SIM_HDRS   := $(wildcard harness/sim/*.h)
SIM_FLAGS  := -DSB_SIM -include harness/sim/sim.h -Iharness/sim
SIM_WL_OBJS := $(patsubst %.c,$(SIM_BUILD)/wlobj/%.o,$(BENCH_WL_SRCS))
SIM_ENGINE_OBJS := $(SIM_BUILD)/engine/sim_engine.o $(SIM_BUILD)/engine/sim_model.o
SIM_ASM_OBJ := $(SIM_BUILD)/asm/fcontext.o
# The bench driver and the Google Benchmark shim, as the real benches use them: they run
# on the host thread, outside the simulation (sim_main.c), so they are built without sim.h
SIM_DRIVER_OBJS := $(BUILD)/benchobj/harness/bench/driver.o $(SHIM_OBJ)
SIM_BENCH_DEFS = -DSCHEDBENCH_CFLAGS='"$(BENCH_CFLAGS_STR) $(SIM_FLAGS)"' -DSCHEDBENCH_GIT_REV='"$(GIT_REV)"'

$(SIM_ASM_OBJ): asm/fcontext.S $(wildcard asm/*.S asm/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -c $< -o $@

$(SIM_BUILD)/engine/%.o: harness/sim/%.c $(SIM_HDRS) asm/fcontext.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iharness/sim $(CFLAGS) -fno-strict-aliasing -c $< -o $@

$(SIM_BUILD)/wlobj/%.o: %.c $(SIM_HDRS) $(BENCH_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SIM_FLAGS) $(CFLAGS) -c $< -o $@

# $(1) = variant name, $(2) = the folder of its variant.h
define SIM_RULES
$(SIM_BUILD)/$(1)/obj/%.o: common/%.c $(COMMON_HDRS) $(SIM_HDRS) $(2)/variant.h $(wildcard $(2)/*.h)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $(SIM_FLAGS) -I$(2) -DVARIANT_NAME='"$(1)"' $$(CFLAGS) -c $$< -o $$@

$(SIM_BUILD)/$(1)/obj/sim_main.o: harness/sim/sim_main.c $(SIM_HDRS) $(BENCH_HDRS) $(BENCH_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $(SIM_FLAGS) -DVARIANT_LABEL='"$(1)"' $(SIM_BENCH_DEFS) $$(CFLAGS) -c $$< -o $$@

$(SIM_BUILD)/$(1)/simbench: $(patsubst common/%.c,$(SIM_BUILD)/$(1)/obj/%.o,$(COMMON_SRCS)) $(SIM_BUILD)/$(1)/obj/sim_main.o $(SIM_WL_OBJS) $(SIM_ENGINE_OBJS) $(SIM_ASM_OBJ) $(SIM_DRIVER_OBJS)
	$$(CXX) $$(CXXFLAGS) $$^ $$(BENCH_LIBS) $$(LDLIBS) -ldl -o $$@.tmp && mv -f $$@.tmp $$@
endef
$(foreach v,$(VARIANTS),$(eval $(call SIM_RULES,$(v),variants/$(v))))
sim: $(patsubst %,$(SIM_BUILD)/%/simbench,$(VARIANTS))

# A deliberately broken idle policy for the stall test (not a variant: its name starts
# with "_", and it lives under tests/sim/)
$(eval $(call SIM_RULES,_broken_wake,tests/sim/broken_wake))

# A simulated program with memory walks the tests control, to check the engine's costs
# exactly (tests/sim/engine_probe.c; linked with the engine alone, no scheduler)
SIM_PROBE := $(SIM_BUILD)/_probe/engine_probe
$(SIM_PROBE): tests/sim/engine_probe.c $(SIM_HDRS) $(SIM_ENGINE_OBJS) $(SIM_ASM_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SIM_FLAGS) $(CFLAGS) $< $(SIM_ENGINE_OBJS) $(SIM_ASM_OBJ) $(LDLIBS) -ldl -o $@

test-sim: sim $(SIM_BUILD)/_broken_wake/simbench $(SIM_PROBE)
	SB_SIM_BUILD=$(SIM_BUILD) $(PYTHON) -m pytest -q -p no:cacheprovider tests/sim
# Sanitizer builds leave the simulator out: its one OS thread switches between simulated
# threads' stacks without the fiber annotations ASan and TSan would need.
ifeq ($(SANITIZE),)
test: test-sim
endif

.PHONY: sim test-sim

# build/sim-calibrate: the measurements behind `calibrate` (harness/driver/calibrate.py);
# a real program, built with the real build's flags
SIM_CALIBRATE := $(BUILD)/sim-calibrate
$(SIM_CALIBRATE): harness/sim/calibrate.c harness/sim/sim_engine.h harness/sim/sim_api.h $(ASM_OBJ) workloads/sha1.h workloads/wl_kernel.h workloads/uts_tree.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< $(ASM_OBJ) $(LDLIBS) -o $@
sim: $(SIM_CALIBRATE)
