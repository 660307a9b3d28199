"""Agents the specification allows get every check passed; and one the kit once let through is failed.

An Agent that lists a task's history newest message first does what A2A allows (it fixes no order for the list),
so every history rule passes it; an Agent whose card serves only 1.0 and serves a request without A2A-Version as
1.0 breaks A2A §3.6.2 (an empty version is 0.3's), which VER-02 holds at the core tier too.
"""

from __future__ import annotations

import pytest

from tests.suite_runs import run_suites

pytestmark = pytest.mark.slow

HISTORY_RULES = "SEND-12,TASK-09,TASK-10,LIST-11"


def test_history_listed_newest_first_passes_every_history_rule(tmp_path):
    verdicts = run_suites(
        tmp_path, "--a2a-reference-mutant=spelling/history/newest-first", f"--a2a-req={HISTORY_RULES}", lean=True
    )
    assert verdicts.returncode == 0, verdicts.output[-3000:]
    judged = [t for t, ids in verdicts.requirements.items() if set(ids) & set(HISTORY_RULES.split(","))]
    assert judged and all(verdicts.outcomes[t] == "passed" for t in judged), verdicts.summary()


def test_a_core_agent_serving_requests_without_a_version_fails_ver_02(tmp_path):
    verdicts = run_suites(
        tmp_path,
        "--a2a-claim=core",
        "--a2a-enforce-claim=no",
        "--a2a-reference-mutant=no-version-check",
        "--a2a-req=VER-02",
        lean=True,
    )
    assert verdicts.returncode == 1 and "VER-02" in verdicts.failed_requirements(), verdicts.summary()
    clean = run_suites(tmp_path, "--a2a-claim=core", "--a2a-enforce-claim=no", "--a2a-req=VER-02", lean=True)
    assert clean.returncode == 0 and set(clean.outcomes.values()) == {"passed"}, clean.summary()
