"""Loads the kit's pytest plugin for the suites (and for the kit's own tests)."""

pytest_plugins = ["fixtures.plugin"]
