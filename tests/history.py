"""History written straight into the reference agent's SQLite store: what a long-lived Runtime holds.

The kit's tests seed a store with it (the change feed's position, a Runtime shared by two runs), and so do the
benchmarks that measure a store full of history (``benchmarks.scale``, ``benchmarks.history_growth``).

Each earlier task is one ended turn (its user message, its status message, one artifact), in one of a few
hundred old conversations of its subject, with its status sequence number and a timestamp a millisecond
after the one before, so it stands in the store as the agent's own tasks do (the ListTasks counts, the
sessions and the feed see it). Rows go in through ``executemany`` in one transaction; the store's triggers
keep the counts, and :meth:`Store.next_turn` is bypassed for speed, the conversations and sessions written
once each at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nylorun_a2a_kit.reference_agent.store import TASK_COLUMNS, Store, format_timestamp, session_id

OLD_CONTEXTS = 500  # conversations per subject the history is spread over
FAILED_EVERY = 7  # one earlier task in seven ended failed, the rest completed


@dataclass(frozen=True)
class History:
    """``count`` earlier tasks of ``agent_id``, the subjects taking turns, ending ``ends_before`` ago."""

    count: int
    agent_id: str
    subjects: Sequence[str]
    ends_before: timedelta = timedelta(minutes=1)


def seed(db: Path, history: History) -> float:
    """Write ``history`` into the store at ``db`` (made if missing); the seconds it took."""
    started = time.perf_counter()
    store = Store(str(db))
    try:
        base = datetime.now(UTC) - history.ends_before - timedelta(milliseconds=history.count)
        first = store.last_seq() + 1
        turns: dict[tuple[str, str], int] = {}  # each conversation's turns, counted as the rows are written
        with store.transaction():
            store.db.executemany(
                f"INSERT INTO tasks ({', '.join(TASK_COLUMNS)}) VALUES ({','.join('?' * len(TASK_COLUMNS))})",
                _rows(history, first, base, turns),
            )
            contexts = [(history.agent_id, subject, context, n) for (subject, context), n in turns.items()]
            store.db.executemany(
                "INSERT INTO contexts VALUES (?,?,?,?) ON CONFLICT DO UPDATE SET turns=turns+excluded.turns", contexts
            )
            store.db.executemany(
                "INSERT OR IGNORE INTO sessions VALUES (?,?,?,?)",
                [(session_id(a, s, c), a, s, c) for a, s, c, _ in contexts],
            )
    finally:
        store.close()
    return time.perf_counter() - started


def _where(history: History, n: int) -> tuple[str, str]:
    """Task ``n``'s subject and conversation."""
    return history.subjects[n % len(history.subjects)], f"old-{n // len(history.subjects) % OLD_CONTEXTS}"


def _rows(history: History, first: int, base: datetime, turns: dict[tuple[str, str], int]) -> Iterator[tuple]:
    for n in range(history.count):
        seq = first + n
        subject, context = _where(history, n)
        turn = turns[(subject, context)] = turns.get((subject, context), 0) + 1
        task_id = f"t-seed-{seq:08d}"
        state = "TASK_STATE_FAILED" if n % FAILED_EVERY == FAILED_EVERY - 1 else "TASK_STATE_COMPLETED"
        stamp = format_timestamp(base + timedelta(milliseconds=n))
        status = {
            "messageId": f"{task_id}-status",
            "role": "ROLE_AGENT",
            "parts": [{"text": "Done." if state == "TASK_STATE_COMPLETED" else "Failed."}],
            "contextId": context,
            "taskId": task_id,
        }
        user = {
            "messageId": f"msg-seed-{seq:08d}",
            "role": "ROLE_USER",
            "parts": [{"text": "scenario complete"}],
            "contextId": context,
            "taskId": task_id,
        }
        artifacts = [{"artifactId": f"{task_id}-1", "name": "result", "parts": [{"text": f"earlier task {seq}"}]}]
        scenario = {"name": "complete", "stage": "done", "steps": 1, "started_at": stamp}
        yield (
            *(task_id, history.agent_id, subject, context, turn, state, json.dumps(status), stamp, seq),
            *(json.dumps([user, status]), json.dumps(artifacts), None, json.dumps(scenario)),
        )
