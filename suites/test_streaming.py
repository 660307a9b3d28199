"""Streaming, for an Agent whose card declares it (A2A §3.1.2, §9.4.2); the profile serves none (unserved)."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.target import Target

TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}


@pytest.mark.req("STREAM-01")
def test_a_streamed_message_is_one_message_or_the_task_then_its_updates(client: A2AClient, target: Target):
    if not (target.card.get("capabilities") or {}).get("streaming"):
        pytest.skip("not applicable: the card says streaming false (the unserved checks cover the refusal)")
    message = {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": "Say hello."}]}
    exchange = client.call("SendStreamingMessage", {"message": message})
    if exchange.events is None:
        exchange.fail("the card declares streaming, but SendStreamingMessage did not answer a text/event-stream")
    answers = [event["result"] for event in exchange.events if "result" in event]
    if len(answers) != len(exchange.events):
        exchange.fail("a stream event is a JSON-RPC error, not a StreamResponse")
    first = answers[0]
    if "message" in first:
        if len(answers) != 1 or not exchange.stream_closed:
            exchange.fail("a stream that begins with a Message must hold that one Message and close")
        return
    if "task" not in first:
        exchange.fail("a stream must begin with the Task (or a single Message)")
    task_id, state = first["task"]["id"], first["task"]["status"]["state"]
    for later in answers[1:]:
        update = later.get("statusUpdate") or later.get("artifactUpdate")
        if update is None or update.get("taskId") != task_id:
            exchange.fail(f"after the Task, a stream carries only status and artifact updates of task {task_id}")
        state = later.get("statusUpdate", {}).get("status", {}).get("state", state)
    if state in TERMINAL and not exchange.stream_closed:
        exchange.fail(f"the task reached {state} but the stream stayed open")
    if state not in TERMINAL and not exchange.stream_closed:
        pytest.skip(f"not checked: the stream was still open after {target.timeout_s:.0f} s with the task {state}")
