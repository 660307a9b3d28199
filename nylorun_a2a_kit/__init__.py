"""Nylorun A2A Profile v2 conformance kit.

The repository's top-level folders are this package's subpackages: ``suites`` (the checks and their
requirements), ``fixtures`` (the harness and the pytest plugin), ``schemas``, ``reference_agent`` and
``reports`` (the shipped known-failures example).

PYTEST_DONT_REWRITE: the release gate imports this package before it starts its own pytest run; pytest would
otherwise warn that it cannot rewrite the asserts of a module imported already (this one has none).
"""

from importlib import metadata

try:
    __version__ = metadata.version("nylorun-a2a-kit")
except metadata.PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"
