"""The reference agent itself: durable across restarts, never an HTTP 500, a console script that explains."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
from pathlib import Path

import httpx
import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.scenarios import drivers
from tests.agent_process import CONSOLE_SCRIPT, agent_process

KEY = "kit-key"


def _client(base: str) -> A2AClient:
    return A2AClient(f"{base}/v1/a2a/agents/support", key=KEY, subject="a2a:restart", timeout_s=20)


def test_tasks_survive_a_restart(tmp_path):
    db = tmp_path / "agent.sqlite3"
    with agent_process(db, "--key", KEY, "--wait-ms", "5000") as base:
        client = _client(base)
        done = drivers.run(client, "complete")
        asked = drivers.run(client, "ask")
        slow = client.send(drivers.scenario("slow", 1500), return_immediately=True).task
    with agent_process(db, "--key", KEY, "--wait-ms", "5000") as base:
        client = _client(base)
        assert client.get_task(done["id"]).task == done
        assert drivers.state(client.get_task(asked["id"]).task) == "TASK_STATE_INPUT_REQUIRED"
        answered = drivers.settle(client, client.send("blue", task_id=asked["id"]).task)
        assert (answered["id"], drivers.state(answered)) == (asked["id"], "TASK_STATE_COMPLETED")
        # A turn the stopped process left running is taken up again and ends.
        assert drivers.state(drivers.wait_for(client, slow["id"], drivers.TERMINAL)) == "TASK_STATE_COMPLETED"
        listed = client.list_tasks()
        assert {done["id"], asked["id"], slow["id"]} <= {t["id"] for t in listed.result["tasks"]}


def _send_params(params: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}).encode()


MALFORMED_BODIES = {
    "empty": b"",
    "whitespace": b"  \n ",
    "null": b"null",
    "array": b"[]",
    "batch": b'[{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}]',
    "string": b'"SendMessage"',
    "deep-nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep-params": b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":' + b'{"a":' * 5000 + b"1" + b"}" * 5001,
    "huge-string": json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x" * 2_000_000}}
    ).encode(),
    "invalid-utf8": b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\xc3\x28"}}',
    "nul-bytes": b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\\u0000"}}',
    "id-object": b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ListTasks", "params": {}}',
    "id-float": b'{"jsonrpc": "2.0", "id": 1.5, "method": "ListTasks", "params": {}}',
    "no-id": b'{"jsonrpc": "2.0", "method": "ListTasks", "params": {}}',
    "parts-not-list": _send_params({"message": {"messageId": "m", "role": "ROLE_USER", "parts": "x"}}),
    "raw-not-base64": _send_params({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"raw": "!!"}]}}),
    "nan": _send_params({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}).replace(
        b'"text": "x"', b'"data": NaN'
    ),
    "lone-surrogate": b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\\ud800"}}',
    "page-token-infinity": json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ListTasks",
            "params": {"pageToken": "eyJzIjogSW5maW5pdHksICJmIjogIngifQ"},
        }
    ).encode(),
    "too-large": b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "' + b"y" * 9_000_000 + b'"}}',
}


# Valid requests without id: notifications, which get HTTP 204 and no body.
NOTIFICATIONS = {"no-id"}


@pytest.fixture(scope="module")
def running_agent(tmp_path_factory):
    with agent_process(tmp_path_factory.mktemp("agent") / "agent.sqlite3", "--key", KEY) as base:
        yield base


@pytest.mark.parametrize("case", MALFORMED_BODIES, ids=list(MALFORMED_BODIES))
def test_malformed_body_gets_an_answer_not_a_server_failure(running_agent, case):
    headers = {
        "Authorization": f"Bearer {KEY}",
        "Nylorun-Subject": "s",
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
    }
    response = httpx.post(
        f"{running_agent}/v1/a2a/agents/support", content=MALFORMED_BODIES[case], headers=headers, timeout=30
    )
    assert response.status_code < 500, response.text[:500]
    if case in NOTIFICATIONS:  # served, and not replied to (JSON-RPC 2.0 §4.1)
        assert response.status_code == 204 and not response.content, (response.status_code, response.text[:500])
    elif response.status_code == 200:
        body = response.json()
        assert body["jsonrpc"] == "2.0" and body["error"]["code"] in (-32700, -32600, -32602, -32001), body
    else:
        assert response.status_code == 413, response.status_code
    # The agent is still up and serving.
    alive = httpx.post(
        f"{running_agent}/v1/a2a/agents/support",
        headers=headers,
        timeout=30,
        json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 1}},
    )
    assert alive.status_code == 200 and "result" in alive.json()


def test_console_script_lists_faults_and_refuses_unknown_ones(tmp_path):
    listed = subprocess.run([str(CONSOLE_SCRIPT), "--list-mutants"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "fault/versioning/no-version-check:" in listed.stdout
    assert "\nsetup/restarted:" in listed.stdout and "\nallowed/" in listed.stdout, "one registry lists every deviation"
    refused = subprocess.run(
        [str(CONSOLE_SCRIPT), "--db", str(tmp_path / "x.sqlite3"), "--mutant", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 4
    assert refused.stderr.strip().count("\n") == 0 and "unknown mutant nope" in refused.stderr
    setup = subprocess.run(
        [str(CONSOLE_SCRIPT), "--db", str(tmp_path / "x.sqlite3"), "--mutant", "setup/single-agent"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert setup.returncode == 4 and setup.stderr.strip().count("\n") == 0, setup.stderr
    assert "--a2a-reference-mutant=setup/single-agent" in setup.stderr and "--agent" in setup.stderr, setup.stderr


def test_unreadable_body_is_refused_not_a_server_failure(running_agent):
    headers = {
        "Authorization": f"Bearer {KEY}",
        "Nylorun-Subject": "s",
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
    }
    response = httpx.post(f"{running_agent}/v1/a2a/agents/support", content=b"not gzip", headers=headers, timeout=30)
    assert response.status_code == 400, response.text


def test_whole_number_written_as_float_is_an_int(running_agent):
    client = A2AClient(f"{running_agent}/v1/a2a/agents/support", key=KEY, subject="a2a:floats", timeout_s=20)
    params = {
        "message": {"messageId": "float-1", "role": "ROLE_USER", "parts": [{"text": drivers.scenario("complete")}]},
        "configuration": {"historyLength": 1.0},
    }
    task = client.call("SendMessage", params).task
    assert len(task.get("history") or []) <= 1
    assert client.call("ListTasks", {"pageSize": 2.0}).result["pageSize"] == 2


def test_a_notification_is_served_without_a_reply(running_agent):
    headers = {"Authorization": f"Bearer {KEY}", "Nylorun-Subject": "a2a:notified", "A2A-Version": "1.0"}
    context = drivers.new_context()
    message = {"messageId": "notified-1", "role": "ROLE_USER", "contextId": context, "parts": [{"text": "hello"}]}
    notification = {"jsonrpc": "2.0", "method": "SendMessage", "params": {"message": message}}
    response = httpx.post(f"{running_agent}/v1/a2a/agents/support", json=notification, headers=headers, timeout=30)
    assert (response.status_code, response.content) == (204, b"")
    client = A2AClient(f"{running_agent}/v1/a2a/agents/support", key=KEY, subject="a2a:notified", timeout_s=20)
    assert [t["contextId"] for t in client.list_tasks(contextId=context).result["tasks"]] == [context]


def test_card_is_cached_and_revalidated(running_agent):
    url = f"{running_agent}/v1/a2a/agents/support/card"
    first = httpx.get(url, timeout=30)
    etag = first.headers["ETag"]
    assert first.status_code == 200 and "max-age=" in first.headers["Cache-Control"] and etag.startswith('"')
    assert httpx.get(url, timeout=30).headers["ETag"] == etag
    unchanged = httpx.get(url, headers={"If-None-Match": f'"other", W/{etag}'}, timeout=30)
    assert (unchanged.status_code, unchanged.content, unchanged.headers["ETag"]) == (304, b"", etag)
    assert httpx.get(url, headers={"If-None-Match": '"other"'}, timeout=30).status_code == 200


AGENT = Path(__file__).resolve().parent.parent / "reference_agent"
PACKAGE = "nylorun_a2a_kit.reference_agent"


def _module_name(path: Path) -> str:
    parts = path.relative_to(AGENT).with_suffix("").parts
    return ".".join((PACKAGE, *parts[:-1])) if parts[-1] == "__init__" else ".".join((PACKAGE, *parts))


def _imports() -> dict[str, set[str]]:
    """Each reference agent module and the reference agent modules it imports, wherever it imports them
    (``if TYPE_CHECKING:`` and function bodies included: a circle of type hints is a circle too)."""
    modules = {_module_name(path): path for path in AGENT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                graph[name] |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom):
                package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    graph[name] |= {target} if target in modules else ({base} & modules.keys())
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import each other (Tarjan's strongly connected parts)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return groups


def test_the_reference_agent_imports_no_circle():
    graph = _imports()
    assert f"{PACKAGE}.turn" in graph[f"{PACKAGE}.engine"], "the import graph was not read"
    circles = [" <-> ".join(m.removeprefix(PACKAGE + ".") for m in group) for group in _cycles(graph)]
    assert not circles, f"reference agent modules that import each other: {circles}"


def test_a_circle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_fault_has_its_behaviour_and_the_agent_names_none():
    """Each fault acts through a variant or a middleware declared with it; the agent's own modules, outside
    ``reference_agent/faults/``, name no fault and ask about none."""
    from nylorun_a2a_kit.reference_agent.faults import FAULTS

    assert FAULTS, "no faults are declared"
    without = sorted(name for name, fault in FAULTS.items() if not (fault.variants or fault.middlewares))
    assert not without, f"faults without a behaviour: {without}"
    named = {}
    for path in AGENT.glob("*.py"):
        tree = ast.parse(path.read_text())
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        calls = (n.func for n in ast.walk(tree) if isinstance(n, ast.Call))
        asks = any(getattr(f, "attr", getattr(f, "id", None)) == "fault" for f in calls)  # config.fault(…), fault(…)
        if strings & set(FAULTS) or asks:
            named[path.name] = sorted(strings & set(FAULTS)) or ["asks config.fault"]
    assert not named, f"production modules that branch on faults: {named}"


# What each variation of what HTTP stacks do changes in the agent's own answer: a variation that changed nothing would
# prove nothing in the runs that carry it (tests/suite_runs.HTTP_BESIDE_A_SETUP).
HTTP_VARIATIONS_SHOW = {
    "allowed/http/chunked": ("transfer-encoding", "chunked"),
    "allowed/http/connection-close": ("connection", "close"),
    "allowed/http/charset": ("content-type", "application/json"),
}


@pytest.mark.parametrize("name", sorted(HTTP_VARIATIONS_SHOW))
def test_each_variation_of_what_http_stacks_do_changes_the_agents_answer(tmp_path, name):
    from nylorun_a2a_kit.fixtures import mutation
    from nylorun_a2a_kit.reference_agent.app import serve_in_thread
    from nylorun_a2a_kit.reference_agent.config import AgentConfig, KeyGrant

    assert {n for n in mutation.registry() if n.startswith("allowed/http/")} == set(HTTP_VARIATIONS_SHOW)
    header, shown = HTTP_VARIATIONS_SHOW[name]
    call = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}
    headers = {"Authorization": "Bearer k", "A2A-Version": "1.0", "Nylorun-Subject": "a2a:conformance"}
    answers = {}
    for mutants in (frozenset(), frozenset({name})):
        agent = serve_in_thread(
            AgentConfig(db_path=str(tmp_path / f"{len(mutants)}.sqlite3"), keys={"k": KeyGrant()}, mutants=mutants)
        )
        try:
            answers[bool(mutants)] = httpx.post(agent.url, headers=headers, json=call, timeout=30)
        finally:
            agent.stop()
    plain, varied = answers[False], answers[True]
    assert plain.headers.get(header) != shown and varied.headers.get(header) == shown, (plain.headers, varied.headers)
    assert varied.json() == plain.json(), "the variation changes the framing, never the answer"
