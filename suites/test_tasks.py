"""Tasks: one per turn, interrupted tasks continue on the same id, GetTask and its history rules."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, extensions, new_id
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target


@dataclass
class Answered:
    """A task that asked a question and completed after the answer: several messages of history."""

    task: dict
    sent: list[str]  # the ids of the kit's two messages, oldest first


@pytest.fixture
def answered(a2a_client: A2AClient) -> Answered:
    asked_id, answer_id = new_id("ask"), new_id("answer")
    task = drivers.paused_on(a2a_client, "question", message_id=asked_id)
    reply = a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"], message_id=answer_id)
    return Answered(drivers.settle(a2a_client, reply.task), [asked_id, answer_id])


@pytest.mark.req("TASK-02")
def test_get_task_answers_the_task(a2a_client: A2AClient):
    task = drivers.ordinary(a2a_client)
    exchange = a2a_client.get_task(task["id"])
    got = exchange.task
    if (got["id"], got.get("contextId"), drivers.state(got)) != (
        task["id"],
        task.get("contextId"),
        drivers.state(task),
    ):
        exchange.fail("GetTask must answer the same task, context and state SendMessage answered")


@pytest.mark.req("TASK-04")
@pytest.mark.scenario("complete")
@pytest.mark.member("several", "artifact.last")
def test_get_task_carries_the_artifacts(a2a_client: A2AClient):
    task = drivers.settle(a2a_client, drivers.run(a2a_client, "complete"))
    exchange = a2a_client.get_task(task["id"])
    answered = [a.get("artifactId") for a in task.get("artifacts") or []]
    if not exchange.task.get("artifacts"):
        exchange.fail("GetTask must carry the task's artifacts")
    if answered and [a.get("artifactId") for a in exchange.task["artifacts"]] != answered:
        exchange.fail(f"GetTask must carry every artifact the terminal answer carried, the last too: {answered}")


@pytest.mark.req("TASK-05")
def test_unknown_task_is_not_found(a2a_client: A2AClient):
    a2a_client.get_task(new_id("task")).expect_error("TaskNotFoundError")


@pytest.mark.req("TASK-06")
def test_not_found_reason_is_task_not_found(a2a_client: A2AClient):
    a2a_client.get_task(new_id("task")).expect_error("TaskNotFoundError", reason="TASK_NOT_FOUND")


@pytest.mark.req("TASK-07")
def test_history_length_zero_returns_no_history(a2a_client: A2AClient):
    task = drivers.ordinary(a2a_client)
    drivers.held_history(a2a_client, task["id"])
    exchange = a2a_client.get_task(task["id"], history_length=0)
    if exchange.task.get("history"):
        exchange.fail("historyLength 0 asks for no history, but messages were returned")


@pytest.mark.req("TASK-08")
@pytest.mark.scenario("ask")
def test_history_only_when_asked(a2a_client: A2AClient, answered: Answered):
    exchange = a2a_client.get_task(answered.task["id"])
    if exchange.task.get("history"):
        exchange.fail("without historyLength, GetTask must answer no history (omitted or empty)")


@pytest.mark.req("TASK-09")
def test_history_length_limits_the_history(a2a_client: A2AClient):
    task = drivers.ordinary(a2a_client)
    held = drivers.held_history(a2a_client, task["id"], cut=1)  # two messages at least, so a cut of n > 0 shows
    limit = held - 1
    exchange = a2a_client.get_task(task["id"], history_length=limit)
    full = drivers.full_history(a2a_client, task, "GetTask")
    wrong = drivers.history_cut_problem(full, exchange.task.get("history") or [], limit, [])
    if wrong:
        exchange.fail(wrong)


@pytest.mark.req("TASK-09")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("cut", drivers.HISTORY_CUTS)
@pytest.mark.member("spellings", "history-newest-first")
def test_history_length_answers_the_most_recent_messages(a2a_client: A2AClient, answered: Answered, cut: str):
    full = drivers.full_history(a2a_client, answered.task, "GetTask")
    limit = drivers.history_cut(cut, len(full))
    exchange = a2a_client.get_task(answered.task["id"], history_length=limit)
    wrong = drivers.history_cut_problem(full, exchange.task.get("history") or [], limit, answered.sent)
    if wrong:
        exchange.fail(wrong)


@pytest.mark.req("TASK-09")
@pytest.mark.scenario("ask")
def test_a_cut_read_leaves_the_history_whole(a2a_client: A2AClient, answered: Answered):
    """Reading an ended task's history cut to one message changes nothing: read whole again, it holds every
    message it held before."""
    task_id = answered.task["id"]
    whole = a2a_client.get_task(task_id, history_length=drivers.HISTORY_ALL).task.get("history") or []
    a2a_client.get_task(task_id, history_length=1)
    again = a2a_client.get_task(task_id, history_length=drivers.HISTORY_ALL)
    before, after = ([m.get("messageId") for m in h] for h in (whole, again.task.get("history") or []))
    if before != after:
        again.fail(f"task {task_id}'s history read whole was {before}; after a read cut to 1 it is {after}")


@pytest.mark.req("TASK-10")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("limit", [1, drivers.HISTORY_ALL], ids=["one", "past-all"])
@pytest.mark.member("spellings", "history-newest-first")
def test_history_is_returned_when_asked(a2a_client: A2AClient, answered: Answered, limit: int):
    exchange = a2a_client.get_task(answered.task["id"], history_length=limit)
    history = exchange.task.get("history") or []
    if not history:
        exchange.fail(f"with historyLength {limit}, GetTask must answer the task's recent messages")
    if any(m.get("role") not in ("ROLE_USER", "ROLE_AGENT") for m in history):
        exchange.fail("history holds messages of the user and the agent")


@pytest.mark.req("TASK-15")
@pytest.mark.scenario("ask")
def test_every_history_message_says_who_sent_it(a2a_client: A2AClient, answered: Answered):
    exchange = a2a_client.get_task(answered.task["id"], history_length=drivers.HISTORY_ALL)
    history = exchange.task.get("history") or []
    wrong = [
        (m.get("messageId"), m.get("role"))
        for m in history
        if m.get("role") != ("ROLE_USER" if m.get("messageId") in answered.sent else "ROLE_AGENT")
    ]
    if wrong or not history:
        exchange.fail(
            f"the kit sent {answered.sent} (ROLE_USER); every other message is the Agent's (ROLE_AGENT): got {wrong}"
        )


@pytest.mark.req("TASK-02")
def test_a_task_shows_the_same_ids_on_every_method(a2a_client: A2AClient):
    """An ordinary message's task, ended, as SendMessage answered it, as GetTask and as ListTasks of its conversation
    show it: the same id and contextId (the kit's model holds every other answer to the same)."""
    task = drivers.ordinary(a2a_client, ended=True)
    got = a2a_client.get_task(task["id"])
    listed = a2a_client.list_tasks(contextId=task["contextId"])
    shown = {"GetTask": got.task}
    shown |= {"ListTasks": t for t in listed.result["tasks"] if t.get("id") == task["id"]}  # noqa: B035 - the one
    ids = {method: (t.get("id"), t.get("contextId")) for method, t in shown.items()}
    wrong = {method: found for method, found in ids.items() if found != (task["id"], task["contextId"])}
    if wrong or "ListTasks" not in shown:
        listed.fail(f"task {task['id']} of {task['contextId']} shown as (id, contextId): {wrong or 'not listed'}")


@pytest.mark.req("TASK-02")
@pytest.mark.parametrize("ending", drivers.each_ending())
def test_an_ended_task_reads_in_the_state_it_ended_in(a2a_client: A2AClient, ending: str):
    # A terminal state is the task's last: every later read shows the one it ended in (the oracle holds every
    # read after it, on every method and delivery, to that state).
    task = drivers.ended_in(a2a_client, ending)
    got = a2a_client.get_task(task["id"])
    if drivers.state(got.task) != ending:
        got.fail(f"task {task['id']} ended {ending}; GetTask answers it {drivers.state(got.task)}")


@pytest.mark.req("TASK-18")
@pytest.mark.parametrize("ending", drivers.each_ending())
def test_an_ended_tasks_status_is_its_last(request: pytest.FixtureRequest, a2a_client: A2AClient, ending: str):
    """What the kit does to an ended task after reading it (read it on every method, write a push config to it,
    send it a message and cancel it, both refused) changes nothing of its status: its state and status time read
    again are those it ended with (the oracle holds every read after the first to them)."""
    task = drivers.ended_in(a2a_client, ending)
    first = a2a_client.get_task(task["id"]).task
    a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)
    a2a_client.list_tasks(contextId=task["contextId"])
    if drivers.pushes(request):
        endpoint = request.getfixturevalue("a2a_push_receiver").endpoint()
        a2a_client.call("CreateTaskPushNotificationConfig", {"taskId": task["id"], **drivers.push_config(endpoint.url)})
    a2a_client.send(drivers.ORDINARY_TEXT, task_id=task["id"], context_id=task["contextId"])
    a2a_client.cancel(task["id"])
    again = a2a_client.get_task(task["id"])
    shown = [(drivers.state(t), drivers.status_time(t)) for t in (first, again.task)]
    if shown[0] != shown[1]:
        again.fail(
            f"task {task['id']} ended {shown[0][0]} at {first['status'].get('timestamp')}; after reads, a push "
            f"config and a refused message and cancel it reads {shown[1][0]} at {again.task['status'].get('timestamp')}"
        )


@pytest.mark.req("TASK-16")
@pytest.mark.scenario("slow")
def test_a_status_time_never_goes_back(a2a_client: A2AClient):
    """A task read while it works, then once it ended, on every method that shows it: no read shows a status time
    earlier than one read before it (the kit's model judges each answer; this check reads the task on each)."""
    task = a2a_client.send(drivers.scenario("slow", 600), return_immediately=True).task
    working = drivers.wait_for(a2a_client, task["id"], ["TASK_STATE_WORKING"])
    ended = drivers.settle(a2a_client, working)
    reads = [
        a2a_client.get_task(task["id"]),
        a2a_client.list_tasks(contextId=task["contextId"]),
    ]
    times = [drivers.status_time(t) for t in (task, working, ended)]
    times += [drivers.status_time(reads[0].task)]
    times += [drivers.status_time(t) for t in reads[1].result["tasks"] if t["id"] == task["id"]]
    known = [t for t in times if t is not None]
    if not known:
        not_checked("the task carries no status timestamp")
    if known != sorted(known):
        reads[-1].fail(f"the task's status times, read one after another: {[t.isoformat() for t in known]}")


@pytest.mark.req("TASK-11")
def test_negative_history_length_is_refused_or_gives_no_history(a2a_client: A2AClient, a2a_target: Target):
    # On a task that exists: for a made-up id, TaskNotFoundError would be as right an answer (ERR-06).
    task = drivers.ordinary(a2a_client)
    exchange = a2a_client.call("GetTask", {"id": task["id"], "historyLength": -1})
    if a2a_target.strict_spec or exchange.is_error:
        exchange.expect_error("InvalidParamsError")
    elif exchange.result.get("history"):
        exchange.fail("a negative historyLength, if served, asks for no more than 0 messages")


@pytest.mark.req("TASK-12")
@pytest.mark.scenario("complete")
def test_each_turn_is_its_own_task(a2a_client: A2AClient):
    context = drivers.new_context()
    first = drivers.run(a2a_client, "complete", context_id=context)
    second = drivers.run(a2a_client, "complete", context_id=context)
    if first["id"] == second["id"]:
        a2a_client.get_task(second["id"]).fail("two turns in one conversation must be two tasks")
    if second.get("contextId") != drivers.known_as(context):
        a2a_client.get_task(second["id"]).fail("the second turn must stay in the same conversation")


# Each interruption with the caller that can answer it: a question by text, an approval and a connection
# through interactions/v1 (a connection is a Profile v2 interaction).
RESUMERS = {"question": "a2a_client", "approval": "a2a_v1_client", "connection": "a2a_v2_client"}


# What the scenario contract's answered turn says in its artifacts (docs/scenario-contract.md): the question's
# answer (drivers.resume answers "blue"), or that the approved or connected action ran.
ANSWERED_TURN_SAYS = {"question": "blue", "approval": "approved action ran", "connection": "connected action ran"}


@pytest.mark.req("TASK-03")
@pytest.mark.parametrize(
    "kind", [pytest.param(kind, marks=pytest.mark.scenario(drivers.PAUSES[kind][0])) for kind in RESUMERS]
)
def test_interrupted_task_continues_on_the_same_id(request: pytest.FixtureRequest, a2a_target: Target, kind: str):
    if kind == "connection" and not a2a_target.claims("profile-v2"):
        not_applicable("a connection interaction is a Profile v2 rule, and the target claims less")
    client: A2AClient = request.getfixturevalue(RESUMERS[kind])
    task = drivers.paused_on(client, kind)
    exchange = drivers.resume(client, task, kind)
    if exchange.task["id"] != task["id"]:
        exchange.fail(f"the answer to a {kind} must continue task {task['id']}, got a new task {exchange.task['id']}")
    final = drivers.settle(client, exchange.task)
    if drivers.state(final) != "TASK_STATE_COMPLETED":
        client.get_task(task["id"]).fail(f"the task answered on its {kind} should complete under the same id")
    # The answer reached the turn it continued: the scenario contract has its last artifact say so.
    said = " ".join(p.get("text", "") for a in final.get("artifacts") or [] for p in a.get("parts") or [])
    if ANSWERED_TURN_SAYS[kind] not in said:
        client.get_task(task["id"]).fail(
            f"the turn answered on its {kind} must go on with the answer: its artifacts must say "
            f"{ANSWERED_TURN_SAYS[kind]!r} (docs/scenario-contract.md)"
        )
    listed = client.list_tasks(contextId=task["contextId"])
    if [t["id"] for t in listed.result["tasks"]] != [task["id"]]:
        listed.fail(f"answering a {kind} must start no new task in the conversation")


@pytest.mark.req("TASK-13")
@pytest.mark.scenario("fail")
def test_failed_turn_ends_failed(a2a_client: A2AClient):
    task = drivers.settle(a2a_client, drivers.run(a2a_client, "fail"))
    if drivers.state(task) != "TASK_STATE_FAILED":
        a2a_client.get_task(task["id"]).fail(
            f"the fail scenario should end TASK_STATE_FAILED, got {drivers.state(task)}"
        )


def _named(a2a_client: A2AClient, exchange, expected: tuple[str, ...], what: str) -> None:
    for seen in (exchange, a2a_client.get_task(exchange.task["id"])):
        if drivers.state(seen.task) not in expected:
            seen.fail(f"a task {what} is {' or '.join(expected)} by its A2A name, got {drivers.state(seen.task)!r}")


@pytest.mark.req("TASK-13")
@pytest.mark.scenario("slow", "ask", "complete")
def test_every_state_the_kit_drives_has_its_a2a_name(a2a_client: A2AClient, a2a_cancel_at_end):
    running = a2a_client.send(drivers.scenario("slow", 120_000), return_immediately=True)
    a2a_cancel_at_end(a2a_client, running.task["id"])
    _named(a2a_client, running, ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"), "still running")
    _named(a2a_client, a2a_client.send(drivers.scenario("complete")), ("TASK_STATE_COMPLETED",), "that completed")
    asked = a2a_client.send(drivers.scenario("ask"))
    _named(a2a_client, asked, ("TASK_STATE_INPUT_REQUIRED",), "waiting on a question")
    _named(a2a_client, a2a_client.cancel(asked.task["id"]), ("TASK_STATE_CANCELED",), "canceled")


@pytest.mark.req("TASK-01")
def test_status_timestamp_is_utc(a2a_client: A2AClient):
    """Every timestamp of a task's answers (the answer to its message, GetTask, ListTasks): SHAPE-01's checks leave a
    timestamp with an offset to this one, so that one deviation is one failure."""
    sent = a2a_client.send(drivers.ORDINARY_TEXT, history_length=10)
    task = drivers.settle(a2a_client, drivers.task_of(sent, "no task answer"))
    exchange = a2a_client.get_task(task["id"], history_length=10)
    stamp = exchange.task["status"].get("timestamp")
    if stamp is None:
        not_applicable("the task's status carries no timestamp (optional in A2A 1.0)")
    listed = a2a_client.list_tasks(contextId=task["contextId"], historyLength=10, includeArtifacts=True)
    for answer in (sent, exchange, listed):
        offset = answer.offset_timestamps()
        if offset:
            answer.fail("timestamps are UTC with 'Z' (A2A §5.6.1):\n" + "\n".join(f"  {v}" for v in offset[:5]))
    if not stamp.endswith("Z"):
        exchange.fail(f"timestamps are UTC with 'Z' (A2A §5.6.1), got {stamp!r}")


# -- reads change nothing


def _as_reads_show(a2a_client: A2AClient, task: dict) -> dict:
    """The task as later reads show it: its history's and artifacts' ids, its status, on GetTask and ListTasks."""
    got = a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL).task
    listed = a2a_client.list_tasks(
        contextId=task["contextId"], includeArtifacts=True, historyLength=drivers.HISTORY_ALL, pageSize=100
    ).result["tasks"]

    def seen(one: dict) -> tuple:
        history = [m.get("messageId") for m in one.get("history") or []]
        artifacts = [a.get("artifactId") for a in one.get("artifacts") or []]
        return history, artifacts, one["status"].get("state"), one["status"].get("timestamp")

    return {"GetTask": seen(got), "ListTasks": [seen(t) for t in listed if t["id"] == task["id"]]}


READS = {
    "GetTask.historyLength": lambda client, task: client.get_task(task["id"], history_length=1),
    "GetTask.status": lambda client, task: client.get_task(task["id"]),
    "ListTasks.historyLength": lambda client, task: client.list_tasks(contextId=task["contextId"], historyLength=1),
    "ListTasks.includeArtifacts": lambda client, task: client.list_tasks(contextId=task["contextId"]),
    "ListTasks.status": lambda client, task: client.list_tasks(contextId=task["contextId"], pageSize=1),
}


@pytest.mark.req("TASK-14")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("read", axes.members("TASK-14", "reads"))
def test_a_read_changes_nothing(a2a_client: A2AClient, read: str):
    task = drivers.paused_on(a2a_client, "question")
    task = drivers.settle(a2a_client, a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"]).task)
    before = _as_reads_show(a2a_client, task)
    READS[read](a2a_client, task).ok()
    after = _as_reads_show(a2a_client, task)
    if after != before:
        a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL).fail(
            f"{read} is a read: later reads must show the task as before it, {before}, not {after}"
        )


# The scenarios whose ended tasks carry something of their own to keep: a plan and its telemetry, a file artifact, an
# echo artifact, a plain completion.
KEPT_THROUGH_LATER_TURNS = ("plan", "file", "echo", "complete")


@pytest.mark.req("TASK-04", "EXT-09")
@pytest.mark.scenario(*KEPT_THROUGH_LATER_TURNS)
def test_an_ended_task_reads_as_it_ended_after_later_turns(a2a_v2_client: A2AClient):
    """Each turn of one conversation, read as it ends and again once every later turn has ended (GetTask, and the
    conversation listed): its state, artifacts, history and extension data are as they ended. The oracle holds every
    read to the first (rules terminal-kept, ended-artifact-set, ended-artifacts, ended-data-kept, ended-history-kept);
    a Runtime keeping something per conversation, overwritten by the latest turn, shows here."""
    context, first_reads = drivers.new_context(), {}
    for name in KEPT_THROUGH_LATER_TURNS:
        task = drivers.settle(a2a_v2_client, drivers.run(a2a_v2_client, name, context_id=context))
        first_reads[task["id"]] = a2a_v2_client.get_task(task["id"], history_length=drivers.HISTORY_ALL).task
    for task_id, first in first_reads.items():
        again = a2a_v2_client.get_task(task_id, history_length=drivers.HISTORY_ALL)
        changed = [what for what, read in _kept(again.task).items() if read != _kept(first)[what]]
        if changed:
            again.fail(
                f"task {task_id} of conversation {context}, read again once its later turns ended, shows another "
                f"{', '.join(changed)} than when it ended"
            )
    a2a_v2_client.list_tasks(contextId=context, includeArtifacts=True, historyLength=drivers.HISTORY_ALL)


def _kept(task: dict) -> dict:
    """What an ended task keeps, as the check compares it: its state and status time, its artifacts' and history's
    ids, and each profile extension's data (a file's URL may be minted anew for each read: the oracle judges parts)."""
    status = task.get("status") or {}
    return {
        "state": status.get("state"),
        "status timestamp": status.get("timestamp"),
        "artifacts": [a.get("artifactId") for a in task.get("artifacts") or []],
        "history": [m.get("messageId") for m in task.get("history") or []],
        **{f"{uri} data": extensions.read(task, uri) for uri in extensions.V2},
    }
