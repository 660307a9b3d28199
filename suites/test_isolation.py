"""Subjects and Agents: a caller sees only its own subject's tasks on this Agent."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client.jsonrpc import A2AClient, new_id
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target.target import Target

pytestmark = pytest.mark.scenario("complete")


def _shape(exchange) -> tuple:
    """What a caller can tell from a not-found answer, minus the id it asked about."""
    error = exchange.error
    info = exchange.detail("ErrorInfo") or {}
    return error.get("code"), info.get("reason"), info.get("domain"), sorted((info.get("metadata") or {}).keys())


@pytest.fixture
def owned_task(client: A2AClient) -> dict:
    return drivers.run(client, "complete")


@pytest.mark.req("ISO-01")
def test_other_subjects_task_answers_as_missing(client: A2AClient, other_client: A2AClient, owned_task):
    foreign = other_client.get_task(owned_task["id"])
    foreign.expect_error("TaskNotFoundError")
    missing = other_client.get_task(new_id("task"))
    if _shape(foreign) != _shape(missing):
        foreign.fail(
            f"another subject's task must answer exactly like a missing one; a missing task answers {_shape(missing)}"
        )


@pytest.mark.req("ISO-01")
@pytest.mark.scenario("slow")
def test_other_subject_cannot_cancel(client: A2AClient, other_client: A2AClient, cancel_at_end):
    task = client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
    cancel_at_end(client, task["id"])
    other_client.cancel(task["id"]).expect_error("TaskNotFoundError")
    after = client.get_task(task["id"])
    if drivers.state(after.task) == "TASK_STATE_CANCELED":
        after.fail("another subject's CancelTask must not cancel the task")


@pytest.mark.req("ISO-01")
@pytest.mark.scenario("ask")
def test_other_subject_cannot_continue(client: A2AClient, other_client: A2AClient, cancel_at_end):
    task = drivers.run(client, "ask")
    cancel_at_end(client, task["id"])
    other_client.send("blue", task_id=task["id"]).expect_error("TaskNotFoundError")


@pytest.mark.req("ISO-02")
def test_list_shows_only_own_subject(client: A2AClient, other_client: A2AClient, owned_task):
    listed = other_client.list_tasks(contextId=owned_task["contextId"])
    if listed.result["tasks"] or listed.result["totalSize"]:
        listed.fail("another subject's tasks must never be listed")
    everything = other_client.list_tasks(pageSize=100)
    if owned_task["id"] in [t["id"] for t in everything.result["tasks"]]:
        everything.fail("another subject's task was listed")


@pytest.mark.req("ISO-03")
def test_list_shows_only_this_agent(target: Target, client: A2AClient, owned_task):
    if not target.other_agent_url:
        pytest.skip("not checked: no second Agent given (--other-agent-url)")
    other_agent = client.with_(url=target.other_agent_url)
    listed = other_agent.list_tasks(contextId=owned_task["contextId"])
    if listed.result["tasks"]:
        listed.fail("ListTasks on another Agent must not list this Agent's tasks")


@pytest.mark.req("ISO-04")
@pytest.mark.scenario("slow")
def test_same_context_id_is_a_separate_conversation_per_subject(
    client: A2AClient, other_client: A2AClient, cancel_at_end
):
    context = drivers.new_context()
    running = client.send(drivers.scenario("slow", 120_000), context_id=context, return_immediately=True).task
    cancel_at_end(client, running["id"])
    exchange = other_client.send(drivers.scenario("complete"), context_id=context)
    if drivers.state(drivers.settle(other_client, exchange.task)) != "TASK_STATE_COMPLETED":
        exchange.fail("another subject's conversation with the same contextId must not be busy with ours")
