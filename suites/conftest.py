"""What every check of the suites shares: their markers, and the gate each passes before it runs."""

import pytest

from nylorun_a2a_kit.fixtures.plugin import admit


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): the requirement ids (suites/requirements.toml) a check proves")
    config.addinivalue_line("markers", "scenario(*names): the scenario-contract scenarios a check drives")
    config.addinivalue_line("markers", "member(axis, name): the member of its requirement's axis a check covers")
    config.addinivalue_line("markers", "allure_description(text): a check's Allure description")
    config.addinivalue_line("markers", "long: a check that waits on many turns one after another (it starts first)")
    config.addinivalue_line(
        "markers",
        "shares_turn(kind, tier='v2'): a check reading a2a_channel_views(kind, tier), made once per worker ('*': the "
        "kind its id starts with); the checks of one turn go to one worker",
    )


@pytest.fixture(autouse=True)
def _a2a_admit(request: pytest.FixtureRequest) -> None:
    """Not applicable when the target does not claim the check's tier; not checked without its scenario."""
    admit(request)
