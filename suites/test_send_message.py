"""SendMessage: blocking and returnImmediately, the a2aWaitMs limit, idempotent messageId, context rules."""

from __future__ import annotations

import time

import pytest

from nylorun_a2a_kit.fixtures.client.jsonrpc import A2AClient, new_id
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target.target import Target

# A scenario far longer than any check waits, so a task that answers early can only be the wait limit.
LONG_MS = 120_000


@pytest.mark.req("SEND-01")
def test_blocking_send_answers_once_the_task_settled(client: A2AClient, target: Target):
    started = time.monotonic()
    exchange = client.send(drivers.ORDINARY_TEXT)
    task = drivers.task_of(exchange)
    waited_ms = (time.monotonic() - started) * 1000
    drivers.cancel_quietly(client, task["id"])
    if drivers.state(task) not in drivers.SETTLED and waited_ms < target.a2a_wait_ms:
        exchange.fail(f"a blocking SendMessage answered {drivers.state(task)}, before the task ended or paused")


@pytest.mark.req("SEND-01")
@pytest.mark.scenario("complete")
def test_blocking_send_waits_for_the_end(client: A2AClient):
    task = drivers.run(client, "complete")
    if drivers.state(task) != "TASK_STATE_COMPLETED":
        client.get_task(task["id"]).fail(f"a blocking SendMessage answered {drivers.state(task)} before the end")


@pytest.mark.req("SEND-01")
@pytest.mark.scenario("ask")
def test_blocking_send_returns_when_the_task_pauses(client: A2AClient, cancel_at_end):
    task = drivers.run(client, "ask")
    cancel_at_end(client, task["id"])
    if drivers.state(task) != "TASK_STATE_INPUT_REQUIRED":
        client.get_task(task["id"]).fail("a blocking SendMessage must answer once the task asks for input")


@pytest.mark.req("SEND-03")
@pytest.mark.scenario("slow")
def test_return_immediately_answers_before_the_end(client: A2AClient, target: Target, cancel_at_end):
    started = time.monotonic()
    exchange = client.send(drivers.scenario("slow", LONG_MS), return_immediately=True)
    elapsed = time.monotonic() - started
    task = exchange.task
    cancel_at_end(client, task["id"])
    if drivers.state(task) not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
        exchange.fail(f"returnImmediately should answer the task in progress, got {drivers.state(task)}")
    # "At once" is judged against the blocking limit: a call that waited anywhere near it did not return.
    if elapsed > min(target.a2a_wait_ms / 1000, target.timeout_s) / 2:
        exchange.fail(f"returnImmediately took {elapsed:.1f} s: the call waited instead of answering at once")


@pytest.mark.req("SEND-03")
@pytest.mark.scenario("slow")
def test_task_answered_at_once_still_runs_to_its_end(client: A2AClient):
    task = client.send(drivers.scenario("slow", 300), return_immediately=True).task
    drivers.wait_for(client, task["id"], drivers.TERMINAL)
    final = client.get_task(task["id"])
    if drivers.state(final.task) != "TASK_STATE_COMPLETED":
        final.fail("a task answered at once must still be worked on to its end")


@pytest.mark.req("SEND-02")
@pytest.mark.scenario("slow")
def test_blocking_send_stops_at_the_wait_limit(client: A2AClient, target: Target, cancel_at_end):
    if target.a2a_wait_ms > target.max_blocking_check_ms:
        pytest.skip(
            f"not run: a2aWaitMs is {target.a2a_wait_ms} ms, above --max-blocking-check-ms "
            f"{target.max_blocking_check_ms}; lower the Runtime's a2aWaitMs for a release check to cover this"
        )
    wait_s = target.a2a_wait_ms / 1000
    started = time.monotonic()
    # A correct target answers at a2aWaitMs; one that ignores it is given a bounded grace, then fails.
    exchange = client.send(drivers.scenario("slow", LONG_MS), timeout_s=wait_s + max(5.0, wait_s))
    elapsed = time.monotonic() - started
    task = exchange.task
    cancel_at_end(client, task["id"])
    if drivers.state(task) != "TASK_STATE_WORKING":
        exchange.fail(f"past a2aWaitMs the answer must be the task still WORKING, got {drivers.state(task)}")
    if elapsed < wait_s * 0.9:
        exchange.fail(f"the call answered after {elapsed:.1f} s, before a2aWaitMs ({wait_s:.1f} s)")
    after = client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_WORKING":
        after.fail("past a2aWaitMs the answer ends the wait, not the work: the task must still be WORKING")


@pytest.mark.req("SEND-04")
@pytest.mark.scenario("complete")
def test_retried_message_id_answers_the_same_task(client: A2AClient):
    context, message_id = drivers.new_context(), new_id("msg")
    first = drivers.run(client, "complete", context_id=context, message_id=message_id)
    retry = client.send(drivers.scenario("complete"), context_id=context, message_id=message_id)
    if retry.task["id"] != first["id"]:
        retry.fail(f"a retry with messageId {message_id} must answer task {first['id']}, got {retry.task['id']}")
    listed = client.list_tasks(contextId=context)
    if len(listed.result["tasks"]) != 1:
        listed.fail("a retried messageId must not start a second task")


@pytest.mark.req("SEND-05")
@pytest.mark.scenario("complete")
def test_omitted_context_starts_a_new_conversation(client: A2AClient):
    first = drivers.run(client, "complete")
    second = client.send(drivers.scenario("complete"))
    if not first.get("contextId") or not second.task.get("contextId"):
        second.fail("a task must carry the contextId the Agent made for it")
    if first["contextId"] == second.task["contextId"]:
        second.fail("two messages without contextId must start two conversations")


@pytest.mark.req("SEND-06")
@pytest.mark.scenario("complete")
def test_given_context_is_kept(client: A2AClient):
    context = drivers.new_context()
    exchange = client.send(drivers.scenario("complete"), context_id=context)
    if exchange.task.get("contextId") != context:
        exchange.fail(f"the task should belong to the conversation {context} the message named")


@pytest.mark.req("SEND-07")
def test_unknown_task_id_is_not_found(client: A2AClient):
    client.send("hello", task_id=new_id("task")).expect_error("TaskNotFoundError")


@pytest.mark.req("SEND-08")
@pytest.mark.scenario("ask")
def test_context_that_differs_from_the_task_is_rejected(client: A2AClient, cancel_at_end):
    task = drivers.run(client, "ask")
    cancel_at_end(client, task["id"])
    exchange = client.send("blue", task_id=task["id"], context_id=drivers.new_context())
    if not exchange.is_error:
        exchange.fail("a message whose contextId differs from its task's must be rejected")
    after = client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_INPUT_REQUIRED":
        after.fail("a rejected message must leave the task as it was")


@pytest.mark.req("SEND-09")
def test_message_to_an_ended_task_is_unsupported(client: A2AClient):
    task = drivers.ordinary(client, ended=True)
    client.send("once more", task_id=task["id"]).expect_error("UnsupportedOperationError")


@pytest.mark.req("SEND-10")
@pytest.mark.scenario("ask")
def test_task_id_alone_continues_in_its_context(client: A2AClient, cancel_at_end):
    task = drivers.run(client, "ask")
    cancel_at_end(client, task["id"])
    exchange = client.send("blue", task_id=task["id"])
    if exchange.task.get("contextId") != task["contextId"]:
        exchange.fail("with only taskId, the Agent must take the context from the task")


@pytest.mark.req("SEND-11")
def test_every_message_is_answered_with_a_task(client: A2AClient):
    exchange = client.send("Hello from the conformance kit.", return_immediately=True)
    task = exchange.task  # fails when the answer is a Message
    drivers.cancel_quietly(client, task["id"])


@pytest.mark.req("SEND-12")
@pytest.mark.parametrize("length", [0, 1])
def test_send_history_length_bounds_an_ordinary_answer(client: A2AClient, length: int):
    exchange = client.send(drivers.ORDINARY_TEXT, history_length=length)
    task = drivers.task_of(exchange)
    drivers.cancel_quietly(client, task["id"])
    drivers.held_history(client, task["id"], cut=length)
    if len(exchange.task.get("history") or []) > length:
        exchange.fail(f"configuration.historyLength {length} allows at most {length} messages in the answer")


@pytest.mark.req("SEND-12")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("length", [0, 1])
def test_send_history_length_bounds_the_answer(client: A2AClient, length: int, cancel_at_end):
    task = drivers.run(client, "ask", history_length=length)
    cancel_at_end(client, task["id"])
    for exchange in (client.get_task(task["id"]), client.send("blue", task_id=task["id"], history_length=length)):
        history = exchange.task.get("history") or []
        if exchange.method == "SendMessage" and len(history) > length:
            exchange.fail(f"configuration.historyLength {length} allows at most {length} messages in the answer")
    if len(task.get("history") or []) > length:
        client.get_task(task["id"]).fail(f"historyLength {length} bounds the first answer's history too")
