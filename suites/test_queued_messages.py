"""Queued messages: a new message to a busy context waits for its turn, or is refused when the caller asks."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.requirements import axes, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, queueing
from nylorun_a2a_kit.fixtures.target import Target

CONCURRENT = 6


@pytest.fixture
def busy(a2a_client: A2AClient):
    """A context whose task is still running (slow scenario), canceled when the check ends."""
    context, running = queueing.busy(a2a_client)
    yield context, running
    drivers.cancel_quietly(a2a_client, running["id"])


@pytest.mark.req("QUEUE-01")
@pytest.mark.scenario("slow", "complete")
@pytest.mark.parametrize("delivery", [None, "queue"], ids=["no-delivery", "delivery-queue"])
def test_message_to_busy_context_is_queued(a2a_client: A2AClient, a2a_target: Target, busy, delivery: str | None):
    context, running = busy
    queueing.queued_task(
        queueing.send(a2a_client, context, **(drivers.delivery(a2a_target, delivery) if delivery else {})),
        context,
        running,
    )


@pytest.mark.req("QUEUE-02")
@pytest.mark.scenario("slow", "complete")
def test_queued_task_is_reachable_by_its_id(a2a_client: A2AClient, busy):
    context, running = busy
    queued = queueing.queued_task(queueing.send(a2a_client, context), context, running)
    exchange = a2a_client.get_task(queued["id"])
    if drivers.state(exchange.task) != "TASK_STATE_SUBMITTED" or exchange.task.get("contextId") != drivers.known_as(
        context
    ):
        exchange.fail(f"GetTask on the queued task {queued['id']} must answer it TASK_STATE_SUBMITTED in {context}")


@pytest.mark.req("QUEUE-02")
@pytest.mark.scenario("slow", "complete")
def test_a_queued_tasks_id_once_taken_is_no_longer_the_queued_placeholder(a2a_client: A2AClient, busy):
    # Once a turn took the message, its id answers the taking task or nothing (QUEUE-02's decision): never the
    # placeholder still SUBMITTED, which a client polling it would wait on forever.
    context, running = busy
    message_id = new_id("queued")
    queued = queueing.queued_task(queueing.send(a2a_client, context, message_id), context, running)
    listed = queueing.drain(a2a_client, context, running)
    if not queueing.takers(listed, [message_id])[message_id]:
        not_checked(f"no listed task of {context} holds the queued message {message_id} once the queue drained")
    exchange = a2a_client.call("GetTask", {"id": queued["id"]})
    if not exchange.is_error and drivers.state(exchange.task) == "TASK_STATE_SUBMITTED":
        exchange.fail(
            f"once a turn took the queued message, GetTask on its id {queued['id']} answers the taking task or "
            "TaskNotFoundError, not the queued placeholder still SUBMITTED"
        )


@pytest.mark.req("QUEUE-03")
@pytest.mark.scenario("slow", "complete")
def test_queued_task_is_not_listed(a2a_client: A2AClient, busy):
    context, running = busy
    queued = queueing.queued_task(queueing.send(a2a_client, context), context, running)
    exchange = a2a_client.list_tasks(contextId=context)
    if queued["id"] in [t["id"] for t in exchange.result["tasks"]]:
        exchange.fail(f"ListTasks must not list the queued message {queued['id']} before a turn takes it")
    if exchange.result["totalSize"] != 1:
        exchange.fail("totalSize must count only the running task, not the queued message")


@pytest.mark.req("QUEUE-04")
@pytest.mark.scenario("slow", "complete")
def test_queued_task_cannot_be_canceled(a2a_client: A2AClient, busy):
    context, running = busy
    queued = queueing.queued_task(queueing.send(a2a_client, context), context, running)
    a2a_client.cancel(queued["id"]).expect_error("TaskNotCancelableError")
    exchange = a2a_client.get_task(queued["id"])
    if drivers.state(exchange.task) != "TASK_STATE_SUBMITTED":
        exchange.fail("after a refused CancelTask the message must stay queued (TASK_STATE_SUBMITTED)")


@pytest.mark.req("QUEUE-05")
@pytest.mark.scenario("slow", "complete")
@pytest.mark.member("several", "queued-message.second")
def test_queued_messages_are_taken_in_order(a2a_client: A2AClient, busy):
    context, running = busy
    message_ids = [new_id("queued") for _ in range(3)]
    for message_id in message_ids:
        queueing.queued_task(queueing.send(a2a_client, context, message_id), context, running)
    listed = queueing.drain(a2a_client, context, running)
    takers = queueing.takers(listed, message_ids)
    for message_id, tasks in takers.items():
        if len(tasks) != 1:
            pytest.fail(f"queued message {message_id} was taken by {len(tasks)} tasks, expected exactly one")
        if drivers.state(tasks[0]) != "TASK_STATE_COMPLETED":
            pytest.fail(f"the turn that took {message_id} ended {drivers.state(tasks[0])}, not COMPLETED")
    # One turn at a time: a message queued later ends no earlier than one queued before it.
    ended = [takers[mid][0]["status"].get("timestamp", "") for mid in message_ids]
    if any(a > b for a, b in itertools.pairwise(ended)):
        pytest.fail(f"queued messages were not taken in order: their turns ended at {ended}")


@pytest.mark.long
@pytest.mark.req("QUEUE-01", "QUEUE-05")
@pytest.mark.scenario("slow", "complete")
def test_concurrent_messages_are_none_lost_none_twice(a2a_client: A2AClient, busy):
    context, running = busy
    message_ids = [new_id("burst") for _ in range(CONCURRENT)]
    with ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(lambda mid: queueing.send(a2a_client, context, mid), message_ids))
    queued = [queueing.queued_task(exchange, context, running) for exchange in answers]
    if len({t["id"] for t in queued}) != CONCURRENT:
        pytest.fail(f"{CONCURRENT} messages sent at once got {len({t['id'] for t in queued})} distinct tasks")
    listed = queueing.drain(a2a_client, context, running)
    for message_id, tasks in queueing.takers(listed, message_ids).items():
        if len(tasks) != 1:
            pytest.fail(f"message {message_id}, sent with {CONCURRENT - 1} others, ran in {len(tasks)} turns, not 1")


@pytest.mark.req("SEND-04")
@pytest.mark.scenario("slow", "complete")
def test_retried_queued_message_is_taken_once(a2a_client: A2AClient, busy):
    context, running = busy
    message_id = new_id("queued")
    first = queueing.queued_task(queueing.send(a2a_client, context, message_id), context, running)
    retry = queueing.send(a2a_client, context, message_id)
    if retry.task["id"] != first["id"]:
        retry.fail(f"a retry of the queued message {message_id} must answer its task {first['id']}")
    takers = queueing.takers(queueing.drain(a2a_client, context, running), [message_id])[message_id]
    if len(takers) != 1:
        pytest.fail(f"the queued message {message_id}, sent twice with one messageId, ran in {len(takers)} turns")


@pytest.mark.req("QUEUE-06")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("conversation", ["ended", "new"])
def test_reject_delivery_to_a_conversation_with_nothing_running_is_served(
    a2a_client: A2AClient, a2a_target: Target, conversation: str
):
    """Delivery "reject" refuses only what would wait: a conversation whose tasks all ended is not busy, nor one
    that has had no task yet."""
    context = drivers.new_context()
    ended = None
    if conversation == "ended":
        ended = drivers.settle(a2a_client, drivers.run(a2a_client, "complete", context_id=context))
        if drivers.state(ended) not in drivers.TERMINAL:
            not_checked(f"the conversation's first task did not end ({drivers.state(ended)})")
    exchange = a2a_client.send(
        drivers.scenario("complete"), context_id=context, **drivers.delivery(a2a_target, "reject")
    )
    if exchange.is_error:
        exchange.fail(f"conversation {context} has no running or queued task: delivery reject is served, not refused")
    if ended is not None and exchange.task.get("id") == ended["id"]:
        exchange.fail("a new message to a conversation whose task ended starts a task of its own")
    if exchange.task.get("contextId") != drivers.known_as(context):
        exchange.fail(f"the message names conversation {context}: its task belongs to it")


@pytest.mark.req("QUEUE-06")
@pytest.mark.scenario("slow")
def test_a_context_busy_refusal_names_the_running_task(a2a_client: A2AClient, a2a_target: Target, busy):
    """A message to the busy context that names its running task, asked not to queue: a Runtime may refuse it as it
    likes, but a CONTEXT_BUSY refusal names the running task, as for a new message there."""
    context, running = busy
    exchange = a2a_client.send(
        "blue", task_id=running["id"], context_id=context, **drivers.delivery(a2a_target, "reject")
    )
    if not exchange.is_error or (exchange.detail("ErrorInfo") or {}).get("reason") != "CONTEXT_BUSY":
        not_checked(f"the message naming the running task was answered {exchange.answer_line()}, not CONTEXT_BUSY")
    exchange.expect_error("UnsupportedOperationError", reason="CONTEXT_BUSY")
    if running["id"] not in ((exchange.detail("ErrorInfo") or {}).get("metadata") or {}).values():
        exchange.fail(f"the ErrorInfo metadata must name the running task {running['id']}")


@pytest.mark.req("QUEUE-06")
@pytest.mark.scenario("slow", "complete")
@pytest.mark.parametrize("combined", axes.members("QUEUE-06", "combines"))
def test_reject_delivery_gets_context_busy(a2a_client: A2AClient, a2a_target: Target, busy, combined: str):
    context, running = busy
    rejected = new_id("reject")
    at_once = combined.startswith("returnImmediately")
    exchange = a2a_client.send(
        drivers.scenario("complete"),
        context_id=context,
        message_id=rejected,
        return_immediately=at_once or None,
        timeout_s=a2a_target.wait_ms / 1000 + a2a_target.timeout_s,
        **drivers.delivery(a2a_target, "reject"),
    )
    exchange.expect_error("UnsupportedOperationError", reason="CONTEXT_BUSY")
    info = exchange.detail("ErrorInfo") or {}
    if running["id"] not in (info.get("metadata") or {}).values():
        exchange.fail(f"the ErrorInfo metadata must name the running task {running['id']}")
    # Nothing was queued: once the context is free, a new message runs at once and the refused one never runs.
    a2a_client.cancel(running["id"]).ok()
    probe = drivers.settle(a2a_client, drivers.run(a2a_client, "complete", context_id=context))
    listed = queueing.listed(a2a_client, context)
    if queueing.takers(listed, [rejected])[rejected]:
        pytest.fail(f"the refused message {rejected} ran after all")
    if probe["id"] not in [t["id"] for t in listed] or len(listed) != 2:
        pytest.fail(f"expected the canceled task and the probe in {context}, got {[t['id'] for t in listed]}")
