"""A TCK test whose expectation A2A 1.0.1 rewrote (§5.4's gRPC and HTTP+JSON cells) is reported as such when the
target answers as 1.0.1 says: no new failure, with the row. A failure that does not show the new value stays one."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate import fold, spec_changes, summary_md

REPO = Path(__file__).resolve().parent.parent
TCK = Path(os.environ.get("NYLORUN_A2A_TCK_DIR") or REPO.parent / "shared" / "a2a-tck")
CANCEL = "tests.compatibility.http_json.test_http_status.TestHttpJsonStatusCodes::test_task_not_cancelable_returns_409"


def _junit(tmp_path: Path, message: str) -> Path:
    classname, _, name = CANCEL.partition("::")
    path = tmp_path / "tck.xml"
    path.write_text(
        f'<testsuites><testsuite name="tck"><testcase classname="{classname}" name="{name}" time="0.1">'
        f'<failure message="{message}"/></testcase>'
        '<testcase classname="tck.core" name="test_send" time="0.1"/></testsuite></testsuites>',
        encoding="utf-8",
    )
    return path


def test_a_failure_on_an_expectation_1_0_1_rewrote_is_reported_with_its_row_and_blocks_nothing(tmp_path):
    folded = fold.read([_junit(tmp_path, "expected status 409, got 400")], None)
    [case] = [c for c in folded.cases if c["test"] == CANCEL]
    assert case["gate"] == "spec-changed" and "A2A 1.0.1 says 400" in case["note"], case
    assert fold.reasons(folded, strict=False) == [], "the version's change is not the Runtime's failure"
    [change] = fold.section(folded)["spec_changed"]
    assert change["row"] == "§5.4 TaskNotCancelableError, HTTP" and change["tck_expects"] == "409"
    lines = "\n".join(summary_md._tck(fold.section(folded)))
    assert f"`{CANCEL}`: §5.4 TaskNotCancelableError, HTTP: the TCK expects 409, A2A 1.0.1 says 400" in lines
    fold.write_allure(folded, tmp_path / "allure")
    statuses = {json.loads(p.read_text())["status"] for p in (tmp_path / "allure").glob("*-result.json")}
    assert statuses == {"skipped", "passed"}, statuses


@pytest.mark.parametrize(
    ("message", "pinned"),
    [
        ("expected status 409, got 500", "1.0.0"),
        ("expected status 409, got 4001", "1.0.0"),
        ("expected status 409, got 400", "1.0.1"),
    ],
    ids=["another-answer", "a-number-holding-the-new-one", "a-tck-pinned-to-1.0.1"],
)
def test_a_failure_that_is_no_change_of_the_version_stays_a_new_failure(tmp_path, message, pinned):
    folded = fold.read([_junit(tmp_path, message)], None, pinned=pinned)
    assert folded.count("failed") == [CANCEL] and fold.reasons(folded, strict=False), folded.cases


def test_the_tck_the_kit_folds_pins_1_0_0_and_names_each_changed_test():
    if not (TCK / "specification" / "version.json").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no TCK at {TCK}: .ci/run has it beside the clone")
        pytest.skip(f"not checked: no TCK at {TCK}")
    assert spec_changes.tck_spec(TCK) == "1.0.0" and spec_changes.tck_spec(None) == "1.0.0"
    for test in spec_changes.CHANGED:
        dotted, _, name = test.partition("::")
        module, _, cls = dotted.rpartition(".")
        tree = ast.parse((TCK / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert cls in classes, test
        assert name in {n.name for n in ast.walk(classes[cls]) if isinstance(n, ast.FunctionDef)}, test


def test_the_summary_counts_the_changed_expectations(tmp_path):
    folded = fold.read([_junit(tmp_path, "expected status 409, got 400")], None)
    assert fold.section(folded)["counts"] == {"spec-changed": 1, "passed": 1}
