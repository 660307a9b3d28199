"""Benchmarks of the reference agent: each is ``.venv/bin/python -m benchmarks.<name> [--quick]``."""
