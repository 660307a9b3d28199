"""CancelTask: a running or paused task ends CANCELED; an ended or unknown one is refused."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.scenarios import drivers

LONG_MS = 120_000
# Long enough to cancel before it ends, short enough to watch past its end.
SHORT_MS = 1_500


@pytest.mark.req("CANCEL-01")
@pytest.mark.scenario("slow")
def test_cancel_running_task(a2a_client: A2AClient):
    task = a2a_client.send(drivers.scenario("slow", SHORT_MS), return_immediately=True).task
    exchange = a2a_client.cancel(task["id"])
    if drivers.state(exchange.task) != "TASK_STATE_CANCELED":
        exchange.fail("CancelTask must answer the task TASK_STATE_CANCELED")
    # Past the moment the work would have ended, the task must still be canceled.
    drivers.stays(a2a_client, task["id"], "TASK_STATE_CANCELED", for_s=SHORT_MS / 1000 + 0.5)


@pytest.mark.req("CANCEL-01")
@pytest.mark.scenario("slow")
def test_cancel_with_metadata_cancels(a2a_client: A2AClient):
    """CancelTaskRequest has a metadata member (a2a.proto, field 3): a cancel carrying it is a cancel like any."""
    task = a2a_client.send(drivers.scenario("slow", LONG_MS), return_immediately=True).task
    exchange = a2a_client.call("CancelTask", {"id": task["id"], "metadata": {"reason": "kit", "by": {"check": 1}}})
    if exchange.is_error or drivers.state(exchange.task) != "TASK_STATE_CANCELED":
        drivers.cancel_quietly(a2a_client, task["id"])
        exchange.fail("CancelTask with metadata (a2a.proto CancelTaskRequest.metadata) must cancel the task")


@pytest.mark.req("CANCEL-01")
@pytest.mark.parametrize(
    "kind", [pytest.param(kind, marks=pytest.mark.scenario(name)) for kind, (name, _) in drivers.PAUSES.items()]
)
def test_cancel_paused_task(a2a_client: A2AClient, kind: str):
    task = drivers.paused_on(a2a_client, kind)
    exchange = a2a_client.cancel(task["id"])
    if exchange.is_error or drivers.state(exchange.task) != "TASK_STATE_CANCELED":
        exchange.fail(f"CancelTask on a task paused {drivers.state(task)} on a {kind} must answer it CANCELED")
    after = a2a_client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_CANCELED":
        after.fail("a canceled task must stay TASK_STATE_CANCELED")


def _refused_and_unchanged(a2a_client: A2AClient, task: dict) -> None:
    before = a2a_client.get_task(task["id"]).task
    a2a_client.cancel(task["id"]).expect_error("TaskNotCancelableError")
    after = a2a_client.get_task(task["id"])
    if (drivers.state(after.task), after.task["status"].get("timestamp")) != (
        drivers.state(before),
        before["status"].get("timestamp"),
    ):
        after.fail(f"a refused CancelTask must leave the {drivers.state(task)} task as it was, its status too")


@pytest.mark.req("CANCEL-02")
@pytest.mark.member("reads", "CancelTask.refused")
def test_cancel_ended_task_is_not_cancelable(a2a_client: A2AClient):
    _refused_and_unchanged(a2a_client, drivers.ordinary(a2a_client, ended=True))


# CANCELED is CANCEL-04's.
@pytest.mark.req("CANCEL-02")
@pytest.mark.parametrize("ending", drivers.each_ending("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"))
def test_cancel_task_in_each_end_state_is_not_cancelable(a2a_client: A2AClient, ending: str):
    _refused_and_unchanged(a2a_client, drivers.ended_in(a2a_client, ending))


@pytest.mark.req("CANCEL-04")
@pytest.mark.scenario("slow")
def test_cancel_twice_is_not_cancelable(a2a_client: A2AClient):
    task = a2a_client.send(drivers.scenario("slow", LONG_MS), return_immediately=True).task
    a2a_client.cancel(task["id"])
    a2a_client.cancel(task["id"]).expect_error("TaskNotCancelableError")


@pytest.mark.req("CANCEL-03")
def test_cancel_unknown_task_is_not_found(a2a_client: A2AClient):
    a2a_client.cancel(new_id("task")).expect_error("TaskNotFoundError")


def _as_it_was(a2a_client: A2AClient, tasks: list[dict], what: str) -> None:
    """Each task in the state it was in; an ended one with its status timestamp too (a running one's may move)."""
    for task in tasks:
        now = a2a_client.get_task(task["id"])
        ended = drivers.state(task) in drivers.TERMINAL
        if (drivers.state(now.task), now.task["status"].get("timestamp") if ended else None) != (
            drivers.state(task),
            task["status"].get("timestamp") if ended else None,
        ):
            now.fail(f"{what} must leave task {task['id']} as it was ({drivers.state(task)}), a task it did not name")


@pytest.mark.req("CANCEL-01", "CANCEL-02")
@pytest.mark.scenario("complete")
@pytest.mark.scenario("slow")
@pytest.mark.member("reads", "CancelTask.refused.unnamed")
def test_a_cancel_changes_only_the_task_it_names(a2a_client: A2AClient, a2a_cancel_at_end):
    """Refused (an ended task) or served (a running one), CancelTask changes the task it names and no other: not
    the other task of the same conversation, not a task of another conversation."""
    context = drivers.new_context()
    ended = drivers.settle(a2a_client, drivers.run(a2a_client, "complete", context_id=context))
    running = a2a_client.send(drivers.scenario("slow", LONG_MS), context_id=context, return_immediately=True).task
    a2a_cancel_at_end(a2a_client, running["id"])
    elsewhere = a2a_client.send(drivers.scenario("slow", LONG_MS), return_immediately=True).task
    a2a_cancel_at_end(a2a_client, elsewhere["id"])
    running = drivers.wait_for(a2a_client, running["id"], ["TASK_STATE_WORKING"])
    elsewhere = drivers.wait_for(a2a_client, elsewhere["id"], ["TASK_STATE_WORKING"])
    a2a_client.cancel(ended["id"]).expect_error("TaskNotCancelableError")
    _as_it_was(a2a_client, [running, elsewhere], "a refused CancelTask")
    if drivers.state(a2a_client.cancel(running["id"]).task) != "TASK_STATE_CANCELED":
        return  # CANCEL-01's own checks judge the answer
    _as_it_was(a2a_client, [ended, elsewhere], "CancelTask")
