"""SendMessage: blocking and returnImmediately, the a2aWaitMs limit, idempotent messageId, context rules."""

from __future__ import annotations

import time

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.requirements import axes, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, queueing
from nylorun_a2a_kit.fixtures.target import Target

PLAN_STEPS = 20  # a status change every twentieth of the turn
# A scenario far longer than any check waits, so a task that answers early can only be the wait limit.
LONG_MS = 120_000


@pytest.mark.req("SEND-01")
def test_blocking_send_answers_once_the_task_settled(a2a_client: A2AClient, a2a_target: Target):
    started = time.monotonic()
    exchange = a2a_client.send(drivers.ORDINARY_TEXT)
    task = drivers.task_of(exchange)
    waited_ms = (time.monotonic() - started) * 1000
    drivers.cancel_quietly(a2a_client, task["id"])
    if drivers.state(task) not in drivers.SETTLED and waited_ms < a2a_target.wait_ms:
        exchange.fail(f"a blocking SendMessage answered {drivers.state(task)}, before the task ended or paused")


@pytest.mark.req("SEND-01")
@pytest.mark.scenario("plan")
def test_blocking_send_waits_for_a_turn_that_ends_near_the_limit(a2a_client: A2AClient, a2a_target: Target):
    """A turn of four fifths of a2aWaitMs, changing all along (a plan of twenty steps): the blocking answer waits for
    its end, or for the limit, never less (an answer in the limit's last tenth is the limit's, as SEND-02 reads
    it)."""
    if a2a_target.wait_ms > a2a_target.max_blocking_check_ms:
        not_checked(
            f"a2aWaitMs is {a2a_target.wait_ms} ms, above --a2a-max-blocking-check-ms",
            needs="the Runtime's a2aWaitMs at most --a2a-max-blocking-check-ms, given as --a2a-wait-ms",
        )
    turn_ms = a2a_target.wait_ms * 4 // 5
    started = time.monotonic()
    exchange = a2a_client.send(drivers.scenario("plan", f"{PLAN_STEPS} {turn_ms // PLAN_STEPS}"))
    waited_ms = (time.monotonic() - started) * 1000
    drivers.cancel_quietly(a2a_client, exchange.task["id"])
    if drivers.state(exchange.task) not in drivers.SETTLED and waited_ms < a2a_target.wait_ms * 0.9:
        exchange.fail(
            f"a blocking SendMessage on a turn of {turn_ms} ms answered {drivers.state(exchange.task)} after "
            f"{waited_ms:.0f} ms, before the turn ended and before a2aWaitMs ({a2a_target.wait_ms} ms)"
        )


@pytest.mark.req("SEND-01")
@pytest.mark.scenario("complete")
def test_blocking_send_waits_for_the_end(a2a_client: A2AClient):
    task = drivers.run(a2a_client, "complete")
    if drivers.state(task) != "TASK_STATE_COMPLETED":
        a2a_client.get_task(task["id"]).fail(f"a blocking SendMessage answered {drivers.state(task)} before the end")
    read = a2a_client.get_task(task["id"])  # the oracle holds GetTask's artifacts to the answer's (SEND-01, TASK-04)
    answered = sorted(a.get("artifactId") for a in task.get("artifacts") or [])
    if answered != sorted(a.get("artifactId") for a in read.task.get("artifacts") or []):
        read.fail(f"a blocking SendMessage answers the ended task with its artifacts: it answered {answered}")


@pytest.mark.req("SEND-01")
@pytest.mark.scenario("ask")
def test_blocking_send_returns_when_the_task_pauses(a2a_client: A2AClient, a2a_cancel_at_end):
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    if drivers.state(task) != "TASK_STATE_INPUT_REQUIRED":
        a2a_client.get_task(task["id"]).fail("a blocking SendMessage must answer once the task asks for input")


@pytest.mark.req("SEND-01")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("combined", axes.members("SEND-01", "combines"))
def test_a_blocking_reply_to_a_paused_task_answers_once_it_settles(a2a_client: A2AClient, combined: str):
    task = drivers.run(a2a_client, "ask")
    if drivers.state(task) != "TASK_STATE_INPUT_REQUIRED":
        not_checked(f"the ask scenario answered {drivers.state(task)}, so no reply continues it")
    exchange = a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"])
    if drivers.state(exchange.task) not in drivers.SETTLED:
        drivers.cancel_quietly(a2a_client, task["id"])
        exchange.fail(f"a blocking reply to a paused task answered {drivers.state(exchange.task)}, before it settled")


@pytest.mark.req("SEND-12", "SEND-03")
@pytest.mark.scenario("slow")
@pytest.mark.parametrize("combined", axes.members("SEND-12", "combines"))
def test_history_length_with_return_immediately(a2a_client: A2AClient, a2a_cancel_at_end, combined: str):
    exchange = a2a_client.send(
        drivers.scenario("slow", drivers.AT_ONCE_TURN_MS), return_immediately=True, history_length=0
    )
    a2a_cancel_at_end(a2a_client, exchange.task["id"])
    drivers.answered_at_once(exchange, "configuration.historyLength")
    if exchange.task.get("history"):
        exchange.fail("configuration.historyLength 0 asks for no history, answered at once or not")
    # Read again at once, while it is as it was answered (SUBMITTED, or WORKING): the oracle judges the history cut.
    a2a_client.get_task(exchange.task["id"], history_length=1)


@pytest.mark.req("SEND-03")
@pytest.mark.scenario("slow")
def test_return_immediately_answers_before_the_end(a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end):
    started = time.monotonic()
    exchange = a2a_client.send(drivers.scenario("slow", LONG_MS), return_immediately=True)
    elapsed = time.monotonic() - started
    task = exchange.task
    a2a_cancel_at_end(a2a_client, task["id"])
    if drivers.state(task) not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
        exchange.fail(f"returnImmediately should answer the task in progress, got {drivers.state(task)}")
    # "At once" is judged against the blocking limit: a call that waited anywhere near it did not return.
    if elapsed > min(a2a_target.wait_ms / 1000, a2a_target.timeout_s) / 2:
        exchange.fail(f"returnImmediately took {elapsed:.1f} s: the call waited instead of answering at once")


@pytest.mark.req("SEND-03")
@pytest.mark.scenario("slow")
def test_task_answered_at_once_still_runs_to_its_end(a2a_client: A2AClient):
    task = a2a_client.send(drivers.scenario("slow", 300), return_immediately=True).task
    drivers.wait_for(a2a_client, task["id"], drivers.TERMINAL)
    final = a2a_client.get_task(task["id"])
    if drivers.state(final.task) != "TASK_STATE_COMPLETED":
        final.fail("a task answered at once must still be worked on to its end")


@pytest.mark.req("SEND-02")
@pytest.mark.scenario("slow")
def test_blocking_send_stops_at_the_wait_limit(a2a_client: A2AClient, a2a_target: Target, a2a_cancel_at_end):
    if a2a_target.wait_ms > a2a_target.max_blocking_check_ms:
        not_checked(
            f"a2aWaitMs is {a2a_target.wait_ms} ms, above --a2a-max-blocking-check-ms "
            f"{a2a_target.max_blocking_check_ms}, so waiting it out is past the run's budget",
            needs="the Runtime's a2aWaitMs at most --a2a-max-blocking-check-ms, given as --a2a-wait-ms",
        )
    wait_s = a2a_target.wait_ms / 1000
    started = time.monotonic()
    # A correct target answers at a2aWaitMs; one that ignores it is given a bounded grace, then fails.
    exchange = a2a_client.send(drivers.scenario("slow", LONG_MS), timeout_s=wait_s + max(5.0, wait_s))
    elapsed = time.monotonic() - started
    task = exchange.task
    a2a_cancel_at_end(a2a_client, task["id"])
    if drivers.state(task) != "TASK_STATE_WORKING":
        exchange.fail(f"past a2aWaitMs the answer must be the task still WORKING, got {drivers.state(task)}")
    if elapsed < wait_s * 0.9:
        exchange.fail(f"the call answered after {elapsed:.1f} s, before a2aWaitMs ({wait_s:.1f} s)")
    after = a2a_client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_WORKING":
        after.fail("past a2aWaitMs the answer ends the wait, not the work: the task must still be WORKING")


@pytest.mark.req("SEND-04")
@pytest.mark.scenario("complete")
def test_retried_message_id_answers_the_same_task(a2a_client: A2AClient):
    context, message_id = drivers.new_context(), new_id("msg")
    first = drivers.run(a2a_client, "complete", context_id=context, message_id=message_id)
    retry = a2a_client.send(drivers.scenario("complete"), context_id=context, message_id=message_id)
    if retry.task["id"] != first["id"]:
        retry.fail(f"a retry with messageId {message_id} must answer task {first['id']}, got {retry.task['id']}")
    listed = a2a_client.list_tasks(contextId=context)
    if len(listed.result["tasks"]) != 1:
        listed.fail("a retried messageId must not start a second task")
    read = a2a_client.get_task(first["id"], history_length=drivers.HISTORY_ALL)
    times = [m.get("messageId") for m in read.task.get("history") or []].count(message_id)
    if times > 1:
        read.fail(f"the retried message {message_id} is in its task's history {times} times: a retry changes nothing")


# Ids a store may take for one another (a case-insensitive collation, padding ignored, a prefix match, a cut):
# each is another id, so another message (RFC 8259 §8.3: strings compare by their code units).
OTHER_SPELLINGS = {
    "other-case": str.swapcase,
    "trailing-space": lambda m: m + " ",
    "longer": lambda m: m + "0",
    "shorter": lambda m: m[:-1],
}


@pytest.mark.req("SEND-04")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("spelling", list(OTHER_SPELLINGS))
def test_another_spelling_of_a_message_id_is_another_message(a2a_client: A2AClient, spelling: str):
    """A message whose messageId is another spelling of one the caller sent is no retry: it runs as a message of
    its own, in a task of its own."""
    message_id = new_id("msg")
    first = drivers.settle(a2a_client, drivers.run(a2a_client, "complete", message_id=message_id))
    other = OTHER_SPELLINGS[spelling](message_id)
    second = a2a_client.send(drivers.scenario("complete"), message_id=other)
    if second.is_error:
        not_checked(f"the Agent refuses the messageId {other!r}: {second.answer_line()}")
    task = drivers.task_of(second, "a new message answered without a task")
    if task["id"] == first["id"]:
        second.fail(
            f"the messageId {other!r} is not {message_id!r}: the message must run as a new one, not be answered "
            f"with the earlier message's task {first['id']}"
        )


@pytest.mark.req("SEND-04")
@pytest.mark.parametrize(
    "while_",
    [
        pytest.param("running", marks=pytest.mark.scenario("slow")),
        pytest.param("paused", marks=pytest.mark.scenario("ask")),
    ],
)
def test_retried_message_id_answers_the_same_task_before_it_ends(a2a_client: A2AClient, a2a_cancel_at_end, while_: str):
    name, argument = ("slow", LONG_MS) if while_ == "running" else ("ask", None)
    context, message_id = drivers.new_context(), new_id("msg")
    first = a2a_client.send(
        drivers.scenario(name, argument),
        context_id=context,
        message_id=message_id,
        return_immediately=while_ == "running",
    ).task
    a2a_cancel_at_end(a2a_client, first["id"])
    if while_ == "paused":
        first = drivers.settle(a2a_client, first)
    retry = a2a_client.send(
        drivers.scenario(name, argument), context_id=context, message_id=message_id, return_immediately=True
    )
    if retry.task["id"] != first["id"]:
        retry.fail(f"a retry of {message_id} while its task is {while_} must answer task {first['id']}")
    listed = a2a_client.list_tasks(contextId=context)
    if len(listed.result["tasks"]) != 1:
        listed.fail(f"a retried messageId must not start a second task while the first is {while_}")
    if while_ == "paused" and drivers.state(a2a_client.get_task(first["id"]).task) != drivers.state(first):
        a2a_client.get_task(first["id"]).fail("a retry of the message that paused the task must not answer it")


@pytest.mark.req("SEND-05")
@pytest.mark.scenario("complete")
def test_omitted_context_starts_a_new_conversation(a2a_client: A2AClient):
    first = drivers.run(a2a_client, "complete")
    second = a2a_client.send(drivers.scenario("complete"))
    if not first.get("contextId") or not second.task.get("contextId"):
        second.fail("a task must carry the contextId the Agent made for it")
    if first["contextId"] == second.task["contextId"]:
        second.fail("two messages without contextId must start two conversations")


@pytest.mark.req("SEND-06")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("length", ["short", "long"])
def test_given_context_is_kept(a2a_client: A2AClient, length: str):
    """Kept exactly as written, however long: an id a client chose is compared whole (RFC 8259 §8.3)."""
    context = drivers.chosen_context() if length == "short" else drivers.long_id("ctx")
    exchange = a2a_client.send(drivers.scenario("complete"), context_id=context)
    if length == "long" and exchange.is_error:
        not_checked(f"the Agent refuses a contextId of {len(context)} characters: {exchange.answer_line()}")
    if exchange.is_error:
        exchange.fail(f"the message names the conversation {context}: it is taken, not refused")
    if exchange.task.get("contextId") != context:
        exchange.fail(f"the task should belong to the conversation {context[:60]}… the message named")
    if length == "long":
        listed = a2a_client.list_tasks(contextId=context)
        if [t.get("contextId") for t in listed.result.get("tasks") or []] != [context]:
            listed.fail(f"ListTasks filtered by the {len(context)}-character contextId lists its one task, as named")


@pytest.mark.req("SEND-07")
def test_unknown_task_id_is_not_found(a2a_client: A2AClient):
    a2a_client.send("hello", task_id=new_id("task")).expect_error("TaskNotFoundError")


@pytest.mark.req("SEND-13")
def test_a_chosen_context_is_kept_or_refused(a2a_client: A2AClient):
    """A2A's own half of SEND-06: a message naming a contextId the client chose is answered in it, or refused with
    an error that starts nothing (A2A §3.4.1), never answered under a contextId the Agent made."""
    context = drivers.chosen_context()
    exchange = a2a_client.send(drivers.ORDINARY_TEXT, context_id=context)
    if exchange.is_error:
        listed = a2a_client.list_tasks(contextId=context)
        if listed.result["tasks"]:
            listed.fail(f"the message naming {context} was refused, yet a task of that conversation is listed")
        return
    answered = exchange.result.get("task") or exchange.result.get("message") or {}
    if answered.get("contextId") != context:
        exchange.fail(f"a message naming contextId {context} is answered in it or refused, never in another")


@pytest.mark.req("SEND-08")
@pytest.mark.scenario("ask")
def test_context_that_differs_from_the_task_is_rejected(a2a_client: A2AClient, a2a_cancel_at_end):
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    exchange = a2a_client.send("blue", task_id=task["id"], context_id=drivers.chosen_context())
    if not exchange.is_error:
        exchange.fail("a message whose contextId differs from its task's must be rejected")
    after = a2a_client.get_task(task["id"])
    if drivers.state(after.task) != "TASK_STATE_INPUT_REQUIRED":
        after.fail("a rejected message must leave the task as it was")


def _refused_and_unchanged(a2a_client: A2AClient, task: dict, configuration: dict | None = None) -> None:
    before = a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL).task
    a2a_client.send("once more", task_id=task["id"], configuration=configuration).expect_error(
        "UnsupportedOperationError"
    )
    after = a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)
    if drivers.state(after.task) != drivers.state(before) or len(after.task.get("history") or []) != len(
        before.get("history") or []
    ):
        after.fail(f"a refused message must leave the {drivers.state(before)} task as it was")


@pytest.mark.req("SEND-09")
@pytest.mark.member("reads", "SendMessage.refused")
def test_message_to_an_ended_task_is_unsupported(a2a_client: A2AClient):
    # Whatever state an ordinary task ends in (REJECTED too, where an Agent rejects it) is judged here.
    _refused_and_unchanged(a2a_client, drivers.ordinary(a2a_client, ended=True))


@pytest.mark.req("SEND-09")
@pytest.mark.parametrize("configured", ["plain", "every-option"])
@pytest.mark.parametrize("ending", drivers.each_ending())
def test_message_to_a_task_in_each_terminal_state_is_unsupported(
    request: pytest.FixtureRequest, a2a_client: A2AClient, a2a_target: Target, ending: str, configured: str
):
    """Plain, and with every option of SendMessage's configuration at once (returnImmediately, historyLength,
    acceptedOutputModes, an inline push config where the Agent pushes): the same refusal, the task as it was."""
    task = drivers.ended_in(a2a_client, ending)
    configuration = drivers.every_option(request, a2a_target)[0] if configured == "every-option" else None
    _refused_and_unchanged(a2a_client, task, configuration)


@pytest.mark.req("SEND-10")
@pytest.mark.scenario("ask")
def test_task_id_alone_continues_in_its_context(a2a_client: A2AClient, a2a_cancel_at_end):
    task = drivers.run(a2a_client, "ask")
    a2a_cancel_at_end(a2a_client, task["id"])
    exchange = a2a_client.send("blue", task_id=task["id"])
    if exchange.task.get("contextId") != task["contextId"]:
        exchange.fail("with only taskId, the Agent must take the context from the task")


@pytest.mark.req("SEND-11")
def test_every_message_is_answered_with_a_task(a2a_client: A2AClient):
    exchange = a2a_client.send("Hello from the conformance kit.", return_immediately=True)
    task = exchange.task  # fails when the answer is a Message
    drivers.cancel_quietly(a2a_client, task["id"])


@pytest.mark.req("SEND-12")
@pytest.mark.parametrize("length", [0, 1])
def test_send_history_length_bounds_an_ordinary_answer(a2a_client: A2AClient, length: int):
    exchange = a2a_client.send(drivers.ORDINARY_TEXT, history_length=length)
    task = drivers.task_of(exchange)
    if drivers.state(task) in drivers.TERMINAL:  # its history is the one GetTask reads: which messages is judged
        drivers.held_history(a2a_client, task["id"], cut=length)
        _check_send_cut(a2a_client, exchange, length, [])
        return
    drivers.cancel_quietly(a2a_client, task["id"])
    drivers.held_history(a2a_client, task["id"], cut=length)
    if len(exchange.task.get("history") or []) > length:
        exchange.fail(f"configuration.historyLength {length} allows at most {length} messages in the answer")


@pytest.mark.req("SEND-12")
@pytest.mark.scenario("slow", "complete")
@pytest.mark.parametrize("length", [0, 1])
def test_send_history_length_bounds_a_queued_answer(a2a_client: A2AClient, a2a_cancel_at_end, length: int):
    """A message queued behind a running turn is answered at once: under historyLength its answer holds at most
    that many messages, none for 0."""
    context, running = queueing.busy(a2a_client)
    a2a_cancel_at_end(a2a_client, running["id"])
    exchange = queueing.send(a2a_client, context, history_length=length)
    if exchange.is_error:
        not_checked(f"the Agent refuses a message to a busy conversation: {exchange.answer_line()}")
    task = drivers.task_of(exchange)
    if len(task.get("history") or []) > length:
        exchange.fail(
            f"configuration.historyLength {length} allows at most {length} messages in the answer to a queued "
            f"message; it holds {len(task['history'])}"
        )


def _check_send_cut(a2a_client: A2AClient, exchange, length: int, sent: list[str]) -> None:
    """The history a SendMessage answer carries under configuration.historyLength ``length``."""
    cut = exchange.task.get("history") or []
    if length == 0:
        if cut:
            exchange.fail("configuration.historyLength 0 asks for no history, but messages were returned")
        return
    full = drivers.full_history(a2a_client, exchange.task, "SendMessage")
    wrong = drivers.history_cut_problem(full, cut, length, sent)
    if wrong:
        exchange.fail(f"configuration.{wrong}")


@pytest.mark.req("SEND-12")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("length", [0, 1, 2, drivers.HISTORY_ALL], ids=["zero", "one", "middle", "all"])
@pytest.mark.member("spellings", "history-newest-first")
def test_send_history_length_bounds_the_answer(a2a_client: A2AClient, length: int, a2a_cancel_at_end):
    sent = [new_id("ask"), new_id("answer")]
    first = a2a_client.send(drivers.scenario("ask"), message_id=sent[0], history_length=length)
    task = first.task
    a2a_cancel_at_end(a2a_client, task["id"])
    if drivers.state(task) != "TASK_STATE_INPUT_REQUIRED":
        not_checked(f"the ask scenario answered {drivers.state(task)}, so no answer on the task follows")
    _check_send_cut(a2a_client, first, length, sent[:1])
    final = a2a_client.send("blue", task_id=task["id"], message_id=sent[1], history_length=length)
    _check_send_cut(a2a_client, final, length, sent)
