"""The errors the stream methods answer, for an Agent whose card declares streaming (A2A §3.1.2 and §3.1.6
Errors): a message to an ended task, a task that does not exist."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.requirements import not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers, streams
from nylorun_a2a_kit.fixtures.target import Target


def declared(target: Target) -> None:
    if not streams.streams_declared(target.card):
        not_applicable("the card says streaming false (the refusal is checked instead)")


def streamed(client: A2AClient, **fields: str):
    message = {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": "More, please."}], **fields}
    return client.call("SendStreamingMessage", {"message": message})


@pytest.mark.req("STREAM-06")
def test_a_streamed_message_to_an_ended_task_is_refused(a2a_client: A2AClient, a2a_target: Target):
    declared(a2a_target)
    task = drivers.ordinary(a2a_client, ended=True)
    exchange = streamed(a2a_client, taskId=task["id"], contextId=task["contextId"])
    streams.expect_refused(exchange, f"SendStreamingMessage to a task in state {drivers.state(task)}")


@pytest.mark.req("STREAM-06")
def test_a_streamed_message_to_a_task_that_does_not_exist_is_refused(a2a_client: A2AClient, a2a_target: Target):
    declared(a2a_target)
    exchange = streamed(a2a_client, taskId=new_id("task"))
    streams.expect_refused(exchange, "SendStreamingMessage naming no task", "TaskNotFoundError")


@pytest.mark.req("STREAM-06")
def test_a_subscription_to_a_task_that_does_not_exist_is_refused(a2a_client: A2AClient, a2a_target: Target):
    declared(a2a_target)
    exchange = a2a_client.call("SubscribeToTask", {"id": new_id("task")})
    streams.expect_refused(exchange, "SubscribeToTask naming no task", "TaskNotFoundError")
