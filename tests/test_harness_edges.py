"""Edges of the harness that a unit test reaches: a quiet stream, a check's own pytest.fail beside a broken
shape, the receiver's public URL per worker, which gate arguments name the kit's checks, and as whom the kit asks
its own questions."""

from __future__ import annotations

import copy
import json
import types
import uuid

import httpx
import pytest

from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, sse
from nylorun_a2a_kit.fixtures.gate.cli import _kit_args
from nylorun_a2a_kit.fixtures.gate.command import positional
from nylorun_a2a_kit.fixtures.plugin import failures
from nylorun_a2a_kit.fixtures.push import worker_public_url
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target.card import card_problems, readable_card
from nylorun_a2a_kit.reference_agent.card import agent_card
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.schemas import ShapeViolation

EVENT = b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'


class _OneEventThenQuiet(httpx.SyncByteStream):
    def __iter__(self):
        yield EVENT
        raise httpx.ReadTimeout("no bytes within the read timeout")


def test_a_stream_that_stays_open_and_quiet_is_open_not_silent():
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_OneEventThenQuiet())
    )
    with httpx.Client(transport=transport) as http, http.stream("POST", "http://127.0.0.1:9/") as response:
        body, closed = sse.read(response, 5.0)
    assert (body, closed) == (EVENT, False)


def _failed_call(exc: BaseException):
    return types.SimpleNamespace(excinfo=types.SimpleNamespace(value=exc))


def _item_naming(*ids: str):
    marker = types.SimpleNamespace(args=ids)
    return types.SimpleNamespace(iter_markers=lambda name: [marker] if name == "req" else [])


def _read_answer_with_a_broken_result() -> list[Exchange]:
    exchange = Exchange(
        method="ListTasks", url="http://127.0.0.1:9/", request_headers=httpx.Headers(), request_body=b""
    )
    exchange.violations = [ShapeViolation("$.result.tasks[0].id", "type", "#/properties/id/type", "7 is not a string")]
    exchange.read = {"result"}
    return [exchange]


@pytest.mark.parametrize(
    ("exc", "not_checked"),
    [(KeyError("id"), True), (AssertionError("own rule"), False), (pytest.fail.Exception("own rule"), False)],
    ids=["crash-reading", "assertion", "pytest-fail"],
)
def test_only_a_check_that_crashed_reading_a_broken_answer_is_not_checked(exc, not_checked):
    why = failures.unreadable_because_of_shape(
        _item_naming("LIST-01"), _failed_call(exc), _read_answer_with_a_broken_result()
    )
    assert (why is not None) == not_checked, why


@pytest.mark.parametrize(
    ("public", "expected"),
    [
        ("http://receiver.example:8099/hooks", "http://receiver.example:8101/hooks"),
        ("http://[::1]:8099/hooks", "http://[::1]:8101/hooks"),
        ("http://user:pw@receiver.example:8099/", "http://user:pw@receiver.example:8101/"),
        ("http://receiver.example:9000/", "http://receiver.example:9000/"),  # a proxy's own port stays
        (None, None),
    ],
)
def test_each_worker_publishes_its_own_receiver_port(public, expected):
    assert worker_public_url(public, 8099, 8101) == expected


@pytest.mark.parametrize(
    ("args", "adds_the_suites"),
    [
        ([], True),
        (["--deselect=suites/test_cancel.py::test_cancel_paused_task"], True),
        (["--deselect", "suites/test_cancel.py::test_cancel_paused_task", "-k", "tasks.py"], True),
        (["-n", "2", "suites/test_cancel.py"], False),
        (["suites/test_cancel.py::test_cancel_paused_task"], False),
        (["--pyargs", "nylorun_a2a_kit.suites.test_cancel"], False),
    ],
)
def test_the_gate_adds_the_suites_unless_a_path_names_checks(tmp_path, args, adds_the_suites):
    assert ("nylorun_a2a_kit.suites" in _kit_args(tmp_path, args)) == adds_the_suites, positional(args)


def _task(state: str, task_id: str = "t-1") -> dict:
    return {"result": {"task": {"id": task_id, "status": {"state": state}}}}


def _status(state: str, task_id: str = "t-1") -> dict:
    return {"result": {"statusUpdate": {"taskId": task_id, "status": {"state": state}}}}


MESSAGE = {"result": {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}}


def test_a_stream_that_goes_on_after_its_terminal_update_fails_and_a_quiet_one_is_left_to_its_close():
    """Blocks the Agent wrote after the terminal update (keep-alives) show it continued the stream past its end,
    whenever the kit read them; an open stream quiet after it is not judged (no rule bounds the close)."""
    from nylorun_a2a_kit.fixtures.client import sse
    from nylorun_a2a_kit.fixtures.scenarios.streams import verdict as stream_verdict

    events = [_task("TASK_STATE_WORKING"), _status("TASK_STATE_COMPLETED")]
    body = b'data: {"a": 1}\n\n: keep-alive\n\ndata: {"b": 2}\n\n'
    assert sse.blocks_after_last_event(body) == 0
    assert sse.blocks_after_last_event(body + b": keep-alive\n\n: keep-alive\r\n\r\n") == 2
    problem, _ = stream_verdict(events, False, written_after=2)
    assert problem is not None and "went on (2 blocks)" in problem
    assert stream_verdict(events, False) == (None, "TASK_STATE_COMPLETED")


@pytest.mark.parametrize(
    ("events", "closed", "verdict"),
    [
        ([_task("TASK_STATE_WORKING"), _status("TASK_STATE_COMPLETED")], True, (None, None)),
        (
            [_task("TASK_STATE_WORKING"), _status("TASK_STATE_COMPLETED"), _task("TASK_STATE_COMPLETED")],
            True,
            (None, None),
        ),
        ([MESSAGE], True, (None, None)),
        ([_task("TASK_STATE_WORKING")], False, (None, "TASK_STATE_WORKING")),
        ([], True, ("the stream carried no event", None)),
        ([MESSAGE, MESSAGE], True, ("a stream that begins with a Message", None)),
        ([MESSAGE], False, ("a stream that begins with a Message", None)),
        ([_status("TASK_STATE_WORKING")], True, ("a stream must begin with the Task", None)),
        ([_task("TASK_STATE_WORKING"), _status("TASK_STATE_COMPLETED", "t-2")], True, ("after the Task", None)),
        (
            [_task("TASK_STATE_WORKING"), {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}}],
            True,
            ("a stream event is a JSON-RPC error", None),
        ),
        ([_task("TASK_STATE_WORKING"), _status("TASK_STATE_COMPLETED")], False, (None, "TASK_STATE_COMPLETED")),
    ],
    ids=[
        "task-then-updates",
        "final-snapshot",
        "one-message",
        "still-open",
        "no-event",
        "two-messages",
        "message-left-open",
        "no-task-first",
        "another-task",
        "error-event",
        "terminal-then-quiet",
    ],
)
def test_the_stream_rule_passes_what_a2a_allows_and_fails_each_break(events, closed, verdict):
    from nylorun_a2a_kit.fixtures.scenarios.streams import verdict as stream_verdict

    problem, unsettled = stream_verdict(events, closed)
    expected_problem, expected_unsettled = verdict
    assert unsettled == expected_unsettled, unsettled
    if expected_problem is None:
        assert problem is None, problem
    else:
        assert problem is not None and problem.startswith(expected_problem), problem


def test_a_card_is_read_without_the_members_that_break_its_schema():
    good = agent_card("support", "http://127.0.0.1:9/v1/a2a/agents/support", AgentConfig(db_path=":memory:"))
    assert readable_card(good) == good and not card_problems(good)
    served = copy.deepcopy(good)
    served["supportedInterfaces"][0]["protocolVersion"] = 1.0
    served["capabilities"]["streaming"] = "false"
    served["skills"].append("a skill written as text")
    read = readable_card(served)
    assert "protocolVersion" not in read["supportedInterfaces"][0]
    assert "streaming" not in read["capabilities"]
    assert read["skills"] == good["skills"]
    assert read["name"] == good["name"] and served["capabilities"]["streaming"] == "false", "the served card is kept"
    assert len(card_problems(served)) == 3


def _agent_taking_chosen_ids(sent: list[tuple[str, str | None]]) -> httpx.MockTransport:
    """An Agent that takes chosen conversation ids; every request's method and subject into ``sent``."""

    def answer(request: httpx.Request) -> httpx.Response:
        envelope = json.loads(request.content)
        sent.append((envelope["method"], request.headers.get("nylorun-subject")))
        task = {"id": "t-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"}}
        if envelope["method"] == "SendMessage":
            result = {"task": {**task, "contextId": envelope["params"]["message"].get("contextId", "ctx-1")}}
        else:
            listed = [task] if len(sent) > 1 else []  # the task the first message made, once it was made
            result = {"tasks": listed, "nextPageToken": "", "pageSize": 1, "totalSize": len(listed)}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": envelope["id"], "result": result})

    return httpx.MockTransport(answer)


def test_the_kits_own_question_is_asked_as_the_home_subject_never_a_checks_fresh_one():
    """Whether an Agent takes chosen conversation ids is asked once a process, with a message of the kit's own. The
    check that first names a conversation may be acting as a fresh subject whose tasks it counts (ISO-02's twins):
    asked as that subject, the question's task was counted, and the check failed a correct Agent when it ran first
    in its process."""
    sent: list[tuple[str, str | None]] = []
    url = f"http://127.0.0.1:9/{uuid.uuid4().hex}"  # a URL of its own: the answer is kept per URL and process
    with httpx.Client(transport=_agent_taking_chosen_ids(sent)) as http:
        home = A2AClient(url, key="kit-key", subject="a2a:home", http=http)
        fresh = home.with_(subject="a2a:home-fresh")
        listed = fresh.list_tasks(contextId=drivers.new_context(), pageSize=1)
    assert not listed.is_error
    assert sent == [("SendMessage", "a2a:home"), ("ListTasks", "a2a:home-fresh")]


def test_the_version_as_a_request_parameter_names_the_same_agent():
    """A2A-Version=1.0 in the query (A2A §3.6.1) says how a request is written, not which Agent it is for: a task
    made through it and listed at the bare endpoint is the caller's own, not another Agent's (ISO-03)."""
    sent: list[tuple[str, str | None]] = []
    url = f"http://127.0.0.1:9/{uuid.uuid4().hex}"
    before = oracle._MODEL
    oracle._MODEL = oracle.Model()
    try:
        with httpx.Client(transport=_agent_taking_chosen_ids(sent)) as http:
            client = A2AClient(url, key="kit-key", subject="a2a:home", http=http)
            made = client.with_(url=f"{url}?A2A-Version=1.0").send("Hello.")
            listed = client.list_tasks(pageSize=1)
    finally:
        oracle._MODEL = before
    assert made.task["id"] == "t-1" and [t["id"] for t in listed.result["tasks"]] == ["t-1"]
    assert listed.disagreements == [], listed.disagreements
