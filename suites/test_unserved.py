"""What the profile does not serve answers UnsupportedOperationError (-32004): each unserved method, on every
task state and in every form a client sends it, as a plain JSON-RPC error that changes nothing.

That an Agent whose card says streaming false refuses both stream methods is an A2A rule of its own, checked
at the core tier with the streaming checks (test_streaming.py); these are the profile's rules beyond it."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id, sse
from nylorun_a2a_kit.fixtures.scenarios import drivers

# How a client asks for SendStreamingMessage: as a stream (A2A §9.4.2), or as any JSON-RPC call.
ACCEPT = {"accepts-a-stream": f"{sse.CONTENT_TYPE}, application/json", "accepts-json": "application/json"}


def _plain_refusal(exchange: Exchange, what: str) -> None:
    exchange.expect_error("UnsupportedOperationError")
    if exchange.events is not None:
        exchange.fail(f"{what} is refused with a plain JSON-RPC error, not a stream ({sse.CONTENT_TYPE})")


def _seen(a2a_client: A2AClient, task_id: str) -> tuple[tuple, Exchange]:
    exchange = a2a_client.get_task(task_id, history_length=drivers.HISTORY_ALL)
    return (drivers.state(exchange.task), len(exchange.task.get("history") or [])), exchange


@pytest.mark.req("UNSRV-01")
@pytest.mark.parametrize("accept", list(ACCEPT.values()), ids=list(ACCEPT))
def test_send_streaming_message_is_unsupported(a2a_client: A2AClient, accept: str):
    context = drivers.new_context()
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "contextId": context, "parts": [{"text": "hi"}]}
    }
    exchange = a2a_client.call("SendStreamingMessage", params, headers={**a2a_client.headers(), "Accept": accept})
    _plain_refusal(exchange, "SendStreamingMessage")
    listed = a2a_client.list_tasks(contextId=context)
    if listed.result["tasks"]:
        listed.fail("a refused SendStreamingMessage must not start a task")


@pytest.mark.req("UNSRV-01")
@pytest.mark.scenario("ask")
def test_streaming_message_to_a_paused_task_changes_nothing(a2a_client: A2AClient, a2a_cancel_at_end):
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    before, _ = _seen(a2a_client, task["id"])
    message = {"messageId": new_id("msg"), "role": "ROLE_USER", "taskId": task["id"], "parts": [{"text": "blue"}]}
    _plain_refusal(a2a_client.call("SendStreamingMessage", {"message": message}), "SendStreamingMessage")
    after, seen = _seen(a2a_client, task["id"])
    if after != before:
        seen.fail(f"a refused SendStreamingMessage must leave the task as it was: {before} before")


def _task_in(a2a_client: A2AClient, state: str, a2a_cancel_at_end) -> dict:
    if state == "running":
        task = a2a_client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
        a2a_cancel_at_end(a2a_client, task["id"])
        # Past SUBMITTED: the state the task keeps for the rest of the check.
        return drivers.wait_for(a2a_client, task["id"], ["TASK_STATE_WORKING"])
    task = drivers.run(a2a_client, "ask" if state == "paused" else "complete")
    a2a_cancel_at_end(a2a_client, task["id"])
    return task


# A streaming Agent refuses only ended tasks (A2A §9.4.6): running and paused ones tell the two apart.
TASK_STATES = {"ended": "complete", "running": "slow", "paused": "ask"}


@pytest.mark.req("UNSRV-02")
@pytest.mark.parametrize(
    "state", [pytest.param(s, marks=pytest.mark.scenario(scenario)) for s, scenario in TASK_STATES.items()]
)
def test_subscribe_to_task_is_unsupported(a2a_client: A2AClient, state: str, a2a_cancel_at_end):
    task = _task_in(a2a_client, state, a2a_cancel_at_end)
    before, _ = _seen(a2a_client, task["id"])
    _plain_refusal(a2a_client.call("SubscribeToTask", {"id": task["id"]}), f"SubscribeToTask on a {state} task")
    after, seen = _seen(a2a_client, task["id"])
    if after != before:
        seen.fail(f"a refused SubscribeToTask must leave the task as it was: {before} before")


@pytest.mark.req("UNSRV-03")
@pytest.mark.parametrize("params", [{}, None], ids=["empty-params", "no-params"])
def test_get_extended_agent_card_is_unsupported(a2a_client: A2AClient, params: dict | None):
    a2a_client.call("GetExtendedAgentCard", params).expect_error("UnsupportedOperationError")
