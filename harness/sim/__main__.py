"""python3 -m harness.sim {calibrate,simulate,validate,flatten,models} ... = ./run.py ..."""
import sys

from harness.driver.cli import SIM_COMMANDS, main

argv = sys.argv[1:]
if argv and argv[0] not in SIM_COMMANDS and not argv[0].startswith("-"):
    sys.exit("python3 -m harness.sim: unknown command %r (one of: %s; or ./run.py)"
             % (argv[0], ", ".join(SIM_COMMANDS)))
sys.exit(main(argv))
