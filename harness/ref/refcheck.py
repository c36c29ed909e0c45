"""python3 -m harness.ref.refcheck ...: the name `make refs-smoke` (harness/ref/rules.mk)
calls harness.driver.refcheck by; the code is there."""
import sys

from harness.driver.refcheck import main

if __name__ == "__main__":
    sys.exit(main())
