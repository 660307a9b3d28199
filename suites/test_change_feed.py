"""The change feed, GET /v1/turns: every change, in order, with a cursor that never loses one."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.client import A2AClient, extensions
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import Feed, FeedPosition, drivers
from nylorun_a2a_kit.fixtures.target import Target

# The task state each turn status stands for, as the feed schema decides it (the agent reads the same map).
FEED_STATUS = schemas.resolve("feed/Turn.json")["properties"]["status"]["x-kit-from-task-state"]


@pytest.fixture
def feed(a2a_target: Target, a2a_client: A2AClient, a2a_feed_position: FeedPosition | None) -> Feed:
    """The feed as the kit's key reads it; ``feed.tail()`` is a cursor at its end, found without walking the
    Tenant's history (the run's own start, walked on)."""
    if a2a_target.runtime is None:
        not_applicable("the change feed is a Runtime's; the target is not a Runtime endpoint")
    return Feed(a2a_target.runtime[0], a2a_client, a2a_feed_position, agent_id=a2a_target.runtime[1])


def _for(turns: list, task_id: str) -> list:
    return [t for t in turns if (t.get("a2a") or {}).get("taskId") == task_id]


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _made(a2a_client: A2AClient, count: int, **send) -> list[str]:
    """The ids of ``count`` turns run to their end one after another, each changed after the one before."""
    return [drivers.run(a2a_client, "complete", **send)["id"] for _ in range(count)]


# Each way the feed is read: the Tenant's (the key alone) or one subject's (the key with Nylorun-Subject), each
# walking pages of its own.
READERS = {"the key alone": False, "the key with Nylorun-Subject": True}


def _subject(a2a_client: A2AClient, reader: str) -> str | None:
    return a2a_client.subject if READERS[reader] else None


# Turns a walk of small pages crosses, beyond the page itself: more than a feed that reads a turn or two ahead (to
# tell hasMore) reads at once, so a page taken from the wrong end of what follows the cursor shows.
PAST_A_PAGE = 3


@pytest.mark.req("FEED-01", "FEED-08")
@pytest.mark.scenario("complete")
def test_key_alone_reads_every_subject(feed: Feed, a2a_client: A2AClient, a2a_other_client: A2AClient):
    cursor = feed.tail()
    mine, theirs = drivers.run(a2a_client, "complete"), drivers.run(a2a_other_client, "complete")
    turns, _ = feed.walk(after=cursor, until=[mine["id"], theirs["id"]])
    if not _for(turns, mine["id"]) or not _for(turns, theirs["id"]):
        pytest.fail("a key alone reads the whole Tenant: both subjects' turns must be in the feed")


@pytest.mark.req("FEED-02", "FEED-03")
@pytest.mark.scenario("ask")
@pytest.mark.scenario("complete")
def test_cursor_gives_each_change_once_and_again_after_a_change(feed: Feed, a2a_client: A2AClient):
    cursor = feed.tail()
    task = drivers.run(a2a_client, "ask")
    turns, cursor = feed.walk(after=cursor, until=[task["id"]])
    if [t["status"] for t in _for(turns, task["id"])][-1:] != ["paused"]:
        pytest.fail("a turn paused on a question shows in the feed as paused")
    _, empty = feed.page(changedAfter=cursor)
    if empty["turns"] and _for(empty["turns"], task["id"]):
        pytest.fail("a cursor past a turn's change must not give that change again")
    if not empty.get("cursor"):
        pytest.fail("a page with no turns still carries a cursor")
    # A second turn that starts after the paused one and ends before it changes again: listed in the order they
    # changed, it comes first; in the order they started (a serializer shared with another view), second.
    later = drivers.settle(a2a_client, drivers.run(a2a_client, "complete"))
    drivers.settle(a2a_client, a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"]).task)
    again, _ = feed.walk(after=empty["cursor"], until=[task["id"], later["id"]])
    mine = _for(again, task["id"])
    if not mine or mine[-1]["status"] != "completed":
        pytest.fail("a turn that changes again after the cursor appears again, with its new state")
    stamps = [_when(t["changedAt"]) for t in again]
    if stamps != sorted(stamps):
        pytest.fail("the feed lists turns in the order they changed: changedAt never goes back")


@pytest.mark.req("FEED-08")
@pytest.mark.scenario("complete")
def test_the_turns_of_a_session_start_one_after_another(feed: Feed, a2a_client: A2AClient):
    """Two turns of one conversation, the second sent once the first ended: the second starts after the first
    ended (the oracle holds every session's turns to that)."""
    cursor, context = feed.tail(), drivers.new_context()
    made = _made(a2a_client, 2, context_id=context)
    turns, _ = feed.walk(after=cursor, until=made)
    first, second = (_for(turns, task_id) for task_id in made)
    if not first or not second:
        pytest.fail("a turn that is an A2A task names it in a2a {contextId, taskId}")
    ended, started = first[-1].get("endedAt"), second[-1].get("startedAt")
    if isinstance(ended, str) and isinstance(started, str) and _when(started) < _when(ended):
        pytest.fail(f"the second turn of a session starts at {started!r}, before the first ended ({ended!r})")


@pytest.mark.req("FEED-08")
@pytest.mark.scenario("ask")
@pytest.mark.scenario("complete")
def test_a_turn_keeps_its_id_and_start_through_its_changes(feed: Feed, a2a_client: A2AClient, a2a_cancel_at_end):
    cursor = feed.tail()
    task = drivers.paused_on(a2a_client, "question")
    a2a_cancel_at_end(a2a_client, task["id"])
    turns, cursor = feed.walk(after=cursor, until=[task["id"]])
    paused = _for(turns, task["id"])
    if not paused:
        pytest.fail("a turn that is an A2A task names it in a2a {contextId, taskId}")
    drivers.wait_for(a2a_client, drivers.resume(a2a_client, task, "question").task["id"], drivers.TERMINAL)
    later = drivers.run(a2a_client, "complete")  # changes after the task's end: the walk has read past it
    again, _ = feed.walk(after=cursor, until=[task["id"], later["id"]])
    ended = _for(again, task["id"])
    if not ended:
        pytest.fail("a turn that changed after the cursor appears again")
    first, last = paused[-1], ended[-1]
    if last["turnId"] != first["turnId"]:
        pytest.fail(f"a task is one turn: paused as {first['turnId']!r}, ended as {last['turnId']!r}")
    if _when(last["startedAt"]) != _when(first["startedAt"]):
        pytest.fail(f"a turn's startedAt stays: {first['startedAt']!r} paused, {last['startedAt']!r} ended")
    if last["endedAt"] is None or _when(last["endedAt"]) < _when(last["startedAt"]):
        pytest.fail(f"an ended turn's endedAt is a time after its start: {last['endedAt']!r}")


@pytest.mark.req("FEED-02", "FEED-03", "FEED-07")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("reader", READERS)
def test_a_reader_polling_at_the_end_never_goes_back(feed: Feed, a2a_client: A2AClient, reader: str):
    """A reader walks its feed a turn a page to the end, then polls on with each page's cursor, empty pages too, as
    a reader waiting for changes does: no page gives a change it already read, none goes back in changedAt, and a
    new change comes. Each way the feed is read (the Tenant's, a subject's) walks its own pages."""
    subject = _subject(a2a_client, reader)
    cursor = feed.tail()
    made = _made(a2a_client, 1 + PAST_A_PAGE)
    turns, cursor = feed.walk(after=cursor, subject=subject, limit=1, until=made)
    read = {(t["turnId"], t["changedAt"], t["status"]) for t in turns}
    if len(read) != len(turns):
        pytest.fail(f"read by {reader} a turn a page, the feed gave a change twice: {sorted(read)}")
    missing = [task_id for task_id in made if not _for(turns, task_id)]
    if missing:
        pytest.fail(
            f"read by {reader} a turn a page from a cursor, the walk must give every turn changed after it: "
            f"missing {missing} of {made}"
        )
    last = max((_when(t["changedAt"]) for t in turns), default=None)
    for poll in range(1, 4):
        exchange, page = feed.page(changedAfter=cursor, subject=subject)
        again = [t for t in page["turns"] if (t["turnId"], t["changedAt"], t["status"]) in read]
        earlier = [t for t in page["turns"] if last and _when(t["changedAt"]) < last]
        if again or earlier:
            exchange.fail(
                f"poll {poll} at the feed's end ({reader}), with the cursor the last page gave, went back: it gave "
                f"{len(again)} change(s) already read and {len(earlier)} from before the last one read"
            )
        read |= {(t["turnId"], t["changedAt"], t["status"]) for t in page["turns"]}
        last = max([last, *(_when(t["changedAt"]) for t in page["turns"])], key=lambda w: w or datetime.min)
        cursor = page["cursor"]
    later = drivers.run(a2a_client, "complete")
    turns, _ = feed.walk(after=cursor, subject=subject, until=[later["id"]])
    if not _for(turns, later["id"]) or any(_for(turns, task_id) for task_id in made):
        pytest.fail(f"after polling at the end ({reader}), the feed gives the new turn, and not those read before it")


@pytest.mark.req("FEED-02")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("read", axes.members("FEED-02", "reads"))
def test_reading_a_page_changes_nothing(feed: Feed, a2a_client: A2AClient, read: str):
    cursor = feed.tail()
    task = drivers.run(a2a_client, "complete")
    first, _ = feed.walk(after=cursor, until=[task["id"]])
    again, _ = feed.walk(after=cursor, until=[task["id"]])
    if not _for(again, task["id"]) or _for(again, task["id"])[-1] != _for(first, task["id"])[-1]:
        pytest.fail("a page of the feed read again after the same cursor gives the same turns: reading changes nothing")


@pytest.mark.req("FEED-04")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("reader", READERS)
def test_without_cursor_the_feed_starts_at_the_beginning(feed: Feed, a2a_client: A2AClient, reader: str):
    """Read in one page of one turn, not by walking the Tenant: the first turn without a cursor is one that changed
    no later than this check's oldest (the beginning lies before it), its later turns more than the page holds."""
    subject = _subject(a2a_client, reader)
    cursor = feed.tail()
    made = _made(a2a_client, 1 + PAST_A_PAGE)
    oldest = _for(feed.walk(after=cursor, subject=subject, until=made)[0], made[0])
    if not oldest:
        pytest.fail(f"the turns this check made must be in the feed ({reader}) after a cursor taken before them")
    exchange, first = feed.page(limit=1, subject=subject)
    if not first["turns"] or not first["hasMore"]:
        exchange.fail(
            f"without changedAfter the feed ({reader}) starts at its beginning: it holds this check's {len(made)} "
            "turns at least, so a page of one turn has a turn and hasMore"
        )
    if _when(first["turns"][0]["changedAt"]) > _when(oldest[-1]["changedAt"]):
        exchange.fail(
            f"without changedAfter ({reader}) the first turn changed at {first['turns'][0]['changedAt']}, after this "
            f"check's oldest turn ({oldest[-1]['changedAt']}): the feed starts later than its beginning"
        )


@pytest.mark.req("FEED-05")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("reader", READERS)
def test_limit_caps_pages_and_has_more_tells_the_truth(feed: Feed, a2a_client: A2AClient, reader: str):
    subject = _subject(a2a_client, reader)
    cursor = feed.tail()
    made = _made(a2a_client, 2 + PAST_A_PAGE)
    _, page = feed.page(changedAfter=cursor, limit=2, subject=subject)
    if len(page["turns"]) > 2 or not page["hasMore"]:
        pytest.fail(f"limit 2 ({reader}) gives at most two turns, and hasMore while more follow")
    rest, _ = feed.walk(after=page["cursor"], subject=subject, limit=2, until=made)
    seen = [(t.get("a2a") or {}).get("taskId") for t in page["turns"] + rest]
    if not set(made) <= set(seen):
        pytest.fail(f"walking the pages of limit 2 ({reader}) with hasMore reaches every turn made after the cursor")
    for bad in ("0", "501", "lots", "1.5", "1e2", "-1"):
        exchange = feed.get(limit=bad, subject=subject)
        if exchange.status is None or exchange.status >= 500:
            exchange.fail(f"limit {bad} must be refused (a 4xx) or clamped to 1..500, not a server failure")
        if exchange.status == 200 and len(exchange.json.get("turns", [])) > 500:
            exchange.fail(f"limit {bad} must be refused or clamped to 1..500")
    _, default = feed.page(subject=subject)
    if len(default["turns"]) > 100:
        pytest.fail("without limit a page holds at most 100 turns")


@pytest.mark.req("FEED-05")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("limit", [1, 500])
@pytest.mark.parametrize("reader", READERS)
def test_limit_at_each_bound_is_served(feed: Feed, a2a_client: A2AClient, reader: str, limit: int):
    subject = _subject(a2a_client, reader)
    cursor = feed.tail()
    made = _made(a2a_client, 1 + PAST_A_PAGE)  # past a page of the lower bound
    _, page = feed.page(changedAfter=cursor, limit=limit, subject=subject)  # in 1..500: served, never refused
    if len(page["turns"]) > limit:
        pytest.fail(f"limit {limit} ({reader}) gives at most {limit} turns, got {len(page['turns'])}")
    rest = feed.walk(after=page["cursor"], subject=subject, limit=limit, until=made)[0] if page["hasMore"] else []
    seen = [(t.get("a2a") or {}).get("taskId") for t in page["turns"] + rest]
    if not set(made) <= set(seen):
        pytest.fail(
            f"pages of limit {limit} ({reader}), followed while hasMore, must reach every turn made after the cursor"
        )


# Who runs turns in the session's contextId: the reader's subject alone, or the other subject too (a conversation of
# its own, ISO-04), either one reading: one subject's name begins the other's, and a session found by a prefix of
# its subject would show the other's turns one way round only.
Sharing = Callable[[A2AClient, A2AClient], tuple[A2AClient, list[A2AClient]]]
SHARING: dict[str, Sharing] = {
    "its subject alone": lambda kit, other: (kit, []),
    "the kit's subject, the other's beside": lambda kit, other: (kit, [other]),
    "the other subject, the kit's beside": lambda kit, other: (other, [kit]),
}
OTHER_AGENT = "the kit's subject, beside it on the other Agent"  # a session is its Agent's too


@pytest.mark.long
@pytest.mark.req("FEED-06", "FEED-07")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("sharing", [*SHARING, OTHER_AGENT])
def test_session_lists_its_turns_oldest_first(
    feed: Feed, a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_target: Target, sharing: str
):
    """The session is read by its own subject (Nylorun-Subject); another subject's turns in the same contextId,
    one after each of the reader's, belong to another session, and so do the reader's own on another Agent."""
    if sharing == OTHER_AGENT:
        if not a2a_target.other_agent_url:
            not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same key")
        reader, others = a2a_client, [a2a_client.with_(url=a2a_target.other_agent_url)]
    else:
        reader, others = SHARING[sharing](a2a_client, a2a_other_client)
    cursor, context = feed.tail(), drivers.new_context()
    made, theirs = [], []
    for _ in range(3):  # each of the reader's turns, then the others' in the same contextId
        made.append(drivers.run(reader, "complete", context_id=context)["id"])
        theirs += [drivers.run(other, "complete", context_id=context)["id"] for other in others]
    turns, _ = feed.walk(after=cursor, subject=reader.subject, until=made)
    session = {t["sessionId"] for t in turns if (t.get("a2a") or {}).get("taskId") in made}
    if len(session) != 1:
        pytest.fail(f"one conversation is one session, got {session}")
    _, page = feed.page(sessionId=session.pop(), subject=reader.subject)
    listed = [(t.get("a2a") or {}).get("taskId") for t in page["turns"]]
    if set(listed) & set(theirs):
        pytest.fail(
            f"sessionId read by {reader.subject} lists only its session's turns: another subject's turns in the "
            f"same contextId are a session of their own, yet {sorted(set(listed) & set(theirs))} showed"
        )
    if listed != made:
        pytest.fail(f"sessionId lists only that session's turns, oldest first: {listed} != {made}")
    starts = [_when(t["startedAt"]) for t in page["turns"]]
    if starts != sorted(starts):
        pytest.fail("a session's turns come oldest first")


@pytest.mark.req("FEED-06")
@pytest.mark.scenario("complete")
def test_session_walked_a_turn_a_page(feed: Feed, a2a_client: A2AClient):
    cursor, context = feed.tail(), drivers.new_context()
    made = _made(a2a_client, 3, context_id=context)
    drivers.run(a2a_client, "complete")  # another session of the same subject, changed last
    turns, _ = feed.walk(after=cursor, until=made[:1])
    session = next(t["sessionId"] for t in turns if (t.get("a2a") or {}).get("taskId") == made[0])
    listed, after = [], None
    for _ in range(len(made) + 2):  # one page a turn, and the last page; more is a walk that does not end
        exchange, page = feed.page(sessionId=session, limit=1, changedAfter=after)
        listed += [(t.get("a2a") or {}).get("taskId") for t in page["turns"]]
        after = page["cursor"]
        if not page["hasMore"]:
            break
    else:
        exchange.fail(
            f"session {session} has {len(made)} turns, yet walked a turn a page it still says hasMore after "
            f"{len(made) + 2} pages: the walk of a session ends"
        )
    if listed != made:
        pytest.fail(f"sessionId walked with limit 1 lists that session's turns once each, oldest first: {listed}")


@pytest.mark.req("FEED-07")
@pytest.mark.scenario("complete")
def test_subject_sees_only_its_sessions(feed: Feed, a2a_client: A2AClient, a2a_other_client: A2AClient):
    cursor = feed.tail()
    theirs = drivers.run(a2a_other_client, "complete")
    mine = drivers.run(a2a_client, "complete")  # changed after theirs: read to it, theirs would have come first
    turns, _ = feed.walk(after=cursor, subject=a2a_client.subject, until=[mine["id"]])
    if _for(turns, theirs["id"]):
        pytest.fail("with Nylorun-Subject the feed lists only that subject's turns")


@pytest.mark.req("FEED-07")
@pytest.mark.scenario("complete")
def test_subject_sees_its_turns_on_every_agent(feed: Feed, a2a_client: A2AClient, a2a_target: Target):
    """A subject's sessions are its sessions on every Agent of the Runtime: its feed lists its turns on each."""
    if not a2a_target.other_agent_url:
        not_checked("no second Agent given", needs="--a2a-other-agent-url: a second Agent on the same key")
    cursor = feed.tail()
    elsewhere = drivers.run(a2a_client.with_(url=a2a_target.other_agent_url), "complete")
    here = drivers.run(a2a_client, "complete")
    turns, _ = feed.walk(after=cursor, subject=a2a_client.subject, until=[elsewhere["id"], here["id"]])
    missing = [
        name for name, task in (("the other Agent", elsewhere), ("this one", here)) if not _for(turns, task["id"])
    ]
    if missing:
        pytest.fail(f"with Nylorun-Subject the feed lists that subject's turns on every Agent: missing {missing}")


def _running(a2a_client: A2AClient) -> dict:
    task = a2a_client.send(drivers.scenario("slow", 600_000), return_immediately=True).task
    return drivers.wait_for(a2a_client, task["id"], ["TASK_STATE_WORKING"])


# Each turn status, by a task in a state it stands for (FEED_STATUS), as the contract drives it.
TURNS = {
    "running": ("slow", _running),
    "paused-on-a-question": ("ask", lambda client: drivers.paused_on(client, "question")),
    "paused-on-an-approval": ("approve", lambda client: drivers.paused_on(client, "approval")),
    "completed": ("complete", lambda client: drivers.ended_in(client, "TASK_STATE_COMPLETED")),
    "failed": ("fail", lambda client: drivers.ended_in(client, "TASK_STATE_FAILED")),
    "cancelled": ("ask", lambda client: drivers.ended_in(client, "TASK_STATE_CANCELED")),
}


@pytest.mark.req("FEED-08", "FEED-09")
@pytest.mark.member("channels", "feed")
@pytest.mark.parametrize("status", [pytest.param(s, marks=pytest.mark.scenario(n)) for s, (n, _) in TURNS.items()])
def test_turn_agrees_with_its_task(feed: Feed, a2a_client: A2AClient, status: str, a2a_cancel_at_end):
    cursor = feed.tail()
    task = TURNS[status][1](a2a_client)
    a2a_cancel_at_end(a2a_client, task["id"])
    turns, _ = feed.walk(after=cursor, until=[task["id"]])
    mine = _for(turns, task["id"])
    if not mine:
        pytest.fail("a turn that is an A2A task names it in a2a {contextId, taskId}")
    latest, state = mine[-1], drivers.state(a2a_client.get_task(task["id"]).task)
    if latest["a2a"].get("contextId") != task["contextId"] or latest["status"] != FEED_STATUS[state]:
        pytest.fail(f"the turn says {latest['status']}, the task {state}: {json.dumps(latest)}")
    if (latest["endedAt"] is not None) != (state in drivers.TERMINAL):
        pytest.fail(f"endedAt is null until the turn ends, then a time: {latest['endedAt']!r} for {state}")
    if latest["agentId"] != feed.agent_id:
        pytest.fail(f"a turn names its Agent: agentId {latest['agentId']!r}, the task is {feed.agent_id!r}'s")


@pytest.mark.req("FEED-09")
@pytest.mark.scenario("complete")
def test_a_turn_on_the_other_agent_names_that_agent(feed: Feed, a2a_client: A2AClient, a2a_target: Target):
    """A turn of a task the kit's key made on the second Agent names that Agent as agentId (the Agent's id is the
    last segment of its endpoint, /agents/<id>)."""
    url = a2a_target.other_agent_url
    agent = oracle.rules.agent_of(url) if url else None
    if agent is None:
        not_checked("no second Agent whose endpoint names its id", needs="--a2a-other-agent-url: …/agents/<id>")
    cursor = feed.tail()
    task = drivers.run(a2a_client.with_(url=url), "complete")
    mine = _for(feed.walk(after=cursor, until=[task["id"]])[0], task["id"])
    if not mine or any(turn.get("agentId") != agent for turn in mine):
        pytest.fail(f"the turns of task {task['id']}, made on the Agent {agent}, name it: {json.dumps(mine)[:600]}")


ENDED = [s for s in TURNS if s in ("completed", "failed", "cancelled")]


@pytest.mark.req("FEED-10")
@pytest.mark.member("channels", "feed")
@pytest.mark.parametrize("status", [pytest.param(s, marks=pytest.mark.scenario(TURNS[s][0])) for s in ENDED])
def test_an_ended_turns_totals_are_its_telemetry_totals(feed: Feed, a2a_v2_client: A2AClient, status: str):
    cursor = feed.tail()
    task = TURNS[status][1](a2a_v2_client)
    mine = _for(feed.walk(after=cursor, until=[task["id"]])[0], task["id"])
    if not mine:
        pytest.fail("a turn that is an A2A task names it in a2a {contextId, taskId}")
    got = a2a_v2_client.get_task(task["id"])
    reported = (extensions.read(got.task, extensions.TELEMETRY) or {}).get("totals")
    if reported is None:
        not_checked("the task reports no telemetry/v1 totals to compare with (TEL-04 judges that)")
    if mine[-1]["totals"] != reported:
        got.fail(f"the ended turn's totals {json.dumps(mine[-1]['totals'])} are not its telemetry totals")


@pytest.mark.req("ISO-07")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("reader", READERS)
def test_a_feed_page_is_never_marked_for_shared_caches(feed: Feed, a2a_client: A2AClient, reader: str):
    """A page read with a key (the whole Tenant's, or a subject's) that a shared cache may keep is one it may give to
    another key, or to a request with none (RFC 9111 §3.5)."""
    cursor = feed.tail()
    task = drivers.run(a2a_client, "complete")
    turns, _ = feed.walk(after=cursor, until=[task["id"]])
    session = next(t["sessionId"] for t in turns if (t.get("a2a") or {}).get("taskId") == task["id"])
    for query in ({"limit": 1, "changedAfter": cursor}, {"sessionId": session}):
        exchange, _ = feed.page(subject=_subject(a2a_client, reader), **query)
        why = oracle.shareable(exchange.response_headers.get_list("cache-control"))
        if why is not None:
            exchange.fail(f"a change-feed page read with the caller's key is marked for shared caches: {why}")
