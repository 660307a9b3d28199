"""Answers keep their A2A 1.0 shape (SHAPE-01), one kind of answer per check.

Every answer the kit receives is validated against its schema. A violation inside a result or an error's
details does not fail the check that happened to see it: that check judges its own rule past it, and the
violation is reported once per root cause under SHAPE-01. These checks exercise each kind of answer, so
a broken shape is found whichever other checks run.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client.jsonrpc import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.push.receiver import PushReceiver
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target.target import Target


def _shaped(*exchanges: Exchange) -> None:
    for exchange in exchanges:
        exchange.expect_shape()


@pytest.mark.req("SHAPE-01")
def test_task_answers_keep_their_shape(client: A2AClient):
    sent = client.send(drivers.ORDINARY_TEXT, history_length=10)
    _shaped(sent)
    task = drivers.task_of(sent, "no task answer")
    _shaped(client.get_task(task["id"], history_length=10), client.get_task(task["id"]))


@pytest.mark.req("SHAPE-01")
def test_listing_answers_keep_their_shape(client: A2AClient):
    context = drivers.new_context()
    drivers.ordinary(client, context_id=context)
    _shaped(client.list_tasks(contextId=context, historyLength=10, includeArtifacts=True))


@pytest.mark.req("SHAPE-01")
def test_error_answers_keep_their_shape(client: A2AClient):
    _shaped(client.get_task(new_id("task")), client.cancel(new_id("task")), client.call("GetTask", {"id": 7}))


@pytest.mark.req("SHAPE-01")
def test_push_config_answers_keep_their_shape(pushing: Target, client: A2AClient, push_receiver: PushReceiver):
    task = drivers.ordinary(client)
    created = drivers.create_push_config(client, task["id"], push_receiver.endpoint().url, token=new_id("tok"))
    _shaped(created)
    if created.is_error:
        pytest.skip(f"not checked: the config was refused ({created.error.get('code')}), so no config answer")
    config_id = created.result.get("id")
    _shaped(
        client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}),
        client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}),
    )
