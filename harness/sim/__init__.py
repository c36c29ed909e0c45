"""harness.sim -- simulated runs of every variant on machine models (issue 13).

Modules: model (read and check a machine model JSON, flatten it for the engine),
calibrate (measure this machine's costs into a model), simulate (a sweep in simulated
time, written like a real run), validate (simulated vs measured, the error table),
cli (the command line: python3 -m harness.sim ...).  Standard library only.
"""
