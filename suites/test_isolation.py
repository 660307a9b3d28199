"""Subjects and Agents: a caller sees only its own subject's tasks on this Agent."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = pytest.mark.scenario("complete")


def _shape(exchange) -> tuple:
    """What a caller can tell from a not-found answer, minus the id it asked about."""
    error = exchange.error
    info = exchange.detail("ErrorInfo") or {}
    return error.get("code"), info.get("reason"), info.get("domain"), sorted((info.get("metadata") or {}).keys())


@pytest.fixture
def owned_task(a2a_client: A2AClient) -> dict:
    return drivers.run(a2a_client, "complete")


@pytest.mark.req("ISO-01")
def test_other_subjects_task_answers_as_missing(a2a_client: A2AClient, a2a_other_client: A2AClient, owned_task):
    foreign = a2a_other_client.get_task(owned_task["id"])
    foreign.expect_error("TaskNotFoundError")
    missing = a2a_other_client.get_task(new_id("task"))
    if _shape(foreign) != _shape(missing):
        foreign.fail(
            f"another subject's task must answer exactly like a missing one; a missing task answers {_shape(missing)}"
        )


@pytest.mark.req("ISO-01")
@pytest.mark.scenario("slow")
def test_other_subject_cannot_cancel(a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_cancel_at_end):
    task = a2a_client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
    a2a_cancel_at_end(a2a_client, task["id"])
    a2a_other_client.cancel(task["id"]).expect_error("TaskNotFoundError")
    after = a2a_client.get_task(task["id"])
    if drivers.state(after.task) == "TASK_STATE_CANCELED":
        after.fail("another subject's CancelTask must not cancel the task")


@pytest.mark.req("ISO-01")
@pytest.mark.scenario("ask")
def test_other_subject_cannot_continue(a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_cancel_at_end):
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    a2a_other_client.send("blue", task_id=task["id"]).expect_error("TaskNotFoundError")


@pytest.mark.req("ISO-02")
def test_list_shows_only_own_subject(a2a_client: A2AClient, a2a_other_client: A2AClient, owned_task):
    listed = a2a_other_client.list_tasks(contextId=owned_task["contextId"])
    if listed.result["tasks"] or listed.result["totalSize"]:
        listed.fail("another subject's tasks must never be listed")
    everything = a2a_other_client.list_tasks(pageSize=100)
    if owned_task["id"] in [t["id"] for t in everything.result["tasks"]]:
        everything.fail("another subject's task was listed")


@pytest.mark.req("ISO-03")
def test_list_shows_only_this_agent(a2a_target: Target, a2a_client: A2AClient, owned_task):
    if not a2a_target.other_agent_url:
        not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same Runtime and key")
    other_agent = a2a_client.with_(url=a2a_target.other_agent_url)
    listed = other_agent.list_tasks(contextId=owned_task["contextId"])
    if listed.result["tasks"]:
        listed.fail("ListTasks on another Agent must not list this Agent's tasks")


@pytest.mark.req("ISO-04")
@pytest.mark.scenario("slow")
def test_same_context_id_is_a_separate_conversation_per_subject(
    a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_cancel_at_end
):
    context = drivers.new_context()
    running = a2a_client.send(drivers.scenario("slow", 120_000), context_id=context, return_immediately=True).task
    a2a_cancel_at_end(a2a_client, running["id"])
    exchange = a2a_other_client.send(drivers.scenario("complete"), context_id=context)
    if drivers.state(drivers.settle(a2a_other_client, exchange.task)) != "TASK_STATE_COMPLETED":
        exchange.fail("another subject's conversation with the same contextId must not be busy with ours")
