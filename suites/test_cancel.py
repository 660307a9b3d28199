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
