#!/usr/bin/env python3
"""run.py -- measure every scheduler variant, keep the results, compare, plot, report.

The driver is the package harness/driver/ (its command line: harness/driver/cli.py);
`./run.py --help` lists the commands.  Python 3 standard library only.
"""
import sys

from harness.driver.cli import main

if __name__ == "__main__":
    sys.exit(main())
