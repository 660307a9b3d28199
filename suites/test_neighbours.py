"""Neighbours: what a request names is all it touches, even beside an id that differs from it only slightly.

A Runtime keys what it keeps by more than one thing: a push config by its task and its id, a queued message by
its Agent, subject and messageId, a conversation by its Agent, subject and contextId. A key scoped by less than it
should be, or compared as a prefix or without letter case, shows only beside a neighbour: the same id under
another task, subject or Agent, an id that begins another, one that differs from it only in letter case. The kit
makes those neighbours from the ids a client chooses (contextId, messageId, config id). Where an Agent answers a
queued message under its messageId, as the reference agent does, that makes the tasks' ids neighbours too; a
Runtime that picks its own task ids is held to the same with those.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks, queueing
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = pytest.mark.scenario("slow", "complete", "ask")

# How long a retry asked for by Retry-After stays pending, on the kit's clock: the time a check takes to write
# beside it.
PENDING_S = 2.0


def _twin(name: str) -> str:
    """``name`` with every letter's case swapped: another id to a Runtime that compares ids as A2A does."""
    twin = name.swapcase()
    return twin if twin != name else "X" + name


def _busy(client: A2AClient, cancel_at_end, context: str | None = None) -> tuple[str, dict]:
    """A context (new unless named) whose turn runs on, canceled at the check's end."""
    context, running = queueing.busy(client, context)
    cancel_at_end(client, running["id"])
    return context, running


def _queued(client: A2AClient, context: str, message_id: str, why: str = "") -> dict:
    """The task a message to the busy ``context`` is answered with: queued (QUEUE-01), in that context."""
    return queueing.queued_task(queueing.send(client, context, message_id), context, why=why)


def _taken(client: A2AClient, context: str, message_id: str, meanwhile: Callable[[], None] = lambda: None) -> None:
    """Once the context's turn ended: one turn takes the message queued there and ends COMPLETED (QUEUE-05).
    ``meanwhile`` judges, at each look and once more at the end, what must hold while the kit waits for it."""
    deadline = time.monotonic() + client.timeout_s
    interval = 0.02
    while True:
        meanwhile()
        listed = client.list_tasks(contextId=context, historyLength=20, pageSize=100)
        takers = queueing.takers(listed.result["tasks"], [message_id])[message_id]
        if len(takers) > 1:
            listed.fail(f"the message {message_id} queued in {context} was taken by {len(takers)} turns, not one")
        if [drivers.state(t) for t in takers] == ["TASK_STATE_COMPLETED"]:
            meanwhile()
            return
        if time.monotonic() >= deadline:
            raise drivers.StillRunning(
                f"the message {message_id} queued in {context} had not been taken and ended when the kit's "
                f"{client.timeout_s:.0f} s wait ended (its context's turn had ended)"
            )
        time.sleep(interval)
        interval = min(interval * 2, 0.5)


def _still_queued(client: A2AClient, task: dict, context: str, what: str) -> None:
    exchange = client.get_task(task["id"])
    if drivers.state(exchange.task) != "TASK_STATE_SUBMITTED" or exchange.task.get("contextId") != drivers.known_as(
        context
    ):
        exchange.fail(f"{what}: its message waits for its own turn, SUBMITTED in {context}")


# The conversation whose turn ends, and its neighbour (busy too, its message queued first): another context of
# the caller, one whose id differs only in case, one whose id the ended one's begins, and
# another subject's conversation under the same contextId (each subject's turn ending, as one subject's name may
# begin the other's).
NEIGHBOURS = [
    "another context",
    "a context id differing in case",
    "a context id beginning with this one",
    "the other subject, same context id",
    "the kit's subject, same context id",
]


@pytest.mark.req("QUEUE-05", "QUEUE-01", "ISO-04")
@pytest.mark.parametrize("neighbour", NEIGHBOURS)
def test_a_turns_end_takes_only_its_own_conversations_queue(
    a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_cancel_at_end, neighbour: str
):
    """When a turn ends, its conversation's next queued message is taken, and no other: a neighbour conversation
    whose own turn still runs keeps its message queued, though it was queued first."""
    mine, theirs = a2a_client, a2a_client
    context = drivers.new_context()
    beside = {
        "another context": drivers.new_context(),
        "a context id differing in case": _twin(context),
        "a context id beginning with this one": context + "-2",
    }.get(neighbour, context)
    if neighbour == "the other subject, same context id":
        theirs = a2a_other_client
    elif neighbour == "the kit's subject, same context id":
        mine = a2a_other_client
    _busy(theirs, a2a_cancel_at_end, beside)
    _, running = _busy(mine, a2a_cancel_at_end, context)
    waiting = _queued(theirs, beside, new_id("queued"))
    message_id = new_id("queued")
    _queued(mine, context, message_id)
    mine.cancel(running["id"]).ok()
    _taken(
        mine,
        context,
        message_id,
        lambda: _still_queued(
            theirs, waiting, beside, f"the turn in {context} ended while {neighbour} ({beside}) runs on"
        ),
    )


WHO = ["another subject", "another subject, queueing first", "another Agent"]


def _callers(a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_target: Target, who: str):
    if who == "another Agent":
        if not a2a_target.other_agent_url:
            not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same key")
        return a2a_client, a2a_client.with_(url=a2a_target.other_agent_url)
    if who == "another subject, queueing first":
        return a2a_other_client, a2a_client
    return a2a_client, a2a_other_client


@pytest.mark.req("QUEUE-02", "SEND-04", "ISO-01")
@pytest.mark.parametrize("who", WHO)
def test_a_queued_message_id_is_a_key_of_its_subject_and_agent(
    a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_target: Target, a2a_cancel_at_end, who: str
):
    """The same messageId queued by two callers (two subjects, or one subject on two Agents) is two messages:
    each is answered in its own caller's context, and each caller's queued task stays its own."""
    first, second = _callers(a2a_client, a2a_other_client, a2a_target, who)
    message_id = new_id("queued")
    first_context, _ = _busy(first, a2a_cancel_at_end)
    second_context, _ = _busy(second, a2a_cancel_at_end)
    queued = _queued(first, first_context, message_id)
    _queued(second, second_context, message_id, f"the same messageId from {who} is another message: ")
    _still_queued(first, queued, first_context, f"the same messageId queued by {who} is another message")


@pytest.mark.req("PUSH-01", "ISO-01")
@pytest.mark.parametrize("who", ["another task of the caller", *WHO])
def test_a_queued_messages_configs_leave_with_it_alone(
    a2a_pushing: Target,
    a2a_client: A2AClient,
    a2a_other_client: A2AClient,
    a2a_push_receiver: PushReceiver,
    a2a_cancel_at_end,
    who: str,
):
    """A config on a queued message follows it to the turn that takes it; a config of the same id on another
    task, or on the same messageId queued by another subject or on another Agent, stays where it was."""
    first, second = (
        (a2a_client, a2a_client)
        if who.startswith("another task")
        else _callers(a2a_client, a2a_other_client, a2a_pushing, who)
    )
    message_id, config_id = new_id("queued"), new_id("hook")
    first_context, running = _busy(first, a2a_cancel_at_end)
    queued = _queued(first, first_context, message_id)
    if who.startswith("another task"):
        other = drivers.run(second, "ask")
        a2a_cancel_at_end(second, other["id"])
    else:
        other = _queued(second, _busy(second, a2a_cancel_at_end)[0], message_id)
    made = drivers.create_push_config(first, queued["id"], a2a_push_receiver.endpoint().url, config_id=config_id)
    if made.is_error:
        not_checked("the Agent takes no push config on a queued message", needs="an Agent that does (A2A allows it)")
    url = a2a_push_receiver.endpoint().url
    # The same config id beside the same messageId; on the caller's other task, an id of its own.
    other_id = new_id("hook") if who.startswith("another task") else config_id
    kept = drivers.create_push_config(second, other["id"], url, config_id=other_id).ok()["id"]
    first.cancel(running["id"]).ok()
    _taken(first, first_context, message_id)
    listed = second.call("ListTaskPushNotificationConfigs", {"taskId": other["id"]})
    if (kept, url) not in [(c.get("id"), c.get("url")) for c in listed.result.get("configs") or []]:
        listed.fail(
            f"the message {message_id} queued by the first caller was taken; {who}'s config {kept} on task "
            f"{other['id']} must stay there"
        )


@pytest.mark.req("PUSH-01", "PUSH-05", "PUSH-12", "PUSH-15", "PUSH-17")
@pytest.mark.parametrize("write", ["DeleteTaskPushNotificationConfig", "410 Gone"])
def test_a_config_write_leaves_its_neighbours(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end, write: str
):
    """Config ``c`` of a task T is stopped (deleted, or its url answers 410 Gone) or its neighbours are deleted: T's
    config whose id differs from ``c`` only in case, and config ``c`` of the tasks queued under T's id with its
    case swapped and under T's id with a suffix. Each of the others keeps its config, listed and served, and T's
    own retried delivery goes on."""
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    context, _ = _busy(a2a_client, a2a_cancel_at_end)
    neighbours = [
        _queued(a2a_client, context, message_id)["id"] for message_id in (_twin(task["id"]), task["id"] + "-2")
    ]
    hook = "hook-" + new_id()
    pending = push_checks.endpoint_for(a2a_push_receiver, [f"503:{push_checks.retry_after_s(a2a_pushing, PENDING_S)}"])
    stopped = push_checks.endpoint_for(a2a_push_receiver, ["410"]) if write == "410 Gone" else pending
    beside = push_checks.endpoint_for(a2a_push_receiver)
    own = (task["id"], hook, stopped if write == "410 Gone" else pending)
    kept = [(task["id"], _twin(hook), pending if write == "410 Gone" else beside)]
    kept += [(neighbour, hook, beside) for neighbour in neighbours]
    for task_id, config_id, endpoint in (own, *kept):
        drivers.create_push_config(a2a_client, task_id, endpoint.url, config_id=config_id).ok()
    only_beside = "only-" + new_id()
    drivers.create_push_config(a2a_client, neighbours[1], beside.url, config_id=only_beside).ok()
    a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"], return_immediately=True)
    if pending.wait_for(lambda ds: len(ds) >= 1, a2a_pushing.push.wait_s) == []:
        not_checked(f"no delivery came in the kit's {a2a_pushing.push.wait_s:.0f} s push wait", needs="a delivery")
    if write == "410 Gone":
        stopped.wait_for(lambda ds: len(ds) >= 1, a2a_pushing.push.wait_s)
    else:  # while T's first event waits for its retry
        for task_id, config_id, _ in kept:
            a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": config_id}).ok()
            gone = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task_id, "id": config_id})
            if not gone.is_error:
                gone.fail(f"config {config_id} of task {task_id} was deleted: Get answers it not found")
        kept = [own]
    unheld = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": only_beside})
    if not unheld.is_error:
        unheld.fail(f"task {task['id']} has no config {only_beside} (task {neighbours[1]} has): Get answers not found")
    for task_id, config_id, _ in kept:
        listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task_id})
        if config_id not in [c.get("id") for c in listed.result.get("configs") or []]:
            listed.fail(f"after {write} beside it, config {config_id} of task {task_id} must still be listed")
    push_checks.until_acknowledged(pending, "TASK_STATE_COMPLETED", a2a_pushing)


@pytest.mark.req("PUSH-01", "QUEUE-05")
def test_a_message_queued_under_one_of_its_callers_task_ids_leaves_that_tasks_configs(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end
):
    """A messageId the caller chose that is the id of one of its own tasks: the message queued under it is another
    thing than the task, and when a turn takes it the task keeps its configs."""
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    url, hook = a2a_push_receiver.endpoint().url, new_id("hook")
    drivers.create_push_config(a2a_client, task["id"], url, config_id=hook).ok()
    context, running = _busy(a2a_client, a2a_cancel_at_end)
    queued = queueing.send(a2a_client, context, task["id"])
    if queued.is_error:
        not_checked("the Agent refuses a messageId that is one of the caller's task ids", needs="one that queues it")
    a2a_client.cancel(running["id"]).ok()
    _taken(a2a_client, context, task["id"])
    listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    if [(c.get("id"), c.get("url")) for c in listed.result.get("configs") or []] != [(hook, url)]:
        listed.fail(f"a message queued under the id of task {task['id']} was taken: the task keeps its config {hook}")
