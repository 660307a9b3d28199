"""The reference agent's store: ListTasks' totals from kept counts agree with counting the rows."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from nylorun_a2a_kit.reference_agent.store import Store, TaskFilter, TaskRecord

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
