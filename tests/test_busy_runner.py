"""The same verdicts on a busy runner: the suites with ``-n 2`` beside a CPU hog, in the kit's own busy test session,
give the quiet run's outcomes, check by check, and its exit code (``benchmarks.busy_runner`` runs twenty such runs of
the whole suites, a hog on every core).

The loaded run here holds the checks that wait on the Runtime's own time, where load can change a verdict: push
deliveries and their retries, streams, queued messages, the change feed, blocking sends, cancels, paused turns and
tasks that move. A check of a request and its answer alone (errors, versions, keys, shapes) waits on nothing that
load delays past its deadline; the whole suites under load are the benchmark's.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.requirements import load as load_requirements
from tests.busy import cpu_hogs
from tests.suite_runs import clean_run, run_suites

pytestmark = pytest.mark.slow

TIMED_AREAS = ("push", "streaming", "queued-messages", "change-feed", "send-message", "cancel", "interactions", "tasks")


def test_a_run_on_a_loaded_machine_gives_the_quiet_runs_outcomes(tmp_path, tmp_path_factory):
    quiet = clean_run(tmp_path_factory)
    timed = sorted(r.id for r in load_requirements().values() if r.area in TIMED_AREAS)
    # One hog beside the kit's own test session, which loads every core already (the benchmark loads every core
    # beside a run alone); the run cold, a process of its own that starts with the hog, not a warm run that waits for
    # the cores while the hog burns them.
    with cpu_hogs("python", count=1):
        loaded = run_suites(tmp_path, "-n", "2", f"--a2a-req={','.join(timed)}", lean=True, cold=True, timeout_s=1200)
    held = {test for test, ids in quiet.requirements.items() if set(ids) & set(timed)}
    assert held and set(loaded.outcomes) == held, f"the loaded run ran other checks: {set(loaded.outcomes) ^ held}"
    differ = [
        f"{test}: {quiet.outcomes[test]} → {loaded.outcomes[test]}"
        for test in sorted(held)
        if quiet.outcomes[test] != loaded.outcomes[test]
    ]
    assert not differ, f"{len(differ)} checks differ from the quiet run's outcomes: {differ[:20]}"
    assert loaded.returncode == quiet.returncode == 0, loaded.summary()
