"""Streaming, for an Agent whose card declares it (A2A §3.1.2, §9.4.2); the profile serves none (unserved)."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.requirements import not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target


@pytest.mark.req("STREAM-01")
def test_a_streamed_message_is_one_message_or_the_task_then_its_updates(a2a_client: A2AClient, a2a_target: Target):
    if not (a2a_target.card.get("capabilities") or {}).get("streaming"):
        not_applicable("the card says streaming false (the unserved checks cover the refusal)")
    message = {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": "Say hello."}]}
    exchange = a2a_client.call("SendStreamingMessage", {"message": message})
    if exchange.events is None:
        exchange.fail("the card declares streaming, but SendStreamingMessage did not answer a text/event-stream")
    problem, unsettled = stream_verdict(exchange.events, exchange.stream_closed)
    if problem:
        exchange.fail(problem)
    if unsettled:
        not_checked(f"the stream was still open after {a2a_target.timeout_s:.0f} s with the task {unsettled}")


def stream_verdict(events: list, closed: bool) -> tuple[str | None, str | None]:
    """What breaks the stream rule (A2A §3.1.2), if anything; and the task's state when the stream neither broke
    it nor closed (so the rule could not be judged yet)."""
    if not events:
        return "the stream carried no event: it must begin with the Task (or a single Message)", None
    answers = [event["result"] for event in events if isinstance(event, dict) and "result" in event]
    if len(answers) != len(events):
        return "a stream event is a JSON-RPC error, not a StreamResponse", None
    first = answers[0]
    if "message" in first:
        if len(answers) != 1 or not closed:
            return "a stream that begins with a Message must hold that one Message and close", None
        return None, None
    if "task" not in first:
        return "a stream must begin with the Task (or a single Message)", None
    task_id, state = first["task"]["id"], first["task"]["status"]["state"]
    for later in answers[1:]:
        if (later.get("task") or {}).get("id") == task_id:  # a final Task snapshot, which A2A §11.7 allows
            state = later["task"]["status"]["state"]
            continue
        update = later.get("statusUpdate") or later.get("artifactUpdate")
        if update is None or update.get("taskId") != task_id:
            return f"after the Task, a stream carries only status and artifact updates of task {task_id}", None
        state = later.get("statusUpdate", {}).get("status", {}).get("state", state)
    if state in drivers.TERMINAL and not closed:
        return f"the task reached {state} but the stream stayed open", None
    return None, (state if not closed else None)
