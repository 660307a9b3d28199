"""SubscribeToTask (A2A §3.1.6, §9.4.6) for an Agent whose card declares streaming: a task that is not in a
terminal state is streamed from its current state until it is; one that is gets UnsupportedOperationError."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, streams
from nylorun_a2a_kit.fixtures.target import Target


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
        exchange.events,
        exchange.stream_closed,
        subscribed=task_id,
        state_now=state_now,
        written_after=exchange.blocks_after_last_event,
    )
    if problem:
        exchange.fail(problem)
    if unsettled:
        streams.stayed_open(exchange, client, task_id, unsettled, "the subscription's stream", "the subscription")


def working_task(client: A2AClient, target: Target, cancel_at_end, ms: int) -> dict:
    """A task working for ``ms`` to subscribe to, on an Agent whose card declares streaming."""
    streams.declared(target)
    return drivers.working(client, cancel_at_end, ms)


@pytest.mark.req("STREAM-02")
@pytest.mark.scenario("slow")
def test_a_subscription_to_a_working_task_follows_it_until_it_completes(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    task = working_task(a2a_client, a2a_target, a2a_cancel_at_end, 2_000)
    judge(a2a_client.call("SubscribeToTask", {"id": task["id"]}), a2a_client, task["id"])


@pytest.mark.req("STREAM-02")
@pytest.mark.scenario("slow")
def test_a_subscription_to_a_working_task_closes_once_it_is_canceled(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    task = working_task(a2a_client, a2a_target, a2a_cancel_at_end, 120_000)
    stream = streams.Background(a2a_client, "SubscribeToTask", {"id": task["id"]})
    if stream.first_event(a2a_target.timeout_s) is not None:
        a2a_client.cancel(task["id"])
    judge(stream.exchange(), a2a_client, task["id"])


@pytest.mark.req("STREAM-02")
@pytest.mark.scenario("ask")
def test_a_subscription_to_a_paused_task_begins_with_it_as_it_stands(a2a_client: A2AClient, a2a_target: Target):
    streams.declared(a2a_target)
    task = drivers.run(a2a_client, "ask")
    if drivers.state(task) != "TASK_STATE_INPUT_REQUIRED":
        not_checked(f"scenario ask answered the task {drivers.state(task)}, not paused for input")
    stream = streams.Background(a2a_client, "SubscribeToTask", {"id": task["id"]})
    if stream.first_event(a2a_target.timeout_s) is not None:
        a2a_client.send("My answer.", task_id=task["id"], context_id=task["contextId"])
    judge(stream.exchange(), a2a_client, task["id"], state_now="TASK_STATE_INPUT_REQUIRED")


# -- a task in a terminal state


def canceled_task(client: A2AClient, cancel_at_end) -> dict:
    task = drivers.working(client, cancel_at_end, 120_000)
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
    streams.declared(a2a_target)
    task = ended(a2a_client, a2a_cancel_at_end)
    state = drivers.state(drivers.wait_for(a2a_client, task["id"], drivers.TERMINAL))
    exchange = a2a_client.call("SubscribeToTask", {"id": task["id"]})
    streams.expect_refused(exchange, f"SubscribeToTask on a task in state {state}")


# -- several streams of one task (A2A §3.5.2)


def subscribed_twice(
    client: A2AClient, target: Target, cancel_at_end, *, close_second: bool = False
) -> tuple[str, streams.Background, streams.Background]:
    """Two subscriptions to one working task, the second opened once the first's first event came; with
    ``close_second`` the kit closes the second itself after its first event. The task's id and both streams."""
    task = working_task(client, target, cancel_at_end, 2_000)
    first = streams.Background(client, "SubscribeToTask", {"id": task["id"]})
    first.first_event(target.timeout_s)
    second = streams.Background(client, "SubscribeToTask", {"id": task["id"]}, close_after_first=close_second)
    return task["id"], first, second


def second_stream(exchange: Exchange, client: A2AClient, task_id: str) -> None:
    """A second stream the Agent refused: A2A lets it serve one stream per task, so nothing is judged."""
    if exchange.events is None and exchange.is_error:
        now = drivers.state(client.get_task(task_id).task)
        ended = f" (the task was {now} by then)" if now in drivers.TERMINAL else ""
        not_checked(f"the Agent refused a second stream on the task{ended}: A2A §3.5.2 lets it serve one")


@pytest.mark.req("STREAM-05")
@pytest.mark.scenario("slow")
def test_two_streams_of_a_task_carry_the_same_updates_in_the_same_order(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    task_id, first, second = subscribed_twice(a2a_client, a2a_target, a2a_cancel_at_end)
    earlier, later = first.exchange(), second.exchange()
    judge(earlier, a2a_client, task_id)
    second_stream(later, a2a_client, task_id)
    judge(later, a2a_client, task_id)
    same_events(earlier, first.arrivals, later, second.arrivals)


def same_events(earlier: Exchange, arrivals: list[float], later: Exchange, later_arrivals: list[float]) -> None:
    """The later stream carries every update the earlier one got once the later one had begun (and its first
    Task did not already show), in the same order, and no update the earlier one did not get while it was open
    (an earlier stream may close before its task ends: what came after is not its to have seen)."""
    begun, snapshot = later_arrivals[0], streams.first_task(later.events[0]) or {}
    seen, shown = streams.updates(earlier), streams.updates(later)
    owed = [u for u, at in zip(seen, arrivals[1:], strict=False) if at > begun and not streams.reflected(u, snapshot)]
    open_until = float("inf") if streams.last_state(earlier.events or []) in streams.TERMINAL else arrivals[-1]
    foreign = [u for u, at in zip(shown, later_arrivals[1:], strict=False) if u not in seen and at <= open_until]
    if foreign:
        later.fail(f"a stream of the task carried updates its other stream never got: {foreign}"[:2000])
    carried = iter(shown)
    missed = [u for u in owed if not any(u == s for s in carried)]  # owed must be a subsequence of shown
    if missed:
        later.fail(f"a stream of the task missed, or got out of order, updates its other stream got: {missed}"[:2000])


@pytest.mark.req("STREAM-05")
@pytest.mark.scenario("slow")
def test_closing_one_stream_of_a_task_leaves_the_other_to_its_end(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    task_id, kept, closed = subscribed_twice(a2a_client, a2a_target, a2a_cancel_at_end, close_second=True)
    second_stream(closed.exchange(), a2a_client, task_id)
    exchange = kept.exchange()
    judge(exchange, a2a_client, task_id)
    if streams.last_state(exchange.events or []) not in drivers.TERMINAL:
        not_checked(
            "the kept stream closed before the task ended (A2A allows an early close), so whether closing "
            "the other stream ended it cannot be told"
        )
