"""CancelTask: a running or paused task ends CANCELED; an ended or unknown one is refused."""

from __future__ import annotations

import pytest

from fixtures import drivers
from fixtures.client import A2AClient, new_id

LONG_MS = 120_000


@pytest.mark.req("CANCEL-01")
@pytest.mark.scenario("slow")
def test_cancel_running_task(client: A2AClient):
    task = client.send(drivers.scenario("slow", LONG_MS), return_immediately=True).task
    exchange = client.cancel(task["id"])
    if drivers.state(exchange.task) != "TASK_STATE_CANCELED":
        exchange.fail("CancelTask must answer the task TASK_STATE_CANCELED")
    after = client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_CANCELED":
        after.fail("a canceled task must stay TASK_STATE_CANCELED")


@pytest.mark.req("CANCEL-01")
@pytest.mark.scenario("ask")
def test_cancel_paused_task(client: A2AClient):
    task = drivers.run(client, "ask")
    exchange = client.cancel(task["id"])
    if drivers.state(exchange.task) != "TASK_STATE_CANCELED":
        exchange.fail("CancelTask on a task waiting for input must answer it TASK_STATE_CANCELED")


@pytest.mark.req("CANCEL-02")
@pytest.mark.scenario("complete")
def test_cancel_ended_task_is_not_cancelable(client: A2AClient):
    task = drivers.run(client, "complete")
    client.cancel(task["id"]).expect_error("TaskNotCancelableError")
    after = client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_COMPLETED":
        after.fail("a refused CancelTask must leave the task as it was")


@pytest.mark.req("CANCEL-02")
@pytest.mark.scenario("slow")
def test_cancel_twice_is_not_cancelable(client: A2AClient):
    task = client.send(drivers.scenario("slow", LONG_MS), return_immediately=True).task
    client.cancel(task["id"])
    client.cancel(task["id"]).expect_error("TaskNotCancelableError")


@pytest.mark.req("CANCEL-03")
def test_cancel_unknown_task_is_not_found(client: A2AClient):
    client.cancel(new_id("task")).expect_error("TaskNotFoundError")
