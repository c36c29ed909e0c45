"""The run.py driver: sweeps variants x workloads x workers (measured, or in simulated
time on a machine model), keeps results/, draws plots/, compares runs and writes reports.
run.py at the repository root calls cli.main() (`python3 -m harness.sim` is another name
for its commands in simulated time); the modules, each named for what it holds:

    config    settings, the repository root, exit codes, UsageError, parsers of name and
              worker lists
    files     atomic writes (umask respected), the one JSON writer, --out checks,
              tolerant JSON reads
    fmt       durations, times with units, tables
    proc      running other programs (ended with run.py on SIGINT, SIGTERM, SIGHUP), several
              at once, usable CPUs
    build     names asked from make, the bench binaries and their listings
    commands  the bench's and simbench's command lines, each built in one place
    gbjson    the one reader of Google Benchmark JSON
    benchjson the checks of a bench's JSON (`make` smoke targets) and the switch ratio
    refcheck  the same checks for a reference row's JSON
    stats     median and spread, Mann-Whitney U, the Hodges-Lehmann interval, Brent's bound
    rundata   Result and RunData of results/<run-id>/, the merged CSV files, a simulated
              run's medians and bands, a measured run's simulated companions, the counters
              that explain a result
    roles     which part each variant plays (the pools, the article's pool), read from
              its policy, never from its name
    plan      the points of a sweep (measured or simulated), the pinned busy-loop rate
    rundir    a run directory created whole, locked while a sweep writes it, and named
              by a RUN argument (an id, 'latest', a path, RUN:VARIANT)
    rounds    the interleaved rounds: their order, one round run (anywhere) and recorded
    sweep     running a plan with a backend (the benches', or simulate's) in interleaved
              rounds, resumable; start / resume / finish a run
    engine    where the rounds run: here, or on a Dask distributed cluster
    machine   the machine record (meta.json)
    simmodel  machine models (harness/machines/): read, check, flatten for the engine
    simulate  a sweep in simulated time: the backend that runs build-sim/<v>/simbench,
              the run written like a real one
    companion a measured run's simulated companions (`run --sim`), the batching one too
    calibrate this machine measured into a model (`calibrate`)
    validate  simulated against measured: the error table (`validate`)
    compare   the one comparison: a ratio's estimate, its family-wise bracket, its test,
              its verdict (better / worse / undecided); differences.csv, `./run.py compare`
    families  every comparison a run states, computed once, in named families
    plots     the figures' rules, time, imbalance, METG, why
    simfigs   a simulated run's speedup figures
    claimfigs the claim figures and the heat maps
    article   the article's experiment: its ideal, its panels and its figure
    batching  section 4.2, batch submission and batch stealing in both designs: its
              comparisons (measured and SIMULATED), report section and answer row
    answers   the answers to the article's claims (REPORT.md's and README's table)
    gnuplot   rendering them into plots/<run-id>/
    report    REPORT.md (and a simulated run's SIMULATED.md)
    publish   a run pruned to its published form, README's answer block
    bundle    `make bundle`: the archive that measures on another machine
    targets   the issues' performance targets against what users would pick, measured
              in alternating rounds, resumable (`./run.py targets`)
    targetfile their record, targets.json: read, checked, tabled
    ideal     what a perfect balancer gains over a pool: the imbalance targets
    hooks     a variant's policy hooks as the compiler resolves them (`make hooks`)
    policymap `./run.py map`: the policy map's runs, phases and command line
    mapgrid   its grid: forms of imbalance, grains, workers, models; what they cost
    mapbands  its SIMULATED band: scaled models, candidates, bands.json
    mapcells  its cells: winner, margin, verdict, counters; the held-out check
    mapguide  the policy guide, generated from the cells
    mapfigs   its figures and their tables, one per pair of axes
    mapreport its REPORT.md
    flow      what the commands do once read: a run's stages, publishing, the targets
              into a run, a simulation's start, where an interrupt stopped
    cli       the command line and its commands
"""
