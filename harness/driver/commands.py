"""The command lines of the two bench drivers, each built here and nowhere else.

bench (harness/bench/driver.h, over Google Benchmark) takes Google Benchmark's flags and
--workers; simbench (harness/sim/sim_main.c) is the same driver over the variant in
simulated time on a machine model, run here one argument set at a time (--set).  The sweep, the simulator, the
targets and the calibration all start them through these two functions."""


def _number(x):
    """A flag's number as Google Benchmark reads it: a float's repr ("0.3", "0.01"), an
    int or a string as given."""
    return repr(x) if isinstance(x, float) else str(x)


def bench_argv(binary, out, name_filter=None, workers=None, min_time=None, repetitions=None):
    """One bench invocation writing its JSON to `out`.  workers None: a binary without
    --workers (boost_switch); the others left out take the bench's defaults."""
    cmd = [binary]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    if name_filter is not None:
        cmd.append(f"--benchmark_filter={name_filter}")
    if repetitions is not None:
        cmd.append(f"--benchmark_repetitions={repetitions}")
    cmd += [f"--benchmark_out={out}", "--benchmark_out_format=json"]
    if min_time is not None:
        cmd.append(f"--benchmark_min_time={_number(min_time)}")
    return cmd


def simbench_argv(binary, model, workers, benchmark, reps, seed=None, out=None):
    """One simbench run of one argument set (`benchmark`, its name: any values its
    workload takes) on the flattened model file `model`, `reps` repetitions; its JSON to
    `out`, or to stdout when out is None."""
    cmd = [binary, "--model", model, "--workers", str(workers), "--set", benchmark,
           f"--benchmark_repetitions={reps}"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if out is not None:
        cmd += [f"--benchmark_out={out}", "--benchmark_out_format=json"]
    else:
        cmd.append("--benchmark_format=json")
    return cmd
