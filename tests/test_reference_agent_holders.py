"""The reference agent keys what a client chooses by the client: a queued message's id (its task's id until a turn
takes it) chosen alike by two subjects names two messages, each with its own push configs; and a database from
before configs were keyed so is carried over on start."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.scenarios import drivers, queueing
from nylorun_a2a_kit.reference_agent import layouts
from nylorun_a2a_kit.reference_agent.config import AgentConfig, parse_key
from nylorun_a2a_kit.reference_agent.engine import Caller, Engine
from nylorun_a2a_kit.reference_agent.store import Store

HOOK = "127.0.0.1:9"  # allowed, never answered: configs are written and read, nothing needs delivering
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
KEY = "kit-key"


@pytest.fixture
def agent(tmp_path):
    from nylorun_a2a_kit.reference_agent.app import serve_in_thread

    config = AgentConfig(
        str(tmp_path / "agent.sqlite3"),
        keys=dict([parse_key(KEY)]),
        push_secret=SECRET,
        push_allowed=frozenset({HOOK}),
    )
    running = serve_in_thread(config)
    yield running
    running.stop()


def _client(agent, subject: str, agent_id: str = "support") -> A2AClient:
    return A2AClient(agent.agent_url(agent_id), key=KEY, subject=subject, timeout_s=20)


def _queue(client: A2AClient, message_id: str) -> dict:
    context, running = queueing.busy(client)
    task = queueing.queued_task(queueing.send(client, context, message_id), context)
    client.cancel(running["id"])  # the queued message then runs at once; its configs move to its turn
    return task


@pytest.mark.parametrize("neighbour", ["another subject", "another Agent"])
def test_a_queued_message_id_chosen_alike_holds_its_own_configs(agent, neighbour: str):
    first = _client(agent, "a2a:first")
    second = _client(agent, "a2a:second") if neighbour == "another subject" else _client(agent, "a2a:first", "billing")
    message_id = "refund:demo-123"
    mine = first.send(drivers.scenario("slow", 60_000), return_immediately=True).task
    ctx_a = mine["contextId"]
    queued_a = queueing.queued_task(queueing.send(first, ctx_a, message_id), ctx_a)
    theirs = second.send(drivers.scenario("slow", 60_000), return_immediately=True).task
    ctx_b = theirs["contextId"]
    queued_b = queueing.queued_task(queueing.send(second, ctx_b, message_id), ctx_b)
    assert queued_a["id"] == queued_b["id"] == message_id  # the profile: a queued message answers under its id
    config = {"taskId": message_id, "id": "hook", "url": f"http://{HOOK}/first", "token": "first-secret-token"}
    first.call("CreateTaskPushNotificationConfig", config).ok()
    read = second.call("GetTaskPushNotificationConfig", {"taskId": message_id, "id": "hook"})
    read.expect_error("TaskNotFoundError")
    assert "first-secret-token" not in read.response_body.decode() and "/first" not in read.response_body.decode()
    listed = second.call("ListTaskPushNotificationConfigs", {"taskId": message_id}).ok()
    assert listed["configs"] == []
    second.call("CreateTaskPushNotificationConfig", {**config, "url": f"http://{HOOK}/second", "token": "t2"}).ok()
    kept = first.call("GetTaskPushNotificationConfig", {"taskId": message_id, "id": "hook"}).ok()
    assert (kept["url"], kept["token"]) == (config["url"], config["token"])
    second.call("DeleteTaskPushNotificationConfig", {"taskId": message_id, "id": "hook"}).ok()
    assert [
        c["url"] for c in first.call("ListTaskPushNotificationConfigs", {"taskId": message_id}).ok()["configs"]
    ] == [config["url"]]
    first.cancel(mine["id"]).ok()
    second.cancel(theirs["id"]).ok()
    # The first's message taken: its config follows it to its turn; the second's message stays queued, config-less.
    taker = drivers.wait_for(first, message_id, ["TASK_STATE_WORKING", *drivers.TERMINAL])
    assert taker["id"] != message_id
    moved = first.call("ListTaskPushNotificationConfigs", {"taskId": taker["id"]}).ok()["configs"]
    assert [(c["id"], c["url"]) for c in moved] == [("hook", config["url"])]


def test_a_queued_message_named_as_one_of_its_callers_tasks_leaves_that_tasks_configs(agent):
    """A messageId the caller chose equal to one of its own task ids: the task keeps its configs when the queued
    message is taken (the task id is the caller's own, so GetTask names the task)."""
    client = _client(agent, "a2a:first")
    task = drivers.run(client, "ask")
    client.call(
        "CreateTaskPushNotificationConfig", {"taskId": task["id"], "id": "hook", "url": f"http://{HOOK}/t"}
    ).ok()
    context, running = queueing.busy(client)
    queueing.queued_task(queueing.send(client, context, task["id"]), context)
    client.cancel(running["id"]).ok()
    drivers.wait_for(client, running["id"], drivers.TERMINAL)
    listed = client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}).ok()["configs"]
    assert [c["id"] for c in listed] == ["hook"]


# The push tables as the agent wrote them before configs were keyed by their holder's Agent and subject.
UNOWNED = layouts.OLDER[layouts.OLDER.index("CREATE TABLE push_configs") :]


def test_a_database_from_before_holders_is_carried_over(tmp_path: Path):
    db = tmp_path / "agent.sqlite3"
    caller = Caller("support", "a2a:older", "http://127.0.0.1:1/v1/a2a/agents/support")
    config = AgentConfig(str(db), push_secret=SECRET, push_allowed=frozenset({HOOK}))
    store = Store(str(db))
    engine = Engine(store, config)

    async def older() -> tuple[str, str]:  # a task whose turn runs on, and a message queued behind it
        task = await engine.send(caller, {"message": _message("m1"), "configuration": {"returnImmediately": True}})
        queued = await engine.send(caller, {"message": {**_message("m2"), "contextId": task.context_id}})
        return task.id, queued.id

    task_id, queued_id = asyncio.run(_stopping(engine, older()))
    store.db.executescript("DROP TABLE push_configs; DROP TABLE push_outbox;" + UNOWNED)
    rows = [
        (task_id, "on-task", "support", "a2a:older", f"http://{HOOK}/a", None, None, "[]", "active"),
        (queued_id, "on-queued", "support", "a2a:older", f"http://{HOOK}/b", "tk", None, "[]", "active"),
    ]
    store.db.executemany("INSERT INTO push_configs VALUES (?,?,?,?,?,?,?,?,?)", rows)
    store.db.execute(
        "INSERT INTO push_outbox (task_id, config_id, webhook_id, body, next_at, state) VALUES (?,?,?,?,?,?)",
        (task_id, "on-task", "msg_1", b"{}", 0.0, "pending"),
    )
    store.close()

    engine = Engine(Store(str(db)), config)
    task, queued = engine.store.get(task_id), engine.queue.find("support", "a2a:older", queued_id)
    assert [c.id for c in engine.push_configs.list(task)] == ["on-task"]
    assert [(c.id, c.token) for c in engine.push_configs.list(queued.as_task())] == [("on-queued", "tk")]
    (outbox,) = _rows(db, "SELECT config_key FROM push_outbox")
    assert engine.push_configs.target(outbox[0]).id == "on-task"
    engine.store.close()


def _message(message_id: str) -> dict:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": drivers.scenario("slow", 60_000)}]}


async def _stopping(engine: Engine, work):
    try:
        return await work
    finally:
        await engine.stop()


def _rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
