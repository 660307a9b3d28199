"""telemetry/v1: totals and the trace id on the terminal status update, a traceparent joined, GetTask."""

from __future__ import annotations

import secrets

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, extensions, new_id
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target


def _telemetry(task: dict) -> dict | None:
    """Telemetry as the client reads it: the task's own metadata, then its status message's."""
    return extensions.read(task, extensions.TELEMETRY)


def _status_telemetry(task: dict) -> dict | None:
    message = task["status"].get("message") or {}
    return (message.get("metadata") or {}).get(extensions.TELEMETRY)


def _ended(a2a_client: A2AClient, **send) -> dict:
    # echo produces no files, so these checks see telemetry and nothing else of the v2 extensions.
    return drivers.settle(a2a_client, a2a_client.send(drivers.scenario("echo"), **send).task)


@pytest.mark.req("TEL-01")
@pytest.mark.scenario("echo")
def test_terminal_update_carries_totals(a2a_v2_client: A2AClient):
    task = _ended(a2a_v2_client)
    totals = (_telemetry(task) or {}).get("totals")
    if not isinstance(totals, dict) or not {"steps", "tokens", "costUsd"} <= set(totals):
        a2a_v2_client.get_task(task["id"]).fail("the terminal status update carries telemetry/v1 totals")


@pytest.mark.req("TEL-02")
@pytest.mark.scenario("echo")
def test_terminal_update_carries_the_trace_id(a2a_v2_client: A2AClient):
    task = _ended(a2a_v2_client)
    if not (_telemetry(task) or {}).get("traceId"):
        a2a_v2_client.get_task(task["id"]).fail("the terminal status update carries the turn's trace id")


@pytest.mark.req("TEL-03")
@pytest.mark.scenario("echo")
def test_a_turn_given_no_traceparent_starts_a_trace_of_its_own(a2a_target: Target, a2a_v2_client: A2AClient):
    """After a turn that joined the caller's trace, a turn started with no traceparent joins no one's: it reports a
    new trace (W3C Trace Context: a participant given no trace context starts one)."""
    trace_id = secrets.token_hex(16)
    traceparent = f"00-{trace_id}-{secrets.token_hex(8)}-01"
    _ended(a2a_v2_client, traceparent=traceparent, traceparent_in=a2a_target.traceparent_in)
    task = _ended(a2a_v2_client)
    reported = (_telemetry(task) or {}).get("traceId")
    if reported == trace_id:
        a2a_v2_client.get_task(task["id"]).fail(
            f"a turn started with no traceparent reports trace {reported!r}, the trace the caller's earlier turn "
            "named: it must start a trace of its own"
        )


@pytest.mark.req("TEL-03")
@pytest.mark.scenario("echo")
@pytest.mark.parametrize("flags", ["01", "00"], ids=["sampled", "not-sampled"])
def test_turn_joins_the_callers_trace(a2a_target: Target, a2a_v2_client: A2AClient, flags: str):
    # A trace context is joined whatever its trace-flags say: the sampled bit is the caller's recording decision,
    # and W3C Trace Context has a participant propagate the trace-id either way.
    trace_id = secrets.token_hex(16)
    traceparent = f"00-{trace_id}-{secrets.token_hex(8)}-{flags}"
    task = _ended(a2a_v2_client, traceparent=traceparent, traceparent_in=a2a_target.traceparent_in)
    reported = (_telemetry(task) or {}).get("traceId")
    if reported != trace_id:
        a2a_v2_client.get_task(task["id"]).fail(
            f"a turn started with traceparent {traceparent} joins trace {trace_id}, but reports {reported!r} "
            f"(the kit sent it as {a2a_target.traceparent_in}; see --a2a-traceparent-in)"
        )


@pytest.mark.req("TEL-03")
@pytest.mark.scenario("echo")
def test_each_turn_of_a_conversation_joins_its_own_trace(a2a_target: Target, a2a_v2_client: A2AClient):
    """The second of two turns in one conversation, started with another trace, joins that one (a trace context
    kept per conversation joins the first); and once the second has ended, the first still reports its own (a trace
    id kept per conversation, overwritten by each turn's end, reports the latest)."""
    context, reported = drivers.new_context(), []
    for _ in range(2):
        trace_id = secrets.token_hex(16)
        traceparent = f"00-{trace_id}-{secrets.token_hex(8)}-01"
        task = _ended(
            a2a_v2_client, traceparent=traceparent, traceparent_in=a2a_target.traceparent_in, context_id=context
        )
        reported.append(((_telemetry(task) or {}).get("traceId"), trace_id, task["id"]))
    for got, sent, task_id in reported:
        if got != sent:
            a2a_v2_client.get_task(task_id).fail(
                f"each turn of conversation {context} joins the trace its own traceparent names: {sent}, "
                f"but reports {got!r}"
            )
    _, sent, first_id = reported[0]
    again = a2a_v2_client.get_task(first_id)
    if (extensions.read(again.task, extensions.TELEMETRY) or {}).get("traceId") != sent:
        again.fail(f"once the conversation's later turn ended, its first task still reports its own trace {sent}")


@pytest.mark.req("TEL-03")
@pytest.mark.scenario("echo")
@pytest.mark.parametrize("spelling", axes.members("TEL-03", "spellings"))
def test_the_traceparent_is_read_however_its_name_is_written(a2a_target: Target, a2a_v2_client: A2AClient, spelling):
    if a2a_target.traceparent_in != "header":
        not_applicable(f"the target takes traceparent in {a2a_target.traceparent_in} (--a2a-traceparent-in)")
    trace_id = secrets.token_hex(16)
    headers = methods.respelled(
        {**a2a_v2_client.headers(), "traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"},
        "traceparent",
        axes.kind(spelling),
    )
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": drivers.scenario("echo")}]}
    }
    task = drivers.settle(a2a_v2_client, a2a_v2_client.call("SendMessage", params, headers=headers).task)
    reported = (_telemetry(task) or {}).get("traceId")
    if reported != trace_id:
        a2a_v2_client.get_task(task["id"]).fail(
            f"header field names are case-insensitive (RFC 9110 §5.1): sent as {list(headers)}, the turn joins "
            f"trace {trace_id}, but reports {reported!r}"
        )


@pytest.mark.req("TEL-03")
@pytest.mark.scenario("echo")
@pytest.mark.parametrize("combined", axes.members("TEL-03", "combines"))
def test_a_turn_answered_at_once_joins_the_callers_trace(a2a_target: Target, a2a_v2_client: A2AClient, combined):
    trace_id = secrets.token_hex(16)
    traceparent = f"00-{trace_id}-{secrets.token_hex(8)}-01"
    answered = a2a_v2_client.send(
        drivers.scenario("echo"),
        return_immediately=True,
        traceparent=traceparent,
        traceparent_in=a2a_target.traceparent_in,
    )
    task = drivers.settle(a2a_v2_client, answered.task)
    reported = (_telemetry(task) or {}).get("traceId")
    if reported != trace_id:
        a2a_v2_client.get_task(task["id"]).fail(f"a turn answered at once joins trace {trace_id} too, got {reported!r}")


@pytest.mark.req("TEL-04")
@pytest.mark.scenario("echo")
def test_get_task_carries_telemetry_once_ended(a2a_v2_client: A2AClient):
    task = _ended(a2a_v2_client)
    got = a2a_v2_client.get_task(task["id"])
    on_task = _telemetry(got.task)
    if on_task is None:
        got.fail("GetTask of an ended task carries its telemetry/v1 data")
    if on_task != _telemetry(task):
        got.fail("GetTask's telemetry must equal what the turn's terminal answer carried")


ENDS = drivers.each_ending()


def _terminal_update(a2a_client: A2AClient, ending: str) -> tuple[dict, Exchange]:
    """The telemetry/v1 data of a task that ended ``ending``, read as the client reads it from the task its turn
    ended with (its metadata, then its status message's), and a GetTask of it afterwards."""
    task = drivers.ended_in(a2a_client, ending)
    return _telemetry(task) or {}, a2a_client.get_task(task["id"])


@pytest.mark.req("TEL-01")
@pytest.mark.parametrize("ending", ENDS)
def test_terminal_update_of_every_end_carries_totals(a2a_v2_client: A2AClient, ending: str):
    telemetry, got = _terminal_update(a2a_v2_client, ending)
    totals = telemetry.get("totals")
    if not isinstance(totals, dict) or not {"steps", "tokens", "costUsd"} <= set(totals):
        got.fail(f"the terminal status update of a task that ended {ending} carries telemetry/v1 totals")
    if any(not isinstance(totals[k], int | float) or isinstance(totals[k], bool) or totals[k] < 0 for k in totals):
        got.fail(f"telemetry/v1 totals are non-negative numbers: {totals}")


@pytest.mark.req("TEL-02")
@pytest.mark.parametrize("ending", ENDS)
def test_terminal_update_of_every_end_carries_the_trace_id(a2a_v2_client: A2AClient, ending: str):
    telemetry, got = _terminal_update(a2a_v2_client, ending)
    if not telemetry.get("traceId"):
        got.fail(f"the terminal status update of a task that ended {ending} carries the turn's trace id")


@pytest.mark.req("TEL-04")
@pytest.mark.parametrize("ending", ENDS)
def test_get_task_of_every_end_carries_its_telemetry(a2a_v2_client: A2AClient, ending: str):
    telemetry, got = _terminal_update(a2a_v2_client, ending)
    on_task = _telemetry(got.task)  # as the client reads it: the task's metadata, then its status message's
    if on_task is None or on_task != telemetry:
        got.fail(f"GetTask of a task that ended {ending} carries the telemetry its terminal status update carried")


@pytest.mark.req("TEL-05")
@pytest.mark.scenario("slow")
def test_no_telemetry_while_working(a2a_v2_client: A2AClient, a2a_cancel_at_end):
    task = a2a_v2_client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    working = drivers.wait_for(a2a_v2_client, task["id"], ["TASK_STATE_WORKING"])
    if _status_telemetry(working) is not None:
        a2a_v2_client.get_task(task["id"]).fail("telemetry comes with the terminal status update, not while working")


# -- telemetry on every channel an ended task travels (the complete scenario, started with a traceparent)


def _terminal(views, channel: str) -> list[tuple[str, dict | None]]:
    shown = views.data(channel, extensions.TELEMETRY)
    if not shown:
        views.fail(channel, f"{axes.CHANNELS[channel]} must show the ended task")
    return shown[-1:]  # the settled state's newest: the terminal update, or the ended task


@pytest.mark.shares_turn("files")
@pytest.mark.req("TEL-01")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("channel", axes.members("TEL-01", "channels"))
def test_totals_ride_the_terminal_update_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("files")
    for where, telemetry in _terminal(views, channel):
        totals = (telemetry or {}).get("totals")
        if not isinstance(totals, dict) or not {"steps", "tokens", "costUsd"} <= set(totals):
            views.fail(channel, f"{where}: the terminal status update carries telemetry/v1 totals")


@pytest.mark.shares_turn("files")
@pytest.mark.req("TEL-02")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("channel", axes.members("TEL-02", "channels"))
def test_the_trace_id_rides_the_terminal_update_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("files")
    for where, telemetry in _terminal(views, channel):
        if not (telemetry or {}).get("traceId"):
            views.fail(channel, f"{where}: the terminal status update carries the turn's trace id")


@pytest.mark.shares_turn("files")
@pytest.mark.req("TEL-03")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("channel", axes.members("TEL-03", "channels"))
def test_the_joined_trace_is_reported_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("files")
    for where, telemetry in _terminal(views, channel):
        if (telemetry or {}).get("traceId") != views.trace_id:
            views.fail(channel, f"{where}: the turn joined trace {views.trace_id}, so its trace id is that one")


@pytest.mark.shares_turn("files")
@pytest.mark.req("TEL-04")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("channel", axes.members("TEL-04", "channels"))
def test_an_ended_task_carries_the_terminal_updates_telemetry_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("files")
    judged = views.push_unavailable is None and views.push_late is None
    pushed = views.data("push", extensions.TELEMETRY) if judged else []
    terminal = pushed[-1][1] if pushed else extensions.read(views.answer.task, extensions.TELEMETRY)
    for where, telemetry in _terminal(views, channel):
        if telemetry is None or telemetry != terminal:
            views.fail(channel, f"{where}: an ended task carries the telemetry its terminal status update carried")
