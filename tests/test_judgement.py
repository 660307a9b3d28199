"""A check is judged on what was answered: an answer that is no JSON-RPC Response fails only the rules that own
one (ERR-14, and ERR-03/ERR-12 for their requests); every other check is not checked; nothing in a report can
break the run under xdist; a Hypothesis property ends on such an answer instead of calling the target flaky."""

from __future__ import annotations

import json
from types import SimpleNamespace

import httpx
import pytest

from nylorun_a2a_kit.fixtures.client import Exchange, NoResponse
from nylorun_a2a_kit.fixtures.gate.verdict import root_cause
from nylorun_a2a_kit.fixtures.plugin import deciding
from nylorun_a2a_kit.fixtures.scenarios import properties
from tests.suite_runs import run_suites

OWNERS = {"ERR-03", "ERR-12", "ERR-14"}


@pytest.mark.slow
def test_an_agent_answering_500_to_everything_fails_only_the_rules_that_own_a_response(tmp_path):
    out = tmp_path / "out"
    run = run_suites(tmp_path, "--a2a-reference-mutant=rpc-answers-500", "-n", "2", f"--a2a-summary-dir={out}")
    assert run.returncode == 1 and "INTERNALERROR" not in run.output, run.output[-3000:]
    failed = run.failed_requirements()
    assert "ERR-14" in failed and failed <= OWNERS, f"failed beyond the owners of a Response: {failed - OWNERS}"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["requirements"]["failed"] == sorted(failed)
    quoted = {(r["status"], r["body"]) for r in summary["no_responses"]}
    assert (500, "500 Internal Server Error") in quoted, summary["no_responses"][:3]
    judged_elsewhere = [t for t, m in run.messages.items() if "ERR-14 reports the answer" in m]
    assert judged_elsewhere and all(run.outcomes[t] == "skipped" for t in judged_elsewhere)
    assert "(SHOULD) not met" not in run.output, "a missing Response is no SHOULD not met (JSON-RPC 2.0 §5)"


def _no_response() -> NoResponse:
    exchange = Exchange(method="ListTasks", url="http://127.0.0.1:9", request_headers=httpx.Headers(), request_body=b"")
    exchange.status, exchange.response_body = 500, b"boom"
    return NoResponse("expected a JSON-RPC 2.0 Response", exchange)


def test_a_property_ends_on_an_answer_that_is_no_response(monkeypatch):
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "suites/test_x.py::test_y (call)")
    calls = []

    def prop(n: int) -> None:
        calls.append(n)
        if len(calls) == 2:
            raise _no_response()

    from hypothesis import strategies as st

    with pytest.raises(NoResponse):
        properties.check(prop, n=st.integers())
    assert len(calls) == 2, "no example after the first answer that was no Response, and no shrinking of it"


def test_a_lone_surrogate_in_a_report_is_escaped_for_xdist():
    report = SimpleNamespace(
        longrepr="the answer held \ud800 and more",
        sections=[("A2A exchanges", "← \udfff")],
        user_properties=[("a2a_cause", "got '\ud800'")],
        wasxfail="x",
    )
    deciding._cleaned(report, SimpleNamespace(excinfo=None))
    for text in (report.longrepr, report.sections[0][1], report.user_properties[0][1]):
        text.encode("utf-8")
    assert "\\ud800" in report.longrepr


def test_a_root_cause_keeps_digits_inside_words():
    assert (
        root_cause("A2A-Version 1.0 refused after 3 s by task-0123abcd4567") == "A2A-Version N refused after N s by …"
    )


def test_a_strategy_that_depends_on_the_target_ends_in_one_error_never_a_group(monkeypatch):
    # Which one depends on Hypothesis' release: the target's first failure (a flaky failure unwrapped) or a
    # KitError (a flaky strategy definition); the next test pins the second.
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "suites/test_x.py::test_y (call)")
    from hypothesis import strategies as st

    from nylorun_a2a_kit.fixtures.requirements import KitError

    answers = iter(range(10_000))

    def prop(data) -> None:
        # What the strategy draws depends on what a target answered: replaying the example draws another thing.
        data.draw(st.integers(0, 10)) if next(answers) % 2 else data.draw(st.text())
        raise AssertionError("fails, so Hypothesis replays it")

    with pytest.raises((KitError, AssertionError)) as raised:
        properties.check(prop, data=st.data())
    assert not isinstance(raised.value, BaseExceptionGroup), "the verdict is one error, never Hypothesis' group"


def test_the_kits_own_hypothesis_errors_are_kit_errors():
    from hypothesis.errors import FlakyStrategyDefinition

    from nylorun_a2a_kit.fixtures.requirements import KitError

    judged = properties._judged(FlakyStrategyDefinition("the strategy drew differently on replay"))
    assert isinstance(judged, KitError) and "no verdict on the target" in str(judged)
