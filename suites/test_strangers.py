"""Strangers: every id a client chooses or is given is a key of its subject and its Agent. Named by a caller it is
not the key of (another subject, or the same subject on another Agent of the Runtime), it answers as an id that
does not exist, changes nothing and shows nothing, on every method that names it and every channel it travels:
the answer, the push configs and their deliveries, the feed, the file route.

The kit makes the ids itself (a task in each state a client names it in, a message still queued, a config, a
session, a file URL) and names each one as the stranger, on each method, beside the same call naming an id that
does not exist: the two answers must be alike, and the owner's view of what it holds the same before and after.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, json_strings, new_id, redaction
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import Feed, FeedPosition, drivers, methods, push_checks, queueing
from nylorun_a2a_kit.fixtures.target import Target

WHO = ("another subject", "another Agent")


def _stranger(who: str, a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_target: Target) -> A2AClient:
    if who == "another subject":
        return a2a_other_client
    if not a2a_target.other_agent_url:
        not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same Runtime and key")
    return a2a_client.with_(url=a2a_target.other_agent_url)


# -- what a caller holds, and how it looks to its owner


@dataclass
class Held:
    task: dict[str, Any]  # as its owner was answered
    steady: bool  # its history and artifacts stay as they are while the check runs (a running turn's may grow)
    config: tuple[str, str, str] | None = None  # the owner's push config on it: id, url, token

    @property
    def id(self) -> str:
        return self.task["id"]

    def secrets(self) -> list[str]:
        """What the stranger must never read: the owner's context, its config's url and token."""
        return [self.task.get("contextId") or "", *(self.config[1:] if self.config else ())]


def _running(client: A2AClient, cancel_at_end) -> dict:
    task = drivers.working(client, cancel_at_end, queueing.BUSY_MS)
    return drivers.wait_for(client, task["id"], ["TASK_STATE_WORKING"])  # past SUBMITTED: the state it keeps


def _queued(client: A2AClient, cancel_at_end) -> dict:
    context, running = queueing.busy(client)
    cancel_at_end(client, running["id"])
    return queueing.queued_task(queueing.send(client, context, new_id("queued")), context, running)


def _ended(client: A2AClient, cancel_at_end) -> dict:
    return drivers.run(client, "complete")


def _paused(client: A2AClient, cancel_at_end) -> dict:
    task = drivers.settle(client, drivers.run(client, "ask"))
    cancel_at_end(client, task["id"])
    return task


# Each state a client names a task in: the scenario that makes it, how, and whether its history stays as it is.
HOLDINGS: dict[str, tuple[str, Callable[[A2AClient, Any], dict], bool]] = {
    "an ended task": ("complete", _ended, True),
    "a paused task": ("ask", _paused, True),
    "a running task": ("slow", _running, False),
    "a queued message": ("slow", _queued, True),
}


def _seen(owner: A2AClient, held: Held) -> tuple[tuple, Exchange]:
    """What the owner sees of what it holds: the state (and, when steady, how many history messages and
    artifacts), and its configs' ids, urls and tokens."""
    exchange = owner.get_task(held.id, history_length=drivers.HISTORY_ALL)
    task = exchange.task
    seen: tuple = (drivers.state(task),)
    if held.steady:
        seen += (len(task.get("history") or []), len(task.get("artifacts") or []))
    if held.config is not None:
        listed = owner.call("ListTaskPushNotificationConfigs", {"taskId": held.id})
        configs = listed.result.get("configs") or []
        seen += (sorted((c.get("id"), c.get("url"), c.get("token", held.config[2])) for c in configs),)
    return seen, exchange


# -- each method that names a task, as the stranger calls it

# SendMessage+options: a message with every option of its configuration at once (drivers.every_option), its push
# config the stranger's own.
OPTIONS = "SendMessage+options"
TASK_CALLS = ("GetTask", "CancelTask", "SendMessage", OPTIONS)


def _params(method: str, task_id: str, config_id: str, url: str, modes: list | None = None) -> dict[str, Any]:
    if method == "GetTask":
        return {"id": task_id, "historyLength": 1}
    if method == "CancelTask":
        return {"id": task_id}
    if method in ("SendMessage", OPTIONS):
        message = {"messageId": new_id("msg"), "role": "ROLE_USER", "taskId": task_id, "parts": [{"text": "blue"}]}
        if method == "SendMessage":
            return {"message": message}
        configuration: dict[str, Any] = {"returnImmediately": True, "historyLength": 1}
        configuration["acceptedOutputModes"] = modes or ["text/plain"]
        if url:
            configuration["taskPushNotificationConfig"] = drivers.push_config(url, token=new_id("stranger-token"))
        return {"message": message, "configuration": configuration}
    if method == "CreateTaskPushNotificationConfig":
        return {"taskId": task_id, **drivers.push_config(url, token=new_id("stranger-token"), config_id=config_id)}
    if method == "ListTaskPushNotificationConfigs":
        return {"taskId": task_id}
    return {"taskId": task_id, "id": config_id}


def _requirement(who: str, holding: str, method: str) -> pytest.MarkDecorator:
    if who == "another Agent":
        return pytest.mark.req("ISO-05")
    if holding == "a queued message":
        return pytest.mark.req("ISO-06")
    return pytest.mark.req("ISO-01") if method in TASK_CALLS else pytest.mark.req("PUSH-16")


def _cases() -> list:
    cases = []
    for who, holding, method in itertools.product(WHO, HOLDINGS, (*TASK_CALLS, *methods.PUSH_CONFIG)):
        scenario = HOLDINGS[holding][0]
        marks = [_requirement(who, holding, method), pytest.mark.scenario(scenario)]
        cases.append(pytest.param(who, holding, method, marks=marks, id=f"{who}-{holding}-{method}"))
    return cases


# A value of the owner's this long is sought inside the answer's strings; a shorter one (a Runtime's own short
# contextId, say) only as a whole string value, since it could stand in any text by chance.
SOUGHT_INSIDE = 12


def shows_none_of(exchange: Exchange, held: Held, what: str) -> None:
    """The answer names nothing of what the owner holds that the caller did not send."""
    body = (exchange.response_body or b"").decode("utf-8", "replace")
    try:
        texts = list(json_strings(json.loads(body)))
    except ValueError:
        texts = [body]
    shown = [
        secret
        for secret in held.secrets()
        if secret and any(text == secret or (len(secret) >= SOUGHT_INSIDE and secret in text) for text in texts)
    ]
    if shown:
        exchange.fail(f"{what} must show nothing of it, yet its answer holds {len(shown)} of the owner's values")


@pytest.mark.parametrize("who, holding, method", _cases())
def test_a_strangers_call_answers_as_for_an_id_that_does_not_exist(
    request: pytest.FixtureRequest,
    a2a_target: Target,
    a2a_client: A2AClient,
    a2a_other_client: A2AClient,
    a2a_cancel_at_end,
    who: str,
    holding: str,
    method: str,
):
    """The caller's task in each state (a message still queued among them), named by a stranger on each method:
    the same answer as an id that does not exist, nothing of the task in it, and the task as it was."""
    stranger = _stranger(who, a2a_client, a2a_other_client, a2a_target)
    url = theirs = ""
    if method in methods.PUSH_CONFIG or (method == OPTIONS and drivers.pushes(request)):
        request.getfixturevalue("a2a_pushing")
        receiver = request.getfixturevalue("a2a_push_receiver")
        url, theirs = receiver.endpoint().url, receiver.endpoint().url  # the owner's, and the stranger's own
    _, make, steady = HOLDINGS[holding]
    held = Held(make(a2a_client, a2a_cancel_at_end), steady)
    config_id = new_id("hook")
    if url:
        token = new_id("owner-token")
        made = drivers.create_push_config(a2a_client, held.id, url, config_id=config_id, token=token)
        if made.is_error:
            not_checked(f"the Agent takes no push config on {holding}", needs="an Agent that does (A2A allows it)")
        held.config = (made.result.get("id") or config_id, url, token)
        config_id = held.config[0]
    before, _ = _seen(a2a_client, held)
    missing_id = new_id("kit-missing-task")
    modes = a2a_target.card.get("defaultOutputModes")
    sent = "SendMessage" if method == OPTIONS else method
    missing = stranger.call(sent, _params(method, missing_id, config_id, theirs, modes))
    if not missing.is_error or missing.error.get("code") != schemas.error_code("TaskNotFoundError"):
        not_checked(
            f"{method} by {who} naming an id that does not exist answers {missing.answer_line()}, not "
            "TaskNotFoundError (the rules of missing ids judge that): there is no not-found answer to compare with"
        )
    foreign = stranger.call(sent, _params(method, held.id, config_id, theirs, modes))
    what = f"{method} by {who} naming the caller's {holding.split(' ', 1)[1]}"
    shows_none_of(foreign, held, what)
    foreign.expect_error("TaskNotFoundError")
    told, expected = methods.error_shape(foreign, held.id), methods.error_shape(missing, missing_id)
    if told != expected:
        foreign.fail(f"{what} must answer exactly as an id that does not exist: got {told}, a missing id {expected}")
    after, seen = _seen(a2a_client, held)
    if after != before:
        seen.fail(f"{what} must leave it as it was: {before} before, {after} after")


# -- the same messageId queued by two callers


@dataclass
class Caller:
    client: A2AClient
    context: str
    running: dict
    queued: dict
    token: str
    endpoint: Any


def _queue_beside(client: A2AClient, message_id: str, receiver: PushReceiver, cancel_at_end, why: str) -> Caller:
    context, running = queueing.busy(client)
    cancel_at_end(client, running["id"])
    queued = queueing.queued_task(queueing.send(client, context, message_id), context, running, why)
    token = new_id("tok")
    return Caller(client, context, running, queued, token, push_checks.endpoint_for(receiver, token=token))


def _configs(caller: Caller) -> list[tuple]:
    listed = caller.client.call("ListTaskPushNotificationConfigs", {"taskId": caller.queued["id"]})
    return [(c.get("id"), c.get("url")) for c in listed.result.get("configs") or []]


def _create(caller: Caller, hook: str) -> Exchange:
    return drivers.create_push_config(
        caller.client, caller.queued["id"], caller.endpoint.url, config_id=hook, token=caller.token
    )


@pytest.mark.req("ISO-06", "PUSH-01")
@pytest.mark.scenario("slow", "complete")
@pytest.mark.parametrize("who", WHO)
def test_the_same_queued_message_id_of_two_callers_holds_two_callers_configs(
    a2a_pushing: Target,
    a2a_client: A2AClient,
    a2a_other_client: A2AClient,
    a2a_push_receiver: PushReceiver,
    a2a_cancel_at_end,
    who: str,
):
    """Two callers queue a message under the same messageId, each behind its own running turn, and each puts a
    config of the same id on it: neither reads, replaces or removes the other's, and each one's deliveries carry
    its own turn's events with its own token."""
    message_id, hook = new_id("refund"), new_id("hook")
    stranger = _stranger(who, a2a_client, a2a_other_client, a2a_pushing)
    first = _queue_beside(a2a_client, message_id, a2a_push_receiver, a2a_cancel_at_end, "")
    second = _queue_beside(stranger, message_id, a2a_push_receiver, a2a_cancel_at_end, f"{who}'s same messageId: ")
    if _create(first, hook).is_error:
        not_checked("the Agent takes no push config on a queued message", needs="an Agent that does (A2A allows it)")
    held = Held(first.queued, True, (hook, first.endpoint.url, first.token))
    what = f"{who}, which queued the same messageId"
    # The stranger's own message has no config yet: reading one of the first's id answers as any id it lacks.
    read = second.client.call("GetTaskPushNotificationConfig", {"taskId": second.queued["id"], "id": hook})
    shows_none_of(read, held, f"GetTaskPushNotificationConfig by {what}")
    absent_id = new_id("hook")
    absent = second.client.call("GetTaskPushNotificationConfig", {"taskId": second.queued["id"], "id": absent_id})
    if methods.error_shape(read, hook) != methods.error_shape(absent, absent_id) or not read.is_error:
        read.fail(f"{what} reads a config of the first caller's id as one its own message does not have")
    listed = second.client.call("ListTaskPushNotificationConfigs", {"taskId": second.queued["id"]})
    shows_none_of(listed, held, f"ListTaskPushNotificationConfigs by {what}")
    mine = [(hook, first.endpoint.url)]
    for write in (
        "CreateTaskPushNotificationConfig",
        "DeleteTaskPushNotificationConfig",
        "CreateTaskPushNotificationConfig",
    ):
        if write.startswith("Create"):
            made = _create(second, hook)
            if made.is_error and who == "another Agent":
                not_checked(f"the other Agent takes no config to the kit's receiver: {made.answer_line()}")
            made.ok()
        else:
            second.client.call(write, {"taskId": second.queued["id"], "id": hook}).ok()
        if _configs(first) != mine:
            first.client.get_task(first.queued["id"]).fail(
                f"{write} by {what} on its own message must leave the first caller's config {hook} as it was"
            )
    for caller in (first, second):
        caller.client.cancel(caller.running["id"]).ok()
    for caller in (first, second):  # the queued id leads to the turn that took it (QUEUE-02): its window is watched
        push_checks.until_pushed(
            caller.endpoint, "TASK_STATE_COMPLETED", a2a_pushing, client=caller.client, task_id=caller.queued["id"]
        )
    for caller, other in ((first, second), (second, first)):  # all that came by then, both turns having ended
        takers = set()
        for delivery in list(caller.endpoint.deliveries):
            payload = next(iter(delivery.json.values()), None) if isinstance(delivery.json, dict) else None
            payload = payload if isinstance(payload, dict) else {}
            takers.add(payload.get("taskId") or payload.get("id"))
            tokened = [problem for problem in delivery.problems if "token" in problem]
            if payload.get("contextId") != drivers.known_as(caller.context) or tokened:
                pytest.fail(
                    f"a config on the message queued in {caller.context} gets only its own turn's events with its "
                    f"own token: delivery {delivery.webhook_id} is of context {payload.get('contextId')!r}"
                    + (f" ({tokened[0]})" if tokened else "")
                )
        for taker in takers - {None}:  # the turn that took the message holds no config of the other caller's
            listed = caller.client.call("ListTaskPushNotificationConfigs", {"taskId": taker})
            configs = [] if listed.is_error else listed.result.get("configs") or []
            if other.endpoint.url in [c.get("url") for c in configs]:
                listed.fail(f"the turn that took the message queued in {caller.context} holds the other's config")


# -- a session, on the feed


@pytest.fixture
def feed(a2a_target: Target, a2a_client: A2AClient, a2a_feed_position: FeedPosition | None) -> Feed:
    if a2a_target.runtime is None:
        not_applicable("the change feed is a Runtime's; the target is not a Runtime endpoint")
    return Feed(a2a_target.runtime[0], a2a_client, a2a_feed_position, agent_id=a2a_target.runtime[1])


@pytest.mark.req("FEED-07", "FEED-06")
@pytest.mark.scenario("complete")
def test_another_subjects_session_lists_nothing(feed: Feed, a2a_client: A2AClient, a2a_other_client: A2AClient):
    """The session id of the caller's conversation, read by another subject (its Nylorun-Subject): no turn of it,
    and the same answer as a session id that does not exist."""
    cursor = feed.tail()
    mine = drivers.run(a2a_client, "complete")
    turns, _ = feed.walk(after=cursor, subject=a2a_client.subject, until=[mine["id"]])
    session = next((t["sessionId"] for t in turns if (t.get("a2a") or {}).get("taskId") == mine["id"]), None)
    if session is None:
        not_checked("the caller's turn did not show on its feed (FEED-07 judges that)")
    exchange = feed.get(sessionId=session, subject=a2a_other_client.subject)
    turns = exchange.json.get("turns") if exchange.status == 200 and isinstance(exchange.json, dict) else None
    if turns:
        exchange.fail("another subject's session, read with this subject, must list none of its turns")
    shows_none_of(exchange, Held(mine, True), "another subject's read of the session")


# -- a file URL


def _file_urls(client: A2AClient) -> tuple[list[str], list[str]]:
    """Two file URLs the Agent handed out (one of each of two turns), and those turns' task ids."""
    urls, tasks = [], []
    for _ in range(2):
        task = drivers.settle(client, drivers.run(client, "complete"))
        urls += [p["url"] for a in task.get("artifacts") or [] for p in a.get("parts") or [] if "url" in p][:1]
        tasks.append(task["id"])
    if len(urls) < 2:
        not_checked("the Agent handed out no url file part", needs="the complete scenario's url part (FILE-03)")
    return urls, tasks


Where = tuple[str, int | str]  # ("path", segment index) or ("query", parameter name)


def _ids(url: str, other: str) -> dict[Where, tuple[str, str]]:
    """The ids of ``url``: each path segment and query value that differs from ``other``'s (a file URL of another
    turn) there, with both values; a layout of the Agent's own is read, never guessed."""
    mine, theirs = urlsplit(url), urlsplit(other)
    segments, others = mine.path.split("/"), theirs.path.split("/")
    found: dict[Where, tuple[str, str]] = {}
    for index, segment in enumerate(segments):
        there = others[index] if index < len(others) else ""
        if segment and segment != there:
            found["path", index] = (segment, there)
    queried, their_query = dict(parse_qsl(mine.query)), dict(parse_qsl(theirs.query))
    for name, value in queried.items():
        if value and value != their_query.get(name):
            found["query", name] = (value, their_query.get(name, ""))
    return found


def _with(url: str, where: Where, value: str) -> str:
    parts = urlsplit(url)
    if where[0] == "path":
        segments = parts.path.split("/")
        segments[int(where[1])] = quote(value, safe="%")
        return urlunsplit(parts._replace(path="/".join(segments)))
    query = [(name, value if name == where[1] else old) for name, old in parse_qsl(parts.query)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _variants(url: str, other: str, kind: str) -> dict[str, str]:
    """``url`` with one id changed: by a character (first, one short, one more), taken from ``other`` where the two
    differ in more than that id (so the result is neither URL), or in letter case (``kind`` "letter case")."""
    ids = _ids(url, other)
    varied = {}
    for where, (value, theirs) in ids.items():
        if kind == "letter case":
            changes = {"letter case": value.swapcase()} if value.swapcase() != value else {}
        else:
            changes = {
                "first character": ("b" if value[0].lower() != "b" else "c") + value[1:],
                "one character short": value[:-1],
                "one character more": value + value[-1],
            }
            if theirs and len(ids) > 1:
                changes["the other file's"] = theirs
        for change, changed in changes.items():
            made = _with(url, where, changed)
            if made not in (url, other):
                varied[f"{where[0]} {where[1]} ({change})"] = made
    return varied


@pytest.mark.scenario("complete")
@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("one id changed", marks=pytest.mark.req("FILE-06")),
        pytest.param("letter case", marks=pytest.mark.req("FILE-07")),
    ],
)
def test_a_file_url_with_one_id_changed_answers_as_one_that_does_not_exist(
    a2a_target: Target, a2a_client: A2AClient, kind: str
):
    (url, other), task_ids = _file_urls(a2a_client)
    # The ids are the URL's capability (its token, a signature): hidden from every output of the run but task ids.
    redaction.hide(*{value for value, _ in _ids(url, other).values()} - set(task_ids))
    redaction.hide(*{value for value, _ in _ids(other, url).values()} - set(task_ids))
    headers: dict[str, str] = {}
    good = a2a_client.get(url)
    if good.status != 200 and urlsplit(url).netloc == urlsplit(a2a_client.url).netloc:
        # A Runtime's own file route may take the caller's key: every variant is then asked with it too.
        headers = {k: v for k, v in a2a_client.headers().items() if k in ("Authorization", "Nylorun-Subject")}
        good = a2a_client.get(url, headers)
    if good.status != 200:
        not_checked("the url file part's URL answers no bytes (FILE-03 judges that)")
    variants = _variants(url, other, "changed")
    if a2a_target.other_agent_url and url.startswith(a2a_client.url + "/"):
        variants["under another Agent"] = a2a_target.other_agent_url + url[len(a2a_client.url) :]
    judged = variants if kind == "one id changed" else _variants(url, other, "letter case")
    if not judged:
        not_checked(f"the Agent's file URLs have no id the kit can change ({kind})")
    statuses = {}
    for name, changed in {**variants, **judged}.items():
        exchange = a2a_client.get(changed, headers)
        statuses[name] = exchange.status
        if name not in judged:
            continue
        if (
            exchange.status is not None and 200 <= exchange.status < 300
        ) or good.response_body == exchange.response_body:
            exchange.fail(f"the file URL with {name} changed must answer no bytes, yet answered {exchange.status}")
    # Alike: one status for every refusal, so that none tells which part was right or that the task exists (a body
    # may carry a request id or a time, so bodies are not compared).
    first_name = next(iter(variants))
    for name in judged:
        if statuses[name] != statuses[first_name]:
            exchange = a2a_client.get(judged[name], headers)
            exchange.fail(
                f"a file URL with one id changed must answer alike whichever it is: {name} answered {statuses[name]}, "
                f"{first_name} answered {statuses[first_name]} (a difference tells which part was right)"
            )
    again = a2a_client.get(url, headers)
    if again.status != 200 or again.response_body != good.response_body:
        again.fail("the file URL the Agent handed out must still answer its bytes after the refused ones")
