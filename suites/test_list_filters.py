"""ListTasks over tasks in every state the scenario contract drives: each status filter, timestamp cuts inside the
set, the order of every adjacent pair, includeArtifacts, page sizes, totals and history cuts.

The tasks are made once per module and only read by the checks, each within its conversations: one of ended
tasks that ends on an approval, one paused on a question, one still working, and one paused and then canceled
last. No new message goes to a conversation whose task is paused or running, so no rule about busy
conversations gets in the way. The order check makes its own few tasks, so that its listing across
conversations spans only its own window.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.requirements import axes
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = pytest.mark.scenario("complete", "fail", "ask", "slow")  # and approve, where the target has it
STATES = (
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_AUTH_REQUIRED",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
)
WORKING_MS = 600_000  # outlasts the module; the task is canceled when the module ends


@dataclass
class Tasks:
    """The module's tasks, as GetTask answers them when a check starts, oldest status change first."""

    contexts: list[str]
    ended: str  # the conversation of ended tasks (and an approval last, where the target has the scenario)
    made: list[str] = field(default_factory=list)  # the task ids, in the order they were made
    changed: list[dict] = field(default_factory=list)
    sent: dict[str, list[str]] = field(default_factory=dict)  # task id → the kit's message ids, oldest first

    def in_context(self, context: str) -> list[dict]:
        return [t for t in self.changed if t["contextId"] == drivers.known_as(context)]

    def stamps(self) -> list[datetime]:
        return [_when(t) for t in self.changed]


def _when(task: dict) -> datetime:
    return datetime.fromisoformat(task["status"]["timestamp"].replace("Z", "+00:00"))


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _make(client: A2AClient, target: Target, made: list[str]) -> Tasks:
    """The module's tasks; ``made`` gets each task's id as it is made, so that a setup cut short leaks none."""
    ended, asking, working, canceling = (drivers.new_context() for _ in range(4))
    tasks = Tasks([ended, asking, working, canceling], ended)
    for scenario in ("complete", "fail"):
        made.append(drivers.settle(client, drivers.run(client, scenario, context_id=ended))["id"])
    sent = [new_id("ask"), new_id("answer")]
    asked = drivers.paused_on(client, "question", context_id=ended, message_id=sent[0])
    drivers.settle(client, client.send("blue", task_id=asked["id"], context_id=ended, message_id=sent[1]).task)
    tasks.sent[asked["id"]] = sent
    made.append(asked["id"])
    to_cancel = drivers.paused_on(client, "question", context_id=canceling)
    made.append(to_cancel["id"])
    made.append(drivers.paused_on(client, "question", context_id=asking)["id"])
    running = client.send(drivers.scenario("slow", WORKING_MS), context_id=working, return_immediately=True).task
    made.append(running["id"])
    drivers.wait_for(client, running["id"], ["TASK_STATE_WORKING"])
    if "approve" in target.scenarios:  # the ended conversation's last task: the state it pauses in is read
        made.append(drivers.settle(client, drivers.run(client, "approve", context_id=ended))["id"])
    client.cancel(to_cancel["id"]).ok()
    drivers.wait_for(client, to_cancel["id"], drivers.TERMINAL)
    made.append(made.pop(made.index(to_cancel["id"])))  # the canceled task changed last
    tasks.made = list(made)
    return tasks


def _as_now(client: A2AClient, tasks: Tasks) -> Tasks:
    """The module's tasks as GetTask answers them now (a slow turn the target cut short has moved on)."""
    tasks.changed = sorted(
        (client.get_task(task_id).task for task_id in tasks.made), key=lambda t: (_when(t), tasks.made.index(t["id"]))
    )
    return tasks


@pytest.fixture(scope="module")
def _made(a2a_target: Target) -> Iterator[dict]:
    """Where the module's tasks are kept once the first check that needs them has made them."""
    kept: dict = {"made": []}
    yield kept
    if kept["made"]:
        own = a2a_target.client()
        try:
            for task_id in kept["made"]:
                drivers.cancel_quietly(own, task_id)
        finally:
            own.close()


@pytest.fixture
def tasks(a2a_client: A2AClient, a2a_target: Target, _made: dict) -> Tasks:
    # Made by the first check that asks, after its admission: a target without the scenarios is sent none.
    # A setup that failed or was not checked ends every later check the same way: made once, never again.
    if "failed" in _made:
        raise _made["failed"]
    if "tasks" not in _made:
        try:
            _made["tasks"] = _make(a2a_client, a2a_target, _made["made"])
        except BaseException as exc:
            _made["failed"] = exc
            raise
    return _as_now(a2a_client, _made["tasks"])


def _ids(exchange: Exchange) -> list[str]:
    return [t["id"] for t in exchange.result["tasks"]]


def _walk(a2a_client: A2AClient, page_size: int, **params) -> tuple[list[dict], list[Exchange]]:
    return drivers.list_walk(a2a_client, page_size, **params)


# -- LIST-02: each status value


@pytest.mark.req("LIST-02")
@pytest.mark.member("combines", "contextId+status")
@pytest.mark.parametrize("status", STATES)
def test_status_filter_lists_exactly_the_tasks_in_that_state(a2a_client: A2AClient, tasks: Tasks, status: str):
    for context in tasks.contexts:
        exchange = a2a_client.list_tasks(contextId=context, status=status, pageSize=100)
        expected = sorted(t["id"] for t in tasks.in_context(context) if drivers.state(t) == status)
        wrong = [t["id"] for t in exchange.result["tasks"] if drivers.state(t) != status]
        if wrong or sorted(_ids(exchange)) != expected:
            exchange.fail(f"status {status} in {context} should list exactly {expected}, each {status}")


# -- LIST-03: statusTimestampAfter cut inside the set

CUTS = ("at-the-oldest", "at-a-middle-task", "at-the-newest", "after-the-newest")


def _cut(tasks: Tasks, where: str) -> tuple[str, datetime]:
    """The filter's time, as sent and as the moment it names."""
    if where == "after-the-newest":
        moment = tasks.stamps()[-1] + timedelta(milliseconds=1)
        return _stamp(moment), moment
    # The middle task: of the longest conversation, with one task before it and two after (two pages of 2).
    ended = tasks.in_context(tasks.ended)
    task = {"at-the-oldest": tasks.changed[0], "at-a-middle-task": ended[len(ended) // 2 - 1]}.get(
        where, tasks.changed[-1]
    )
    return drivers.in_utc(task["status"]["timestamp"]), _when(task)


@pytest.mark.req("LIST-03")
@pytest.mark.member("combines", "contextId+statusTimestampAfter")
@pytest.mark.parametrize("where", CUTS)
@pytest.mark.parametrize("page_size", [100, 2], ids=["one-page", "pages-of-2"])
def test_status_timestamp_cut_lists_every_task_at_or_after_it(
    a2a_client: A2AClient, tasks: Tasks, where: str, page_size: int
):
    after, moment = _cut(tasks, where)
    for context in tasks.contexts:
        listed, pages = _walk(a2a_client, page_size, contextId=context, statusTimestampAfter=after)
        earlier = [t["id"] for t in listed if _when(t) < moment]
        if earlier:
            pages[-1].fail(f"statusTimestampAfter {after} listed tasks whose status changed before it: {earlier}")
        expected = sorted(t["id"] for t in tasks.in_context(context) if _when(t) >= moment)
        got = sorted(t["id"] for t in listed)
        if got != expected:
            pages[-1].fail(f"statusTimestampAfter {after} (inclusive) must list {expected} of {context}, listed {got}")


# -- LIST-04: latest status change first, every adjacent pair


def _changed_out_of_turn(a2a_client: A2AClient) -> list[dict]:
    """Four tasks in four conversations, the first made paused and canceled last; oldest change first."""
    paused = drivers.paused_on(a2a_client, "question", context_id=drivers.new_context())
    made = [
        drivers.settle(a2a_client, drivers.run(a2a_client, name, context_id=drivers.new_context()))["id"]
        for name in ("complete", "fail", "complete")
    ]
    a2a_client.cancel(paused["id"]).ok()
    made.append(drivers.wait_for(a2a_client, paused["id"], drivers.TERMINAL)["id"])
    return [a2a_client.get_task(task_id).task for task_id in made]


@pytest.mark.req("LIST-04")
@pytest.mark.parametrize("page_size", [100, 1], ids=["one-page", "pages-of-1"])
def test_every_adjacent_pair_is_latest_change_first(a2a_client: A2AClient, page_size: int):
    changed = _changed_out_of_turn(a2a_client)
    # The four, and any task of the subject changed since: this check's own window, a few turns long.
    since = _stamp(_when(changed[0]) - timedelta(milliseconds=1))
    listed, pages = _walk(a2a_client, page_size, statusTimestampAfter=since)
    # Each page is one read, in order; across pages the four are (others' tasks may change between two reads).
    mine = {t["id"] for t in changed}
    for above, below in _adjacent(pages, mine):
        if _when(above) < _when(below):
            pages[-1].fail(
                f"task {below['id']} (changed {below['status']['timestamp']}) is listed after {above['id']} "
                f"(changed {above['status']['timestamp']}): the list is latest status change first"
            )
    order = [t["id"] for t in listed if t["id"] in mine]
    newest_first = [t["id"] for t in reversed(changed)]
    if order != newest_first:
        pages[-1].fail(f"the four tasks must be listed latest status change first: {newest_first}, got {order}")


def _adjacent(pages: list[Exchange], mine: set[str]) -> Iterator[tuple[dict, dict]]:
    """The pairs of tasks listed one after the other on a page, and the pairs of this check's own tasks."""
    for page in pages:
        yield from itertools.pairwise(page.result["tasks"])
    listed = [t for page in pages for t in page.result["tasks"]]
    yield from itertools.pairwise(t for t in listed if t["id"] in mine)


# -- filters and options together


def _status_and_time(
    a2a_client: A2AClient, tasks: Tasks, scope: str
) -> tuple[dict, list[dict], list[dict], list[Exchange]]:
    """ListTasks by a state and a time together, of the subject or of one conversation (all three filters at once):
    the cut, the module's tasks both match, and what the walk listed (of the subject, other callers' tasks too: each
    listed one must match both)."""
    cut = tasks.in_context(tasks.ended)[1]  # the fail task: after it, the answered question and what follows
    params = {"status": "TASK_STATE_COMPLETED", "statusTimestampAfter": drivers.in_utc(cut["status"]["timestamp"])}
    among = tasks.changed
    if scope == "conversation":
        params["contextId"] = tasks.ended
        among = tasks.in_context(tasks.ended)
    expected = [t for t in among if drivers.state(t) == params["status"] and _when(t) >= _when(cut)]
    listed, pages = _walk(a2a_client, 100, until=[t["id"] for t in expected], **params)
    return params, expected, listed, pages


SCOPES = pytest.mark.parametrize("scope", ["subject", "conversation"])


@pytest.mark.req("LIST-02")
@pytest.mark.parametrize("combined", axes.member("LIST-02", "combines", "statusTimestampAfter+status"))
@SCOPES
def test_status_filter_holds_beside_a_time_filter(a2a_client: A2AClient, tasks: Tasks, combined: str, scope: str):
    params, expected, listed, pages = _status_and_time(a2a_client, tasks, scope)
    wrong = [t["id"] for t in listed if drivers.state(t) != params["status"]]
    if wrong or not {t["id"] for t in expected} <= {t["id"] for t in listed}:
        pages[-1].fail(f"{params} lists tasks in that state only, each of them: {[t['id'] for t in expected]}")


@pytest.mark.req("LIST-03")
@pytest.mark.parametrize("combined", axes.member("LIST-03", "combines", "status+statusTimestampAfter"))
@SCOPES
def test_time_filter_holds_beside_a_status_filter(a2a_client: A2AClient, tasks: Tasks, combined: str, scope: str):
    params, expected, listed, pages = _status_and_time(a2a_client, tasks, scope)
    cut = datetime.fromisoformat(params["statusTimestampAfter"].replace("Z", "+00:00"))
    earlier = [t["id"] for t in listed if _when(t) < cut]
    if earlier or not {t["id"] for t in expected} <= {t["id"] for t in listed}:
        pages[-1].fail(f"{params} lists tasks changed at or after the time only, each of them: {earlier}")


@pytest.mark.req("LIST-02")
@pytest.mark.parametrize("combined", axes.member("LIST-02", "combines", "pageToken+status"))
def test_status_filter_holds_on_every_page(a2a_client: A2AClient, tasks: Tasks, combined: str):
    params = {"contextId": tasks.ended, "status": "TASK_STATE_COMPLETED"}
    expected = sorted(t["id"] for t in tasks.in_context(tasks.ended) if drivers.state(t) == params["status"])
    listed, pages = _walk(a2a_client, 1, **params)
    if sorted(t["id"] for t in listed) != expected or any(drivers.state(t) != params["status"] for t in listed):
        pages[-1].fail(f"walked in pages of 1 (each after a pageToken), {params} must list {expected}")


@pytest.mark.req("LIST-11")
@pytest.mark.parametrize("combined", axes.member("LIST-11", "combines", "includeArtifacts+historyLength"))
def test_history_length_holds_beside_include_artifacts(a2a_client: A2AClient, tasks: Tasks, combined: str):
    exchange = a2a_client.list_tasks(contextId=tasks.ended, includeArtifacts=True, historyLength=1, pageSize=100)
    for task in exchange.result["tasks"]:
        if len(task.get("history") or []) > 1:
            exchange.fail(f"historyLength 1 beside includeArtifacts: task {task['id']} lists {len(task['history'])}")
        held = [a.get("artifactId") for a in a2a_client.get_task(task["id"]).task.get("artifacts") or []]
        if [a.get("artifactId") for a in task.get("artifacts") or []] != held:
            exchange.fail(f"includeArtifacts beside historyLength: task {task['id']} must carry its artifacts {held}")


# -- every option on every page: a walk in pages of 1 carries each task as one page of 100 does

# An option, the requirement that makes it hold on the pages after the first, and the combine member naming the pair
# (a new option is covered by adding it here and to its requirement's combines).
PAGED_OPTIONS = {
    "pageToken+historyLength": ("LIST-11", {"historyLength": 1}),
    "pageToken+includeArtifacts": ("LIST-10", {"includeArtifacts": True}),
}


def _as_listed(task: dict) -> tuple:
    """What of a listed task the options shape: its status, its history's messages, its artifacts."""
    return (
        task["id"],
        drivers.state(task),
        [m.get("messageId") for m in task.get("history") or []],
        [a.get("artifactId") for a in task.get("artifacts") or []],
    )


@pytest.mark.parametrize(
    ("combined", "requirement", "options"),
    [
        pytest.param(name, requirement, options, id=name, marks=[pytest.mark.req(requirement), *param.marks])
        for name, (requirement, options) in PAGED_OPTIONS.items()
        for param in axes.member(requirement, "combines", name)
    ],
)
def test_every_option_holds_on_every_page(
    a2a_client: A2AClient, tasks: Tasks, combined: str, requirement: str, options: dict
):
    """The ended conversation walked in pages of 1 (every page but the first asked with a pageToken) lists each task
    as one page of 100 does with the same options: an option is the list's, not its first page's."""
    whole = a2a_client.list_tasks(contextId=tasks.ended, pageSize=100, **options)
    listed, pages = _walk(a2a_client, 1, contextId=tasks.ended, **options)
    paged = {task["id"]: _as_listed(task) for task in listed}  # by id: tasks changed at one time come in any order
    one_page = {task["id"]: _as_listed(task) for task in whole.result["tasks"]}
    differ = [
        f"{paged.get(i)} in pages of 1, {one_page.get(i)} on one page"
        for i in one_page | paged
        if paged.get(i) != one_page.get(i)
    ]
    if differ or len(listed) != len(paged):
        pages[-1].fail(
            f"with {options}, the pages after the first carry the tasks otherwise than one page does "
            f"((id, state, history's messageIds, artifactIds)): {differ or 'a task listed twice'}"
        )


# -- LIST-10: includeArtifacts true, false, absent


@pytest.mark.req("LIST-10")
@pytest.mark.parametrize("include", [True, False, None], ids=["true", "false", "absent"])
@pytest.mark.member("several", "artifact.last")
def test_artifacts_exactly_with_include_artifacts(a2a_client: A2AClient, tasks: Tasks, include: bool | None):
    params = {} if include is None else {"includeArtifacts": include}
    exchange = a2a_client.list_tasks(contextId=tasks.ended, pageSize=100, **params)
    for task in exchange.result["tasks"]:
        if not include and "artifacts" in task:
            exchange.fail(f"with includeArtifacts {include}, task {task['id']} must carry no artifacts field")
        held = a2a_client.get_task(task["id"]).task.get("artifacts") or []
        got = task.get("artifacts") or []
        if include and [a.get("artifactId") for a in got] != [a.get("artifactId") for a in held]:
            exchange.fail(f"with includeArtifacts true, task {task['id']} must carry its artifacts as GetTask does")


# -- LIST-12 and LIST-09: page sizes in range and out of it


@pytest.mark.req("LIST-12")
@pytest.mark.member("combines", "contextId+pageSize")
@pytest.mark.parametrize("page_size", [1, 2, 100])
def test_page_size_in_range_is_the_page_size_used(a2a_client: A2AClient, tasks: Tasks, page_size: int):
    exchange = a2a_client.list_tasks(contextId=tasks.ended, pageSize=page_size)
    result, matching = exchange.result, len(tasks.in_context(tasks.ended))
    if result["pageSize"] != page_size or len(result["tasks"]) > page_size:
        exchange.fail(f"pageSize {page_size} is in 1..100: the page size used is {page_size}, and no more tasks")
    if matching > page_size and not result["nextPageToken"]:
        exchange.fail(f"{matching} tasks match and pageSize is {page_size}: a next page must follow")
    outside = [t["id"] for t in result["tasks"] if t.get("contextId") != drivers.known_as(tasks.ended)]
    if outside:
        exchange.fail(f"pageSize beside the contextId filter: tasks {outside} are not of conversation {tasks.ended}")


@pytest.mark.req("LIST-09")
@pytest.mark.parametrize("page_size", [0, -1, 101])
def test_page_size_out_of_range_is_refused_or_clamped(a2a_client: A2AClient, tasks: Tasks, page_size: int):
    exchange = a2a_client.list_tasks(contextId=tasks.ended, pageSize=page_size)
    if exchange.is_error:
        exchange.expect_error("InvalidParamsError")
        return
    used = exchange.result["pageSize"]
    if not 1 <= used <= 100 or len(exchange.result["tasks"]) > used:
        exchange.fail(f"pageSize {page_size} is out of 1..100: refused, or served with a page size in 1..100")


# -- LIST-08: totalSize under each filter


def _total_filters(tasks: Tasks) -> dict[str, tuple[dict, list[dict]]]:
    ended = tasks.in_context(tasks.ended)
    middle = ended[len(ended) // 2]
    return {
        "context": ({"contextId": tasks.ended}, ended),
        "context-and-status": (
            {"contextId": tasks.ended, "status": "TASK_STATE_COMPLETED"},
            [t for t in ended if drivers.state(t) == "TASK_STATE_COMPLETED"],
        ),
        "context-and-time": (
            {"contextId": tasks.ended, "statusTimestampAfter": drivers.in_utc(middle["status"]["timestamp"])},
            [t for t in ended if _when(t) >= _when(middle)],
        ),
    }


@pytest.mark.req("LIST-08")
@pytest.mark.parametrize("filters", ["context", "context-and-status", "context-and-time"])
def test_total_size_counts_what_every_filter_matches(a2a_client: A2AClient, tasks: Tasks, filters: str):
    params, matching = _total_filters(tasks)[filters]
    exchange = a2a_client.list_tasks(**params, pageSize=1)
    if exchange.result["totalSize"] != len(matching):
        exchange.fail(f"{params} matches {len(matching)} tasks, so totalSize is {len(matching)}")


# -- LIST-11: historyLength cuts on every listed task


@pytest.mark.req("LIST-11")
@pytest.mark.parametrize("cut", ["zero", *drivers.HISTORY_CUTS])
@pytest.mark.member("spellings", "history-newest-first")
def test_history_length_cuts_every_listed_task(a2a_client: A2AClient, tasks: Tasks, cut: str):
    asked_id = next(iter(tasks.sent))
    full = drivers.full_history(a2a_client, next(t for t in tasks.changed if t["id"] == asked_id), "ListTasks")
    length = 0 if cut == "zero" else drivers.history_cut(cut, len(full))
    exchange = a2a_client.list_tasks(contextId=tasks.ended, historyLength=length, pageSize=100)
    for task in exchange.result["tasks"]:
        history = task.get("history") or []
        if length == 0:
            if history:
                exchange.fail(f"historyLength 0 asks for no history, but task {task['id']} has some")
            continue
        held = drivers.full_history(a2a_client, task, "ListTasks")
        wrong = drivers.history_cut_problem(held, history, length, tasks.sent.get(task["id"], []))
        if wrong:
            exchange.fail(f"listed task {task['id']}: {wrong}")


@pytest.mark.req("LIST-01", "SEND-06")
@pytest.mark.scenario("complete")
def test_a_context_filter_names_its_context_exactly(a2a_client: A2AClient):
    """Two conversations whose ids differ only past the first one's end (the caller chose them): the contextId
    filter of each lists its own task alone, and a filter one character short lists none."""
    context = drivers.new_context()
    longer = context + "-2"
    mine = drivers.settle(a2a_client, drivers.run(a2a_client, "complete", context_id=context))
    other = drivers.settle(a2a_client, drivers.run(a2a_client, "complete", context_id=longer))
    for asked, expected in ((context, [mine["id"]]), (longer, [other["id"]]), (context[:-1], [])):
        listed = a2a_client.list_tasks(contextId=asked)
        if _ids(listed) != expected:
            listed.fail(f"ListTasks with contextId {asked!r} lists exactly that conversation's tasks {expected}")
