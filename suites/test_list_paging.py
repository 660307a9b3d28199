"""ListTasks paging while tasks change: cursor walks, concurrent creates and changes, foreign and forged tokens."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from nylorun_a2a_kit.fixtures.client import A2AClient, conversations
from nylorun_a2a_kit.fixtures.scenarios import drivers, properties

PAUSED = "TASK_STATE_INPUT_REQUIRED"
STATUSES = (None, "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", PAUSED)


@dataclass
class Walk:
    """One cursor walk as the kit saw it, checked page by page and at its end."""

    client: A2AClient
    params: dict
    page_size: int
    expected: set[str]  # matching tasks at the start; untouched ones must each appear exactly once
    touched: set[str] = field(default_factory=set)  # created or changed during the walk: at most once
    seen: list[str] = field(default_factory=list)
    last_stamp: str | None = None
    token: str | None = None
    pages: int = 0
    done: bool = False

    def next_page(self, exact_total: int | None = None) -> dict:
        exchange = self.client.list_tasks(**self.params, pageSize=self.page_size, pageToken=self.token)
        page = exchange.result
        self.pages += 1
        for task in page["tasks"]:
            if task["id"] in self.seen:
                exchange.fail(f"task {task['id']} appeared twice in one walk (PAGE-02: never twice)")
            self.seen.append(task["id"])
            stamp = task["status"].get("timestamp")
            if stamp and self.last_stamp and stamp > self.last_stamp:
                exchange.fail(f"task {task['id']} ({stamp}) comes after a task changed at {self.last_stamp}")
            self.last_stamp = stamp or self.last_stamp
            if not self.params.get("includeArtifacts") and "artifacts" in task:
                exchange.fail(f"task {task['id']} carries artifacts although includeArtifacts was not true")
        if len(page["tasks"]) > self.page_size:
            exchange.fail(f"a page of pageSize {self.page_size} holds {len(page['tasks'])} tasks")
        if exact_total is not None and page["totalSize"] != exact_total:
            exchange.fail(f"totalSize {page['totalSize']}, but {exact_total} tasks matched while the page was read")
        self.token = page["nextPageToken"]
        bound = (len(self.expected) + len(self.touched)) // self.page_size + 2
        if self.token and self.pages >= bound:
            exchange.fail(f"the walk has not ended after {self.pages} pages ({bound - 1} would hold every task)")
        self.done = not self.token
        return page

    def finish(self, exact: bool) -> None:
        """The end of the walk: every untouched task seen once; with ``exact``, nothing else but touched ones."""
        while not self.done:
            self.next_page()
        missing = sorted(self.expected - self.touched - set(self.seen))
        if missing:
            pytest.fail(f"the walk {self.params} missed tasks untouched during it: {missing}")
        extra = sorted(set(self.seen) - self.expected - self.touched)
        if exact and extra:
            pytest.fail(f"the walk {self.params} listed tasks that do not match: {extra}")


def _made(a2a_client: A2AClient, kind: str, context: str) -> dict:
    return drivers.settle(a2a_client, drivers.run(a2a_client, kind, context_id=context))


@pytest.fixture
def six_tasks(a2a_client: A2AClient) -> tuple[str, list[dict]]:
    context = drivers.new_context()
    return context, [_made(a2a_client, "complete", context) for _ in range(6)]


@pytest.mark.req("PAGE-01", "PAGE-02", "PAGE-05")
@pytest.mark.scenario("complete")
def test_walk_while_tasks_are_created(a2a_client: A2AClient, six_tasks):
    context, tasks = six_tasks
    walk = Walk(a2a_client, {"contextId": context}, 2, {t["id"] for t in tasks})
    while not walk.done:
        walk.next_page()
        walk.touched.add(_made(a2a_client, "complete", context)["id"])
    walk.finish(exact=True)


@pytest.mark.long
@pytest.mark.req("PAGE-01", "PAGE-03")
@pytest.mark.scenario("complete", "ask")
def test_walk_while_tasks_change(a2a_client: A2AClient):
    context = drivers.new_context()
    asking = [_made(a2a_client, "ask", context)]
    done = [_made(a2a_client, "complete", context) for _ in range(3)]
    asking.append(_made(a2a_client, "ask", context))
    done += [_made(a2a_client, "complete", context) for _ in range(2)]
    walk = Walk(a2a_client, {"contextId": context}, 2, {t["id"] for t in asking + done})
    walk.next_page()
    for task in asking:  # each answered task changes: it moves ahead of the cursor
        drivers.settle(a2a_client, a2a_client.send("An answer.", task_id=task["id"], context_id=context).task)
        walk.touched.add(task["id"])
    walk.finish(exact=True)


@pytest.mark.req("PAGE-04")
@pytest.mark.scenario("complete")
def test_total_size_follows_tasks_created_during_a_walk(a2a_client: A2AClient, six_tasks):
    context, tasks = six_tasks
    walk = Walk(a2a_client, {"contextId": context}, 2, {t["id"] for t in tasks})
    total = len(tasks)
    while not walk.done:
        walk.next_page(exact_total=total)
        walk.touched.add(_made(a2a_client, "complete", context)["id"])
        total += 1


@pytest.mark.req("PAGE-06")
@pytest.mark.scenario("complete")
def test_foreign_page_token_lists_no_foreign_task(a2a_client: A2AClient, a2a_other_client: A2AClient):
    context = drivers.new_context()
    theirs = {_made(a2a_other_client, "complete", context)["id"] for _ in range(3)}
    token = a2a_other_client.list_tasks(contextId=context, pageSize=1).result["nextPageToken"]
    exchange = a2a_client.list_tasks(contextId=context, pageSize=1, pageToken=token)
    if not exchange.is_error and theirs & {t["id"] for t in exchange.result["tasks"]}:
        exchange.fail("another subject's page token listed that subject's tasks")


@pytest.mark.req("PAGE-07")
@pytest.mark.scenario("complete")
def test_foreign_page_token_is_refused(a2a_client: A2AClient, a2a_other_client: A2AClient):
    context = drivers.new_context()
    for _ in range(2):
        _made(a2a_other_client, "complete", context)
    token = a2a_other_client.list_tasks(contextId=context, pageSize=1).result["nextPageToken"]
    exchange = a2a_client.list_tasks(contextId=context, pageSize=1, pageToken=token)
    if not exchange.is_error:
        exchange.fail("a page token issued to another subject must be refused with a JSON-RPC error")


@pytest.mark.req("PAGE-07")
def test_forged_page_token_is_refused(a2a_client: A2AClient):
    exchange = a2a_client.list_tasks(pageSize=1, pageToken="kit-forged-page-token")
    if not exchange.is_error:
        exchange.fail("a page token the Agent never issued must be refused with a JSON-RPC error")


class PagingMachine(RuleBasedStateMachine):
    """Tasks created and changed across two contexts and two subjects while cursor walks read them."""

    def __init__(self, clients: list[A2AClient]):
        super().__init__()
        self.clients = clients
        self.contexts = [drivers.new_context(), drivers.new_context()]
        self.known: dict[str, tuple[int, str, str]] = {}  # task id → (subject index, context, state)
        self.walk: Walk | None = None
        self.exact = True

    def _matching(self, params: dict) -> set[str]:
        return {
            task_id
            for task_id, (who, context, state) in self.known.items()
            if who == 0 and params.get("contextId") in (None, context) and params.get("status") in (None, state)
        }

    def _touch(self, task_id: str) -> None:
        if self.walk is not None:
            self.walk.touched.add(task_id)

    @rule(who=st.integers(0, 1), where=st.integers(0, 1), kind=st.sampled_from(["complete", "fail", "ask"]))
    def create(self, who: int, where: int, kind: str) -> None:
        who %= len(self.clients)
        task = _made(self.clients[who], kind, self.contexts[where])
        self.known[task["id"]] = (who, task["contextId"], drivers.state(task))
        self._touch(task["id"])

    # No rule has a precondition on what the target answered: Hypothesis replays an example's draws, and the rules
    # a draw chooses among must not depend on a live target's state (it would call the strategy flaky).
    @rule(pick=st.integers(0, 99))
    def answer(self, pick: int) -> None:
        paused = sorted(task_id for task_id, (_, _, state) in self.known.items() if state == PAUSED)
        if not paused:
            return
        task_id = paused[pick % len(paused)]
        who, context, _ = self.known[task_id]
        client = self.clients[who]
        task = drivers.settle(client, client.send("An answer.", task_id=task_id, context_id=context).task)
        self.known[task_id] = (who, context, drivers.state(task))
        self._touch(task_id)

    @rule(
        where=st.sampled_from([0, 1]),
        status=st.sampled_from(STATUSES),
        page_size=st.integers(1, 4),
        artifacts=st.booleans(),
    )
    def start_walk(self, where: int, status: str | None, page_size: int, artifacts: bool) -> None:
        if self.walk is not None:
            self.walk.finish(exact=True)
        # The conversation as the Agent knows it when the walk starts, on every page of the walk alike.
        context = conversations.as_written(drivers.known_as(self.contexts[where]))
        params = {"contextId": context, "status": status, "includeArtifacts": artifacts or None}
        params = {k: v for k, v in params.items() if v is not None}
        self.walk = Walk(self.clients[0], params, page_size, self._matching(params))
        self.next_page()

    @rule()
    def next_page(self) -> None:
        if self.walk is None:
            return
        page = self.walk.next_page(exact_total=len(self._matching(self.walk.params)))
        if self.walk.done:
            self.walk.finish(exact=True)
            self.walk = None
        elif not page["tasks"]:
            pytest.fail(f"a page with a nextPageToken listed no task ({self.walk.params})")

    def teardown(self) -> None:
        if self.walk is not None:
            self.walk.finish(exact=True)


# The machine's examples in parts, each a check of its own: every step waits on turns, so on a Runtime whose turns
# take seconds the parts run on as many workers at once.
MACHINE_PARTS = 3


@pytest.mark.long
@pytest.mark.req("PAGE-01", "PAGE-02", "PAGE-03", "PAGE-04", "PAGE-05")
@pytest.mark.scenario("complete", "fail", "ask")
@pytest.mark.parametrize("part", range(1, MACHINE_PARTS + 1), ids=lambda k: f"part-{k}-of-{MACHINE_PARTS}")
def test_paging_holds_under_any_sequence_of_changes(a2a_client: A2AClient, a2a_target, part: int):
    clients = [a2a_client]
    if a2a_target.other_subject:
        clients.append(a2a_client.with_(subject=a2a_target.other_subject))
    properties.check_machine(lambda: PagingMachine(clients), part=(part, MACHINE_PARTS))
