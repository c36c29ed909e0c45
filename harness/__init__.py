"""schedbench's Python: one package, harness.driver (run.py's driver, with the checks of
the bench binaries' JSON that make calls, harness.driver.benchjson and
harness.driver.refcheck, and harness.driver.targets).  harness.sim is another name for
run.py's simulated-time commands, holding no code of its own.  Standard library only; run
from the repository root (`python3 -m harness.driver.benchjson ...`)."""
