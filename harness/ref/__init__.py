"""harness.ref.refcheck: the name `make refs-smoke` calls harness.driver.refcheck by."""
