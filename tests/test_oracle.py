"""The oracle's rules: each one finds what it is for on an answer built to break it, says nothing on every reading
A2A allows (unknown members, finer times, history newest first, a lower history cap, tasks of another process), and
fails under the reference agent's faults it names as its proof, in a run of the suites."""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.oracle import Answer, Model, rules
from nylorun_a2a_kit.fixtures.requirements import catalog as requirements
from nylorun_a2a_kit.reference_agent import mutants
from tests.suite_runs import REPO, run_suites

ME = ("http://127.0.0.1:1/a2a", "a2a:conformance")
OTHER_SUBJECT = ("http://127.0.0.1:1/a2a", "a2a:other")
OTHER_AGENT = ("http://127.0.0.1:1/other", "a2a:conformance")
ENDED = {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-05T10:00:00.500Z"}


def _message(message_id: str, role: str) -> dict:
    agents = {"contextId": "c-1"} if role == "ROLE_AGENT" else {}  # the Agent's messages carry their context
    return {"messageId": message_id, "role": role, "parts": [{"text": "x"}], **agents}


def _model_with_task(task_id: str = "t-1", sent: tuple[str, ...] = ("m-1",), caller=ME) -> Model:
    model = Model()
    for message_id in sent:
        model.message_sent(caller, _message(message_id, "ROLE_USER"))
        model.task_answered(caller, task_id, message_id)
    return model


def _task(history: list[dict] | None = None, status: dict | None = None, **more) -> dict:
    task = {"id": "t-1", "contextId": "c-1", "status": status or ENDED, **more}
    return task if history is None else {**task, "history": history}


def _judged(model: Model, method: str, result, params: dict | None = None, caller=ME, sent_at: float = 10.0):
    if params is None and method == "GetTask":
        params = {"historyLength": 50}  # history asked for, as the checks that read it ask (TASK-08)
    return [
        (d.rule, d.requirement) for d in rules.judge(model, Answer(caller, method, params or {}, result, sent_at, 11.0))
    ]


@contextlib.contextmanager
def _enabled(model: Model):
    """The oracle's process model set to ``model`` for the block (as a run of the suites enables it)."""
    before = oracle._MODEL
    oracle._MODEL = model
    try:
        yield model
    finally:
        oracle._MODEL = before


# -- message-role


def test_an_agent_message_answered_as_the_users_is_found_on_every_channel():
    history = [_message("m-1", "ROLE_USER"), _message("a-1", "ROLE_USER")]
    for method, result in [
        ("GetTask", _task(history)),
        ("ListTasks", {"tasks": [_task(history)], "nextPageToken": ""}),
        ("SendMessage", {"task": _task(history)}),
        ("SubscribeToTask", {"task": _task(history)}),
        ("(push)", {"task": _task(history)}),
    ]:
        assert ("message-role", "TASK-15") in _judged(_model_with_task(), method, result), method


def test_a_status_message_and_a_direct_answer_are_the_agents():
    status = {**ENDED, "message": _message("a-2", "ROLE_USER")}
    assert ("message-role", "TASK-15") in _judged(_model_with_task(), "GetTask", _task(status=status))
    direct = {"message": _message("a-3", "ROLE_USER")}
    assert ("message-role", "TASK-15") in _judged(_model_with_task(), "SendMessage", direct)


def test_roles_left_open_are_not_judged():
    model = _model_with_task()
    model.message_sent(ME, {"messageId": 7, "role": "ROLE_USER"})  # an id not a string: read its own way
    model.message_sent(ME, _message("m-odd", "ROLE_UNSPECIFIED"))
    model.message_sent(ME, _message("m-twice", "ROLE_USER"))
    model.message_sent(ME, _message("m-twice", "ROLE_AGENT"))
    history = [_message("m-1", "ROLE_USER"), _message("7", "ROLE_USER"), _message("m-odd", "ROLE_USER")]
    history += [_message("m-twice", "ROLE_USER"), _message("a-1", "ROLE_AGENT")]
    assert _judged(model, "GetTask", _task(history, memberOfLater={"version": "1.1"})) == []  # unknown members
    # a task another process made (its ids may be this one's too) or another caller's
    assert _judged(Model(), "GetTask", _task([_message("m-1", "ROLE_AGENT")])) == []


# -- history-length and history-order


def test_a_history_longer_than_asked_is_found_on_each_method():
    history = [_message("m-1", "ROLE_USER"), _message("a-1", "ROLE_AGENT")]
    for method, params, result, requirement in [
        ("GetTask", {"historyLength": 1}, _task(history), "TASK-09"),
        ("GetTask", {"historyLength": 0}, _task(history), "TASK-07"),
        ("SendMessage", {"configuration": {"historyLength": 1}}, {"task": _task(history)}, "SEND-12"),
        ("ListTasks", {"historyLength": 1, "pageToken": "p2"}, {"tasks": [_task(history)]}, "LIST-11"),
    ]:
        assert ("history-length", requirement) in _judged(_model_with_task(), method, result, params), method


def test_a_cut_keeps_the_recent_end_in_either_order():
    model = _model_with_task(sent=("m-1", "m-2"))
    whole = [_message(i, "ROLE_USER" if i.startswith("m") else "ROLE_AGENT") for i in ("m-1", "a-1", "m-2", "a-2")]
    assert _judged(model, "GetTask", _task(whole), {"historyLength": 10}) == []  # learns the ended task's history
    params = {"historyLength": 2}
    assert _judged(model, "GetTask", _task(whole[-2:]), params) == []
    assert _judged(model, "GetTask", _task(whole[-2:][::-1]), params) == []  # newest first: A2A fixes no order
    assert _judged(model, "GetTask", _task(whole[-1:]), params) == []  # a lower cap than asked (the proto's MAY)
    assert ("history-order", "TASK-09") in _judged(model, "GetTask", _task(whole[-3:-1]), params)  # off by one
    assert ("history-order", "TASK-09") in _judged(model, "GetTask", _task(whole[:2]), params)  # the oldest two


def test_the_kits_messages_out_of_the_order_they_were_sent_are_found():
    model = _model_with_task(sent=("m-1", "m-2", "m-3"))
    shuffled = [_message(i, "ROLE_USER") for i in ("m-2", "m-1", "m-3")]
    running = {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-05T10:00:00Z"}
    assert ("history-order", "TASK-09") in _judged(model, "GetTask", _task(shuffled, running), {"historyLength": 5})


# -- list-artifacts


def test_artifacts_exactly_when_asked_on_every_page():
    model = _model_with_task()
    artifacts = [{"artifactId": "art-1", "parts": [{"text": "x"}]}]
    assert _judged(model, "GetTask", _task(artifacts=artifacts)) == []  # what the kit saw of the ended task
    page = {"tasks": [_task(artifacts=[])], "nextPageToken": ""}
    assert ("list-artifacts", "LIST-10") in _judged(
        model, "ListTasks", page, {"includeArtifacts": True, "pageToken": "p"}
    )
    page = {"tasks": [_task(artifacts=artifacts)], "nextPageToken": ""}
    assert ("list-artifacts", "LIST-10") in _judged(model, "ListTasks", page, {})
    assert _judged(model, "ListTasks", {"tasks": [_task(artifacts=[])]}, {"includeArtifacts": False}) == []


def test_an_ended_tasks_artifact_read_otherwise_is_found():
    model = _model_with_task()
    raw = {"raw": "+/8=", "mediaType": "application/octet-stream", "filename": "b.bin"}
    first = [{"artifactId": "art-1", "parts": [{"text": "x", "mediaType": "text/plain"}, raw, {"data": {"n": 1}}]}]
    assert _judged(model, "SendMessage", {"task": _task(artifacts=first)}) == []
    printed = {**first[0]["parts"][0], "filename": ""}  # a proto3 default printed
    same = [{**first[0], "parts": [printed, {**raw, "raw": "-_8"}, {"data": {"n": 1.0}, "mediaType": ""}], "x": 1}]
    # url-safe, unpadded (the same bytes: only their spelling is reported); 1.0; an unknown member
    assert _judged(model, "GetTask", _task(artifacts=same)) == [("bytes-spelling", "SHAPE-03")]
    bare = [{**first[0], "parts": [{"text": "x"}, raw, {"data": {"n": 1}}]}]
    assert _judged(model, "GetTask", _task(artifacts=bare)) == [("ended-artifacts", "TASK-04")]
    page = {"tasks": [_task(artifacts=bare)]}
    assert ("ended-artifacts", "LIST-10") in _judged(model, "ListTasks", page, {"includeArtifacts": True})


# -- listed-after


@pytest.mark.parametrize(
    ("cut", "found"),
    [
        ("2026-12-05T10:00:01Z", ("listed-after", "LIST-03")),
        ("2026-12-05T12:00:01.000+02:00", ("listed-after", "LIST-13")),
        ("2026-12-05T10:00:00.5001Z", None),  # within the shown time's last digit: it may stand for a later instant
        ("2026-12-05T10:00:00.500000001Z", None),
        ("2026-12-05T05:00:00.5-05:00", None),  # the same instant as the task's, written with an offset
    ],
)
def test_a_listed_task_before_the_cut_is_found(cut: str, found):
    judged = _judged(_model_with_task(), "ListTasks", {"tasks": [_task()]}, {"statusTimestampAfter": cut})
    assert judged == ([found] if found else [])


def test_times_are_read_with_their_offset_and_fraction():
    at, step = oracle.times.parse("2026-12-05T12:00:00.123456789+02:00")
    assert at.isoformat() == "2026-12-05T10:00:00.123456+00:00" and step.total_seconds() == 1e-6
    assert oracle.times.parse("2026-12-05 10:00:00Z") is None and oracle.times.parse(12) is None


# -- status-time


def test_a_status_time_going_back_is_found_only_against_an_earlier_read():
    model = _model_with_task()
    assert _judged(model, "GetTask", _task(), sent_at=1.0) == []
    earlier = {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-05T09:59:59Z"}
    assert ("status-time", "TASK-16") in _judged(model, "GetTask", _task(status=earlier), sent_at=20.0)
    assert _judged(model, "GetTask", _task(status=earlier), sent_at=5.0) == []  # sent before that read came
    finer = {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-05T10:00:00.500123Z"}
    assert _judged(model, "GetTask", _task(status=finer), sent_at=20.0) == []  # microseconds: the same instant


# -- task-ids


def test_a_task_shown_in_another_conversation_is_found_but_not_a_queued_message():
    model = Model()
    model.message_sent(ME, _message("m-1", "ROLE_USER"))
    model.task_answered(ME, "t-1", "m-1", "c-1")
    assert _judged(model, "ListTasks", {"tasks": [_task(contextId="c-other")]}) == [("task-ids", "TASK-02")]
    own = [{**_message("m-1", "ROLE_USER"), "contextId": "c-sdk"}, _message("a-1", "ROLE_AGENT")]
    assert _judged(model, "GetTask", _task(own, contextId="c-1")) == []  # a stored message's own ids: left open
    # A message queued under a messageId the kit chose equal to a task's id: its answer names no task of the target's.
    queued = Answer(ME, "SendMessage", {}, {"task": _task(contextId="c-busy")}, 10.0, 11.0, queued_as="t-1")
    assert rules.judge(model, queued) == []


def test_an_agent_message_of_another_conversation_or_task_is_found():
    model = _model_with_task()
    mine = {**_message("m-1", "ROLE_USER"), "contextId": "c-sdk"}  # the kit's message as stored: left open
    good = {**_message("a-1", "ROLE_AGENT"), "contextId": "c-1", "taskId": "t-1"}
    assert _judged(model, "GetTask", _task([mine, good])) == []
    for wrong in ({"contextId": "c-2"}, {"contextId": "c-1", "taskId": "t-2"}, {"contextId": None}):
        history = [mine, {**_message("a-1", "ROLE_AGENT"), **wrong}]
        assert _judged(model, "GetTask", _task(history)) == [("agent-message-ids", "SHAPE-02")], wrong


# -- foreign-task


def test_a_task_shown_to_another_caller_is_found():
    model = _model_with_task()
    assert ("foreign-task", "ISO-01") in _judged(model, "GetTask", _task(), caller=OTHER_SUBJECT)
    assert ("foreign-task", "ISO-05") in _judged(model, "GetTask", _task(), caller=OTHER_AGENT)
    assert ("foreign-task", "ISO-02") in _judged(model, "ListTasks", {"tasks": [_task()]}, caller=OTHER_SUBJECT)
    assert ("foreign-task", "ISO-03") in _judged(model, "ListTasks", {"tasks": [_task()]}, caller=OTHER_AGENT)
    assert _judged(model, "GetTask", _task(), caller=(ME[0], None)) == []  # a key acting for any subject


# -- turn-changed-at


def _turn(status: str, changed: str) -> dict:
    return {"turns": [{"turnId": "turn_1", "status": status, "changedAt": changed, "a2a": {"taskId": "t-1"}}]}


def test_a_turn_that_changed_without_its_changed_at_moving_is_found():
    model = _model_with_task()
    assert _judged(model, "(feed)", _turn("running", "2026-12-05T10:00:00Z"), sent_at=1.0) == []
    assert _judged(model, "(feed)", _turn("running", "2026-12-05T10:00:00Z"), sent_at=20.0) == []
    frozen = _judged(model, "(feed)", _turn("completed", "2026-12-05T10:00:00Z"), sent_at=30.0)
    assert frozen == [("turn-changed-at", "FEED-03")]
    assert _judged(model, "(feed)", _turn("completed", "2026-12-05T10:00:02Z"), sent_at=40.0) == []
    other = {"turns": [{"turnId": "turn_9", "status": "running", "changedAt": "x", "a2a": {"taskId": "t-9"}}]}
    assert _judged(model, "(feed)", other, sent_at=50.0) == []  # another process's turn


# -- error-reason


def _error(code: int, reason: str, domain: str = "a2a-protocol.org") -> dict:
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": domain, "metadata": {}}
    return {"code": code, "message": "m", "data": [info]}


def test_an_a2a_errors_reason_never_names_another_error():
    assert _judged(Model(), "(error)", _error(-32002, "TASK_NOT_FOUND")) == [("error-reason", "ERR-15")]
    assert _judged(Model(), "(error)", _error(-32001, "UNSUPPORTED_OPERATION")) == [("error-reason", "ERR-15")]
    assert _judged(Model(), "(error)", _error(-32002, "TASK_NOT_CANCELABLE")) == []
    assert _judged(Model(), "(error)", _error(-32004, "CONTEXT_BUSY")) == []  # a finer reason: the profile's
    assert _judged(Model(), "(error)", _error(-32001, "PUSH_CONFIG_NOT_FOUND")) == []  # … or a Runtime's
    assert _judged(Model(), "(error)", _error(-32002, "TASK_NOT_FOUND", domain="runtime.example")) == []
    assert _judged(Model(), "(error)", _error(-32050, "TASK_NOT_FOUND")) == []  # a code outside A2A's table
    assert _judged(Model(), "(error)", {"code": -32602, "message": "m"}) == []


# -- paused-interaction

OPEN = {"interactionId": "i-1", "kind": "approval"}


def _with_interaction(state: str, where: str = "status") -> dict:
    message = {**_message("s-1", "ROLE_AGENT"), "metadata": {oracle.on_status.INTERACTIONS: OPEN}}
    status = {"state": state, "timestamp": ENDED["timestamp"]}
    if where == "status":
        return _task(status={**status, "message": message})
    return _task([message], status=status)  # the pause's record, in the Agent's history


def test_an_interaction_on_a_status_that_is_not_paused_is_found_on_every_channel():
    for state in ("TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "TASK_STATE_CANCELED"):
        for method, result in [
            ("GetTask", _with_interaction(state)),
            ("ListTasks", {"tasks": [_with_interaction(state)]}),
            ("SendMessage", {"task": _with_interaction(state)}),
            (
                "(push)",
                {
                    "statusUpdate": {
                        "taskId": "t-1",
                        "contextId": "c-1",
                        **{"status": _with_interaction(state)["status"]},
                    }
                },
            ),
        ]:
            assert ("paused-interaction", "INTER-12") in _judged(Model(), method, result), (state, method)


def test_an_interaction_on_a_paused_status_or_in_history_is_not_judged():
    for state in ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"):
        assert _judged(Model(), "GetTask", _with_interaction(state)) == []
    assert _judged(Model(), "GetTask", _with_interaction("TASK_STATE_COMPLETED", where="history")) == []


# -- push-config-reads

CONFIG = {"id": "p-1", "taskId": "t-1", "url": "http://127.0.0.1:9/a", "token": "tok-a"}


def _config_model(*writes: dict | None, in_flight: bool = False) -> Model:
    """A model where the caller wrote config p-1 of task t-1 (a Create's answer; None: a Delete), each answered at 5."""
    model = Model()
    for answered in writes:
        model.config_write_sent(ME, "t-1")
        model.config_write_answered(ME, "t-1", 5.0)
        model.config_written(ME, "t-1", "p-1", answered, 5.0)
    if in_flight:
        model.config_write_sent(ME, "t-1")
    return model


def _read(model: Model, method: str, shown: dict) -> list:
    result = shown if method.startswith("Get") else {"configs": [shown]}
    return _judged(model, method, result, {"taskId": "t-1", "id": "p-1"})


def test_a_config_read_otherwise_than_its_last_create_answered_is_found():
    replaced = {**CONFIG, "url": "http://127.0.0.1:9/b", "token": "tok-b"}
    for method in ("GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs"):
        assert _read(_config_model(CONFIG, replaced), method, CONFIG) == [("push-config-reads", "PUSH-01")]
        assert _read(_config_model(CONFIG, replaced), method, replaced) == []
        assert _read(_config_model(CONFIG), method, {**CONFIG, "token": ""}) == [("push-config-reads", "PUSH-01")]
    deleted = _config_model(CONFIG, None)
    assert _read(deleted, "ListTaskPushNotificationConfigs", CONFIG) == [("push-config-reads", "PUSH-01")]


def test_a_create_answering_another_url_than_sent_is_found():
    sent = {"taskId": "t-1", "url": "http://127.0.0.1:9/a?kit=1"}
    created = "CreateTaskPushNotificationConfig"
    dropped = {**CONFIG, "url": "http://127.0.0.1:9/a"}
    assert _judged(Model(), created, dropped, sent) == [("push-config-reads", "PUSH-01")]
    assert _judged(Model(), created, {**CONFIG, "url": "HTTP://127.0.0.1:9/a?kit=1"}, sent) == []  # RFC 3986 §6.2.2.1
    assert _judged(Model(), created, {**CONFIG, "url": "http://127.0.0.1:9/A?kit=1"}, sent) == [
        ("push-config-reads", "PUSH-01")
    ]
    pathless = {"taskId": "t-1", "url": "http://h.example?Kit=1"}  # a query after no path keeps its case too
    assert _judged(Model(), created, {**CONFIG, "url": "http://H.example?kit=1"}, pathless) == [
        ("push-config-reads", "PUSH-01")
    ]


def test_config_reads_left_open_are_not_judged():
    same = {**CONFIG, "tenant": "", "authentication": {"scheme": "", "credentials": ""}}  # ProtoJSON's defaults
    assert _read(_config_model(CONFIG), "GetTaskPushNotificationConfig", same) == []
    # a write in flight, or a config the caller never wrote, or another caller's: not judged
    assert _read(_config_model(CONFIG, in_flight=True), "GetTaskPushNotificationConfig", {**CONFIG, "url": "x"}) == []
    assert _read(Model(), "GetTaskPushNotificationConfig", {**CONFIG, "url": "x"}) == []
    other = _config_model(CONFIG)
    result = {**CONFIG, "url": "x"}
    assert _judged(other, "GetTaskPushNotificationConfig", result, {"taskId": "t-1", "id": "p-1"}, OTHER_SUBJECT) == []
    # a Create answered: recorded, never judged itself; a refused second Create leaves the first standing
    assert _judged(Model(), "CreateTaskPushNotificationConfig", CONFIG, {"taskId": "t-1", "url": CONFIG["url"]}) == []


def test_a_config_inside_send_message_leaves_the_tasks_configs_unjudged():
    model = _config_model(CONFIG)
    request = {
        "message": {"messageId": "m-9", "taskId": "t-1", "role": "ROLE_USER", "parts": [{"text": "x"}]},
        "configuration": {"taskPushNotificationConfig": {"id": "p-1", "url": "http://127.0.0.1:9/z"}},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": request}).encode()
    with _enabled(model):
        oracle.sending(ME, body)
        oracle.observe(ME, body, [{"jsonrpc": "2.0", "id": 1, "result": {"task": _task()}}], sent_at=6.0)
    assert _read(model, "GetTaskPushNotificationConfig", {**CONFIG, "url": "http://127.0.0.1:9/z"}) == []


# -- file-digest


def _file_artifact(content: bytes, size: int, sha256: str) -> dict:
    data = {"kind": "file", "version": 2, "size": size, "sha256": sha256, "path": "notes/a.txt"}
    raw = base64.b64encode(content).decode()
    return {"artifactId": "a-1", "parts": [{"raw": raw}], "metadata": {oracle.on_files.FILES: data}}


def test_a_files_size_or_digest_not_of_its_bytes_is_found_on_every_channel():
    right = hashlib.sha256(b"v2").hexdigest()
    wrong = hashlib.sha256(b"v1").hexdigest()
    for artifact, found in [
        (_file_artifact(b"v2", 2, right), []),
        (_file_artifact(b"v2", 2, right.upper()), []),  # either case
        (_file_artifact(b"v2", 2, wrong), [("file-digest", "FILE-02")]),
        (_file_artifact(b"v2", 3, right), [("file-digest", "FILE-02")]),
    ]:
        assert _judged(Model(), "GetTask", _task(artifacts=[artifact])) == found
        listed = {"tasks": [_task(artifacts=[artifact])]}
        assert _judged(Model(), "ListTasks", listed, {"includeArtifacts": True}) == found
        update = {"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "artifact": artifact}}
        assert _judged(Model(), "(push)", update) == found
    url_part = {**_file_artifact(b"v2", 3, wrong), "parts": [{"url": "http://127.0.0.1:9/f"}]}
    assert _judged(Model(), "GetTask", _task(artifacts=[url_part])) == []  # FILE-02's check fetches it


# -- shared-cache


@pytest.mark.parametrize(
    ("values", "shared"),
    [
        (["public, max-age=300"], True),
        (["max-age=60", "s-maxage=60"], True),
        (["must-revalidate"], True),
        (['private="Set-Cookie", public'], True),  # private naming a field keeps only that field from shared caches
        (['private="Set-Cookie, X-Key", public'], True),  # … a quoted list of fields, commas and all
        (['no-cache="Set-Cookie, X-Key", private'], False),
        ([], False),
        (["max-age=300"], False),
        (["public, no-store"], False),
        (["Private, Public, max-age=5"], False),
        (["no-cache, public"], False),
    ],
)
def test_an_answer_marked_for_shared_caches_is_found(values, shared):
    assert (oracle.shareable(values) is not None) == shared
    head = {"code": 200, "cache-control": values}
    found = _judged(Model(), "(http)", head, {"method": "GET"})
    assert found == ([("shared-cache", "ISO-07")] if shared else [])
    found = _judged(Model(), "(http)", head, {"method": "GetTask"})
    assert found == ([("shared-cache", "ISO-08")] if shared else [])


def test_a_json_rpc_answer_with_an_http_refusals_status_is_found():
    for code in (404, 401, 500, 400):
        assert _judged(Model(), "(http)", {"code": code, "cache-control": []}, {"method": "GetTask"}) == [
            ("rpc-status", "BIND-03")
        ]
    for code in (200, 202, None):
        assert _judged(Model(), "(http)", {"code": code, "cache-control": []}, {"method": "GetTask"}) == []
    assert _judged(Model(), "(http)", {"code": 404, "cache-control": []}, {"method": "GET"}) == []  # a feed page


# -- listed-order


def _listed(*stamps: str) -> dict:
    return {"tasks": [_task(status={**ENDED, "timestamp": t}, id=f"t-{n}") for n, t in enumerate(stamps)]}


def test_a_page_out_of_latest_change_first_is_found():
    found = _judged(Model(), "ListTasks", _listed("2026-12-05T10:00:00.100Z", "2026-12-05T10:00:00.300Z"))
    assert found == [("listed-order", "LIST-04")]
    # equal times, times within a step of the coarser one, an offset read as the instant it names: in any order
    assert _judged(Model(), "ListTasks", _listed("2026-12-05T10:00:00.300Z", "2026-12-05T10:00:00.300Z")) == []
    assert _judged(Model(), "ListTasks", _listed("2026-12-05T10:00:00Z", "2026-12-05T10:00:00.900Z")) == []
    assert _judged(Model(), "ListTasks", _listed("2026-12-05T12:00:00.500+02:00", "2026-12-05T10:00:00.400Z")) == []


# -- the rules as data


def test_every_rule_names_requirements_that_exist_and_a_proof_the_agent_has():
    known = requirements.load()
    names = set(mutants.catalog())
    for rule in rules.RULES:
        named = set(re.findall(r"[A-Z]+-\d+", rule.requirements))
        assert named and named <= set(known), (rule.name, named - set(known))
        assert rule.open and rule.proof, f"{rule.name} says what it leaves open and what proves it"
        missing = [p for p in rule.proof if not any(n == p or n.endswith(f"/{p}") for n in names)]
        assert not missing, (rule.name, missing)


def test_the_rules_table_in_the_docs_is_the_rules():
    page = (REPO / "docs" / "oracle.md").read_text(encoding="utf-8")
    assert oracle.table() in page, "regenerate the table of docs/oracle.md from nylorun_a2a_kit.fixtures.oracle.table()"


@pytest.mark.slow
def test_every_oracle_rule_fails_under_its_proof(tmp_path):
    """Each rule's first proof, in a run narrowed to the checks of the rule's requirements, SHOULD rules held
    strictly: the rule's name is in a failure, as the oracle writes it (after the check's own failure, if any)."""

    def shown(rule: rules.Rule) -> tuple[str, set[str]]:
        proof = rule.proof[0]
        where = tmp_path / rule.name
        verdicts = run_suites(
            where,
            f"--a2a-reference-mutant={proof}",
            f"--a2a-req={','.join(sorted(set(re.findall(r'[A-Z]+-[0-9]+', rule.requirements))))}",
            "--a2a-strict-should=yes",
            "--a2a-property-profile=quick",
            lean=True,
        )
        junit = "\n".join(p.read_text(encoding="utf-8") for p in where.glob("junit-*.xml"))
        named = {r for found in re.findall(r"oracle rules: ([a-z, -]+)\)", junit) for r in found.split(", ")}
        return f"{rule.name} under {proof}: {verdicts.summary()}", named

    with ThreadPoolExecutor(max_workers=len(rules.RULES)) as pool:  # the run server runs them as it can
        found = dict(zip(rules.RULES, pool.map(shown, rules.RULES), strict=True))
    missing = [summary for rule, (summary, named) in found.items() if rule.name not in named]
    assert not missing, "oracle rules no failure showed under their proof:\n" + "\n".join(missing)


def test_every_form_of_a_request_member_is_an_input_the_suites_must_send():
    forms = oracle.inputs.expected()
    for form in (
        "ListTasks includeArtifacts=false",  # a boolean, both ways
        "ListTasks includeArtifacts=true",
        "ListTasks pageSize=maximum",  # a range's bounds, and past them where an Agent may refuse or clamp
        "ListTasks pageSize=above-maximum",
        "ListTasks statusTimestampAfter=fraction",
        "CreateTaskPushNotificationConfig url=query",
        "SendMessage message.parts=several-items",  # the second of two things
        "SendMessage message.metadata[interactions/v1].value.connected=false",  # an extension's input
        "GetTaskPushNotificationConfig taskId@task=TASK_STATE_FAILED",  # the state of what a request names
        "SendMessage message.contextId@conversation=ended+delivery=reject",
    ):
        assert form in forms, form
    assert not any(f.startswith("SubscribeToTask") for f in oracle.inputs.expected(streams=False))


def test_a_requests_forms_are_read_from_its_values():
    params = {
        "pageSize": 100,
        "includeArtifacts": False,
        "statusTimestampAfter": "2026-01-01T00:00:00.5Z",
        "status": "TASK_STATE_WORKING",
        "historyLength": "ten",  # a wrong type is no form of the member
    }
    assert oracle.inputs.forms_of("ListTasks", params) == {
        "ListTasks pageSize=maximum",
        "ListTasks includeArtifacts=false",
        "ListTasks statusTimestampAfter=fraction",
        "ListTasks status=TASK_STATE_WORKING",
    }
    states = {"t-1": "TASK_STATE_FAILED"}
    found = oracle.inputs.state_forms(
        "SendMessage",
        {"message": {"contextId": "c-1", "metadata": {"delivery": "reject"}}},
        lambda task: states.get(task, "unknown"),
        lambda context: "ended",
    )
    assert found == {"SendMessage message.contextId@conversation=ended+delivery=reject"}
    assert oracle.inputs.state_forms("GetTask", {"id": "t-1"}, states.get, None) == {
        "GetTask id@task=TASK_STATE_FAILED"
    }


def test_every_form_left_out_names_forms_the_schemas_have():
    every = oracle.inputs.every_form()
    for pattern, why in oracle.inputs.LEFT_OUT.items():
        assert why and any(fnmatch.fnmatchcase(f, pattern) for f in every), pattern


# -- what an answer answers, a page as a whole, an error's reason, a turn's end


def test_an_answer_in_another_conversation_than_the_one_chosen_is_found():
    model = Model()
    sent = {"message": {"messageId": "m-9", "role": "ROLE_USER", "contextId": "c-mine", "parts": [{"text": "x"}]}}
    assert ("sent-context", "SEND-13") in _judged(model, "SendMessage", {"task": _task()}, sent)
    assert _judged(model, "SendMessage", {"task": _task(contextId="c-mine")}, sent) == []
    direct = {"message": {**_message("a-1", "ROLE_AGENT"), "contextId": "c-minted"}}
    assert ("sent-context", "SEND-13") in _judged(model, "SendMessage", direct, sent)


def test_a_read_answering_another_task_than_named_is_found():
    model = _model_with_task()
    assert ("answered-task", "TASK-02") in _judged(model, "GetTask", _task(id="t-2"), {"id": "t-1"})
    assert _judged(model, "GetTask", _task(), {"id": "t-1"}) == []
    paused = {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-12-05T10:00:00Z"}
    _judged(model, "GetTask", _task(status=paused), {"id": "t-1"})
    reply = {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": "t-1", "parts": [{"text": "y"}]}}
    assert ("answered-task", "TASK-03") in _judged(model, "SendMessage", {"task": _task(id="t-2")}, reply)


def test_a_task_seen_ended_shown_in_another_state_later_is_found():
    model = _model_with_task()
    _judged(model, "GetTask", _task(), {"id": "t-1"}, sent_at=10.0)  # read ended at 11.0
    failed = {"state": "TASK_STATE_FAILED", "timestamp": "2026-12-05T10:00:01Z"}
    assert ("terminal-kept", "TASK-02") in _judged(model, "GetTask", _task(status=failed), {"id": "t-1"}, sent_at=12)
    assert _judged(model, "GetTask", _task(status=failed), {"id": "t-1"}, sent_at=10.5) == []  # sent before the read
    assert ("terminal-kept", "PUSH-05") in _judged(model, "(push)", {"task": _task(status=failed)})
    working = {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-05T09:59:59Z"}
    assert _judged(model, "(push)", {"statusUpdate": {"taskId": "t-1", "status": working}}) == []  # a late retry


def test_artifacts_sharing_an_id_are_found():
    twice = [{"artifactId": "a-1", "parts": [{"text": "x"}]}, {"artifactId": "a-1", "parts": [{"text": "y"}]}]
    assert ("distinct-artifacts", "SHAPE-02") in _judged(Model(), "GetTask", _task(artifacts=twice))


def test_history_answered_without_history_length_is_found_on_get_task_only():
    shown = _task(history=[_message("m-1", "ROLE_USER")])
    assert ("unasked-history", "TASK-08") in _judged(Model(), "GetTask", shown, {"id": "t-1"})
    assert _judged(Model(), "GetTask", shown, {"id": "t-1", "historyLength": 1}) == []


def test_a_page_breaking_its_filters_or_sizes_is_found():
    page = {"tasks": [_task(), _task(id="t-2")], "nextPageToken": "", "pageSize": 1, "totalSize": 1}
    found = _judged(Model(), "ListTasks", page, {"contextId": "c-2", "status": "TASK_STATE_WORKING", "pageSize": 1})
    assert {("page-filters", "LIST-01"), ("page-filters", "LIST-02"), ("page-sizes", "LIST-12")} <= set(found)
    assert ("page-sizes", "LIST-08") in found
    whole = {"tasks": [_task()], "nextPageToken": "", "pageSize": 50, "totalSize": 1}
    assert _judged(Model(), "ListTasks", whole, {"contextId": "c-1", "status": "TASK_STATE_UNSPECIFIED"}) == []


def test_a_first_page_holding_every_task_of_an_ended_conversation_with_a_token_is_found():
    model = _model_with_task()
    model.state_seen("t-1", "TASK_STATE_COMPLETED")
    model.tasks["t-1"].context = "c-1"
    model.state_seen("t-1", "TASK_STATE_COMPLETED")
    page = {"tasks": [_task()], "nextPageToken": "next", "pageSize": 1, "totalSize": 1}
    assert ("last-page-token", "LIST-07") in _judged(model, "ListTasks", page, {"contextId": "c-1", "pageSize": 1})
    found = _judged(model, "ListTasks", page, {"contextId": "c-9", "pageSize": 1})
    assert ("last-page-token", "LIST-07") not in found  # not a conversation of the caller's


def test_a_missing_tasks_error_with_another_reason_is_found_on_every_method():
    error = {
        "code": -32001,
        "message": "x",
        "data": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "NOT_FOUND", "domain": "d", "metadata": {}}
        ],
    }
    for method, params in (("CancelTask", {"id": "t-9"}), ("GetTaskPushNotificationConfig", {"taskId": "t-9"})):
        answer = Answer(ME, "(error)", params, error, 10.0, 11.0, asked=method)
        assert ("missing-task-reason", "TASK-06") in [(d.rule, d.requirement) for d in rules.judge(Model(), answer)]
    model = _model_with_task()  # a config not found on the caller's own task may say otherwise
    answer = Answer(
        ME, "(error)", {"taskId": "t-1", "id": "c"}, error, 10.0, 11.0, asked="GetTaskPushNotificationConfig"
    )
    assert rules.judge(model, answer) == []


def test_a_turn_whose_end_disagrees_with_its_status_is_found():
    model = _model_with_task()
    turn = {"turnId": "u-1", "status": "running", "endedAt": "2026-12-05T10:00:00Z", "a2a": {"taskId": "t-1"}}
    assert ("turn-ended-at", "FEED-08") in _judged(model, "(feed)", {"turns": [turn]})
    assert _judged(model, "(feed)", {"turns": [{**turn, "status": "completed"}]}) == []


def test_a_pushed_artifact_update_is_judged_as_its_tasks_owner_reads_it():
    model = _model_with_task()
    artifact = {
        "artifactId": "a-1",
        "parts": [{"raw": "aGVsbG8="}],
        "metadata": {
            oracle.on_files.FILES: {"kind": "file", "version": 1, "size": 99, "sha256": "0" * 64, "path": "a.txt"}
        },
    }
    with _enabled(model):
        found = oracle.observe_pushed({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "artifact": artifact}})
    assert [d.rule for d in found] == ["file-digest"]


def test_a_blocking_answer_still_working_before_the_limit_is_found_only_where_the_limit_is_known():
    working = {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-05T10:00:00Z"}
    sent = {"message": {"messageId": "m-9", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
    model = Model()
    assert _judged(model, "SendMessage", {"task": _task(status=working)}, sent) == []  # no limit given
    model.wait_limit_s = 3.0
    assert ("blocking-settled", "SEND-01") in _judged(model, "SendMessage", {"task": _task(status=working)}, sent)
    at_once = {**sent, "configuration": {"returnImmediately": True}}
    assert _judged(model, "SendMessage", {"task": _task(status=working)}, at_once) == []
    late = [
        (d.rule, d.requirement)
        for d in rules.judge(model, Answer(ME, "SendMessage", sent, {"task": _task(status=working)}, 10.0, 12.8))
    ]
    assert late == []  # in the limit's last tenth


def test_a_result_without_the_echo_of_an_activated_declared_extension_is_found():
    model = Model()
    model.declared = frozenset({"https://x/a/v1", "https://x/b/v1"})

    def head(activated, echoed):
        result = {"code": 200, "cache-control": [], "activated": activated, "echoed": echoed}
        return [
            (d.rule, d.requirement)
            for d in rules.judge(model, Answer(ME, "(http)", {"method": "GetTask"}, result, 10.0, 11.0))
        ]

    assert ("extension-echo", "EXT-01") in head(["https://x/a/v1, https://x/b/v1"], ["https://x/a/v1"])
    assert head(["https://x/a/v1", "https://x/b/v1"], ["https://x/b/v1,https://x/a/v1"]) == []  # lines, any order
    assert head(["https://x/a/v1, https://x/undeclared/v1"], ["https://x/a/v1"]) == []
    assert head(None, None) == []  # an error answer


def test_an_ended_tasks_artifacts_read_again_otherwise_are_found():
    model = _model_with_task()
    one = [{"artifactId": "a-1", "parts": [{"text": "x"}]}]
    sent = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
    assert _judged(model, "SendMessage", {"task": _task()}, sent) == []  # answered ended, without artifacts
    assert ("ended-artifact-set", "TASK-04") in _judged(model, "GetTask", _task(artifacts=one))
    assert _judged(model, "GetTask", _task(artifacts=one)) == []  # as read last


def test_a_turns_times_task_and_conversation_are_held_to_each_other_and_to_before():
    model = _model_with_task()
    model.tasks["t-1"].context = "c-1"
    turn = {
        "turnId": "u-1",
        "status": "completed",
        "a2a": {"taskId": "t-1", "contextId": "c-1"},
        "startedAt": "2026-12-05T10:00:00Z",
        "changedAt": "2026-12-05T10:00:05Z",
        "endedAt": "2026-12-05T10:00:05Z",
    }
    assert _judged(model, "(feed)", {"turns": [turn]}) == []
    moved = {**turn, "startedAt": "2026-12-05T10:00:04Z"}
    assert ("turn-times", "FEED-08") in _judged(model, "(feed)", {"turns": [moved]})
    late = {**turn, "startedAt": "2026-12-05T10:00:09Z"}
    assert ("turn-times", "FEED-08") in _judged(model, "(feed)", {"turns": [late]})
    twice = {**turn, "turnId": "u-2"}
    assert ("turn-times", "FEED-08") in _judged(model, "(feed)", {"turns": [twice]})
