"""The run.py driver: sweeps variants x workloads x workers, keeps results/, draws
plots/, compares runs and writes reports.  run.py at the repository root calls
cli.main(); the modules, each named for what it holds:

    config    settings, exit codes, UsageError, parsers of name and worker lists
    files     atomic writes (umask respected), --out checks, tolerant JSON reads
    fmt       durations, times with units, tables
    proc      running other programs (ended with run.py on SIGINT, SIGTERM, SIGHUP), usable CPUs
    build     names asked from make, the bench binaries and their listings
    gbjson    the one reader of Google Benchmark JSON
    stats     median and spread, Mann-Whitney U
    rundata   Result and RunData of results/<run-id>/, the merged CSV files
    plan      the points of a sweep, the pinned busy-loop rate
    rundir    a run directory created whole, and locked while a sweep writes it
    sweep     running a plan (resumable), start / resume / finish a run
    machine   the machine record (meta.json)
    plots     the figures as gnuplot scripts and data
    gnuplot   rendering them into plots/<run-id>/
    compare   ratio of medians and significance, B against A
    report    REPORT.md
    cli       the command line and its commands
"""
