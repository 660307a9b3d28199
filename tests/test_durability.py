"""What the reference agent writes together survives together: a crash between two writes loses neither half.

In process, against the engine on a database file: a crash is simulated by making the second write of a
group raise, then the file is opened afresh as a restarted agent would see it. A resumed turn is simulated
by running a finished stage again on the stored task. (tests/test_crash_safety.py kills a real process.)
"""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.engine import Caller, Engine
from nylorun_a2a_kit.reference_agent.store import Store
from nylorun_a2a_kit.reference_agent.turn import Turn

HOOK = "127.0.0.1:9"  # allowed, never connected to: the sender is not started
CALLER = Caller("support", "a2a:durability", "http://127.0.0.1:1/v1/a2a/agents/support")


class Crash(Exception):
    """Stands for the process dying between two writes."""


def _crash(*_args, **_kwargs) -> None:
    raise Crash()


def _engine(db: Path) -> Engine:
    config = AgentConfig(
        str(db), push_secret="whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", push_allowed=frozenset({HOOK})
    )
    return Engine(Store(str(db)), config)


def _message(text: str, message_id: str) -> dict:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


def _send(engine: Engine, text: str, message_id: str, *, push: bool = True, context_id: str | None = None) -> dict:
    message = _message(text, message_id)
    if context_id:
        message["contextId"] = context_id
    configuration: dict = {"returnImmediately": True}
    if push:
        configuration["taskPushNotificationConfig"] = {"url": f"http://{HOOK}/hook"}
    return {"message": message, "configuration": configuration}


def _stored(db: Path, sql: str, *args) -> list[sqlite3.Row]:
    """What a restarted agent finds: the file read on a new connection."""
    fresh = sqlite3.connect(db)
    fresh.row_factory = sqlite3.Row
    try:
        return fresh.execute(sql, args).fetchall()
    finally:
        fresh.close()


def _on_an_engine(db: Path, scenario: Callable[[Engine], Awaitable[None]]) -> None:
    """``scenario`` run on an engine over the database file ``db``, which it stops once the scenario is done."""

    async def run() -> None:
        engine = _engine(db)
        await scenario(engine)
        await engine.stop()

    asyncio.run(run())


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "agent.sqlite3"


def test_a_status_change_and_its_push_events_are_stored_together(db, monkeypatch):
    async def scenario(engine: Engine) -> None:
        task = await engine.send(CALLER, _send(engine, "scenario slow 60000", "m-status"))
        before = _stored(db, "SELECT state, seq FROM tasks WHERE id=?", task.id)[0]
        monkeypatch.setattr(engine.sender, "enqueue", _crash)
        with pytest.raises(Crash):
            engine.set_status(task, "TASK_STATE_COMPLETED", "Done.")
        after = _stored(db, "SELECT state, seq FROM tasks WHERE id=?", task.id)[0]
        assert tuple(after) == tuple(before), "the status change was stored without its push event"

    _on_an_engine(db, scenario)


def test_an_artifact_and_its_push_event_are_stored_together(db, monkeypatch):
    async def scenario(engine: Engine) -> None:
        task = await engine.send(CALLER, _send(engine, "scenario slow 60000", "m-artifact"))
        stored = engine.store.get(task.id)
        monkeypatch.setattr(engine.sender, "enqueue", _crash)
        with pytest.raises(Crash):
            Turn(engine, stored, CALLER.base_url).add_artifact("a", [{"text": "x"}])
        artifacts = json.loads(_stored(db, "SELECT artifacts FROM tasks WHERE id=?", task.id)[0]["artifacts"])
        assert artifacts == [], "the artifact was stored without its push event"

    _on_an_engine(db, scenario)


def test_a_task_and_its_inline_push_config_are_stored_together(db, monkeypatch):
    async def scenario(engine: Engine) -> None:
        monkeypatch.setattr(engine.push_configs, "create", _crash)
        with pytest.raises(Crash):
            await engine.send(CALLER, _send(engine, "scenario slow 60000", "m-inline"))
        assert _stored(db, "SELECT id FROM tasks") == [], "the task was stored without its push config"
        assert _stored(db, "SELECT * FROM message_ids") == [], "the message id was kept for a task not stored"

    _on_an_engine(db, scenario)


def test_a_queued_message_taken_keeps_its_push_config(db, monkeypatch):
    async def scenario(engine: Engine) -> None:
        busy = await engine.send(CALLER, _send(engine, "scenario slow 60000", "m-busy", push=False))
        await engine.send(CALLER, _send(engine, "hello", "m-queued", context_id=busy.context_id))
        monkeypatch.setattr(engine.push_configs, "move", _crash)
        ended = engine.store.get(busy.id)
        ended.state = "TASK_STATE_CANCELED"  # the conversation is free: its turn ended
        engine.store.save(ended)
        with pytest.raises(Crash):
            engine._take_next(CALLER.agent_id, CALLER.subject, busy.context_id)
        waiting = _stored(db, "SELECT taken_by FROM queued WHERE message_id='m-queued'")
        assert [row["taken_by"] for row in waiting] == [None], "the message was taken but its config left behind"
        assert len(_stored(db, "SELECT id FROM tasks")) == 1, "a turn was stored for a message still waiting"

    _on_an_engine(db, scenario)


@pytest.mark.parametrize("name", ["complete", "echo", "tool"])
def test_a_resumed_turn_records_each_output_once(db, name):
    async def scenario(engine: Engine) -> None:
        task = await engine.send(CALLER, _send(engine, f"scenario {name}", f"m-{name}", push=False))
        await engine.wait_settled(task.id, 10)
        done = engine.store.get(task.id)
        assert done.state == "TASK_STATE_COMPLETED"
        recorded = copy.deepcopy(done.artifacts)
        # As a restart finds a turn cut off just before its end: every output stored, the status still WORKING.
        done.state = "TASK_STATE_WORKING"
        engine.store.save(done)
        await engine.scenarios.run(Turn(engine, done, CALLER.base_url))
        again = engine.store.get(task.id)
        assert again.state == "TASK_STATE_COMPLETED"
        assert again.artifacts == recorded, "an artifact was recorded twice"
        assert again.scenario.get("steps") == 1, "a step was counted twice"

    _on_an_engine(db, scenario)
