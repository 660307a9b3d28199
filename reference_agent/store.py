"""SQLite storage of tasks, idempotency keys and conversations.

Every status change takes the next value of one global sequence, and a timestamp later than every earlier
one; ListTasks orders and pages by it, so a page cursor is a position in that sequence and never needs a
scan (keyset paging), and the change feed is a keyset query on the same sequence. ListTasks' totalSize
comes from counts per owner and state that triggers keep in the same transaction as the rows. Every query
the agent serves (a task by id, ListTasks with each filter, the feed by cursor, by subject and by session)
is an index search bounded by what it answers, so it costs the same at 1,000 and 1,000,000 tasks; only a
total under a filter by conversation or by time counts the rows it matches.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

T = TypeVar("T")
MAX_POSITION = 2**63 - 1  # the largest SQLite INTEGER: a position past it names no row and cannot be queried

TERMINAL = frozenset({"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"})
INTERRUPTED = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})
ACTIVE = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"})

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  context_id TEXT NOT NULL,
  turn INTEGER NOT NULL,
  state TEXT NOT NULL,
  status_message TEXT,
  status_ts TEXT NOT NULL,
  seq INTEGER NOT NULL,
  history TEXT NOT NULL,
  artifacts TEXT NOT NULL,
  metadata TEXT,
  scenario TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (agent_id, subject, seq);
CREATE INDEX IF NOT EXISTS tasks_by_context ON tasks (agent_id, subject, context_id, seq);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (agent_id, subject, state, seq);
CREATE INDEX IF NOT EXISTS tasks_by_time ON tasks (agent_id, subject, status_ts);
CREATE INDEX IF NOT EXISTS tasks_by_change ON tasks (seq);
CREATE INDEX IF NOT EXISTS tasks_by_subject_change ON tasks (subject, seq);
CREATE INDEX IF NOT EXISTS tasks_unfinished ON tasks (seq)
  WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
CREATE TABLE IF NOT EXISTS message_ids (
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  message_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  PRIMARY KEY (agent_id, subject, message_id)
);
CREATE TABLE IF NOT EXISTS files (
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  context_id TEXT NOT NULL,
  path TEXT NOT NULL,
  version INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  data BLOB NOT NULL,
  token TEXT NOT NULL,
  PRIMARY KEY (task_id, path)
);
CREATE INDEX IF NOT EXISTS files_by_path ON files (agent_id, subject, context_id, path, version);
CREATE TABLE IF NOT EXISTS task_counts (
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  state TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (agent_id, subject, state)
);
CREATE TRIGGER IF NOT EXISTS task_counted AFTER INSERT ON tasks BEGIN
  INSERT INTO task_counts VALUES (NEW.agent_id, NEW.subject, NEW.state, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS task_uncounted AFTER DELETE ON tasks BEGIN
  UPDATE task_counts SET n = n - 1 WHERE agent_id = OLD.agent_id AND subject = OLD.subject AND state = OLD.state;
END;
CREATE TRIGGER IF NOT EXISTS task_recounted AFTER UPDATE OF state ON tasks WHEN OLD.state != NEW.state BEGIN
  UPDATE task_counts SET n = n - 1 WHERE agent_id = OLD.agent_id AND subject = OLD.subject AND state = OLD.state;
  INSERT INTO task_counts VALUES (NEW.agent_id, NEW.subject, NEW.state, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TABLE IF NOT EXISTS contexts (
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  context_id TEXT NOT NULL,
  turns INTEGER NOT NULL,
  PRIMARY KEY (agent_id, subject, context_id)
);
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  context_id TEXT NOT NULL
);
"""
# A feed page's turns need none of a task's messages or artifacts: the columns it reads, the others NULL.
TURN_COLUMNS = (
    "id, agent_id, subject, context_id, turn, state, NULL AS status_message, status_ts, seq, "
    "NULL AS history, NULL AS artifacts, metadata, scenario"
)


@functools.lru_cache(maxsize=4096)  # a feed page names each of its turns' sessions: the same few, mostly
def session_id(agent_id: str, subject: str, context_id: str) -> str:
    """The session of a subject's conversation with an Agent: one per subject, Agent and contextId."""
    digest = hashlib.sha256(f"{agent_id}\n{subject}\n{context_id}".encode()).hexdigest()
    return "ses_" + digest[:24]


def format_timestamp(moment: datetime) -> str:
    """UTC, millisecond precision, 'Z' — the form A2A §5.6.1 asks for."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# Rows as objects, one mapping for every table: a dataclass's fields are named as its table's columns.
# ``field(metadata=JSON)`` marks a field its column holds as JSON text (SQL NULL for None);
# ``field(metadata={"json": convert})`` also converts the decoded value (a list to a frozenset, say).
JSON: dict[str, Any] = {"json": True}


def _as_decoded(value: Any) -> Any:
    return value


@functools.cache
def _readers(cls: type) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """Each field's name and how its decoded JSON becomes the field (None: the column is not JSON)."""
    marks = ((f.name, f.metadata.get("json")) for f in fields(cls))
    return tuple((name, _as_decoded if mark is True else mark) for name, mark in marks)


def from_row(cls: type[T], row: sqlite3.Row) -> T:
    """The dataclass ``cls`` from a row with a column for each of its fields (other columns are left out)."""
    values = {}
    for name, read in _readers(cls):
        value = row[name]
        values[name] = read(json.loads(value)) if read is not None and value is not None else value
    return cls(**values)


def to_columns(obj: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    """The values of ``obj``'s fields ``names`` as their columns hold them."""
    as_json = {name for name, read in _readers(type(obj)) if read is not None}
    return tuple(
        json.dumps(value) if name in as_json and value is not None else value
        for name, value in ((name, getattr(obj, name)) for name in names)
    )


@dataclass
class TaskRecord:
    id: str
    agent_id: str
    subject: str
    context_id: str
    turn: int
    state: str
    status_message: dict[str, Any] | None = field(metadata=JSON)
    status_ts: str
    seq: int
    history: list[dict[str, Any]] = field(default_factory=list, metadata=JSON)
    artifacts: list[dict[str, Any]] = field(default_factory=list, metadata=JSON)
    metadata: dict[str, Any] | None = field(default=None, metadata=JSON)
    scenario: dict[str, Any] = field(default_factory=dict, metadata=JSON)


TASK_COLUMNS = tuple(f.name for f in fields(TaskRecord))
# The columns a status change may rewrite.
CHANGING = ("state", "status_message", "status_ts", "seq", "history", "artifacts", "metadata", "scenario")


@dataclass(frozen=True)
class TaskFilter:
    agent_id: str | None
    subject: str | None
    context_id: str | None = None
    state: str | None = None
    status_after: str | None = None


class Store:
    def __init__(self, path: str):
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA recursive_triggers=ON")  # a REPLACE's deletion is counted too
        had_sessions = self._has_table("sessions")
        self.db.executescript(SCHEMA)
        if not had_sessions:  # a database from before the sessions table: every conversation gets its session
            self.db.create_function("session_id", 3, session_id, deterministic=True)
            self.db.execute(
                "INSERT OR IGNORE INTO sessions "
                "SELECT session_id(agent_id, subject, context_id), agent_id, subject, context_id FROM contexts"
            )
        with self.transaction():  # counted afresh at every start: a database from before the counts gets them
            self.db.execute("DELETE FROM task_counts")
            self.db.execute(
                "INSERT INTO task_counts SELECT agent_id, subject, state, COUNT(*) FROM tasks GROUP BY 1, 2, 3"
            )
        self._seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM tasks").fetchone()[0]
        row = self.db.execute("SELECT MAX(status_ts) FROM tasks").fetchone()[0]
        self._last = datetime.fromisoformat(row.replace("Z", "+00:00")) if row else datetime.min.replace(tzinfo=UTC)

    def close(self) -> None:
        self.db.close()

    def _has_table(self, name: str) -> bool:
        row = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone()
        return row is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction; a nested one joins it, so everything written inside commits together or not at all."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def peek_timestamp(self) -> str:
        """A timestamp for an event that is not a status change (a turn's start): now, in the stored form."""
        return format_timestamp(max(datetime.now(UTC), self._last))

    def next_status(self) -> tuple[int, str]:
        """The next status sequence number and a timestamp later than every earlier one.

        Strictly increasing timestamps make "latest status change first" one order, never a tie, so the
        order checks are decisive against the reference agent (the kit itself tolerates ties). Past 1,000
        status changes a second the timestamps run ahead of the clock until the load drops.
        """
        self._seq += 1
        now = datetime.now(UTC)
        now = now.replace(microsecond=now.microsecond // 1000 * 1000)
        self._last = max(now, self._last + timedelta(milliseconds=1))
        return self._seq, format_timestamp(self._last)

    # -- conversations and idempotency keys

    def next_turn(self, agent_id: str, subject: str, context_id: str) -> int:
        row = self.db.execute(
            "SELECT turns FROM contexts WHERE agent_id=? AND subject=? AND context_id=?",
            (agent_id, subject, context_id),
        ).fetchone()
        turn = (row["turns"] if row else 0) + 1
        self.db.execute(
            "INSERT INTO contexts VALUES (?,?,?,?) ON CONFLICT DO UPDATE SET turns=excluded.turns",
            (agent_id, subject, context_id, turn),
        )
        if row is None:
            self.db.execute(
                "INSERT OR IGNORE INTO sessions VALUES (?,?,?,?)",
                (session_id(agent_id, subject, context_id), agent_id, subject, context_id),
            )
        return turn

    def session(self, session: str) -> tuple[str, str, str] | None:
        """The Agent, subject and contextId of a session, if there is one."""
        row = self.db.execute("SELECT agent_id, subject, context_id FROM sessions WHERE session_id=?", (session,))
        found = row.fetchone()
        return (found["agent_id"], found["subject"], found["context_id"]) if found else None

    def task_for_message(self, agent_id: str, subject: str, message_id: str) -> str | None:
        row = self.db.execute(
            "SELECT task_id FROM message_ids WHERE agent_id=? AND subject=? AND message_id=?",
            (agent_id, subject, message_id),
        ).fetchone()
        return row["task_id"] if row else None

    def remember_message(self, agent_id: str, subject: str, message_id: str, task_id: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO message_ids VALUES (?,?,?,?)", (agent_id, subject, message_id, task_id))

    # -- the agent's outputs: one conversation's files, versioned by path

    def file_version(self, task: TaskRecord, path: str, data: bytes) -> int:
        """The version ``data`` gets at ``path``: the latest one if unchanged, else the next."""
        row = self.db.execute(
            "SELECT version, data FROM files WHERE agent_id=? AND subject=? AND context_id=? AND path=? "
            "ORDER BY version DESC LIMIT 1",
            (task.agent_id, task.subject, task.context_id, path),
        ).fetchone()
        if row is None:
            return 1
        return row["version"] if bytes(row["data"]) == data else row["version"] + 1

    def save_file(self, task: TaskRecord, path: str, version: int, data: bytes, token: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
            (task.agent_id, task.subject, task.context_id, path, version, task.id, data, token),
        )

    def load_file(self, task_id: str, token: str, path: str) -> bytes | None:
        row = self.db.execute(
            "SELECT data FROM files WHERE task_id=? AND path=? AND token=?", (task_id, path, token)
        ).fetchone()
        return bytes(row["data"]) if row else None

    # -- tasks

    def insert(self, task: TaskRecord, *, replace: bool = False) -> None:
        self.db.execute(
            f"INSERT {'OR REPLACE ' if replace else ''}INTO tasks ({', '.join(TASK_COLUMNS)}) "
            f"VALUES ({','.join('?' * len(TASK_COLUMNS))})",
            to_columns(task, TASK_COLUMNS),
        )

    def save(self, task: TaskRecord) -> None:
        self.db.execute(
            f"UPDATE tasks SET {', '.join(f'{name}=?' for name in CHANGING)} WHERE id=?",
            (*to_columns(task, CHANGING), task.id),
        )

    def get(self, task_id: str) -> TaskRecord | None:
        row = self.db.execute("SELECT * FROM tasks WHERE id=?", (task_id,)).fetchone()
        return from_row(TaskRecord, row) if row else None

    def active_in_context(self, agent_id: str, subject: str | None, context_id: str) -> TaskRecord | None:
        """The running task of a conversation (of any subject's, when ``subject`` is None)."""
        placeholders = ",".join("?" * len(ACTIVE))
        # The subject clause only when there is a subject: "(subject=? OR ? IS NULL)" would keep SQLite from
        # using the conversation index, and this runs on every message.
        owner, args = (
            ("agent_id=? AND subject=?", [agent_id, subject]) if subject is not None else ("agent_id=?", [agent_id])
        )
        row = self.db.execute(
            f"SELECT * FROM tasks WHERE {owner} AND context_id=? AND state IN ({placeholders}) "
            "ORDER BY seq DESC LIMIT 1",
            (*args, context_id, *sorted(ACTIVE)),
        ).fetchone()
        return from_row(TaskRecord, row) if row else None

    def unfinished(self) -> list[TaskRecord]:
        # Spelt as the partial index tasks_unfinished is, so that a start reads only the unfinished tasks.
        rows = self.db.execute(
            "SELECT * FROM tasks WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING') ORDER BY seq"
        )
        return [from_row(TaskRecord, row) for row in rows]

    def _where(self, flt: TaskFilter) -> tuple[str, list[Any]]:
        clauses, args = [], []
        for column, value in (
            ("agent_id", flt.agent_id),
            ("subject", flt.subject),
            ("context_id", flt.context_id),
            ("state", flt.state),
        ):
            if value is not None:
                clauses.append(f"{column}=?")
                args.append(value)
        if flt.status_after is not None:
            clauses.append("status_ts>=?")
            args.append(flt.status_after)
            if None not in (flt.agent_id, flt.subject):
                # Timestamps grow with the sequence (next_status), so the tasks changed at or after a time are
                # those from one position on: a bound every index on the sequence can search by.
                first = self._first_change_at(flt.agent_id, flt.subject, flt.status_after)
                clauses.append("seq>=?")
                args.append(MAX_POSITION if first is None else first)
        return (" AND ".join(clauses) or "1=1"), args

    def _first_change_at(self, agent_id: str, subject: str, moment: str) -> int | None:
        """The position of an owner's first status change at or after ``moment`` (None: there is none)."""
        row = self.db.execute(
            "SELECT seq FROM tasks INDEXED BY tasks_by_time WHERE agent_id=? AND subject=? AND status_ts>=? "
            "ORDER BY status_ts LIMIT 1",
            (agent_id, subject, moment),
        ).fetchone()
        return row["seq"] if row else None

    def last_seq(self) -> int:
        return self._seq

    def changed_after(self, seq: int, subjects: set[str] | None, limit: int) -> list[TaskRecord]:
        """Tasks whose latest status change comes after ``seq``, oldest change first (the change feed); ``subjects``
        limits them (None: every subject's). Each subject's are read through its own index, then merged."""
        if subjects is None:
            rows = self.db.execute(
                f"SELECT {TURN_COLUMNS} FROM tasks INDEXED BY tasks_by_change WHERE seq>? ORDER BY seq LIMIT ?",
                (seq, limit),
            )
            return [from_row(TaskRecord, row) for row in rows]
        found: list[TaskRecord] = []
        for subject in sorted(subjects):
            rows = self.db.execute(
                f"SELECT {TURN_COLUMNS} FROM tasks INDEXED BY tasks_by_subject_change WHERE subject=? AND seq>? "
                "ORDER BY seq LIMIT ?",
                (subject, seq, limit),
            )
            found += [from_row(TaskRecord, row) for row in rows]
        return sorted(found, key=lambda task: task.seq)[:limit]

    def session_turns(self, session: str, subjects: set[str] | None, after: int) -> list[TaskRecord]:
        """A session's turns after turn number ``after``, oldest first (none when ``subjects`` leaves it out)."""
        owner = self.session(session)
        if owner is None or (subjects is not None and owner[1] not in subjects):
            return []
        rows = self.db.execute(
            f"SELECT {TURN_COLUMNS} FROM tasks INDEXED BY tasks_by_context "
            "WHERE agent_id=? AND subject=? AND context_id=? AND turn>? ORDER BY turn, seq",
            (*owner, after),
        )
        return [from_row(TaskRecord, row) for row in rows]

    def count(self, flt: TaskFilter) -> int:
        if None not in (flt.agent_id, flt.subject) and flt.context_id is None and flt.status_after is None:
            state, args = (
                ("", [flt.agent_id, flt.subject])
                if flt.state is None
                else (" AND state=?", [flt.agent_id, flt.subject, flt.state])
            )
            return self.db.execute(
                f"SELECT COALESCE(SUM(n), 0) FROM task_counts WHERE agent_id=? AND subject=?{state}", args
            ).fetchone()[0]
        where, args = self._where(flt)
        return self.db.execute(f"SELECT COUNT(*) FROM tasks{self._index(flt)} WHERE {where}", args).fetchone()[0]

    def page(self, flt: TaskFilter, *, before_seq: int | None, limit: int) -> list[TaskRecord]:
        """Up to ``limit`` tasks, latest status change first, below ``before_seq`` when given."""
        where, args = self._where(flt)
        if before_seq is not None:
            where += " AND seq<?"
            args.append(before_seq)
        rows = self.db.execute(
            f"SELECT * FROM tasks{self._index(flt)} WHERE {where} ORDER BY seq DESC LIMIT ?", [*args, limit]
        )
        return [from_row(TaskRecord, row) for row in rows]

    def _index(self, flt: TaskFilter) -> str:
        """The index a listing reads: the narrowest its filters name. Chosen here, not by SQLite's planner, which has
        no statistics and would read a whole state's tasks to find one conversation's."""
        if None in (flt.agent_id, flt.subject):
            return ""
        if flt.context_id is not None:
            return " INDEXED BY tasks_by_context"
        return " INDEXED BY tasks_by_state" if flt.state is not None else " INDEXED BY tasks_by_owner"


def encode_cursor(fields: dict[str, Any]) -> str:
    """An opaque cursor (a page token, a feed cursor): the fields as unpadded URL-safe base64 of JSON."""
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode().rstrip("=")


def decode_cursor(text: str, position_key: str) -> tuple[int, dict[str, Any]]:
    """The position a cursor holds under ``position_key``, and all its fields; ValueError when it is not one
    :func:`encode_cursor` could have made for a row of this store."""
    try:
        fields = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        position = fields[position_key]
    except (ValueError, KeyError, TypeError, RecursionError, binascii.Error):
        raise ValueError("not a cursor") from None
    if not isinstance(position, int) or isinstance(position, bool) or not 0 <= position <= MAX_POSITION:
        raise ValueError("not a position")
    return position, fields
