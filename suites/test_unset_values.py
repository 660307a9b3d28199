"""Members written as their proto3 unset value: a string field without ``optional`` sent as "", an enum as its
zero value. In a2a.proto such a field has no presence (A2A §5.7: ``optional`` is what tells set from omitted), so
ProtoJSON reads "" as the field left out: a filter that filters nothing, a page token of no page, a message that
names no conversation and no task."""

from __future__ import annotations

from datetime import timedelta

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers


@pytest.mark.req("LIST-01")
def test_an_empty_context_filter_lists_every_conversation(a2a_client: A2AClient):
    """``contextId: ""`` is no filter: tasks of two conversations, made after a cut, are both listed."""
    first = drivers.ordinary(a2a_client, ended=True)
    second = drivers.ordinary(a2a_client, ended=True)
    # A cut a second before the first task: whether a task at the cut itself is listed is LIST-03's check.
    cut = (drivers.status_time(first) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    wanted = {first["id"], second["id"]}
    listed, pages = drivers.list_walk(a2a_client, 100, until=wanted, contextId="", statusTimestampAfter=cut)
    found = {t["id"] for t in listed} & wanted
    if found != wanted:
        pages[-1].fail(
            f'ListTasks with contextId "" (proto3\'s unset value: no filter) and statusTimestampAfter {cut} must list '
            f"the tasks of both conversations made since, {sorted(wanted)}; it listed {sorted(found)}"
        )


@pytest.mark.req("LIST-06")
def test_an_empty_page_token_answers_the_first_page(a2a_client: A2AClient):
    """``pageToken: ""`` is no token: the first page, the same as without it."""
    context = drivers.new_context()
    for _ in range(2):
        drivers.ordinary(a2a_client, ended=True, context_id=context)
    plain = a2a_client.list_tasks(contextId=context)
    empty = a2a_client.list_tasks(contextId=context, pageToken="")
    if empty.is_error:
        empty.fail(
            f'pageToken "" is proto3\'s unset value (no token): it must answer the first page, got '
            f"{empty.answer_line()}"
        )
    ids = [[t.get("id") for t in page.result.get("tasks") or []] for page in (plain, empty)]
    if ids[0] != ids[1]:
        empty.fail(f'pageToken "" must answer the first page {ids[0]}; it answered {ids[1]}')


@pytest.mark.req("LIST-02")
def test_the_unspecified_state_filters_nothing(a2a_client: A2AClient):
    """``status: TASK_STATE_UNSPECIFIED`` is the enum's unset value: no filter (or a refusal, where an Agent reads
    it as no state to filter by); never a filter that matches nothing."""
    context = drivers.new_context()
    task = drivers.ordinary(a2a_client, ended=True, context_id=context)
    listed = a2a_client.list_tasks(contextId=context, status="TASK_STATE_UNSPECIFIED")
    if listed.is_error:
        not_checked(f"the Agent refuses the status filter TASK_STATE_UNSPECIFIED: {listed.answer_line()}")
    if task["id"] not in {t.get("id") for t in listed.result.get("tasks") or []}:
        listed.fail(
            f"status TASK_STATE_UNSPECIFIED is the enum's unset value, no filter: the conversation's task {task['id']} "
            "must be listed"
        )


@pytest.mark.req("SEND-05")
@pytest.mark.parametrize("member", ["contextId", "taskId"])
def test_a_message_naming_the_empty_string_starts_a_new_conversation(a2a_client: A2AClient, member: str):
    """Two messages whose contextId (or taskId) is "" name none: each starts a conversation of its own, with a
    non-empty contextId."""
    sent = {"context_id": ""} if member == "contextId" else {"task_id": ""}
    answers = [a2a_client.send(drivers.ORDINARY_TEXT, **sent) for _ in range(2)]
    refused = next((a for a in answers if a.is_error), None)
    if refused is not None:
        not_checked(f'the Agent refuses a message whose {member} is "": {refused.answer_line()}')
    tasks = [drivers.task_of(a, "there is no conversation to check") for a in answers]
    contexts = [t.get("contextId") for t in tasks]
    if not all(contexts) or contexts[0] == contexts[1] or tasks[0]["id"] == tasks[1]["id"]:
        answers[1].fail(
            f'{member} "" is proto3\'s unset value: each message starts a new conversation with a non-empty '
            f"contextId; the two were answered with tasks {[t['id'] for t in tasks]} in conversations {contexts}"
        )
