"""Answers keep their A2A 1.0 shape (SHAPE-01), one kind of answer per check.

Every answer the kit receives is validated against its schema. A violation inside a result or an error's
details does not fail the check that happened to see it: that check judges its own rule past it, and the
violation is reported once per root cause under SHAPE-01. These checks exercise each kind of answer, so
a broken shape is found whichever other checks run.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks, streams
from nylorun_a2a_kit.fixtures.target import Target


def _shaped(*exchanges: Exchange) -> None:
    for exchange in exchanges:
        exchange.expect_shape()


@pytest.mark.req("SHAPE-01")
def test_task_answers_keep_their_shape(a2a_client: A2AClient):
    sent = a2a_client.send(drivers.ORDINARY_TEXT, history_length=10)
    _shaped(sent)
    task = drivers.task_of(sent, "no task answer")
    _shaped(a2a_client.get_task(task["id"], history_length=10), a2a_client.get_task(task["id"]))


@pytest.mark.req("SHAPE-01")
def test_listing_answers_keep_their_shape(a2a_client: A2AClient):
    context = drivers.new_context()
    drivers.ordinary(a2a_client, context_id=context)
    _shaped(a2a_client.list_tasks(contextId=context, historyLength=10, includeArtifacts=True))


@pytest.mark.req("SHAPE-01")
def test_error_answers_keep_their_shape(a2a_client: A2AClient):
    _shaped(
        a2a_client.get_task(new_id("task")), a2a_client.cancel(new_id("task")), a2a_client.call("GetTask", {"id": 7})
    )


@pytest.mark.req("SHAPE-01")
def test_push_config_answers_keep_their_shape(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task = drivers.ordinary(a2a_client)
    created = drivers.create_push_config(a2a_client, task["id"], a2a_push_receiver.endpoint().url, token=new_id("tok"))
    _shaped(created)
    if created.is_error:
        not_checked(f"the config was refused ({created.error.get('code')}), so no config answer")
    config_id = created.result.get("id")
    _shaped(
        a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}),
        a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}),
    )


# -- what a2a.proto says of answered objects beyond their schema


def _agents_messages(task: dict) -> list[dict]:
    status = task.get("status") or {}
    shown = [status["message"]] if isinstance(status.get("message"), dict) else []
    return shown + [m for m in task.get("history") or [] if isinstance(m, dict) and m.get("role") == "ROLE_AGENT"]


@pytest.mark.req("SHAPE-02")
def test_the_agents_messages_carry_their_context_and_task(a2a_client: A2AClient):
    sent = a2a_client.send(drivers.ORDINARY_TEXT)
    if "message" in sent.result:  # a direct Message answer: no task, but still its context
        if not sent.result["message"].get("contextId"):
            sent.fail("a message the Agent sends carries its contextId (a2a.proto Message)")
        return
    task = drivers.settle(a2a_client, sent.task)
    exchange = a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)
    task = exchange.task
    for message in _agents_messages(task):
        if message.get("contextId") != task.get("contextId"):
            exchange.fail(f"message {message.get('messageId')} must carry its task's contextId {task.get('contextId')}")
        if message.get("taskId") not in (None, task["id"]):
            exchange.fail(f"message {message.get('messageId')} names task {message.get('taskId')}, not {task['id']}")


@pytest.mark.req("SHAPE-02")
@pytest.mark.scenario("complete")
def test_a_tasks_artifacts_have_distinct_ids(a2a_client: A2AClient):
    task = drivers.run(a2a_client, "complete")
    exchange = a2a_client.get_task(task["id"])
    ids = [a.get("artifactId") for a in exchange.task.get("artifacts") or []]
    if len(ids) != len(set(ids)):
        exchange.fail(f"the artifacts of a task must have distinct artifactIds (a2a.proto Artifact), got {ids}")


# -- what a2a.proto says of the artifact updates the Agent sends, on each channel that carries them

FIRST_UPDATE = (
    "the first update of an artifact has append absent or false: a2a.proto TaskArtifactUpdateEvent.append appends "
    "to a previously sent artifact with the same ID, and before it none was sent"
)


def _artifact_ids(task: object) -> set:
    artifacts = task.get("artifacts") if isinstance(task, dict) else None
    return {a.get("artifactId") for a in artifacts or [] if isinstance(a, dict)}


def _update(response: dict) -> tuple[str | None, bool]:
    """The artifactId an artifact update names (None for another response), and whether it appends."""
    update = response.get("artifactUpdate")
    if not isinstance(update, dict):
        return None, False
    return (update.get("artifact") or {}).get("artifactId"), update.get("append") is True


def _begun(response: dict) -> set:
    """The artifacts a response sends whole or begins: a Task's, and an update's that does not append."""
    artifact_id, appends = _update(response)
    return _artifact_ids(response.get("task")) | ({artifact_id} if artifact_id and not appends else set())


def _appended_to_nothing(responses: list, *, ordered: bool) -> list:
    """The artifactIds an update among ``responses`` (StreamResponses) appends to before any response sent or began
    them. ``ordered`` (a stream) reads them in order; unordered (push deliveries, which A2A does not order), an
    artifact fails only when no response that came sent or began it."""
    shown = [r for r in responses if isinstance(r, dict)]
    if not any(_update(r)[0] for r in shown):
        not_checked("no artifact update came, so none was there to judge")
    carried = set() if ordered else set().union(*map(_begun, shown))
    wrong: list = []
    for response in shown:
        artifact_id, appends = _update(response)
        if appends and artifact_id not in carried:
            wrong.append(artifact_id)
            carried.add(artifact_id)  # its first update judged, the later ones may append to it
        if ordered:
            carried |= _begun(response)
    return wrong


STREAMED = [
    pytest.param("SendStreamingMessage", marks=pytest.mark.scenario("complete")),
    pytest.param("SubscribeToTask", marks=pytest.mark.scenario("slow")),
]


@pytest.mark.req("SHAPE-02")
@pytest.mark.parametrize("method", STREAMED)
def test_a_streamed_artifact_does_not_append_before_it_was_sent(
    a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end, method: str
):
    """A stream's events come in order: the Task first (its artifacts sent), then the updates. Scenario complete
    streams four artifacts; a subscription to a task of scenario slow, the one it makes once subscribed."""
    streams.declared(a2a_target)
    if method == "SendStreamingMessage":
        text = drivers.scenario("complete")
        exchange = a2a_client.call(
            method, {"message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": text}]}}
        )
    else:
        exchange = a2a_client.call(method, {"id": drivers.working(a2a_client, a2a_cancel_at_end, 2_000)["id"]})
    if exchange.events is None:
        not_checked(f"{method} answered no stream ({exchange.answer_line()}): STREAM-01 and STREAM-02 judge that")
    wrong = _appended_to_nothing([e.get("result") for e in exchange.events if isinstance(e, dict)], ordered=True)
    if wrong:
        exchange.fail(f"{FIRST_UPDATE}; the stream's first update of artifact(s) {wrong} appends")


@pytest.mark.shares_turn("files", "core")
@pytest.mark.req("SHAPE-02")
@pytest.mark.scenario("complete")
def test_a_pushed_artifact_does_not_append_before_it_was_sent(a2a_channel_views):
    """Every delivery of a task of scenario complete (four artifacts), once its end and each artifact's update came."""
    views = a2a_channel_views("files", "core")
    views.push_judged()  # not checked until every update of the settled task came, as a first update may come last
    wrong = _appended_to_nothing([d.json for d in push_checks.first_arrivals(views.arrived())], ordered=False)
    if wrong:
        views.fail("push", f"{FIRST_UPDATE}; every delivered update of artifact(s) {wrong} appends")
