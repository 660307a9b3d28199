"""What the profile does not serve answers UnsupportedOperationError (-32004), whatever the card says.

That an Agent whose card says streaming false refuses both stream methods is an A2A rule of its own, checked
at the core tier with the streaming checks (test_streaming.py); these are the profile's rules beyond it."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.scenarios import drivers


@pytest.mark.req("UNSRV-01")
def test_streaming_refusal_is_a_plain_error_and_starts_nothing(a2a_client: A2AClient):
    context = drivers.new_context()
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "contextId": context, "parts": [{"text": "hi"}]}
    }
    exchange = a2a_client.call("SendStreamingMessage", params)
    if exchange.events is not None:
        exchange.fail("SendStreamingMessage is not served: a plain JSON-RPC error answers it, not a stream")
    exchange.expect_error("UnsupportedOperationError")
    listed = a2a_client.list_tasks(contextId=context)
    if listed.result["tasks"]:
        listed.fail("a refused SendStreamingMessage must not start a task")


@pytest.mark.req("UNSRV-02")
@pytest.mark.scenario("complete")
def test_subscribe_to_ended_task_is_unsupported(a2a_client: A2AClient):
    task = drivers.run(a2a_client, "complete")
    a2a_client.call("SubscribeToTask", {"id": task["id"]}).expect_error("UnsupportedOperationError")


@pytest.mark.req("UNSRV-02")
@pytest.mark.scenario("slow")
def test_subscribe_refusal_leaves_the_running_task_unchanged(a2a_client: A2AClient, a2a_cancel_at_end):
    # A streaming agent refuses only ended tasks (A2A §9.4.6); a running one tells the two apart.
    task = a2a_client.send(drivers.scenario("slow", 10_000), return_immediately=True).task
    a2a_cancel_at_end(a2a_client, task["id"])
    exchange = a2a_client.call("SubscribeToTask", {"id": task["id"]})
    if exchange.events is not None:
        exchange.fail("SubscribeToTask is not served: a plain JSON-RPC error answers it, not a stream")
    exchange.expect_error("UnsupportedOperationError")
    after = a2a_client.get_task(task["id"])
    if drivers.state(after.task) in drivers.SETTLED:
        after.fail("a refused SubscribeToTask must leave the running task running")


@pytest.mark.req("UNSRV-03")
def test_get_extended_agent_card_is_unsupported(a2a_client: A2AClient):
    a2a_client.call("GetExtendedAgentCard", {}).expect_error("UnsupportedOperationError")
