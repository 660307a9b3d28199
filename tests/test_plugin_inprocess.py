"""The plugin's answers to bad input, in-process with pytester: each run ends before collection, in one line.

These runs happen in the test's own process (``pytester.runpytest_inprocess``): the plugin loads by its entry
point as it does anywhere, and every one of them stops while configuring, before any agent or Hypothesis
profile is touched.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]
USAGE_ERROR = 4
SUITES = ("--pyargs", "nylorun_a2a_kit.suites")


def _one_error_line(result: pytest.RunResult) -> str:
    assert result.ret == USAGE_ERROR, result.outlines + result.errlines
    errors = [line for line in result.errlines + result.outlines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.errlines
    assert not any("Traceback" in line for line in result.errlines + result.outlines)
    assert len(errors[0]) < 300, errors[0]
    return errors[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--a2a-timeout-s=soon"],
        ["--a2a-claim=gold"],
        ["--a2a-req=NOPE-99"],
        ["--a2a-reference-mutant=no-such-fault"],
        ["--target-url=ftp://agent.example/a2a"],
        ["--target-url=http://[::1/v1/a2a/agents/support"],
        ["--target-url=http://127.0.0.1:port/v1/a2a/agents/support"],
        ["--target-url=http://127.0.0.1:9/v1/a2a/agents/support"],
        ["--a2a-property-profile=exhaustive"],
        ["--a2a-delivery-in=header"],
        ["--a2a-push-listen=abc"],
        ["--a2a-push-listen=http://127.0.0.1:8099"],
        ["--a2a-summary-dir=/proc/nope"],
        ["--alluredir=/proc/nope"],
        ["--a2a-sarif=/proc/nope/a2a.sarif"],
        ["--a2a-evidence=/proc/nope/a2a-evidence.json.gz"],
        ["--a2a-push-relay=http://127.0.0.1:9"],
        ["--a2a-other-subject=a2a:conformance"],
    ],
    ids=[
        "timeout",
        "claim",
        "req",
        "fault",
        "scheme",
        "bad-ipv6",
        "bad-port",
        "unreachable",
        "property-profile",
        "delivery-in",
        "push-listen",
        "push-listen-url",
        "summary-dir",
        "alluredir",
        "sarif",
        "evidence",
        "relay-without-a-target",
        "same-subject",
    ],
)
def test_bad_input_ends_the_run_in_one_line(pytester: pytest.Pytester, args):
    _one_error_line(pytester.runpytest_inprocess(*SUITES, *args))


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("NYLORUN_A2A_CLAIM", "gold"),
        ("NYLORUN_A2A_TIMEOUT_S", "soon"),
        ("NYLORUN_A2A_PUSH_LISTEN", "abc"),
        ("NYLORUN_A2A_STRICT_SHOULD", "perhaps"),
        ("NYLORUN_A2A_RATE_LIMIT_ATTEMPTS", "-1"),
    ],
)
def test_a_bad_environment_value_names_the_variable_and_the_value(pytester, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    error = _one_error_line(pytester.runpytest_inprocess(*SUITES))
    assert variable in error and repr(value) in error, error


def test_an_error_names_the_environment_variable_the_value_came_from(pytester, monkeypatch):
    monkeypatch.setenv("NYLORUN_A2A_SUBJECT", "a2a:same")
    monkeypatch.setenv("NYLORUN_A2A_OTHER_SUBJECT", "a2a:same")
    error = _one_error_line(pytester.runpytest_inprocess(*SUITES))
    assert "NYLORUN_A2A_OTHER_SUBJECT must differ from NYLORUN_A2A_SUBJECT" in error, error


def test_a_project_that_did_not_ask_for_the_kit_runs_as_without_it(pytester):
    pytester.makepyfile("def test_own():\n    assert True\n")
    # In-process, the kit is imported already, so pytest cannot rewrite its asserts; installed, it can.
    quiet = ("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning")
    with_kit = pytester.runpytest_inprocess(*quiet)
    without = pytester.runpytest_inprocess(*quiet, "-p", "no:nylorun_a2a_kit")
    assert with_kit.ret == without.ret == 0
    said = [line for line in with_kit.outlines if "a2a" in line.lower() and not line.startswith("plugins:")]
    assert not said, said
    assert not (pytester.path / "reports").exists(), "the inert plugin wrote nothing"


LISTED = """
[[known]]
requirement = "TASK-05"
reason = "GetTask on a missing task answers -32602"
link = "https://tracker.example/runtime/1"
"""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[[known]\nrequirement = 'TASK-05'", "not valid TOML"),
        ('[[known]]\nrequirement = "NOPE-01"\nreason = "r"\nlink = "https://t.example/1"', "unknown requirement"),
        (LISTED + LISTED, "a second time"),
        (LISTED + "expires = 2020-01-01\n", "expired on 2020-01-01"),
        ('[[known]]\nrequirement = "TASK-05"\nreason = "r"', "tracking link"),
        (
            '[[known]]\ntest = "suites/test_tasks.py::test_nothing"\nreason = "r"\nlink = "https://t.example/1"',
            "no kit",
        ),
        ('[[unverified]]\nrequirement = "ISO-01"', "needs a reason"),
    ],
    ids=["syntax", "unknown-id", "duplicate", "expired", "no-link", "unknown-test", "unverified-no-reason"],
)
def test_an_invalid_list_stops_the_run_in_one_line(pytester: pytest.Pytester, text, says):
    (pytester.path / "known").mkdir()
    (pytester.path / "known" / "9.9.9.toml").write_text(text, encoding="utf-8")
    error = _one_error_line(
        pytester.runpytest_inprocess(*SUITES, "--a2a-release=9.9.9", "--a2a-known-failures-dir=known")
    )
    assert says in error, error


def test_an_interrupt_python_ignored_in_a_callback_shows_no_traceback_in_a_kit_run(pytester: pytest.Pytester):
    """A run stopping interrupts its workers; one interrupt that lands where Python ignores it (a collector's callback,
    a finaliser) is noise of the stop: a kit run shows no traceback of it. Without the kit, pytest's warning stays."""
    pytester.makepyfile(
        """
        class Interrupting:
            def __del__(self):
                raise KeyboardInterrupt

        def test_own():
            Interrupting()
        """
    )
    plain = pytester.runpytest_subprocess("-p", "no:nylorun_a2a_kit", "-p", "no:randomly")
    assert "KeyboardInterrupt" in plain.stdout.str(), plain.stdout.str()
    kit = pytester.runpytest_subprocess("--a2a-timeout-s=5", "-p", "no:randomly")
    kit.assert_outcomes(passed=1)
    assert "Traceback" not in kit.stdout.str() and "KeyboardInterrupt" not in kit.stdout.str(), kit.stdout.str()
