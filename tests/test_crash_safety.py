"""The reference agent survives SIGKILL: nothing it acknowledged is lost when it is killed mid-run and restarted.

One crash, at a small scale (benchmarks.crash runs the same at hundreds of tasks): the agent is started
with push on (a whsec_ secret, the kit's receiver allowed, retry delays × 0.001) and given three kinds of
unfinished work — slow turns in flight (``scenario slow 3000``, returnImmediately), messages queued behind
two of them, and echo turns whose every push event got a 503 with ``Retry-After`` on its first attempt —
then killed with SIGKILL while all of it is unfinished, and started again on the same database.

Every wait is event-driven with a bound: the receiver's condition for deliveries, GetTask polls with a
deadline for tasks; nothing sleeps for a fixed time. The crash and its checks are one test, so the crash runs
once under ``-n`` (``xdist_group`` does not group with pytest 9 and xdist 3.8: xdist sets ``item._nodeid``,
which pytest 9 no longer reads).
"""

from __future__ import annotations

import pytest

from tests.crash import ALLOWED_AFTER_CRASH, Plan, run_crash

pytestmark = pytest.mark.slow  # whole runs of the suites or of agents, each in a process of its own

PLAN = Plan(
    inflight=3,
    busy=2,
    queued_per_busy=2,
    pending=2,
    slow_ms=3000,
    retry_after_s=2000,  # × 0.001: the retry is due 2 s after the first attempt, well after the kill
    time_scale=0.001,
    senders=4,
    downtime="none",
    timeout_s=15.0,
)
SLOW_TASKS = PLAN.inflight + PLAN.busy
QUEUED = PLAN.busy * PLAN.queued_per_busy
PENDING_EVENTS = 3 * PLAN.pending  # an echo turn pushes WORKING, its artifact and COMPLETED


def test_nothing_acknowledged_is_lost_across_a_sigkill(tmp_path):
    crashed = run_crash(PLAN, tmp_path)

    # The crash is a real one: at the kill the slow turns run, the messages wait, the retries are due.
    at_kill = crashed.at_kill
    assert at_kill["active_tasks"] == SLOW_TASKS, f"slow turns still running at the kill: {at_kill['tasks']}"
    assert at_kill["queued_waiting"] == QUEUED, f"queued messages not yet taken at the kill: {at_kill}"
    assert len(crashed.pending_at_kill) == PENDING_EVENTS, (
        f"{len(crashed.pending_at_kill)} deliveries answered 503 and pending retry at the kill, expected "
        f"{PENDING_EVENTS}; outbox {at_kill['outbox']}"
    )

    # No accepted task is lost; interrupted turns resume and end in a state the pages allow; each queued
    # message is taken by exactly one turn; every delivery pending at the kill arrives (same webhook-id), and
    # so does every other event of every task, each one verified by the kit's receiver.
    problems = crashed.problems()
    assert not problems, "\n".join(problems[:20])
    assert set(crashed.final_states) <= set(ALLOWED_AFTER_CRASH), dict(crashed.final_states)
    assert len(crashed.taken_by) == QUEUED
    assert crashed.strays == 0
