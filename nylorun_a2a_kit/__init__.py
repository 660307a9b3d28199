"""Nylorun A2A Profile v2 conformance kit.

The repository's top-level folders are this package's subpackages: ``suites`` (the checks and their
requirements), ``fixtures`` (the harness and the pytest plugin), ``schemas``, ``reference_agent`` and
``reports`` (the shipped known-failures example).
"""

from importlib import metadata

try:
    __version__ = metadata.version("nylorun-a2a-kit")
except metadata.PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"
