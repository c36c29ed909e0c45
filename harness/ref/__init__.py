"""The reference rows' Python side: refcheck, the smoke check of their JSON."""
