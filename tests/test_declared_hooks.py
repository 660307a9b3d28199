"""The hooks the kit's plugin declares (fixtures/plugin/newhooks.py), answered by a plugin of a host project that
drives a run of the kit, as the release gate does: its settings are the run's, its list is the run's, and a plugin
that takes the run's verdict leaves the kit publishing none of its own."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

DRIVER = """
import json
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate.known_failures import KnownFailures

OUT = Path(__file__).parent / "driver-out"


@pytest.hookimpl
def pytest_a2a_settings(config, settings):
    return settings.replace("driver", summary_dir=str(OUT))


@pytest.hookimpl
def pytest_a2a_known_failures(config, settings):
    return KnownFailures.from_wire(KNOWN) if KNOWN else None


@pytest.hookimpl
def pytest_a2a_verdict(config, run):
    if not TAKES_VERDICT:
        return None
    OUT.mkdir(exist_ok=True)
    (OUT / "taken.json").write_text(json.dumps({"records": len(run.records), "known": run.known is not None}))
    return True
"""


def _driven(pytester: pytest.Pytester, *, takes_verdict: bool) -> pytest.RunResult:
    pytester.makeconftest(f"KNOWN = None\nTAKES_VERDICT = {takes_verdict}\n{DRIVER}")
    # In a process of its own: the run starts the embedded agent.
    return pytester.runpytest_subprocess("--pyargs", "nylorun_a2a_kit.suites", "-p", "no:randomly", "--a2a-req=SEND-01")


def test_a_driving_plugins_settings_are_the_runs(pytester: pytest.Pytester):
    result = _driven(pytester, takes_verdict=False)
    assert result.ret == 0, result.outlines[-20:]
    summary = json.loads((pytester.path / "driver-out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["total"] == {"passed": 5}, summary["counts"]
    assert not (pytester.path / "reports" / "out" / "summary.json").exists()


def test_a_plugin_that_takes_the_verdict_leaves_the_kit_publishing_none(pytester: pytest.Pytester):
    result = _driven(pytester, takes_verdict=True)
    assert result.ret == 0, result.outlines[-20:]
    taken = json.loads((pytester.path / "driver-out" / "taken.json").read_text(encoding="utf-8"))
    assert taken == {"records": 5, "known": False}
    assert not (pytester.path / "driver-out" / "summary.json").exists()
    assert not any(line.startswith("summary:") for line in result.outlines)
