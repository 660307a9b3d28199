"""Answers keep their A2A 1.0 shape (SHAPE-01), one kind of answer per check.

Every answer the kit receives is validated against its schema. A violation inside a result or an error's
details does not fail the check that happened to see it: that check judges its own rule past it, and the
violation is reported once per root cause under SHAPE-01. These checks exercise each kind of answer, so
a broken shape is found whichever other checks run.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target


def _shaped(*exchanges: Exchange) -> None:
    for exchange in exchanges:
        exchange.expect_shape()


@pytest.mark.req("SHAPE-01")
def test_task_answers_keep_their_shape(a2a_client: A2AClient):
    sent = a2a_client.send(drivers.ORDINARY_TEXT, history_length=10)
    _shaped(sent)
    task = drivers.task_of(sent, "no task answer")
    _shaped(a2a_client.get_task(task["id"], history_length=10), a2a_client.get_task(task["id"]))


@pytest.mark.req("SHAPE-01")
def test_listing_answers_keep_their_shape(a2a_client: A2AClient):
    context = drivers.new_context()
    drivers.ordinary(a2a_client, context_id=context)
    _shaped(a2a_client.list_tasks(contextId=context, historyLength=10, includeArtifacts=True))


@pytest.mark.req("SHAPE-01")
def test_error_answers_keep_their_shape(a2a_client: A2AClient):
    _shaped(
        a2a_client.get_task(new_id("task")), a2a_client.cancel(new_id("task")), a2a_client.call("GetTask", {"id": 7})
    )


@pytest.mark.req("SHAPE-01")
def test_push_config_answers_keep_their_shape(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task = drivers.ordinary(a2a_client)
    created = drivers.create_push_config(a2a_client, task["id"], a2a_push_receiver.endpoint().url, token=new_id("tok"))
    _shaped(created)
    if created.is_error:
        not_checked(f"the config was refused ({created.error.get('code')}), so no config answer")
    config_id = created.result.get("id")
    _shaped(
        a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}),
        a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}),
    )


# -- what a2a.proto says of answered objects beyond their schema


def _agents_messages(task: dict) -> list[dict]:
    status = task.get("status") or {}
    shown = [status["message"]] if isinstance(status.get("message"), dict) else []
    return shown + [m for m in task.get("history") or [] if isinstance(m, dict) and m.get("role") == "ROLE_AGENT"]


@pytest.mark.req("SHAPE-02")
def test_the_agents_messages_carry_their_context_and_task(a2a_client: A2AClient):
    sent = a2a_client.send(drivers.ORDINARY_TEXT)
    if "message" in sent.result:  # a direct Message answer: no task, but still its context
        if not sent.result["message"].get("contextId"):
            sent.fail("a message the Agent sends carries its contextId (a2a.proto Message)")
        return
    task = drivers.settle(a2a_client, sent.task)
    exchange = a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)
    task = exchange.task
    for message in _agents_messages(task):
        if message.get("contextId") != task.get("contextId"):
            exchange.fail(f"message {message.get('messageId')} must carry its task's contextId {task.get('contextId')}")
        if message.get("taskId") not in (None, task["id"]):
            exchange.fail(f"message {message.get('messageId')} names task {message.get('taskId')}, not {task['id']}")


@pytest.mark.req("SHAPE-02")
@pytest.mark.scenario("complete")
def test_a_tasks_artifacts_have_distinct_ids(a2a_client: A2AClient):
    task = drivers.run(a2a_client, "complete")
    exchange = a2a_client.get_task(task["id"])
    ids = [a.get("artifactId") for a in exchange.task.get("artifacts") or []]
    if len(ids) != len(set(ids)):
        exchange.fail(f"the artifacts of a task must have distinct artifactIds (a2a.proto Artifact), got {ids}")
