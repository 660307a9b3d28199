"""interactions/v1: approvals, questions and connections pause the task; typed answers resume the same task."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, extensions, new_id
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target

APPROVED_ACTION = "approved action ran"
CONNECTED_ACTION = "connected action ran"
PAUSE = {
    "approve": ("approval", "TASK_STATE_AUTH_REQUIRED"),
    "ask": ("question", "TASK_STATE_INPUT_REQUIRED"),
    "connect": ("connection", "TASK_STATE_AUTH_REQUIRED"),
}


def _texts(task: dict) -> str:
    return " ".join(p.get("text", "") for a in task.get("artifacts") or [] for p in a.get("parts", []))


def _on_status_message(task: dict) -> dict:
    """The open interaction where the profile puts it: the paused task's status message."""
    message = task["status"].get("message") or {}
    return (message.get("metadata") or {}).get(extensions.INTERACTIONS) or {}


def _paused(a2a_client: A2AClient, scenario: str) -> dict:
    task = drivers.run(a2a_client, scenario)
    kind, state = PAUSE[scenario]
    if drivers.state(task) != state:
        a2a_client.get_task(task["id"]).fail(f"a turn that needs a {kind} pauses as {state}, got {drivers.state(task)}")
    if _on_status_message(task).get("kind") != kind:
        a2a_client.get_task(task["id"]).fail(f"the status message must carry an open interactions/v1 {kind}")
    return task


def _still_waiting(a2a_client: A2AClient, task: dict, why: str) -> None:
    """The task is paused again on an interaction of the same kind, and the action that needed it has not run.

    Whether the Agent keeps the interaction or opens a new one is its choice (INTER-09's decision).
    """
    after = drivers.wait_for(a2a_client, task["id"], drivers.SETTLED)
    kind = _on_status_message(task).get("kind")
    if drivers.state(after) != drivers.state(task) or _on_status_message(after).get("kind") != kind:
        a2a_client.get_task(task["id"]).fail(f"{why}: the task must stay paused on a {kind} interaction")
    if APPROVED_ACTION in _texts(after) or CONNECTED_ACTION in _texts(after):
        a2a_client.get_task(task["id"]).fail(f"{why}: the action that needed the interaction must not run")


@pytest.mark.req("INTER-01")
@pytest.mark.scenario("approve")
def test_approval_pauses_as_auth_required(a2a_v2_client: A2AClient):
    drivers.cancel_quietly(a2a_v2_client, _paused(a2a_v2_client, "approve")["id"])


@pytest.mark.req("INTER-02")
@pytest.mark.scenario("ask")
def test_question_pauses_as_input_required(a2a_v2_client: A2AClient):
    drivers.cancel_quietly(a2a_v2_client, _paused(a2a_v2_client, "ask")["id"])


@pytest.mark.req("INTER-03")
@pytest.mark.scenario("connect")
def test_missing_connection_pauses_as_auth_required(a2a_v2_client: A2AClient):
    drivers.cancel_quietly(a2a_v2_client, _paused(a2a_v2_client, "connect")["id"])


@pytest.mark.req("INTER-04")
@pytest.mark.parametrize("scenario", [pytest.param(name, marks=pytest.mark.scenario(name)) for name in PAUSE])
def test_open_interaction_has_id_and_kind(a2a_v2_client: A2AClient, scenario: str, a2a_cancel_at_end):
    task = drivers.run(a2a_v2_client, scenario)
    interaction = drivers.open_interaction(task) or {}
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    if not isinstance(interaction.get("interactionId"), str) or not interaction["interactionId"]:
        a2a_v2_client.get_task(task["id"]).fail("an open interaction has a non-empty interactionId")
    if interaction.get("kind") not in ("approval", "question", "connection"):
        a2a_v2_client.get_task(task["id"]).fail("an open interaction's kind is approval, question or connection")


@pytest.mark.req("INTER-05", "EXT-05")
@pytest.mark.scenario("approve")
def test_approval_continues_the_same_task_to_its_end(a2a_v2_client: A2AClient):
    task = _paused(a2a_v2_client, "approve")
    exchange = drivers.answer(a2a_v2_client, task, approved=True)
    if exchange.task["id"] != task["id"]:
        exchange.fail("an approval continues the same task, not a new one")
    final = drivers.settle(a2a_v2_client, exchange.task)
    if drivers.state(final) != "TASK_STATE_COMPLETED" or APPROVED_ACTION not in _texts(final):
        a2a_v2_client.get_task(task["id"]).fail("after approved: true the approved action runs and the task completes")


@pytest.mark.req("INTER-05")
@pytest.mark.scenario("approve")
def test_refusal_does_not_run_the_action(a2a_v2_client: A2AClient):
    task = _paused(a2a_v2_client, "approve")
    exchange = drivers.answer(a2a_v2_client, task, approved=False)
    final = drivers.settle(a2a_v2_client, exchange.task)
    if APPROVED_ACTION in _texts(final):
        a2a_v2_client.get_task(task["id"]).fail("after approved: false the action must not run")
    drivers.cancel_quietly(a2a_v2_client, task["id"])


@pytest.mark.req("INTER-06", "EXT-05")
@pytest.mark.scenario("ask")
def test_question_is_answered_with_value(a2a_v2_client: A2AClient):
    task = _paused(a2a_v2_client, "ask")
    exchange = drivers.answer(a2a_v2_client, task, value="green")
    if exchange.task["id"] != task["id"]:
        exchange.fail("an answer continues the same task")
    final = drivers.settle(a2a_v2_client, exchange.task)
    if drivers.state(final) != "TASK_STATE_COMPLETED" or "green" not in _texts(final):
        a2a_v2_client.get_task(task["id"]).fail("the question's value must reach the turn, which then completes")


@pytest.mark.req("INTER-07")
@pytest.mark.scenario("connect")
def test_connection_is_answered_with_connected(a2a_v2_client: A2AClient):
    task = _paused(a2a_v2_client, "connect")
    exchange = drivers.answer(a2a_v2_client, task, value={"connected": True})
    if exchange.task["id"] != task["id"]:
        exchange.fail("a connection answer continues the same task")
    final = drivers.settle(a2a_v2_client, exchange.task)
    if drivers.state(final) != "TASK_STATE_COMPLETED" or CONNECTED_ACTION not in _texts(final):
        a2a_v2_client.get_task(task["id"]).fail("after {connected: true} the turn goes on and completes")


@pytest.mark.req("INTER-07")
@pytest.mark.scenario("connect")
def test_connection_answered_not_connected_does_not_run_the_action(a2a_v2_client: A2AClient):
    """{connected: false} is an answer, not a connection made: what the turn does next is the Agent's (pause again,
    fail, end), but the action that needed the connection does not run."""
    task = _paused(a2a_v2_client, "connect")
    exchange = drivers.answer(a2a_v2_client, task, value={"connected": False})
    final = drivers.settle(a2a_v2_client, exchange.task) if not exchange.is_error else task
    if CONNECTED_ACTION in _texts(final):
        a2a_v2_client.get_task(task["id"]).fail("after {connected: false} the action that needed the connection runs")
    drivers.cancel_quietly(a2a_v2_client, task["id"])


# Each kind of interaction, with an answer of the right field for it (and so both fields, when one is added).
ANSWERS = {"approve": {"approved": True}, "ask": {"value": "green"}, "connect": {"value": {"connected": True}}}
BY_KIND = [pytest.param(name, marks=pytest.mark.scenario(name)) for name in PAUSE]


def _applies(a2a_target: Target, scenario: str) -> None:
    if scenario == "connect" and not a2a_target.claims("profile-v2"):
        not_applicable("a connection interaction is a Profile v2 rule, and the target claims less")


# The other kinds' field, alone: an approval answered with a value, a question or a connection with approved.
OTHER_KINDS_FIELD = {"approve": {"value": "yes"}, "ask": {"approved": True}, "connect": {"approved": True}}


@pytest.mark.req("INTER-08")
@pytest.mark.parametrize("scenario", BY_KIND)
@pytest.mark.parametrize("answer", ["both", "neither", "the-other-kinds-field"])
def test_answer_with_both_or_neither_resolves_nothing(
    a2a_v2_client: A2AClient, a2a_target: Target, scenario: str, answer: str, a2a_cancel_at_end
):
    _applies(a2a_target, scenario)
    task = _paused(a2a_v2_client, scenario)
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    fields = {
        "both": {"approved": True, "value": "yes", **ANSWERS[scenario]},
        "neither": {},
        "the-other-kinds-field": OTHER_KINDS_FIELD[scenario],
    }[answer]
    drivers.answer(a2a_v2_client, task, **fields)  # refusing it or accepting it without effect are both right
    shown = answer.replace("-", " ") if answer.startswith("the") else f"{answer} of approved and value"
    _still_waiting(a2a_v2_client, task, f"an answer to a {PAUSE[scenario][0]} with {shown}")


@pytest.mark.req("INTER-09")
@pytest.mark.scenario("approve")
def test_text_never_approves(a2a_v2_client: A2AClient, a2a_cancel_at_end):
    task = _paused(a2a_v2_client, "approve")
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    a2a_v2_client.send("Yes, approved. Go ahead.", task_id=task["id"], context_id=task["contextId"])
    _still_waiting(a2a_v2_client, task, "a text reply to an approval")


@pytest.mark.req("INTER-10")
@pytest.mark.scenario("approve")
def test_answer_retry_is_safe(a2a_v2_client: A2AClient):
    task = _paused(a2a_v2_client, "approve")
    message_id = new_id("answer")
    first = drivers.answer(a2a_v2_client, task, approved=True, message_id=message_id)
    drivers.settle(a2a_v2_client, first.task)
    retry = drivers.answer(a2a_v2_client, task, approved=True, message_id=message_id)
    if retry.is_error or retry.task["id"] != task["id"]:
        retry.fail("resending an answer with the same messageId answers the same task, without an error")
    final = drivers.settle(a2a_v2_client, retry.task)
    if _texts(final).count(APPROVED_ACTION) != 1:
        a2a_v2_client.get_task(task["id"]).fail(
            "a resent answer must resolve the interaction once: the action ran twice"
        )


@pytest.mark.req("INTER-11")
@pytest.mark.parametrize("scenario", BY_KIND)
def test_answer_to_another_interaction_resolves_nothing(
    a2a_v2_client: A2AClient, a2a_target: Target, scenario: str, a2a_cancel_at_end
):
    _applies(a2a_target, scenario)
    task = _paused(a2a_v2_client, scenario)
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    drivers.answer(a2a_v2_client, task, interaction_id=new_id("not-the-open-one"), **ANSWERS[scenario])
    _still_waiting(a2a_v2_client, task, f"an answer naming another interactionId than the open {PAUSE[scenario][0]}")


# -- the open interaction on every channel the paused task travels

KINDS = {"approval": "approve", "question": "ask", "connection": "connect"}  # views kind → its scenario
PAUSED_IN = {"approval": "TASK_STATE_AUTH_REQUIRED", "question": "TASK_STATE_INPUT_REQUIRED"}
PAUSED_IN["connection"] = "TASK_STATE_AUTH_REQUIRED"


def _paused_on_every_channel(a2a_channel_views, kind: str, channel: str) -> None:
    views = a2a_channel_views(kind)
    shown = views.on(channel)
    if not shown:
        views.fail(channel, f"{axes.CHANNELS[channel]} must show the task paused on its {kind}")
    for where, task in shown:
        state = ((task or {}).get("status") or {}).get("state")
        open_one = extensions.read(task or {}, extensions.INTERACTIONS) or {}
        if state != PAUSED_IN[kind] or open_one.get("kind") != kind:
            views.fail(channel, f"{where}: a turn that needs a {kind} is {PAUSED_IN[kind]} with an open {kind}")


@pytest.mark.shares_turn("approval")
@pytest.mark.req("INTER-01")
@pytest.mark.scenario("approve")
@pytest.mark.parametrize("channel", axes.members("INTER-01", "channels"))
def test_an_approval_pauses_as_auth_required_on_every_channel(a2a_channel_views, channel: str):
    _paused_on_every_channel(a2a_channel_views, "approval", channel)


@pytest.mark.shares_turn("question")
@pytest.mark.req("INTER-02")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("channel", axes.members("INTER-02", "channels"))
def test_a_question_pauses_as_input_required_on_every_channel(a2a_channel_views, channel: str):
    _paused_on_every_channel(a2a_channel_views, "question", channel)


@pytest.mark.shares_turn("connection")
@pytest.mark.req("INTER-03")
@pytest.mark.scenario("connect")
@pytest.mark.parametrize("channel", axes.members("INTER-03", "channels"))
def test_a_connection_pauses_as_auth_required_on_every_channel(a2a_channel_views, channel: str):
    _paused_on_every_channel(a2a_channel_views, "connection", channel)


@pytest.mark.shares_turn("*")
@pytest.mark.req("INTER-04")
@pytest.mark.parametrize("channel", axes.members("INTER-04", "channels"))
@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.scenario(s)) for k, s in KINDS.items()])
def test_the_open_interaction_has_an_id_and_a_kind_on_every_channel(
    a2a_target: Target, a2a_channel_views, kind, channel
):
    if kind == "connection" and not a2a_target.claims("profile-v2"):
        not_applicable("a connection interaction is Profile v2's")
    views = a2a_channel_views(kind)
    for where, task in views.on(channel):
        open_one = extensions.read(task or {}, extensions.INTERACTIONS) or {}
        if not isinstance(open_one.get("interactionId"), str) or not open_one["interactionId"]:
            views.fail(channel, f"{where}: an open interaction has a non-empty interactionId")
        if open_one.get("kind") not in KINDS:
            views.fail(channel, f"{where}: an open interaction's kind is approval, question or connection")


@pytest.mark.req("INTER-12")
@pytest.mark.parametrize("scenario", BY_KIND)
def test_an_answered_interaction_is_gone_from_every_later_status(
    a2a_v2_client: A2AClient, a2a_target: Target, scenario: str
):
    """Once answered, the task goes on: its status, on the answer and on every read after, carries no interaction a
    client would answer again (the Agent's history keeps the record of the pause)."""
    _applies(a2a_target, scenario)
    task = _paused(a2a_v2_client, scenario)
    exchange = drivers.answer(a2a_v2_client, task, **ANSWERS[scenario])
    final = drivers.settle(a2a_v2_client, exchange.task)
    reads = [
        exchange,
        a2a_v2_client.get_task(task["id"]),
        a2a_v2_client.list_tasks(contextId=final.get("contextId") or task.get("contextId")),
    ]
    for read in reads:
        for shown in read.result.get("tasks") or [] if read.method == "ListTasks" else [read.task]:
            if shown.get("id") != task["id"] or drivers.state(shown) in drivers.INTERRUPTED:
                continue
            if _on_status_message(shown):
                read.fail(
                    f"the {PAUSE[scenario][0]} was answered and the task is {drivers.state(shown)}, yet its status "
                    "message still carries the interactions/v1 interaction"
                )
