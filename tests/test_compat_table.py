"""docs/compatibility.md is what scripts/compat_table.py makes of the peers' checked-in verdicts, and a SHOULD not met
is kept in those verdicts as one."""

from __future__ import annotations

import runpy

import pytest

from tests.suite_runs import REPO, SHOULD_NOT_MET, run_suites


def test_the_compatibility_table_is_the_checked_in_verdicts():
    script = runpy.run_path(str(REPO / "scripts" / "compat_table.py"))
    written = (REPO / "docs" / "compatibility.md").read_text(encoding="utf-8")
    assert written == script["render"](), "regenerate it: .venv/bin/python scripts/compat_table.py"


@pytest.mark.slow  # a run of the suites in a process of its own
def test_a_should_not_met_is_published_as_such_not_as_not_applicable(tmp_path):
    verdicts = run_suites(tmp_path, "--a2a-reference-mutant=card-no-cache-control", "--a2a-req=CARD-09", lean=True)
    published = verdicts.published()
    assert published and set(published.values()) == {SHOULD_NOT_MET}, verdicts.summary()
    assert set(verdicts.outcomes.values()) == {"skipped"}, "JUnit writes an expected failure as a skip"
