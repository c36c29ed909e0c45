"""python3 -m harness.sim {calibrate,simulate,validate,flatten} ..."""
import sys

from harness.sim.cli import main

sys.exit(main())
