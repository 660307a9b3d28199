"""The gate's one verdict, the known-failures policy and the published summary, on synthetic outcomes.

As pytest-xdist tests its scheduler on a mock node, these build a run's records by hand (one per requirement, an
outcome each) and ask the verdict what it makes of them; the whole runs that prove the same through a real run
keep one of each command and workflow (tests/test_release.py).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate import report
from nylorun_a2a_kit.fixtures.gate.known_failures import KnownFailure, KnownFailures
from nylorun_a2a_kit.fixtures.gate.verdict import Record, Run, publish
from nylorun_a2a_kit.fixtures.requirements import catalog as requirements
from nylorun_a2a_kit.fixtures.requirements import outcomes

TARGET = {"url": "http://127.0.0.1:9/v1/a2a/agents/support", "card_url": "http://127.0.0.1:9/card"}


def _checkable(tier: str) -> list[str]:
    return sorted(
        r.id for r in requirements.load().values() if r.tier == tier and r.later is None and r.checked_by is None
    )


CORE = _checkable("core")


def _run(outcome_of: dict[str, str], *, claim: str = "core", known: KnownFailures | None = None, enforced=True):
    """A run with one check per requirement of ``claim``'s tiers, passed unless ``outcome_of`` says otherwise."""
    records = {}
    for rid in CORE if claim == "core" else [r for t in ("core", "profile-v1", "profile-v2") for r in _checkable(t)]:
        outcome = outcome_of.get(rid, outcomes.PASSED)
        if outcome is None:
            continue  # no check of it ran
        test = f"suites/test_synthetic.py::test_{rid.lower().replace('-', '_')}"
        records[test] = Record(test, outcome, [rid], message=f"{rid} {outcome}", cause=f"{rid} broke")
    return Run(records, {**TARGET, "claim": claim}, known=known, enforced=enforced)


def _list(*entries: KnownFailure) -> KnownFailures:
    return KnownFailures("9.9.9", Path("known-failures/9.9.9.toml"), entries)


def test_every_requirement_passed_is_a_pass_at_the_claimed_tier():
    summary = publish(_run({}))
    assert summary["verdict"] == "pass" and summary["verdict_reasons"] == []
    assert summary["target"]["tier_reached"] == "core"


def test_a_failure_not_on_the_list_blocks_the_release():
    failed = CORE[0]
    summary = publish(_run({failed: outcomes.FAILED}))
    assert summary["verdict"] == "fail" and summary["verdict_reasons"] == ["1 new failures"]
    assert summary["requirements"]["failed"] == [failed] and summary["target"]["tier_reached"] is None


def test_a_known_failure_does_not_block_and_is_named():
    listed = _list(KnownFailure("requirement", CORE[0], "the release answers the wrong code", "https://t/1"))
    summary = publish(_run({CORE[0]: outcomes.KNOWN}, known=listed))
    assert summary["verdict"] == "pass" and summary["target"]["tier_reached"] == "core"
    assert [e["state"] for e in summary["known_failures"]] == ["failed as expected"]
    assert "1 known failures" in summary["tiers"][0]


def test_a_fixed_known_failure_does_not_block():
    listed = _list(KnownFailure("requirement", CORE[0], "fixed since", "https://t/2"))
    summary = publish(_run({CORE[0]: outcomes.FIXED}, known=listed))
    assert summary["verdict"] == "pass"


def test_a_should_not_met_is_reported_and_never_blocks():
    summary = publish(_run({CORE[0]: outcomes.SHOULD}))
    assert summary["verdict"] == "pass" and summary["target"]["tier_reached"] == "core"
    assert "1 SHOULD not met" in summary["tiers"][0]


@pytest.mark.parametrize("enforced", [True, False], ids=["enforced", "not-enforced"])
def test_a_requirement_not_verified_blocks_a_claim_only_when_enforced(enforced):
    unverified = CORE[-1]
    summary = publish(_run({unverified: None}, enforced=enforced))
    assert (summary["verdict"] == "fail") is enforced, summary["verdict_reasons"]
    assert summary["target"]["tier_reached"] is None, "a tier with a requirement not verified is not reached"
    [entry] = summary["unverified"]
    assert entry["requirement"] == unverified and entry["accepted"] is None


def test_the_list_accepts_a_requirement_not_verified_with_its_reason(tmp_path):
    unverified = CORE[-1]
    listed = _list(KnownFailure("unverified", unverified, "needs the scenario contract", None))
    summary = publish(_run({unverified: None}, known=listed))
    assert summary["verdict"] == "pass" and summary["target"]["tier_reached"] == "core"
    [entry] = summary["unverified"]
    assert entry["accepted"], entry
    _, markdown = report.write(summary, tmp_path)
    text = markdown.read_text(encoding="utf-8")
    assert "## Not verified" in text and "needs the scenario contract" in text


def test_a_check_not_checked_leaves_its_requirement_unverified_with_what_it_needs():
    rid = CORE[0]
    run = _run({})
    test = next(iter(run.records))
    run.records[test] = Record(test, outcomes.NOT_CHECKED, [rid], message="not checked: no push", needs="--a2a-x")
    summary = publish(run)
    assert [u["requirement"] for u in summary["unverified"]] == [rid]
    assert [item["test"] for item in summary["not_checked"]] == [test]


def test_not_applicable_everywhere_takes_a_requirement_out_of_the_tier():
    summary = publish(_run({CORE[0]: outcomes.NOT_APPLICABLE}))
    assert summary["verdict"] == "pass" and CORE[0] in summary["requirements"]["not_applicable"]


def test_a_target_that_stopped_answering_gets_no_verdict():
    run = _run({CORE[0]: outcomes.NO_VERDICT})
    run.stopped = "the target stopped answering at 12:00:00"
    summary = publish(run)
    assert summary["verdict"] == "no-verdict" and summary["verdict_reasons"] == [run.stopped]


def test_a_profile_claim_is_reached_only_when_every_tier_below_is():
    failed_core = CORE[0]
    summary = publish(_run({failed_core: outcomes.FAILED}, claim="profile-v2"))
    assert summary["target"]["tier_reached"] is None
    assert publish(_run({}, claim="profile-v2"))["target"]["tier_reached"] == "profile-v2"


def test_an_expired_entry_is_refused_when_the_list_is_read(tmp_path):
    from nylorun_a2a_kit.fixtures.gate.known_failures import KnownFailuresError, load

    folder = tmp_path / "known-failures"
    folder.mkdir()
    (folder / "1.0.0.toml").write_text(
        f'[[known]]\nrequirement = "{CORE[0]}"\nreason = "r"\nlink = "https://t/3"\nexpires = 2020-01-01\n',
        encoding="utf-8",
    )
    with pytest.raises(KnownFailuresError, match="expire"):
        load("1.0.0", folder, today=date(2026, 1, 1))


def test_new_failures_are_grouped_by_the_requirement_that_broke():
    """One deviation, one group: checks of other requirements failed by the oracle's rule of one requirement are
    grouped under that one, and apart from a check that failed its own rule with the same words."""
    oracle_line = "nylorun_a2a_kit.fixtures.client.exchange.OracleDisagreement: SHAPE-02 (MUST): What a2a.proto asks"
    records = {
        f"suites/test_x.py::test_{n}": Record(
            f"suites/test_x.py::test_{n}", outcomes.FAILED, [rid], message=message, cause=cause
        )
        for n, rid, message, cause in (
            ("a", "LIST-01", oracle_line, "the model disagrees"),
            ("b", "TASK-02", oracle_line, "the model disagrees"),
            ("c", "SHAPE-02", "VerdictError: SHAPE-02 (MUST): no contextId", "the Agent's message names no contextId"),
            ("d", "ERR-12", "VerdictError: ERR-12 (MUST): a notification got a reply", "a notification got a reply"),
        )
    }
    groups = publish(Run(records, {**TARGET, "claim": "core"}))["failures_by_cause"]
    assert [(g["requirement"], len(g["tests"])) for g in groups] == [("ERR-12", 1), ("SHAPE-02", 2), ("SHAPE-02", 1)]
    assert groups[1]["cause"] == "SHAPE-02: the model disagrees" and groups[1]["tests"] == [
        "suites/test_x.py::test_a",
        "suites/test_x.py::test_b",
    ]
