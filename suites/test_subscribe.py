"""SubscribeToTask (A2A §3.1.6, §9.4.6) for an Agent whose card declares streaming: a task that is not in a
terminal state is streamed from its current state until it is; one that is gets UnsupportedOperationError."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange
from nylorun_a2a_kit.fixtures.requirements import not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, streams
from nylorun_a2a_kit.fixtures.target import Target


def declared(target: Target) -> None:
    if not streams.streams_declared(target.card):
        not_applicable("the card says streaming false (the refusal is checked instead)")


def judge(exchange: Exchange, client: A2AClient, task_id: str, *, state_now: str | None = None) -> None:
    """The subscription rule on a SubscribeToTask answer for the caller's task ``task_id``, not terminal when
    subscribed: the Task first (as it stood), then only its updates, and the stream closes once it ends."""
    if exchange.events is None:
        if exchange.is_error and exchange.error.get("code") == -32004:
            now = drivers.state(client.get_task(task_id).task)
            if now in drivers.TERMINAL:
                not_checked(f"the task was {now} by the time the subscription reached the Agent")
        exchange.fail("SubscribeToTask on a task that is not terminal must answer a text/event-stream")
    problem, unsettled = streams.verdict(
        exchange.events, exchange.stream_closed, subscribed=task_id, state_now=state_now
    )
    if problem:
        exchange.fail(problem)
    if unsettled:
        now = drivers.state(client.get_task(task_id).task)
        if now in drivers.TERMINAL:
            exchange.fail(f"the task is {now} (GetTask), but the subscription's stream stayed open")
        not_checked(f"the subscription was still open after {client.timeout_s:.0f} s with the task {unsettled}")


@pytest.mark.req("STREAM-02")
@pytest.mark.scenario("slow")
def test_a_subscription_to_a_working_task_follows_it_until_it_completes(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    declared(a2a_target)
    task = a2a_client.send(drivers.scenario("slow", 2_000), return_immediately=True).task
    a2a_cancel_at_end(a2a_client, task["id"])
    judge(a2a_client.call("SubscribeToTask", {"id": task["id"]}), a2a_client, task["id"])


@pytest.mark.req("STREAM-02")
@pytest.mark.scenario("slow")
def test_a_subscription_to_a_working_task_closes_once_it_is_canceled(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    declared(a2a_target)
    task = a2a_client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
    a2a_cancel_at_end(a2a_client, task["id"])
    stream = streams.Background(a2a_client, "SubscribeToTask", {"id": task["id"]})
    if stream.first_event(a2a_target.timeout_s) is not None:
        a2a_client.cancel(task["id"])
    judge(stream.exchange(), a2a_client, task["id"])


@pytest.mark.req("STREAM-02")
@pytest.mark.scenario("ask")
def test_a_subscription_to_a_paused_task_begins_with_it_as_it_stands(a2a_client: A2AClient, a2a_target: Target):
    declared(a2a_target)
    task = drivers.run(a2a_client, "ask")
    if drivers.state(task) != "TASK_STATE_INPUT_REQUIRED":
        not_checked(f"scenario ask answered the task {drivers.state(task)}, not paused for input")
    stream = streams.Background(a2a_client, "SubscribeToTask", {"id": task["id"]})
    if stream.first_event(a2a_target.timeout_s) is not None:
        a2a_client.send("My answer.", task_id=task["id"], context_id=task["contextId"])
    judge(stream.exchange(), a2a_client, task["id"], state_now="TASK_STATE_INPUT_REQUIRED")


# -- a task in a terminal state


def canceled_task(client: A2AClient, cancel_at_end) -> dict:
    task = client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
    cancel_at_end(client, task["id"])
    client.cancel(task["id"])
    return drivers.wait_for(client, task["id"], drivers.TERMINAL)


ENDED = [
    pytest.param(lambda client, _: drivers.ordinary(client, ended=True), id="ordinary"),
    pytest.param(lambda client, _: drivers.run(client, "fail"), marks=pytest.mark.scenario("fail"), id="failed"),
    pytest.param(canceled_task, marks=pytest.mark.scenario("slow"), id="canceled"),
]


@pytest.mark.req("STREAM-03")
@pytest.mark.parametrize("ended", ENDED)
def test_a_subscription_to_an_ended_task_is_refused(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end, ended
):
    """Each terminal state the kit can reach: whatever an ordinary message ends in (COMPLETED on most Agents),
    FAILED and CANCELED by the contract's scenarios (REJECTED: none of them)."""
    declared(a2a_target)
    task = ended(a2a_client, a2a_cancel_at_end)
    state = drivers.state(drivers.wait_for(a2a_client, task["id"], drivers.TERMINAL))
    exchange = a2a_client.call("SubscribeToTask", {"id": task["id"]})
    streams.expect_refused(exchange, f"SubscribeToTask on a task in state {state}")
