"""`python3 -m harness.sim COMMAND ...`: another name for run.py's commands in simulated
time (calibrate, simulate, validate, flatten, models; harness.driver.cli).  The Python
code of simulated runs is harness.driver's (simmodel, simulate, calibrate, validate); this
folder holds the simulator itself (C) and its README."""
