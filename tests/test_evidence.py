"""The evidence bundle and ``nylorun-a2a-rejudge``: a run's bundle judged again offline gives its verdict; a bundle
changed after the run shows which judgement differs and why; one this kit cannot re-judge is one line, exit 4.
(The bundle of a failing gated run, with push deliveries, is re-judged in ``test_secrets``.)"""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate import evidence
from tests.suite_runs import made_once, run_suites, shared_dir

REJUDGE = Path(sys.executable).parent / "nylorun-a2a-rejudge"
USAGE_ERROR = 4
FAULT = "pushed-agent-message-as-user"  # the oracle finds it in every delivery that carries the Agent's message
BUNDLE = "a2a-evidence.json.gz"


@pytest.fixture(scope="module")
def bundle_path(tmp_path_factory) -> Path:
    """A run's bundle: two modules, two workers, against the embedded agent with a fault the oracle finds. Made once
    for the session, however many of its processes ask: each test reads it, or changes a copy of its own."""

    def make(where: Path) -> None:
        done = run_suites(
            where,
            f"--a2a-evidence={where / BUNDLE}",
            f"--a2a-reference-mutant={FAULT}",
            "suites/test_push_core.py",
            "suites/test_tasks.py",
            "-n",
            "2",
        )
        assert done.returncode == 1 and (where / BUNDLE).is_file(), done.output[-3000:]

    path = made_once(shared_dir(tmp_path_factory, "evidence"), "run", make) / BUNDLE
    assert path.is_file(), "the run that makes the bundle failed in another process of this session"
    return path


def _bundle(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _rejudged(tmp_path: Path, bundle: dict) -> evidence.Rejudged:
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(bundle), encoding="utf-8")
    return evidence.rejudge(evidence.read(changed))


def test_a_bundle_re_judges_to_the_same_verdict(bundle_path):
    done = subprocess.run([str(REJUDGE), str(bundle_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "re-judged: the same verdict, fail" in done.stdout, done.stdout
    bundle = _bundle(bundle_path)
    assert {"format", "kit", "requirements_digest", "options", "card", "card_digest", "run", "summary"} <= set(bundle)
    found = [r for journal in bundle["journals"].values() for r in journal if r["found"]]
    assert len(bundle["journals"]) == 2 and found, "each worker's journal, with what the oracle found in it"
    assert all(r["check"].startswith("suites/") for r in found), "each finding names the check that read it"


def test_a_judgement_recorded_otherwise_is_named_with_what_the_oracle_finds(bundle_path, tmp_path):
    bundle = _bundle(bundle_path)
    [process, index, record] = next(
        (p, i, r) for p, journal in sorted(bundle["journals"].items()) for i, r in enumerate(journal) if r["found"]
    )
    record["found"] = []  # as if the oracle had found nothing wrong in that value
    found = _rejudged(tmp_path, bundle)
    [difference] = found.differences
    assert difference.startswith(
        f"the oracle: {process} #{index} {record['call']} in {record['check']}: recorded "
        "nothing wrong; made again: TASK-15"
    ), difference


def test_a_value_changed_after_the_run_is_judged_again_as_it_reads_now(bundle_path, tmp_path):
    bundle = _bundle(bundle_path)
    record = next(r for j in bundle["journals"].values() for r in j if r["call"] == "observe_pushed" and r["found"])
    text = json.dumps(record["args"]["body"]).replace('"ROLE_USER"', '"ROLE_AGENT"')
    record["args"]["body"] = json.loads(text)  # the delivery as a correct Agent would have sent it
    found = _rejudged(tmp_path, bundle)
    assert any(d.endswith("made again: nothing wrong") for d in found.differences), found.differences


def test_a_checks_outcome_changed_after_the_run_changes_the_verdict_made_again(bundle_path, tmp_path):
    bundle = _bundle(bundle_path)
    for record in bundle["run"]["records"]:
        if record["outcome"] == "failed":
            record["outcome"] = "passed"
    found = _rejudged(tmp_path, bundle)
    assert any(d.startswith('the verdict\'s verdict: recorded "fail"; made again "pass"') for d in found.differences)


def test_a_card_changed_after_the_run_breaks_its_digest(bundle_path, tmp_path):
    bundle = _bundle(bundle_path)
    bundle["card"]["name"] = "another agent"
    found = _rejudged(tmp_path, bundle)
    assert [d for d in found.differences if d.startswith("the card:")], found.differences


def _one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == USAGE_ERROR and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ("version", "written by nylorun-a2a-kit 0.0.1, and this is"),
        ("requirements", "judged under other requirements than this kit's"),
        ("format", "no evidence bundle of this kit"),
        ("cut", "an evidence bundle without its run, journals: it was cut or changed"),
        ("records", "its run's records cannot be read"),
        ("junk", "no evidence bundle (neither JSON nor gzip-compressed JSON)"),
        ("missing", "cannot read it"),
    ],
)
def test_a_bundle_this_kit_cannot_re_judge_is_one_line_exit_4(bundle_path, tmp_path, change, says):
    bundle, path = copy.deepcopy(_bundle(bundle_path)), tmp_path / "bundle.json"
    if change == "version":
        bundle["kit"]["version"] = "0.0.1"
    elif change == "requirements":
        bundle["requirements_digest"] = "sha256:0"
    elif change == "format":
        bundle["format"] = "another/1"
    elif change == "cut":
        del bundle["run"], bundle["journals"]
    elif change == "records":
        bundle["run"]["records"][0]["unknown"] = 1
    path.write_text(json.dumps(bundle), encoding="utf-8")
    if change == "junk":
        path.write_bytes(b"\x1f\x8b not gzip")
    if change == "missing":
        path.unlink()
    assert says in _one_line(subprocess.run([str(REJUDGE), str(path)], capture_output=True, text=True, timeout=60))


def test_a_journal_record_no_run_writes_is_a_judgement_that_differs(bundle_path, tmp_path):
    bundle = _bundle(bundle_path)
    journal = next(iter(bundle["journals"].values()))
    journal.append({"call": "observe_everything", "check": "", "args": {}, "clock": [], "found": []})
    journal.append({"call": "observe", "check": "", "args": {"caller": 1}, "clock": [], "found": []})
    found = _rejudged(tmp_path, bundle)
    assert len(found.differences) == 2 and all("cannot be made again" in d for d in found.differences), found


def test_an_unwritable_evidence_file_is_one_line_exit_4(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    gate = [sys.executable, "-m", "nylorun_a2a_kit.fixtures.gate.cli", "--evidence", str(blocked / "x.json"), "--"]
    said = _one_line(subprocess.run(gate, capture_output=True, text=True, timeout=120))
    assert f"--evidence {blocked}: cannot write there" in said, said
