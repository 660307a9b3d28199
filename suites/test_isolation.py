"""Subjects and Agents: a caller sees only its own subject's tasks on this Agent, and a conversation is its subject's.
Another subject's or Agent's id named on each method is suites/test_strangers.py's."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = pytest.mark.scenario("complete")


@pytest.fixture
def owned_task(a2a_client: A2AClient) -> dict:
    return drivers.run(a2a_client, "complete")


def _seen(a2a_client: A2AClient, task_id: str) -> tuple[tuple, Exchange]:
    """What the owner sees of its task (its state, how many history messages and artifacts), and the answer."""
    exchange = a2a_client.get_task(task_id, history_length=drivers.HISTORY_ALL)
    task = exchange.task
    return (drivers.state(task), len(task.get("history") or []), len(task.get("artifacts") or [])), exchange


# Another subject's task named on each method is a member of the strangers' checks (suites/test_strangers.py): the
# caller's task in each state, on every method that names a task.


# Which subject acts first: the kit's and the other one, each way round (one subject's name may begin the other's,
# as the kit's defaults do: a lookup by a prefix of the subject shows only one way).
ORDERS = {"the kit's subject first": False, "the other subject first": True}


def _subjects(a2a_client: A2AClient, a2a_other_client: A2AClient, order: str) -> tuple[A2AClient, A2AClient]:
    return (a2a_other_client, a2a_client) if ORDERS[order] else (a2a_client, a2a_other_client)


@pytest.mark.req("ISO-02")
@pytest.mark.parametrize("order", ORDERS)
def test_list_shows_only_own_subject(a2a_client: A2AClient, a2a_other_client: A2AClient, order: str):
    owner, other = _subjects(a2a_client, a2a_other_client, order)
    owned_task = drivers.run(owner, "complete")
    listed = other.list_tasks(contextId=owned_task["contextId"])
    if listed.result["tasks"] or listed.result["totalSize"]:
        listed.fail("another subject's tasks must never be listed, nor counted in totalSize")
    everything = other.list_tasks(pageSize=100)
    if owned_task["id"] in [t["id"] for t in everything.result["tasks"]]:
        everything.fail("another subject's task was listed")


# A subject of the check's own and its twin: one it begins, or one differing from it only in letter case.
TWINS = {"a subject it begins": lambda subject: subject + "-2", "its case twin": str.swapcase}


@pytest.mark.req("ISO-02")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("twin", TWINS)
def test_total_size_counts_the_callers_subject_alone(a2a_client: A2AClient, twin: str):
    """totalSize of a fresh subject's listing, with no filter and with a status filter, is its own tasks' count,
    however many its twin holds (made first and after)."""
    mine = a2a_client.with_(subject=f"{a2a_client.subject}-{new_id('own')}")
    theirs = a2a_client.with_(subject=TWINS[twin](mine.subject))
    for fresh in (mine, theirs):  # a key that acts for its own subjects only refuses them (403): nothing to judge
        probe = methods.Harmless("ListTasks").post(fresh)
        if probe.status != 200:
            not_checked(
                f"the key does not act for {fresh.subject} (HTTP {probe.status})", needs=drivers.SUBJECT_OF_ITS_OWN
            )
    drivers.settle(theirs, drivers.run(theirs, "complete"))
    own = drivers.settle(mine, drivers.run(mine, "complete"))
    drivers.settle(theirs, drivers.run(theirs, "complete"))
    for params in ({}, {"status": drivers.state(own)}):
        listed = mine.list_tasks(pageSize=100, **params)
        if listed.result.get("totalSize") != 1 or [t["id"] for t in listed.result["tasks"]] != [own["id"]]:
            listed.fail(f"{mine.subject} holds one task; {twin} {theirs.subject} holds two, which it must not count")


@pytest.mark.req("ISO-03")
def test_list_shows_only_this_agent(a2a_target: Target, a2a_client: A2AClient, owned_task):
    if not a2a_target.other_agent_url:
        not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same Runtime and key")
    other_agent = a2a_client.with_(url=a2a_target.other_agent_url)
    listed = other_agent.list_tasks(contextId=owned_task["contextId"])
    if listed.result["tasks"]:
        listed.fail("ListTasks on another Agent must not list this Agent's tasks")


# Who holds the busy conversation first: each subject in turn, or the same subject on another Agent of the Runtime.
BUSY_FIRST = [*ORDERS, "the same subject on another Agent", "the same subject, the other Agent sending"]


@pytest.mark.req("ISO-04")
@pytest.mark.scenario("slow")
@pytest.mark.parametrize("order", BUSY_FIRST)
def test_same_context_id_is_a_separate_conversation_per_subject(
    a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_target: Target, a2a_cancel_at_end, order: str
):
    """One session per subject, Agent and contextId: a conversation busy with a running turn and a message queued
    behind it, and the same contextId of another subject or on another Agent, which is free."""
    if order in ORDERS:
        first, second = _subjects(a2a_client, a2a_other_client, order)
    elif not a2a_target.other_agent_url:
        not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same Runtime and key")
    elif order == "the same subject on another Agent":
        first, second = a2a_client.with_(url=a2a_target.other_agent_url), a2a_client
    else:
        first, second = a2a_client, a2a_client.with_(url=a2a_target.other_agent_url)
    context = drivers.new_context()
    running = first.send(drivers.scenario("slow", 120_000), context_id=context, return_immediately=True).task
    a2a_cancel_at_end(first, running["id"])
    first.send(drivers.scenario("complete"), context_id=context, return_immediately=True)  # queued behind it
    # Asked not to queue (QUEUE-06), the other caller's message shows at once whether its conversation is busy:
    # refused CONTEXT_BUSY, it shares ours (what arrived); served, it ends on its own.
    who = order if order not in ORDERS else "another subject"
    exchange = second.send(drivers.scenario("complete"), context_id=context, **drivers.delivery(a2a_target, "reject"))
    if exchange.is_error and (exchange.detail("ErrorInfo") or {}).get("reason") == "CONTEXT_BUSY":
        exchange.fail(f"the conversation of {who} with the same contextId must not be busy with ours")
    if drivers.state(drivers.settle(second, exchange.task)) != "TASK_STATE_COMPLETED":
        exchange.fail(f"the conversation of {who} with the same contextId must not be busy with ours")


@pytest.mark.req("SEND-04", "ISO-01")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("who", ["another subject", "another subject, sending first", "another Agent"])
def test_a_message_id_is_a_key_of_its_subject_and_agent(
    a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_target: Target, who: str
):
    """messageId makes a retry idempotent for the caller that sent it: the same id from another subject (either
    one first: one subject's name may begin the other's), or to another Agent, is another message. It starts a
    task of its own, and the first caller's task is as it was."""
    if who == "another Agent" and not a2a_target.other_agent_url:
        not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same Runtime and key")
    first, second = a2a_client, a2a_other_client
    if who == "another subject, sending first":
        first, second = a2a_other_client, a2a_client
    elif who == "another Agent":
        second = a2a_client.with_(url=a2a_target.other_agent_url)
    message_id = new_id("msg")
    mine = drivers.settle(first, drivers.run(first, "complete", message_id=message_id))
    seen, _ = _seen(first, mine["id"])
    theirs = second.send(drivers.scenario("complete"), message_id=message_id)
    if theirs.is_error or theirs.task.get("id") == mine["id"]:
        theirs.fail(
            f"the same messageId from {who} is another message: it starts its own task, never answers "
            f"task {mine['id']} of the caller that sent it first"
        )
    again, exchange = _seen(first, mine["id"])
    if again != seen:
        exchange.fail(f"a message of {who} with the same messageId changed the first caller's task: {seen} → {again}")


@pytest.mark.req("ISO-08")
@pytest.mark.scenario("complete")
def test_no_json_rpc_answer_is_marked_for_shared_caches(a2a_client: A2AClient):
    """Each method's answer is the caller's: none says public, s-maxage or must-revalidate without private or
    no-store (RFC 9111 §3.5). Errors too."""
    task = drivers.run(a2a_client, "complete")
    answers = [
        a2a_client.send("Per-caller answer.", context_id=drivers.new_context()),
        a2a_client.get_task(task["id"]),
        a2a_client.list_tasks(contextId=task["contextId"]),
        a2a_client.call("CancelTask", {"id": task["id"]}),
        a2a_client.get_task("missing-" + new_id()),
    ]
    for exchange in answers:
        why = oracle.shareable(exchange.response_headers.get_list("cache-control"))
        if why is not None:
            exchange.fail(f"the answer to {exchange.method} is marked for shared caches: {why}")


@pytest.mark.req("ISO-09")
def test_another_spelling_of_the_agent_id_names_no_agent(a2a_client: A2AClient):
    """The caller's own task, asked for at the Agent's URL with its id's letter case swapped: no Agent is there."""
    agent = oracle.rules.agent_of(a2a_client.url)
    if not agent or agent.swapcase() == agent:
        not_checked(f"the target URL {a2a_client.url} names no Agent id with letters to swap")
    task = drivers.ordinary(a2a_client)
    url = a2a_client.url[: a2a_client.url.rindex(agent)] + agent.swapcase()
    envelope = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task["id"]}}
    # Sent past the kit's client: its oracle would take an answer at another URL for another Agent's.
    answer = a2a_client.http.post(url, json=envelope, headers=a2a_client.headers(), timeout=a2a_client.timeout_s)
    try:
        result = answer.json().get("result")
    except ValueError:
        result = None
    if answer.status_code == 200 and isinstance(result, dict) and result.get("id") == task["id"]:
        pytest.fail(
            f"{url} (the Agent id {agent!r} spelt {agent.swapcase()!r}) served GetTask of the caller's task "
            f"{task['id']}: another spelling of an Agent id names no Agent (HTTP 404)"
        )
