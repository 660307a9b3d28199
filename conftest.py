"""The kit's own checkout: the plugin loads by its pytest11 entry point, as it does where the kit is installed.

The kit's own tests name the requirements on the kit itself (the release gate's) with the suites' marker.
"""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): the requirement ids (suites/requirements.toml) a check proves")
