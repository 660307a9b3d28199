"""The reference agent's store: ListTasks' totals from kept counts agree with counting the rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace

from nylorun_a2a_kit.reference_agent.store import Store, TaskFilter, TaskRecord, session_id

STATES = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED")


def _task(store: Store, n: int, subject: str, state: str) -> TaskRecord:
    seq, ts = store.next_status()
    return TaskRecord(f"t-{n}", "support", subject, f"c-{n % 3}", 1, state, None, ts, seq)


def _filters() -> list[TaskFilter]:
    owners = [("support", "a"), ("support", "b"), ("billing", "a")]
    return [TaskFilter(agent, subject, state=state) for agent, subject in owners for state in (None, *STATES)]


def _agrees(store: Store) -> None:
    for flt in _filters():
        where, args = store._where(flt)
        counted = store.db.execute(f"SELECT COUNT(*) FROM tasks WHERE {where}", args).fetchone()[0]
        assert store.count(flt) == counted, flt


def test_totals_follow_inserts_status_changes_and_replacements(tmp_path):
    store = Store(str(tmp_path / "agent.sqlite3"))
    tasks = []
    with store.transaction():
        for n in range(40):
            tasks.append(_task(store, n, "ab"[n % 2], STATES[n % 2]))
            store.insert(tasks[-1])
    _agrees(store)
    for task in tasks[::3]:
        store.save(replace(task, state="TASK_STATE_COMPLETED"))
    _agrees(store)
    store.insert(replace(tasks[0], state="TASK_STATE_FAILED"), replace=True)  # a REPLACE deletes, then inserts
    _agrees(store)
    store.close()


def test_totals_are_counted_afresh_when_a_database_is_opened(tmp_path):
    path = str(tmp_path / "agent.sqlite3")
    store = Store(path)
    with store.transaction():
        for n in range(10):
            store.insert(_task(store, n, "a", STATES[n % 4]))
    store.close()
    older = sqlite3.connect(path)  # as a database written before the counts existed
    older.executescript("DROP TRIGGER task_counted; DROP TABLE task_counts;")
    older.execute(
        "INSERT INTO tasks SELECT 't-extra', agent_id, subject, context_id, turn, state, status_message, "
        "status_ts, seq + 100, history, artifacts, metadata, scenario FROM tasks WHERE id='t-0'"
    )
    older.commit()
    older.close()
    reopened = Store(path)
    _agrees(reopened)
    assert reopened.count(TaskFilter("support", "a")) == 11
    reopened.close()


# -- every query the agent serves costs the same however many tasks are stored


def _with_history(tmp_path, earlier: int) -> tuple[Store, str]:
    """A store holding ``earlier`` ended tasks of subject "a" (and as many of "b") in old conversations, completed
    and failed, then a
    conversation of this request's own: five tasks, the last two failed. Returns the store and the time of the
    third of the five."""
    store = Store(str(tmp_path / f"agent-{earlier}.sqlite3"))
    with store.transaction():
        for n in range(2 * earlier):
            state = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED")[n % 4 // 2]
            task = replace(_task(store, n, "ab"[n % 2], state), context_id=f"old-{n % 50}")
            store.next_turn(task.agent_id, task.subject, task.context_id)
            store.insert(task)
        for n in range(5):
            state = "TASK_STATE_FAILED" if n >= 3 else "TASK_STATE_COMPLETED"
            task = replace(_task(store, 10**7 + n, "a", state), context_id="mine", turn=n + 1)
            store.next_turn("support", "a", "mine")
            store.insert(task)
    return store, store.get(f"t-{10**7 + 2}").status_ts


def _served_queries(store: Store, after: str) -> dict[str, Callable[[], object]]:
    """Every query ListTasks (each filter, first and later page, total), GetTask and the feed (by cursor, subject,
    session) make, for what the request itself made."""
    queries: dict[str, Callable[[], object]] = {
        "GetTask": lambda: store.get(f"t-{10**7 + 1}"),
        "feed by cursor": lambda: store.changed_after(store.last_seq() - 3, None, 102),
        "feed by subject": lambda: store.changed_after(store.last_seq() - 3, {"a"}, 102),
        "feed by two subjects": lambda: store.changed_after(store.last_seq() - 3, {"a", "b"}, 102),
        "feed by session": lambda: store.session_turns(session_id("support", "a", "mine"), {"a"}, 1),
        "a conversation's running task": lambda: store.active_in_context("support", "a", "mine"),
        "a message's task": lambda: store.task_for_message("support", "a", "m-1"),
    }
    for context in (None, "mine"):
        for state in (None, "TASK_STATE_FAILED"):
            for status_after in (None, after):
                flt = TaskFilter("support", "a", context, state, status_after)
                if flt == TaskFilter("support", "a"):
                    continue  # the whole subject: a page of it, its total from the kept counts
                name = f"ListTasks {context=} {state=} time={bool(status_after)}"
                queries[name + " page"] = lambda flt=flt: store.page(flt, before_seq=None, limit=3)
                queries[name + " next page"] = lambda flt=flt: store.page(flt, before_seq=store.last_seq(), limit=3)
                queries[name + " total"] = lambda flt=flt: store.count(flt)
    whole = TaskFilter("support", "a")
    queries["ListTasks whole subject page"] = lambda: store.page(whole, before_seq=None, limit=50)
    queries["ListTasks whole subject total"] = lambda: store.count(whole)
    return queries


def _steps(store: Store, query: Callable[[], object]) -> int:
    """The SQLite virtual machine's steps (in hundreds) a query takes: a cost that does not depend on the machine."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    store.db.set_progress_handler(count, 100)
    try:
        query()
    finally:
        store.db.set_progress_handler(None, 0)
    return steps[0]


def test_every_served_query_costs_the_same_at_any_history(tmp_path):
    """Each query a request makes reads what it answers through an index: its cost at 5,000 stored tasks per subject
    is that at 100 (counted in SQLite's own steps, not timed; benchmarks.scale times it up to 1,000,000)."""
    small, after_small = _with_history(tmp_path, 100)
    large, after_large = _with_history(tmp_path, 5000)
    cheap, dear = _served_queries(small, after_small), _served_queries(large, after_large)
    grown = {name: (_steps(small, cheap[name]), _steps(large, dear[name])) for name in cheap}
    assert len(grown) > 25
    assert all(results := [bool(cheap[name]()) == bool(dear[name]()) for name in cheap]), results
    assert not {name: cost for name, cost in grown.items() if cost[1] > cost[0] * 1.5 + 2}, grown
    small.close()
    large.close()


def test_a_database_from_before_sessions_gets_them(tmp_path):
    path = str(tmp_path / "agent.sqlite3")
    store = Store(path)
    with store.transaction():
        store.next_turn("support", "a", "c-1")
        store.insert(_task(store, 1, "a", "TASK_STATE_COMPLETED"))
    store.close()
    older = sqlite3.connect(path)
    older.executescript("DROP TABLE sessions;")
    older.close()
    reopened = Store(path)
    assert reopened.session(session_id("support", "a", "c-1")) == ("support", "a", "c-1")
    reopened.close()
