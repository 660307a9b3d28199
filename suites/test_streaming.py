"""SendStreamingMessage (A2A §3.1.2, §9.4.2) for an Agent whose card declares streaming; both stream methods
refused for one whose card does not (§3.3.4). The profile serves no streaming (test_unserved.py)."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.requirements import not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, streams
from nylorun_a2a_kit.fixtures.target import Target

stream_verdict = streams.verdict  # the rule a stream is judged by (the kit's own tests exercise it)


def message(text: str, **fields: str) -> dict:
    return {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": text}], **fields}


@pytest.mark.req("STREAM-01")
def test_a_streamed_message_is_one_message_or_the_task_then_its_updates(a2a_client: A2AClient, a2a_target: Target):
    streams.declared(a2a_target)
    exchange = a2a_client.call("SendStreamingMessage", {"message": message("Say hello.")})
    judge(exchange, a2a_client, a2a_target)


ENDINGS = [
    pytest.param("TASK_STATE_COMPLETED", "complete", marks=pytest.mark.scenario("complete"), id="completed"),
    pytest.param("TASK_STATE_FAILED", "fail", marks=pytest.mark.scenario("fail"), id="failed"),
    pytest.param("TASK_STATE_CANCELED", "slow", marks=pytest.mark.scenario("slow"), id="canceled"),
]


@pytest.mark.req("STREAM-01")
@pytest.mark.parametrize(("ending", "name"), ENDINGS)
def test_a_task_stream_closes_once_its_task_ends(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end, ending: str, name: str
):
    """Each terminal state a scenario reaches (REJECTED: none of the contract's does)."""
    streams.declared(a2a_target)
    if ending != "TASK_STATE_CANCELED":
        exchange = a2a_client.call("SendStreamingMessage", {"message": message(drivers.scenario(name))})
    else:
        params = {"message": message(drivers.scenario("slow", 120_000))}
        stream = streams.Background(a2a_client, "SendStreamingMessage", params)
        task = streams.first_task(stream.first_event(a2a_target.timeout_s))
        if task is not None:
            a2a_cancel_at_end(a2a_client, task["id"])
            a2a_client.cancel(task["id"])
        exchange = stream.exchange()
    task_id = judge(exchange, a2a_client, a2a_target)
    if task_id is None:
        not_checked(f"the Agent answered scenario {name} with a single Message, so no task ended")
    try:
        ended = drivers.state(drivers.wait_for(a2a_client, task_id, drivers.TERMINAL))
    except drivers.StillRunning:
        not_checked(f"the task of scenario {name} did not end within {a2a_target.timeout_s:.0f} s")
    if ended != ending:
        not_checked(f"scenario {name} ended {ended}, not {ending}, so the stream's close at {ending} was not seen")


def judge(exchange: Exchange, client: A2AClient, target: Target) -> str | None:
    """The stream rule on a SendStreamingMessage answer; the id of the task a Task stream carried."""
    if exchange.events is None:
        exchange.fail("the card declares streaming, but SendStreamingMessage did not answer a text/event-stream")
    problem, unsettled = stream_verdict(
        exchange.events, exchange.stream_closed, written_after=exchange.blocks_after_last_event
    )
    if problem:
        exchange.fail(problem)
    task = streams.first_task(exchange.events[0])
    if task is None:  # a single Message, and the stream closed
        return None
    if unsettled:
        streams.stayed_open(exchange, client, task["id"], unsettled, "its stream", "the stream")
    return task["id"]


@pytest.mark.req("STREAM-07")
@pytest.mark.scenario("approve")
def test_a_stream_stays_open_while_its_task_waits_for_authorization(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    """A2A §7.6.1: the task pauses in AUTH_REQUIRED; the kit then cancels it, which the open stream must carry."""
    streams.declared(a2a_target)
    stream = streams.Background(a2a_client, "SendStreamingMessage", {"message": message(drivers.scenario("approve"))})
    paused = stream.reaches("TASK_STATE_AUTH_REQUIRED", a2a_target.timeout_s)
    task = streams.first_task(stream.first_event(0))
    if task is not None:
        a2a_cancel_at_end(a2a_client, task["id"])
        if paused:
            a2a_client.cancel(task["id"])
    exchange = stream.exchange()
    judge(exchange, a2a_client, a2a_target)
    shown = streams.last_state(exchange.events or [])
    if shown == "TASK_STATE_AUTH_REQUIRED" and exchange.stream_closed:
        exchange.fail("the stream closed when its task paused for authorization (A2A §7.6.1 has it kept open)")
    if shown != "TASK_STATE_CANCELED":
        not_checked(f"the stream showed the task {shown}, not paused for authorization and then canceled")


# -- an Agent whose card does not declare streaming (A2A §3.3.4)


def undeclared(target: Target) -> None:
    if streams.streams_declared(target.card):
        not_applicable("the card says streaming true (the stream checks apply instead)")


@pytest.mark.req("STREAM-04")
def test_without_the_capability_send_streaming_message_is_refused(a2a_client: A2AClient, a2a_target: Target):
    undeclared(a2a_target)
    exchange = a2a_client.call("SendStreamingMessage", {"message": message("hello")})
    streams.expect_refused(exchange, "the card says streaming false")


@pytest.mark.req("STREAM-04")
@pytest.mark.scenario("slow")
def test_without_the_capability_subscribe_to_task_is_refused(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end
):
    """On a running task: an ended one is refused by a streaming Agent too (§3.1.6), so it tells nothing."""
    undeclared(a2a_target)
    task = drivers.working(a2a_client, a2a_cancel_at_end, 10_000)
    exchange = a2a_client.call("SubscribeToTask", {"id": task["id"]})
    streams.expect_refused(exchange, "the card says streaming false")
