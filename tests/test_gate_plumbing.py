"""The gate's plumbing, proven on a small synthetic suite: what each outcome of a check becomes (a new failure, a
known one, a fixed one, a SHOULD not met, not checked), the summary, JUnit's properties and Allure's labels.

The synthetic suite stands where the kit's suites stand (``check_ids.suites_dir``) and runs in this process
(pytester, as xdist and schemathesis test themselves): its checks name real requirements and end as each test
needs, so every outcome is made on purpose, in a run of five checks that costs a tenth of a second. The embedded
reference agent starts as in any run (the plugin resolves its target first); one check asks it one thing, so that
a failure has an exchange to quote. What a real Runtime's answers become is proven by runs of the real suites
(``test_release.py``, the release rehearsal, the fault and variation proofs).
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.gate import sarif
from nylorun_a2a_kit.fixtures.push import free_port
from nylorun_a2a_kit.fixtures.requirements import check_ids
from tests.sarif_schema import valid_sarif

pytest_plugins = ["pytester"]

FAILING = "suites/test_synthetic.py::test_unknown_task_is_not_found"
PASSING = "suites/test_synthetic.py::test_card_is_served"
SHOULD = "suites/test_synthetic.py::test_advice_is_taken"
NOT_CHECKED = "suites/test_synthetic.py::test_a_delivery_arrives"
SHOULD_ID = "CARD-12"  # a SHOULD of the core tier
CHECKS = f'''
import pytest

from nylorun_a2a_kit.fixtures.requirements.outcomes import not_checked


@pytest.mark.req("TASK-05")
def test_unknown_task_is_not_found(a2a_client):
    exchange = a2a_client.call("GetTask", {{"id": "no-such-task"}})
    assert False, f"GetTask on a missing task answered {{exchange.status}} (the synthetic failure)"


@pytest.mark.req("CARD-01")
def test_card_is_served():
    pass


@pytest.mark.req("{SHOULD_ID}")
def test_advice_is_taken():
    assert False, "the advice was not taken (the synthetic SHOULD not met)"


@pytest.mark.req("PUSH-03")
def test_a_delivery_arrives():
    not_checked("no receiver the target can reach", needs="--a2a-push-listen on an address the target reaches")
'''
LISTED = """
[[known]]
requirement = "TASK-05"
reason = "GetTask on a missing task answers -32602"
link = "https://tracker.example/runtime/1"
"""


@dataclass
class Run:
    """A run of the synthetic suite: pytest's result, its summary, each check's JUnit outcome and properties."""

    result: pytest.RunResult
    folder: Path

    @property
    def summary(self) -> dict:
        return json.loads((self.folder / "out" / "summary.json").read_text(encoding="utf-8"))

    @property
    def text(self) -> str:
        return "\n".join(self.result.outlines + self.result.errlines)

    def junit(self) -> dict[str, tuple[str, dict[str, list[str]], str]]:
        """Each check's outcome, its properties, and its message."""
        found = {}
        for case in ET.parse(self.folder / "junit.xml").getroot().iter("testcase"):
            properties: dict[str, list[str]] = {}
            for prop in case.iter("property"):
                properties.setdefault(prop.get("name"), []).append(prop.get("value"))
            ended = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
            outcome = "passed" if ended is None else ended.tag
            found[properties["check"][0]] = (outcome, properties, "" if ended is None else ended.get("message", ""))
        return found


@pytest.fixture
def synthetic(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """Run the synthetic suite in this process with the kit's options; the kit's state is put back after."""
    suites = pytester.path / "suites"
    suites.mkdir()
    (suites / "__init__.py").write_text("", encoding="utf-8")
    shutil.copy(check_ids.suites_dir() / "conftest.py", suites / "conftest.py")
    (suites / "test_synthetic.py").write_text(CHECKS, encoding="utf-8")
    monkeypatch.setattr(check_ids, "suites_dir", lambda: suites.resolve())
    monkeypatch.setattr(oracle, "_MODEL", None)  # a run turns the oracle on in its process: off again after
    for name in [n for n in os.environ if n.startswith(("PYTEST_XDIST", "NYLORUN_", sarif.STEP_SUMMARY_ENV))]:
        monkeypatch.delenv(name)  # this process may be a worker of the kit's own tests, or a GitHub job's step
    check_ids.module_id.cache_clear()

    def run(*args: str, known: str | None = None, enforce: bool = False) -> Run:
        listed = []
        if known is not None:
            (pytester.path / "known").mkdir(exist_ok=True)
            (pytester.path / "known" / "9.9.9.toml").write_text(known, encoding="utf-8")
            listed = ["--a2a-release=9.9.9", "--a2a-known-failures-dir=known"]
        (pytester.path / "allure").mkdir(exist_ok=True)
        result = pytester.runpytest_inprocess(
            str(suites),
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "--junitxml=junit.xml",
            "--alluredir=allure",
            "--clean-alluredir",
            "--a2a-summary-dir=out",
            *([] if enforce else ["--a2a-enforce-claim=no"]),  # four checks verify no tier
            *listed,
            *args,
        )
        check_ids.module_id.cache_clear()
        return Run(result, pytester.path)

    yield run
    check_ids.module_id.cache_clear()


@pytest.mark.req("REL-01")
def test_a_failure_not_on_the_list_blocks_the_release(synthetic):
    run = synthetic(known="")
    assert run.result.ret == 1, run.text
    assert "release gate: blocked" in run.text
    assert run.summary["verdict"] == "fail" and run.summary["new_failures"] == [FAILING]
    outcomes = {check: found[0] for check, found in run.junit().items()}
    assert outcomes == {FAILING: "failure", PASSING: "passed", SHOULD: "skipped", NOT_CHECKED: "skipped"}, outcomes


@pytest.mark.req("REL-02")
def test_a_listed_failure_is_known_and_does_not_block(synthetic):
    run = synthetic(known=LISTED)
    assert run.result.ret == 0, run.text
    outcome, _, message = run.junit()[FAILING]
    assert outcome == "skipped" and "known failure" in message
    summary = run.summary
    assert summary["verdict"] == "pass" and summary["counts"]["total"].get("known") == 1
    [entry] = summary["known_failures"]
    assert entry["id"] == "TASK-05" and entry["state"] == "failed as expected" and entry["reason"]


@pytest.mark.req("REL-02")
def test_a_listed_check_that_passes_is_reported_fixed_and_fails_only_when_strict(synthetic):
    listed = LISTED.replace("TASK-05", "CARD-01")
    relaxed = synthetic("-k", "not unknown_task", known=listed)
    assert relaxed.result.ret == 0, relaxed.text
    assert relaxed.summary["known_failures"][0]["state"] == "fixed: remove it from the list"
    assert relaxed.summary["counts"]["total"].get("fixed") == 1 and relaxed.junit()[PASSING][0] == "passed"
    strict = synthetic("-k", "not unknown_task", "--a2a-strict-known=yes", known=listed)
    assert strict.result.ret == 1, strict.text
    assert "remove it from the list" in strict.text and strict.junit()[PASSING][0] == "failure"


def test_a_should_not_met_is_reported_and_fails_only_when_strict(synthetic):
    relaxed = synthetic("-k", "advice")
    outcome, _, message = relaxed.junit()[SHOULD]
    assert relaxed.result.ret == 0 and outcome == "skipped", relaxed.text
    assert relaxed.summary["counts"]["total"] == {"should": 1} and f"{SHOULD_ID} (SHOULD) not met" in message
    strict = synthetic("-k", "advice", "--a2a-strict-should=yes")
    assert strict.result.ret == 1 and strict.junit()[SHOULD][0] == "failure", strict.text


def test_a_check_not_checked_says_why_and_what_would_let_it_run(synthetic):
    run = synthetic("-k", "delivery")
    outcome, _, message = run.junit()[NOT_CHECKED]
    assert run.result.ret == 0 and outcome == "skipped", run.text
    assert run.summary["counts"]["total"] == {"not-checked": 1} and "no receiver the target can reach" in message
    [push] = [u for u in run.summary["unverified"] if u["requirement"] == "PUSH-03"]
    assert push["needs"] == ["--a2a-push-listen on an address the target reaches"], push
    assert "needs --a2a-push-listen on an address the target reaches" in run.text, "the run's end says what to do"


@pytest.mark.req("REL-03")
def test_every_run_writes_a_summary_to_publish(synthetic):
    run = synthetic(known=LISTED)
    summary = run.summary
    assert summary["kit"]["version"] and summary["release"] == "9.9.9"
    assert summary["target"]["card_version"] == "0.1.0" and summary["target"]["tier_claimed"] == "profile-v2"
    assert "tier_reached" in summary["target"] and summary["tiers"]
    assert summary["counts"]["by_area"] and summary["counts"]["by_tier"]
    assert summary["known_failures"][0]["reason"] and summary["known_failures"][0]["link"]
    assert 0 < summary["requirements"]["coverage_percent"] <= 100
    text = (run.folder / "out" / "summary.md").read_text(encoding="utf-8")
    for heading in ("## Checks per area", "## Checks per tier", "## Known failures"):
        assert heading in text


def test_junit_names_each_checks_requirements_and_its_failure_its_rule(synthetic):
    run = synthetic()
    found = run.junit()
    assert {check: properties["requirement"] for check, (_, properties, _) in found.items()} == {
        FAILING: ["TASK-05"],
        PASSING: ["CARD-01"],
        SHOULD: [SHOULD_ID],
        NOT_CHECKED: ["PUSH-03"],
    }
    assert all(properties["check"] == [check] for check, (_, properties, _) in found.items())
    assert "TASK-05 (MUST): GetTask of an id that does not exist" in found[FAILING][2], "a failure leads with its rule"
    assert run.summary["counts"]["total"] == {"failed": 1, "passed": 1, "should": 1, "not-checked": 1}


@pytest.mark.req("REL-05")
def test_a_claim_with_unverified_requirements_blocks_unless_the_list_accepts_them(synthetic):
    claimed = synthetic("-k", "card or delivery", "--a2a-claim=core", enforce=True)
    assert claimed.result.ret == 1, claimed.text
    unverified = claimed.summary["unverified"]
    assert unverified and all(u["accepted"] is None and u["reason"] for u in unverified)
    assert any(u["requirement"] == "PUSH-03" and u["needs"] for u in unverified), "what would verify it is named"
    said = f"release gate: blocked ({len(unverified)} requirements of the claimed tier not verified)"
    assert said in claimed.text, claimed.text[-2000:]
    accepted = "".join(
        f'[[unverified]]\nrequirement = "{u["requirement"]}"\nreason = "not in this suite"\n' for u in unverified
    )
    listed = synthetic("-k", "card or delivery", "--a2a-claim=core", known=accepted, enforce=True)
    assert listed.result.ret == 0, listed.text
    text = (listed.folder / "out" / "summary.md").read_text(encoding="utf-8")
    assert "## Not verified (blocks the claimed tier)" in text and "yes: not in this suite" in text
    assert all(u["accepted"] for u in listed.summary["unverified"])


def test_allure_results_carry_requirement_labels_exchanges_and_environment(synthetic):
    run = synthetic()
    results = run.folder / "allure"
    found = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    failed = next(r for r in found if r["name"] == "test_unknown_task_is_not_found")
    labels = {(label["name"], label["value"]) for label in failed["labels"]}
    assert {("epic", "tasks"), ("story", "TASK-05"), ("severity", "critical"), ("tag", "core")} <= labels
    assert failed["links"] and "/docs/a2a/client" in failed["links"][0]["url"]
    attachment = next(a for a in failed["attachments"] if a["name"] == "A2A exchanges")
    assert "→ POST" in (results / attachment["source"]).read_text()
    environment = (results / "environment.properties").read_text()
    assert "card.version=0.1.0" in environment and "kit.version=" in environment and "kit.commit=" in environment
    assert "tier.reached=" in environment and "verdict=fail (1 new failures)" in environment
    described = [r for r in found if r.get("description")]
    assert len(described) == len(found) and "TASK-05" in failed["description"], "every result states its rule"
    assert json.loads((results / "categories.json").read_text())


def test_the_verdict_as_sarif_validates_one_rule_a_requirement_one_result_a_new_failure(synthetic):
    run = synthetic("--a2a-sarif=out/a2a.sarif")
    assert "SARIF: out/a2a.sarif" in run.text
    log = valid_sarif(run.folder / "out" / "a2a.sarif")
    [found] = log["runs"]
    rules = {rule["id"]: rule for rule in found["tool"]["driver"]["rules"]}
    assert rules["TASK-05"]["defaultConfiguration"]["level"] == "error"
    assert rules[SHOULD_ID]["defaultConfiguration"]["level"] == "warning"
    assert rules["TASK-05"]["helpUri"].startswith("https://") and rules["TASK-05"]["fullDescription"]["text"]
    [result] = found["results"]  # the SHOULD not met and the check not checked block nothing
    assert result["ruleId"] == "TASK-05" and found["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "TASK-05"
    assert result["level"] == "error" and "the synthetic failure" in result["message"]["text"]
    [location] = result["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {
        "uri": "suites/test_synthetic.py",
        "uriBaseId": "NYLORUN_A2A_KIT",
    }
    assert location["logicalLocations"][0]["fullyQualifiedName"] == FAILING
    assert result["partialFingerprints"] == {"a2aCheck/v1": FAILING}, "the same failure next run is the same alert"
    assert found["properties"]["verdict"] == "fail"


def test_sarif_names_each_requirement_of_an_enforced_claim_not_verified(synthetic):
    run = synthetic("-k", "card", "--a2a-claim=core", "--a2a-sarif=out/a2a.sarif", enforce=True)
    found = valid_sarif(run.folder / "out" / "a2a.sarif")["runs"][0]["results"]
    unverified = {u["requirement"] for u in run.summary["unverified"] if not u["accepted"]}
    assert unverified and {r["ruleId"] for r in found} == unverified and len(found) == len(unverified)
    assert all("of the claimed tier not verified" in r["message"]["text"] for r in found)


def test_sarif_names_each_new_tck_failure_at_its_module():
    summary = {
        "kit": {"name": "nylorun-a2a-kit", "version": "0"},
        "release": "9.9.9",
        "verdict": "fail",
        "verdict_reasons": ["TCK: 1 new failures"],
        "target": {"claim_enforced": False, "tier_claimed": "core", "tier_reached": None},
        "failures_by_cause": [],
        "unverified": [],
        "tck": {"new_failures": ["tests.compatibility.jsonrpc.test_error_codes.TestMappings::test_task_not_found"]},
    }
    [result] = sarif.sarif(summary)["runs"][0]["results"]
    assert result["ruleId"] == sarif.TCK_RULE
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "tests/compatibility/jsonrpc/test_error_codes.py", "uriBaseId": "A2A_TCK"}


def test_a_github_job_gets_the_summary_in_its_step_summary(synthetic, monkeypatch, tmp_path):
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv(sarif.STEP_SUMMARY_ENV, str(step))
    run = synthetic()
    written = step.read_text(encoding="utf-8")
    assert written.startswith("earlier step\n"), "a step summary is appended to, never replaced"
    assert written.endswith((run.folder / "out" / "summary.md").read_text(encoding="utf-8"))


BASELINE = ("--a2a-release=9.9.9", "--a2a-known-failures-dir=known", "--a2a-write-baseline")


def _error_line(run: Run) -> str:
    errors = [line for line in run.result.errlines + run.result.outlines if line.startswith("ERROR:")]
    assert run.result.ret == 4 and len(errors) == 1 and "Traceback" not in run.text, run.text
    return errors[0]


def test_a_releases_first_list_is_written_from_a_run_and_refused_until_filled(synthetic):
    written = synthetic(*BASELINE)
    assert written.result.ret == 1, written.text  # the run's own verdict: its failure is not on a list yet
    listed = written.folder / "known" / "9.9.9.toml"
    assert "known-failures list written: known/9.9.9.toml (1 entries" in written.text, written.text[-1500:]
    text = listed.read_text(encoding="utf-8")
    assert f'test = "{FAILING}"' in text and 'owner = ""' in text and 'reason = ""' in text, text
    assert "GetTask on a missing task answered" in text, "the entry says what the run saw"
    refused = synthetic("--a2a-release=9.9.9", "--a2a-known-failures-dir=known")
    assert "needs a reason (an entry --write-baseline wrote leaves it to fill)" in _error_line(refused)
    filled = text.replace('owner = ""', 'owner = "runtime-tasks"').replace('reason = ""', 'reason = "-32602"')
    listed.write_text(filled.replace('link = ""', 'link = "https://tracker.example/runtime/1"'), encoding="utf-8")
    known = synthetic("--a2a-release=9.9.9", "--a2a-known-failures-dir=known")
    assert known.result.ret == 0 and known.summary["known_failures"][0]["state"] == "failed as expected", known.text


def test_a_first_list_names_each_requirement_of_an_enforced_claim_not_verified(synthetic):
    run = synthetic(*BASELINE, "-k", "card", "--a2a-claim=core", enforce=True)
    text = (run.folder / "known" / "9.9.9.toml").read_text(encoding="utf-8")
    unverified = [u["requirement"] for u in run.summary["unverified"] if not u["accepted"]]
    assert unverified and text.count("[[unverified]]") == len(unverified), text[:800]
    assert all(f'requirement = "{rid}"' in text for rid in unverified)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--a2a-write-baseline",), "--a2a-write-baseline writes the list of a release: name it with --a2a-release"),
        (BASELINE, "exists; a starter list is never written over a list"),
    ],
    ids=["no-release", "over-a-list"],
)
def test_a_first_list_without_a_release_or_over_a_list_is_one_line(synthetic, args, says):
    listed = Path("known") / "9.9.9.toml"  # pytester runs each test in a folder of its own
    listed.parent.mkdir()
    listed.write_text(LISTED, encoding="utf-8")
    run = synthetic(*args)
    assert says in _error_line(run)
    assert (run.folder / listed).read_text(encoding="utf-8") == LISTED, "nothing is overwritten"


def test_a_run_compared_with_the_last_release_names_what_regressed_and_what_improved(synthetic):
    previous = synthetic().summary  # then edited into the last release's: what passed and failed there
    previous["release"] = "1.3.0"
    del previous["checks"][NOT_CHECKED]  # a check the last release's run did not have
    previous["checks"] |= {SHOULD: "passed", PASSING: "failed", "suites/test_synthetic.py::test_gone": "passed"}
    previous["requirements"]["failed"] = ["CARD-01"]
    (Path("previous")).mkdir()
    Path("previous/summary.json").write_text(json.dumps(previous), encoding="utf-8")
    now = synthetic("--a2a-compare-to=previous/summary.json")
    comparison = now.summary["comparison"]
    assert comparison["previous"]["release"] == "1.3.0" and comparison["against"] == "previous/summary.json"
    assert comparison["regressions"] == [{"check": SHOULD, "was": "passed", "now": "should"}], comparison
    assert comparison["improvements"] == [{"check": PASSING, "was": "failed", "now": "passed"}], comparison
    assert comparison["requirements"] == {"regressed": ["TASK-05"], "improved": ["CARD-01"]}
    assert comparison["not_compared"] == {"only_now": 1, "only_before": 1}, "a check one run lacks is not compared"
    assert "since release 1.3.0: 1 checks regressed (TASK-05), 1 improved (CARD-01)" in now.text, now.text[-1500:]
    text = (now.folder / "out" / "summary.md").read_text(encoding="utf-8")
    assert "## Since release 1.3.0" in text and f"| `{SHOULD}` | passed | should |" in text, text[:1500]


@pytest.mark.parametrize(
    ("text", "says"),
    [("not json", "is not JSON"), ('{"kit": {"version": "0.0.1"}}', "has no outcome per check (kit 0.0.1 wrote it)")],
    ids=["not-json", "older-kit"],
)
def test_a_comparison_with_no_summary_of_this_kit_is_one_line(synthetic, text, says):
    Path("previous.json").write_text(text, encoding="utf-8")
    error = _error_line(synthetic("--a2a-compare-to=previous.json"))
    assert error.startswith("ERROR: --a2a-compare-to previous.json: ") and says in error, error


INTERRUPTED_AS_THE_RUN_ENDS = """
import pytest


class _Interrupted:
    \"\"\"Garbage whose collection is interrupted, as xdist's interrupt lands in a collector's callback.\"\"\"

    def __init__(self):
        self.cycle = self

    def __del__(self):
        raise KeyboardInterrupt


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    _Interrupted()  # collected by pytest's own last collection, which says what Python ignored in it
"""


def test_an_interrupt_ignored_as_a_stopped_run_ends_prints_no_traceback(pytester):
    """A run that stops interrupts its other workers; an interrupt Python ignored in a collector's callback is
    gathered by pytest once more as each process's run ends, outside every check: never printed with a traceback
    (the run's one line is all it says). In processes of their own, as a gated run's workers are."""
    pytester.makeconftest(INTERRUPTED_AS_THE_RUN_ENDS)
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-n", "1", "--a2a-summary-dir=out")
    text = "\n".join(result.outlines + result.errlines)
    assert result.ret == 0 and "KeyboardInterrupt" not in text and "Traceback" not in text, text


def test_a_run_in_this_process_leaves_httpx_mapping_its_errors(pytester):
    """A check pytester runs in this process makes its clients with the HTTP stack this process imported before it
    (the kit's tests' conftest), so a refused connection after it is still httpx's ConnectError: a relay lost, an
    address closed, are what the kit's checks see, never another copy's error."""
    unused_port = free_port()
    pytester.makepyfile(
        test_client=f"import httpx\n\ndef test_refused():\n    try:\n        httpx.get('http://127.0.0.1:{unused_port}/')"
        "\n    except httpx.ConnectError:\n        pass\n"
    )
    pytester.inline_run("-p", "no:randomly").assertoutcome(passed=1)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{unused_port}/")


SENTINEL_AFTER_THE_CONTROLLER_CLEANS = """
import os

import pytest


@pytest.hookimpl(trylast=True)  # after allure-pytest emptied --alluredir in this process
def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        open(os.path.join(config.option.allure_report_dir, "written-before-the-workers"), "w").close()
"""


def test_allure_results_are_emptied_once_before_the_workers_of_a_run_start(pytester):
    """--clean-alluredir empties the folder once, in the controller: the workers of a kit run start in turns, and
    one that emptied it again would delete what an earlier one wrote (a check's teardown then fails on its own
    results, and the gate blocks). Deterministic: whatever the controller writes after its own cleaning stays."""
    pytester.makeconftest(SENTINEL_AFTER_THE_CONTROLLER_CLEANS)
    pytester.makepyfile(test_four="import pytest\n\n@pytest.mark.parametrize('n', range(4))\ndef test_n(n):\n    pass")
    allure = pytester.path / "allure"
    allure.mkdir()
    (allure / "left-by-the-last-run").write_text("", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-n", "2", "--alluredir=allure", "--clean-alluredir", "--a2a-summary-dir=out"
    )
    text = "\n".join(result.outlines + result.errlines)
    assert result.ret == 0, text
    kept = sorted(p.name for p in allure.iterdir())
    assert "written-before-the-workers" in kept and "left-by-the-last-run" not in kept, kept
    assert len(list(allure.glob("*-result.json"))) == 4, kept
