"""ListTasks: filters, order by latest status change, pages, totalSize, history and artifacts."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.requirements import axes, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers


def _ids(exchange) -> list[str]:
    return [t["id"] for t in exchange.result["tasks"]]


def _when(task: dict) -> datetime | None:
    stamp = task["status"].get("timestamp")
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None


def _misordered(listed: list[dict], changed_order: list[dict]) -> list[tuple[str, str]]:
    """Pairs listed in the wrong order: ``changed_order`` is oldest status change first.

    Two tasks whose status timestamps are equal may come in either order (LIST-04's decision).
    """
    position = {t["id"]: i for i, t in enumerate(listed)}
    wrong = []
    for older_index, older in enumerate(changed_order):
        for newer in changed_order[older_index + 1 :]:
            newer_at, older_at = _when(newer), _when(older)
            if newer_at and older_at and newer_at > older_at and position[newer["id"]] > position[older["id"]]:
                wrong.append((older["id"], newer["id"]))
    return wrong


@pytest.fixture
def five_tasks(a2a_client: A2AClient) -> tuple[str, list[dict]]:
    """Five ended tasks of ordinary messages in a fresh conversation, oldest first."""
    context = drivers.new_context()
    return context, [drivers.ordinary(a2a_client, ended=True, context_id=context) for _ in range(5)]


def _two_ended(a2a_client: A2AClient) -> tuple[str, dict, dict]:
    """Two ended tasks of ordinary messages in a fresh conversation, the second one changed last."""
    context = drivers.new_context()
    first = drivers.ordinary(a2a_client, ended=True, context_id=context)
    return context, first, drivers.ordinary(a2a_client, ended=True, context_id=context)


@pytest.mark.req("LIST-01")
def test_context_filter_lists_exactly_that_conversation(a2a_client: A2AClient, five_tasks):
    context, tasks = five_tasks
    drivers.ordinary(a2a_client)  # another conversation, same subject
    exchange = a2a_client.list_tasks(contextId=context)
    if sorted(_ids(exchange)) != sorted(t["id"] for t in tasks):
        exchange.fail(f"contextId {context} should list exactly its five tasks")


@pytest.mark.req("LIST-01")
@pytest.mark.scenario("complete", "fail", "ask")
def test_context_filter_lists_a_task_in_each_state(a2a_client: A2AClient, a2a_cancel_at_end):
    """A conversation of a task ended in each terminal state the contract drives, then one paused on a question (a
    conversation holds one unfinished task at most): the filter lists every one of them, whatever its state."""
    context = drivers.new_context()
    made = [drivers.ended_in(a2a_client, ending, context_id=context)["id"] for ending in drivers.ENDINGS]
    paused = drivers.paused_on(a2a_client, "question", context_id=context)
    a2a_cancel_at_end(a2a_client, paused["id"])
    exchange = a2a_client.list_tasks(contextId=context)
    missing = sorted({*made, paused["id"]} - set(_ids(exchange)))
    if missing:
        exchange.fail(f"contextId {context} lists its tasks in every state: missing {missing}")


@pytest.mark.req("LIST-02")
def test_status_filter_lists_only_that_state(a2a_client: A2AClient):
    context = drivers.new_context()
    task = drivers.ordinary(a2a_client, ended=True, context_id=context)
    same = a2a_client.list_tasks(contextId=context, status=drivers.state(task))
    if _ids(same) != [task["id"]] or any(drivers.state(t) != drivers.state(task) for t in same.result["tasks"]):
        same.fail(f"status {drivers.state(task)} should list the conversation's one task, in that state")
    other = next(s for s in drivers.TERMINAL if s != drivers.state(task))
    none = a2a_client.list_tasks(contextId=context, status=other)
    if _ids(none):
        none.fail(f"status {other} should list none of the conversation's tasks, which are {drivers.state(task)}")


@pytest.mark.req("LIST-02")
@pytest.mark.scenario("complete")
@pytest.mark.scenario("fail")
def test_status_filter(a2a_client: A2AClient):
    context = drivers.new_context()
    drivers.run(a2a_client, "complete", context_id=context)
    failed = drivers.settle(a2a_client, drivers.run(a2a_client, "fail", context_id=context))
    exchange = a2a_client.list_tasks(contextId=context, status="TASK_STATE_FAILED")
    if _ids(exchange) != [failed["id"]]:
        exchange.fail("status TASK_STATE_FAILED should list only the failed task")


def _check_status_timestamp_cut(a2a_client: A2AClient, context: str, earlier: dict, later: dict) -> None:
    if not (_when(earlier) and _when(later)):
        not_checked("the tasks carry no status timestamp, so the filter's cut cannot be placed")
    exchange = a2a_client.list_tasks(
        contextId=context, statusTimestampAfter=drivers.in_utc(later["status"]["timestamp"])
    )
    ids = _ids(exchange)
    if later["id"] not in ids:
        exchange.fail("a task whose status changed at the given time must be listed (the filter is inclusive)")
    if _when(earlier) < _when(later) and earlier["id"] in ids:
        exchange.fail("a task whose status changed before statusTimestampAfter must not be listed")


@pytest.mark.req("LIST-03")
def test_status_timestamp_after_filter_on_ordinary_tasks(a2a_client: A2AClient):
    context, earlier, later = _two_ended(a2a_client)
    _check_status_timestamp_cut(a2a_client, context, earlier, later)


@pytest.mark.req("LIST-03")
@pytest.mark.scenario("complete")
@pytest.mark.scenario("slow")
def test_status_timestamp_after_filter(a2a_client: A2AClient):
    context = drivers.new_context()
    earlier = drivers.run(a2a_client, "complete", context_id=context)
    # A slow turn ends strictly later than the first one, so the two timestamps cannot tie.
    later = drivers.settle(a2a_client, drivers.run(a2a_client, "slow", 200, context_id=context))
    _check_status_timestamp_cut(a2a_client, context, earlier, later)


@pytest.mark.req("LIST-04")
def test_latest_status_change_first_in_a_conversation(a2a_client: A2AClient):
    context, earlier, later = _two_ended(a2a_client)
    exchange = a2a_client.list_tasks(contextId=context)
    listed = exchange.result["tasks"]
    if sorted(_ids(exchange)) != sorted([earlier["id"], later["id"]]):
        exchange.fail("the conversation's two tasks must be listed")
    if _misordered(listed, [earlier, later]):
        exchange.fail("tasks must be listed latest status change first: the second task changed last")
    stamps = [_when(t) for t in listed if _when(t)]
    if stamps != sorted(stamps, reverse=True):
        exchange.fail("status timestamps must not increase down the list")


@pytest.mark.req("LIST-04")
@pytest.mark.scenario("complete")
@pytest.mark.scenario("ask")
def test_latest_status_change_first(a2a_client: A2AClient):
    # Two conversations, so no Runtime rule about a paused turn in a busy conversation gets in the way.
    asked = drivers.run(a2a_client, "ask", context_id=drivers.new_context())
    done = drivers.run(a2a_client, "complete", context_id=drivers.new_context())
    # Answering the first task changes its status last, so it must now come first.
    answered = drivers.settle(a2a_client, a2a_client.send("blue", task_id=asked["id"]).task)
    # A millisecond before the earlier change: both tasks match whether a Runtime reads the filter inclusively
    # (LIST-03) or not, so this check of the order does not depend on that one.
    since = _when(done) - timedelta(milliseconds=1) if _when(done) else None
    after = since.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z" if since else None
    # The subject's listing since then: other callers' tasks too, so read until both of this check's are listed.
    tasks, pages = drivers.list_walk(a2a_client, 100, until=[answered["id"], done["id"]], statusTimestampAfter=after)
    exchange = pages[-1]
    listed = [t for t in tasks if t["id"] in (answered["id"], done["id"])]
    if len(listed) != 2:
        exchange.fail("both tasks changed after the filter's time and must be listed")
    if _misordered(listed, [done, answered]):
        exchange.fail("tasks must be listed latest status change first: the answered task changed last")
    for page in pages:
        stamps = [_when(t) for t in page.result["tasks"] if _when(t)]
        if stamps != sorted(stamps, reverse=True):
            page.fail("status timestamps must not increase down the list")


@pytest.mark.req("LIST-05")
def test_default_page_size_is_50(a2a_client: A2AClient):
    exchange = a2a_client.list_tasks(contextId=drivers.new_context())
    if exchange.result["pageSize"] != 50:
        exchange.fail(f"without pageSize the page size used must be 50, got {exchange.result['pageSize']}")


@pytest.mark.req("LIST-09")
@pytest.mark.parametrize("page_size", [101, 1000])
def test_page_size_above_100_is_refused_or_clamped(a2a_client: A2AClient, page_size: int):
    exchange = a2a_client.list_tasks(pageSize=page_size)
    if exchange.is_error:
        exchange.expect_error("InvalidParamsError")
    elif exchange.result["pageSize"] > 100 or len(exchange.result["tasks"]) > 100:
        exchange.fail("pageSize is at most 100: the Agent must refuse or clamp a larger one")


@pytest.mark.req("LIST-06", "LIST-07", "LIST-08")
def test_pages_walk_every_task_once(a2a_client: A2AClient, five_tasks):
    context, tasks = five_tasks
    seen: list[str] = []
    token, pages = "", 0
    while True:
        exchange = a2a_client.list_tasks(contextId=context, pageSize=2, pageToken=token or None)
        result = exchange.result
        pages += 1
        if result["totalSize"] != 5:
            exchange.fail(f"totalSize must count the five tasks the filter matches, got {result['totalSize']}")
        if len(result["tasks"]) > 2:
            exchange.fail("a page must hold at most pageSize tasks")
        repeated = set(_ids(exchange)) & set(seen)
        if repeated:
            exchange.fail(f"a later page repeats {sorted(repeated)}")
        seen += _ids(exchange)
        token = result["nextPageToken"]
        if not token or pages > 5:
            break
    if sorted(seen) != sorted(t["id"] for t in tasks):
        exchange.fail(f"walking the pages must list each of the five tasks once, listed {seen}")
    walked = {t["id"]: t for t in tasks}
    if _misordered([walked[i] for i in seen], tasks):
        exchange.fail("across pages the order must stay latest status change first")
    if token:
        exchange.fail('the last page\'s nextPageToken must be ""')


@pytest.mark.req("LIST-07")
@pytest.mark.parametrize("page_size", [5, 1], ids=["one-full-page", "five-full-pages"])
def test_a_full_page_that_holds_the_last_task_is_the_last(a2a_client: A2AClient, five_tasks, page_size: int):
    # A page as full as asked may still be the last: "more follow" is no guess from a full page (LIST-07).
    context, tasks = five_tasks
    listed, pages = drivers.list_walk(a2a_client, page_size, contextId=context)
    if sorted(t["id"] for t in listed) != sorted(t["id"] for t in tasks):
        pages[-1].fail(f"the walk by {page_size} must list the conversation's five tasks, listed {len(listed)}")
    last = next(p for p in pages if tasks[0]["id"] in _ids(p))  # the oldest change is listed last
    if last.result["nextPageToken"] != "":
        last.fail(f'the page with the last of the five tasks (by {page_size}) is the last page: nextPageToken ""')


@pytest.mark.req("LIST-07")
def test_single_page_has_empty_next_token(a2a_client: A2AClient):
    exchange = a2a_client.list_tasks(contextId=drivers.new_context())
    if exchange.result.get("nextPageToken") != "":
        exchange.fail('nextPageToken must be present and "" when there are no more pages')


def _check_include_artifacts(a2a_client: A2AClient, context: str) -> None:
    without = a2a_client.list_tasks(contextId=context)
    if any("artifacts" in t for t in without.result["tasks"]):
        without.fail("without includeArtifacts the tasks must carry no artifacts field")
    with_ = a2a_client.list_tasks(contextId=context, includeArtifacts=True)
    if not all(t.get("artifacts") for t in with_.result["tasks"]):
        with_.fail("with includeArtifacts the tasks must carry their artifacts")


@pytest.mark.req("LIST-10")
def test_artifacts_only_with_include_artifacts_on_an_ordinary_task(a2a_client: A2AClient):
    context = drivers.new_context()
    task = drivers.ordinary(a2a_client, context_id=context)
    if not a2a_client.get_task(task["id"]).task.get("artifacts"):
        not_checked("the task of an ordinary message has no artifacts to list or leave out")
    _check_include_artifacts(a2a_client, context)


@pytest.mark.req("LIST-10")
@pytest.mark.scenario("complete")
def test_artifacts_only_with_include_artifacts(a2a_client: A2AClient):
    context = drivers.new_context()
    drivers.run(a2a_client, "complete", context_id=context)
    _check_include_artifacts(a2a_client, context)


@pytest.mark.req("LIST-11")
def test_history_length_applies_to_listed_tasks(a2a_client: A2AClient):
    context = drivers.new_context()
    first = drivers.ordinary(a2a_client, context_id=context)
    drivers.ordinary(a2a_client, context_id=context)
    limit = drivers.held_history(a2a_client, first["id"]) - 1  # one fewer than a listed task holds
    exchange = a2a_client.list_tasks(contextId=context, historyLength=limit)
    if any(len(t.get("history") or []) > limit for t in exchange.result["tasks"]):
        exchange.fail(f"historyLength {limit} allows at most {limit} messages per listed task")


@pytest.mark.req("LIST-12")
@pytest.mark.parametrize("page", ["first", "later-resized"])
def test_page_holds_at_most_page_size(a2a_client: A2AClient, page: str):
    """The first page, and a later one asking another pageSize than the page that gave its token: each page uses
    its own request's pageSize (a token names where a walk goes on, not how big its pages are)."""
    context = drivers.new_context()
    for _ in range(3 if page == "first" else 5):
        drivers.ordinary(a2a_client, context_id=context)
    if page == "first":
        exchange, asked = a2a_client.list_tasks(contextId=context, pageSize=2), 2
    else:
        token = a2a_client.list_tasks(contextId=context, pageSize=3).result.get("nextPageToken")
        if not token:
            not_checked("a first page of 3 of the conversation's 5 tasks gave no nextPageToken (LIST-07 judges it)")
        exchange, asked = a2a_client.list_tasks(contextId=context, pageSize=1, pageToken=token), 1
    result = exchange.result
    if result["pageSize"] != asked or len(result["tasks"]) > asked:
        exchange.fail(f"with pageSize {asked} the page size used is {asked} and the page holds at most {asked}")


@pytest.mark.req("LIST-03")
@pytest.mark.parametrize("digits", [3, 6, 9])
def test_status_timestamp_after_with_any_fraction(a2a_client: A2AClient, digits: int):
    """A2A §5.6.1 (ProtoJSON): a time's fraction has 0 to 9 digits. A cut written with ``digits`` of fraction, at
    the task's own status time cut to milliseconds (3: at it, for an Agent that keeps milliseconds; before it, for one
    that keeps finer) or the smallest step before it (6, 9: finer than the Agent may keep), lists the task: the cut is
    inclusive, and a finer cut is still a time. Every Agent is checked at 3 digits, whatever it keeps: left not
    checked when the time is finer, the verdict on one keeping microseconds would turn on its clock."""
    task = drivers.ordinary(a2a_client, ended=True)  # any turn that ended
    if not _when(task):
        not_checked("the task carries no status timestamp, so the filter's cut cannot be placed")
    moment = _when(task)
    before = moment - timedelta(microseconds=0 if digits == 3 else 1)
    fraction = f"{before.microsecond:06d}" + ("999" if digits == 9 else "")
    cut = before.strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction[:digits]}Z"
    exchange = a2a_client.list_tasks(contextId=task["contextId"], statusTimestampAfter=cut)
    if exchange.is_error or task["id"] not in _ids(exchange):
        exchange.fail(f"statusTimestampAfter {cut} ({digits} fraction digits) is at or before the task's time: listed")


@pytest.mark.req("LIST-03")
def test_status_timestamp_after_all_but_a_nanosecond_past_the_task_leaves_it_out(a2a_client: A2AClient):
    """A cut past the task's shown status time by all but a nanosecond of the shown time's last digit, written in
    nine digits: whatever finer time the Agent keeps, the task's is before the cut (a shown time is the kept one cut
    short, or rounded), so the task is listed no more: the Agent reads the whole cut, however fine."""
    task = drivers.ordinary(a2a_client, ended=True)  # any turn that ended
    shown = (task.get("status") or {}).get("timestamp") or ""
    if not _when(task):
        not_checked("the task carries no status timestamp, so the filter's cut cannot be placed")
    digits = len(shown.rstrip("Z").partition(".")[2].split("+")[0])
    if digits >= 9:
        not_checked(f"the task's status time {shown} is in nanoseconds: no cut is finer")
    unit_ns = 10 ** (9 - digits)
    nanos = _when(task).microsecond * 1000 // unit_ns * unit_ns + unit_ns - 1  # within the second, in nanoseconds
    if nanos >= 10**9:
        not_checked(f"the task's status time {shown} is at a second's last {digits}-digit step")
    cut = _when(task).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"
    exchange = a2a_client.list_tasks(contextId=task["contextId"], statusTimestampAfter=cut)
    if exchange.is_error or task["id"] in _ids(exchange):
        exchange.fail(f"statusTimestampAfter {cut} is after the task's time {shown}: the task is not listed")


@pytest.mark.req("LIST-03")
@pytest.mark.scenario("complete")
@pytest.mark.scenario("slow")
@pytest.mark.parametrize("spelling", axes.members("LIST-03", "spellings"))
def test_status_timestamp_after_in_whole_seconds(a2a_client: A2AClient, spelling: str):
    """A2A §5.6.1: a time may omit its fraction, and a server parses it: the cut at a whole second lists what
    changed at or after that second (a turn more than a second later than the first one)."""
    context = drivers.new_context()
    earlier = drivers.run(a2a_client, "complete", context_id=context)
    later = drivers.settle(a2a_client, drivers.run(a2a_client, "slow", 1200, context_id=context))
    if not (_when(earlier) and _when(later)):
        not_checked("the tasks carry no status timestamp, so the filter's cut cannot be placed")
    cut = _when(later).replace(microsecond=0)
    exchange = a2a_client.list_tasks(contextId=context, statusTimestampAfter=cut.strftime("%Y-%m-%dT%H:%M:%SZ"))
    ids = _ids(exchange)
    expected = sorted(t["id"] for t in (earlier, later) if _when(t) >= cut)
    if sorted(ids) != expected:
        exchange.fail(f"statusTimestampAfter in whole seconds ({spelling}) must list {expected}, listed {sorted(ids)}")


@pytest.mark.req("LIST-13")
@pytest.mark.parametrize("offset", ["+02:00", "-05:00"])
def test_status_timestamp_after_with_an_offset(a2a_client: A2AClient, offset: str):
    """A cut a millisecond before the task's status time written with an offset lists it, and a second after it does
    not; or the cut is refused (A2A §5.6.1 lets no client write an offset, so a refusal is as right). The cuts are
    clear of the task's own time, so that whether a cut is inclusive (LIST-03) does not decide this one."""
    task = drivers.ordinary(a2a_client, ended=True)
    moment = _when(task)
    if not moment:
        not_checked("the task carries no status timestamp, so the filter's cut cannot be placed")
    sign = 1 if offset[0] == "+" else -1
    shift = timedelta(hours=int(offset[1:3]), minutes=int(offset[4:]))
    for later, listed in ((timedelta(milliseconds=-1), True), (timedelta(seconds=1), False)):
        local = moment + later + sign * shift
        cut = local.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + offset  # cut to milliseconds: still clear of the task
        exchange = a2a_client.list_tasks(contextId=task["contextId"], statusTimestampAfter=cut)
        if exchange.is_error:
            exchange.expect_error("InvalidParamsError")
            return
        if (task["id"] in _ids(exchange)) != listed:
            exchange.fail(
                f"statusTimestampAfter {cut} names the instant {(moment + later).isoformat()}: the task changed at "
                f"{task['status']['timestamp']} must {'' if listed else 'not '}be listed"
            )
