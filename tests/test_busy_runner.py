"""The same verdicts on a busy runner: the suites with ``-n 2`` while a CPU hog loads every core give the quiet run's
outcomes, check by check, and its exit code (``benchmarks.busy_runner`` runs twenty such runs)."""

from __future__ import annotations

import pytest

from tests.busy import cpu_hogs
from tests.suite_runs import clean_run, run_suites

pytestmark = pytest.mark.slow


def test_a_run_on_a_loaded_machine_gives_the_quiet_runs_outcomes(tmp_path, tmp_path_factory):
    quiet = clean_run(tmp_path_factory)
    with cpu_hogs("python"):
        loaded = run_suites(tmp_path, "-n", "2", lean=True, timeout_s=1200)
    differ = [
        f"{test}: {quiet.outcomes.get(test, 'absent')} → {loaded.outcomes.get(test, 'absent')}"
        for test in sorted(set(quiet.outcomes) | set(loaded.outcomes))
        if quiet.outcomes.get(test) != loaded.outcomes.get(test)
    ]
    assert not differ, f"{len(differ)} checks differ from the quiet run's outcomes: {differ[:20]}"
    assert loaded.returncode == quiet.returncode == 0, loaded.summary()
