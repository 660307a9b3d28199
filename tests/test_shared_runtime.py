"""A Runtime that is not fresh: full of earlier runs' history, and shared by two runs at once.

The reference agent runs in a process of its own on a database seeded with earlier tasks and turns of the
kit's own subjects (as a staging Runtime holds every earlier release check's). One run of the checks of what
runs share on a Runtime (the subject's listings and feed, paging, isolation, queues, the rate limit, push and
idempotency) against it alone gives the verdicts; two such runs started together against it, with the same key
and subjects (each with its own push receivers), must each give the very same verdicts.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate.example_agent import example_agent
from nylorun_a2a_kit.fixtures.requirements import catalog as requirements
from nylorun_a2a_kit.fixtures.target import embedded
from tests.history import History, seed
from tests.suite_runs import Verdicts, run_suites

pytestmark = pytest.mark.slow

SUBJECTS = ("a2a:conformance", embedded.OTHER_SUBJECT, "a2a:someone-else")
WORKERS = 2
# What two runs share on one Runtime: the subject's listings and feed, its paging, isolation, queues, the rate
# limit, push configs of their own tasks, idempotency keys (the whole gate beside a load: benchmarks.beside_load).
SHARED = (
    "--a2a-req="
    + ",".join(
        r.id
        for r in requirements.load().values()
        if r.id.split("-")[0] in ("FEED", "LIST", "PAGE", "ISO", "QUEUE", "AUTH")
        or r.id in ("PUSH-05", "PUSH-08", "PUSH-15", "TASK-14", "SEND-04", "SEND-05")
    ),
    "--a2a-enforce-claim=no",
)


def _run(where: Path, agent, first_port: int, *args: str) -> Verdicts:
    options, environment = agent.run_options(first_port, WORKERS)
    where.mkdir(parents=True, exist_ok=True)
    return run_suites(where, *options, "-n", str(WORKERS), "-p", "no:randomly", *args, env=environment, lean=True)


def test_two_runs_at_once_give_the_verdicts_of_a_lone_run(tmp_path):
    db = tmp_path / "agent.sqlite3"
    seed(db, History(3000, "support", SUBJECTS))
    with example_agent(0, db=db) as agent:
        alone = _run(tmp_path / "alone", agent, 0, *SHARED)
        assert alone.returncode == 0 and alone.outcomes, alone.output[-3000:]
        with ThreadPoolExecutor(max_workers=2) as pool:
            at_once = pool.map(lambda slot: _run(tmp_path / f"at-once-{slot}", agent, slot * WORKERS, *SHARED), (1, 2))
            first, second = list(at_once)
    for verdicts in (first, second):
        differ = {
            check: (alone.outcomes.get(check), verdicts.outcomes.get(check))
            for check in set(alone.outcomes) | set(verdicts.outcomes)
            if alone.outcomes.get(check) != verdicts.outcomes.get(check)
        }
        assert not differ, f"{differ}\n{verdicts.output[-3000:]}"
        assert verdicts.returncode == 0, verdicts.output[-3000:]


def test_a_run_saves_the_feed_cursor_and_the_next_starts_from_it(tmp_path):
    """The cursor file: the first run walks the feed once and saves where it ended; the next starts there, and the
    file keeps one cursor per Runtime."""
    cursor_file = tmp_path / "feed-cursor.json"
    with example_agent(0) as agent:
        feed_checks = ("--a2a-req=FEED-01,FEED-02,FEED-04,FEED-06", f"--a2a-feed-cursor-file={cursor_file}")
        first = _run(tmp_path / "first", agent, 0, *feed_checks)
        assert first.returncode == 0 and first.outcomes, first.output[-3000:]
        saved = cursor_file.read_text(encoding="utf-8")
        second = _run(tmp_path / "second", agent, 0, *feed_checks)
        assert second.returncode == 0 and second.outcomes == first.outcomes, second.output[-3000:]
    assert agent.base in saved and cursor_file.read_text(encoding="utf-8") != saved
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".feed-cursor.json.") and name[-1].isdigit()]
