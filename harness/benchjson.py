"""python3 -m harness.benchjson ...: the name the make rules (harness/rules.mk) call
harness.driver.benchjson by; the code is there."""
import sys

from harness.driver.benchjson import main

if __name__ == "__main__":
    sys.exit(main())
