"""The harness: options, target resolution, one-line errors, shape checks, failure reports, same verdicts."""

from __future__ import annotations

import base64
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from nylorun_a2a_kit.fixtures import options, target
from nylorun_a2a_kit.fixtures.client import A2AClient, ShapeError
from nylorun_a2a_kit.fixtures.plugin import silence
from nylorun_a2a_kit.fixtures.push import free_ports
from nylorun_a2a_kit.fixtures.target import claimed_tier, declared_scenarios
from tests.agent_process import agent_process
from tests.silent_target import relay_that_goes_silent
from tests.suite_runs import REPO, clean_run, run_suites

USAGE_ERROR = 4
# These bounds tell a run the liveness probe stopped (a timeout, the probe and the run's own ending: seconds) from
# one that waits out a timeout per check left (hundreds of checks, each TIMEOUT_S: many minutes). They are wide,
# since a busy runner starts and ends processes slowly; they are no speed goal.
STARTUP_S = 45  # two workers starting, and the checks that ran before the target went silent
CHECKED_BEFORE_FREEZE = 20  # checks the gate's run has judged when the target's process is stopped
SLACK_S = 45  # the workers' in-flight checks ending, and the gate writing what it publishes
TIMEOUT_S = 3
# A run of two workers against an agent_process started with kit-key, which then stops answering.
AGAINST_A_STOPPING_TARGET = ("--a2a-key=kit-key", f"--a2a-timeout-s={TIMEOUT_S}", "-n", "2", "-p", "no:randomly")
VALID_CARD = {
    "name": "plain",
    "description": "an agent",
    "version": "1",
    "supportedInterfaces": [{"url": "http://127.0.0.1:9/app", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}],
}


def test_default_card_url_follows_the_client_page():
    assert target.default_card_url("https://rt.example/v1/a2a/agents/support") == (
        "https://rt.example/v1/a2a/agents/support/card"
    )
    assert target.default_card_url("https://app.example/a2a/") == "https://app.example/a2a/.well-known/agent-card.json"
    assert target.runtime_parts("https://rt.example/base/v1/a2a/agents/billing") == (
        "https://rt.example/base",
        "billing",
    )
    assert target.runtime_parts("https://app.example/a2a") is None


def test_claim_and_scenarios_are_read_from_the_card():
    uris = [
        "https://docs.nylorun.com/a2a/interactions/v1",
        "https://docs.nylorun.com/a2a/effects/v1",
        "https://docs.nylorun.com/a2a/progress/v1",
        "https://docs.nylorun.com/a2a/telemetry/v1",
        "https://docs.nylorun.com/a2a/files/v1",
    ]

    def card(declared, tags=()):
        return {"capabilities": {"extensions": [{"uri": u} for u in declared]}, "skills": [{"tags": list(tags)}]}

    assert claimed_tier(card(uris)) == "profile-v2"
    assert claimed_tier(card(uris[:2])) == "profile-v1"
    assert claimed_tier(card(uris[2:])) == "core"
    assert declared_scenarios(card([], ["scenario-contract/v1", "scenario:ask", "other"])) == {"ask"}
    assert declared_scenarios(card([], ["scenario:ask"])) == frozenset(), "tags without the contract tag do not count"


def _client_answering(body: dict) -> A2AClient:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=body))
    return A2AClient("http://agent.test/rpc", key="k", subject="s", http=httpx.Client(transport=transport))


def test_shape_error_names_the_json_path_and_rule():
    task = {"id": "t1", "status": {"state": "TASK_STATE_DONE", "timestamp": "2026-01-01T00:00:00Z"}}
    client = _client_answering({"jsonrpc": "2.0", "id": "r1", "result": task})
    exchange = client.call("GetTask", {"id": "t1"}, request_id="r1")  # a check reads past it (SHAPE-01's)
    assert exchange.violations and exchange.task["id"] == "t1"
    with pytest.raises(ShapeError) as caught:
        exchange.expect_shape()
    message = str(caught.value)
    assert "$.result.status.state" in message and "enum" in message
    assert "→ POST http://agent.test/rpc  [GetTask]" in message and "TASK_STATE_DONE" in message
    assert "Bearer ***" in message, "the application key is never quoted"


def test_a_broken_envelope_fails_the_check_at_once():
    client = _client_answering({"jsonrpc": "2.0", "id": "r1", "result": {}, "error": {"code": -1, "message": "x"}})
    with pytest.raises(ShapeError):
        client.call("GetTask", {"id": "t1"}, request_id="r1")


def test_wrong_answer_id_fails_the_check():
    client = _client_answering(
        {"jsonrpc": "2.0", "id": "other", "result": {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}}}
    )
    with pytest.raises(AssertionError, match="is not the request's id"):
        client.call("GetTask", {"id": "t1"}, request_id="r1")


def _one_error_line(verdicts) -> str:
    assert verdicts.returncode == USAGE_ERROR, verdicts.output
    errors = [line for line in verdicts.output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, verdicts.output
    assert "Traceback" not in verdicts.output
    assert len(errors[0]) < 300
    return errors[0]


def test_every_option_has_an_environment_variable_of_one_scheme():
    for spec in options.OPTIONS:
        names = options.env_names(spec.name)
        assert names[0] == "NYLORUN_A2A_" + spec.name.upper(), names
        assert all(name.startswith("NYLORUN_") for name in names), names
    aliases = {name for spec in options.OPTIONS for name in options.env_names(spec.name)[1:]}
    assert {"NYLORUN_RUNTIME_URL", "NYLORUN_SERVER_KEY"} <= aliases, "the client page's names are read"


@pytest.mark.slow
def test_a_wrong_key_ends_the_run_before_any_check(tmp_path):
    with agent_process(tmp_path / "agent.sqlite3", "--key", "kit-key") as base:
        verdicts = run_suites(tmp_path, f"--target-url={base}/v1/a2a/agents/support", "--a2a-key=wrong", timeout_s=60)
    error = _one_error_line(verdicts)
    assert "HTTP 401" in error and "check --a2a-key" in error, error
    assert not verdicts.outcomes, "no check ran"


@pytest.mark.slow
def test_a_target_url_serving_html_ends_the_run_before_any_check(tmp_path, card_server):
    base, served = card_server
    served["card"] = VALID_CARD
    verdicts = run_suites(tmp_path, f"--target-url={base}/app", "--a2a-card-url=" + base + "/card.json", timeout_s=60)
    error = _one_error_line(verdicts)
    assert "HTML page" in error and "--target-url" in error, error


@pytest.mark.slow
def test_a_target_that_goes_silent_stops_the_run_fast_without_a_verdict(tmp_path):
    """A frozen target: connections are accepted and never answered. Under -n 2 the run ends within
    --a2a-timeout-s, the liveness probe and a few seconds, in one line, exit 4; nothing is judged."""
    junit = tmp_path / "junit.xml"
    with (
        agent_process(tmp_path / "agent.sqlite3", "--key", "kit-key") as base,
        relay_that_goes_silent(base, answered_posts=6) as relay,
    ):
        verdicts = run_suites(
            tmp_path,
            f"--target-url={relay}/v1/a2a/agents/support",
            *AGAINST_A_STOPPING_TARGET,
            f"--a2a-summary-dir={tmp_path / 'out'}",
            f"--junitxml={junit}",
            timeout_s=300,
        )
        took = verdicts.seconds  # from the run's start: not its time in the run server's queue
    assert verdicts.returncode == USAGE_ERROR, verdicts.output[-3000:]
    assert took < TIMEOUT_S + silence.PROBE_S + STARTUP_S, f"the run took {took:.0f} s to see the target stopped"
    [line] = [line for line in verdicts.output.splitlines() if "stopped answering at" in line]
    assert "checks not run" in line and "check that the Agent is up" in line, line
    assert "(SHOULD) not met" not in verdicts.output, "no answer is never a SHOULD not met"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "no-verdict" and "stopped answering at" in summary["verdict_reasons"][0]
    assert summary["no_verdict"] and not summary["new_failures"], "a check that got no answer is no failure"
    unanswered = [t for t in summary["no_verdict"] if verdicts.outcomes.get(t.replace("/", ".").replace(".py::", "::"))]
    assert all(verdicts.outcomes[t.replace("/", ".").replace(".py::", "::")] == "skipped" for t in unanswered)
    assert "no verdict: the target at" in junit.read_text(encoding="utf-8")


@pytest.fixture
def card_server():
    """A plain HTTP server whose card is whatever the test puts in ``served["card"]``."""
    served: dict = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self._answer(json.dumps(served["card"]).encode(), "application/json")

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._answer(b"<!DOCTYPE html><html><body>Sign in</body></html>", "text/html; charset=utf-8")

        def _answer(self, body: bytes, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", served
    server.shutdown()
    thread.join(timeout=10)


@pytest.mark.slow
def test_a_card_that_is_no_json_object_ends_the_run_in_one_line(tmp_path, card_server):
    # A card that is an object but breaks the AgentCard schema is CARD-01's failure (the fault
    # card-capability-as-text proves it); one that is no object at all leaves nothing to read.
    base, served = card_server
    served["card"] = ["a list, not a card"]
    verdicts = run_suites(tmp_path, f"--target-url={base}/v1/a2a/agents/support", timeout_s=60)
    assert "is not a JSON object" in _one_error_line(verdicts), verdicts.output


@pytest.mark.slow
def test_failure_report_quotes_the_exchanges_and_the_requirement(tmp_path):
    # CI=true, as in a release pipeline: pytest then prints the short summary lines whole.
    verdicts = run_suites(
        tmp_path, "--a2a-reference-mutant=wrong-error-code", "--a2a-req=TASK-05,TASK-06", "-rf", env={"CI": "true"}
    )
    assert verdicts.returncode == 1
    output = verdicts.output
    assert "→ POST" in output and "← HTTP 200" in output
    assert "expected TaskNotFoundError (-32001), got error -32602 " in output
    failure = output[output.index("_ test_unknown_task_is_not_found _") :]
    failure = failure[: failure.index("\n_", 1)] if "\n_" in failure[1:] else failure
    first = next(line for line in failure.splitlines() if line.startswith("E "))
    assert first.startswith("E       VerdictError: TASK-05 (MUST): "), "the requirement comes first: " + first
    assert failure.count("→ POST") == 1, "each exchange is quoted once"
    assert "fixtures/client.py" not in failure, "the harness's own frames are left out"
    assert "FAILED suites/test_tasks.py::test_unknown_task_is_not_found - VerdictError: TASK-05" in output
    assert len(failure.splitlines()) < 80, failure


@pytest.mark.slow
def test_property_failure_reports_the_minimal_example_and_the_seed(tmp_path):
    verdicts = run_suites(
        tmp_path,
        "--a2a-reference-mutant=wrong-response-id",
        "--a2a-property-profile=thorough",
        "--hypothesis-seed=1234",
        "-k",
        "test_valid_params_get_one_valid_answer and GetTask]",
    )
    assert verdicts.returncode == 1, verdicts.output
    assert "params=" in verdicts.output, "the falsifying example is shown: " + verdicts.output[-3000:]
    assert "--a2a-property-profile thorough --hypothesis-seed=1234" in verdicts.output, verdicts.output[-3000:]


# Checks that only the embedded agent's configuration makes possible (its allowlist holds the kit's ports).
EMBEDDED_ONLY = (
    "give --a2a-push-closed-listen",
    "give --a2a-push-refused-listen",
    "whether a remote Runtime allows",
    "whether a Runtime's allow-list names these loopback spellings",
)


STARTED_AGENT_WORKERS = 3  # what -n auto gives the loopback agent: its verdicts are those of a run as users make it


@pytest.mark.slow
def test_a_started_agent_gets_the_same_verdicts_as_the_embedded_one(tmp_path, tmp_path_factory):
    embedded = clean_run(tmp_path_factory)
    secret = "whsec_" + base64.b64encode(b"s" * 32).decode()
    # Under -n N each worker listens on the port given plus its number: the agent's allow-list names each.
    first, n = free_ports(3 * STARTED_AGENT_WORKERS), STARTED_AGENT_WORKERS
    port, closed, refused = first, first + n, first + 2 * n  # the receivers', the closed and the refusing ports
    allowed = [
        option for first in (port, closed) for k in range(n) for option in ("--push-allow", f"127.0.0.1:{first + k}")
    ]
    agent_args = [
        "--key",
        "kit-key",
        "--key",
        "kit-rate-limited@3/3600",
        "--wait-ms",
        "3000",
        "--push-secret",
        secret,
        *allowed,
        "--push-allow",
        "127.0.0.1:80",  # named in configs on paused tasks, never sent to (PUSH-20, PUSH-21)
        "--push-time-scale",
        "0.0001",
        "--push-attempt-timeout-s",
        "1",
    ]
    with agent_process(tmp_path / "agent.sqlite3", *agent_args) as base:
        remote = run_suites(
            tmp_path,
            f"--target-url={base}/v1/a2a/agents/support",
            "--a2a-key=kit-key",
            "--a2a-other-subject=a2a:conformance-other",
            f"--a2a-other-agent-url={base}/v1/a2a/agents/billing",
            "--a2a-rate-limit-key=kit-rate-limited",
            "--a2a-wait-ms=3000",
            f"--a2a-push-secret={secret}",
            f"--a2a-push-listen=127.0.0.1:{port}",
            "--a2a-push-time-scale=0.0001",
            "--a2a-push-wait-s=15",
            "--a2a-push-slow-s=1.5",
            f"--a2a-push-closed-listen=127.0.0.1:{closed}",
            f"--a2a-push-refused-listen=127.0.0.1:{refused}",
            "--a2a-push-allowed-url=http://127.0.0.1:80/kit-allowed",
            "-n",
            str(STARTED_AGENT_WORKERS),
        )
    assert remote.outcomes, remote.output[-3000:]
    remote_host_checks = [t for t in remote.outcomes if "test_push_hosts" in t and "spelling" not in t]
    assert all(remote.outcomes[t] == "passed" for t in remote_host_checks if "[" not in t), remote.summary()
    differ = {
        t: (embedded.outcomes.get(t), remote.outcomes.get(t))
        for t in set(embedded.outcomes) | set(remote.outcomes)
        if embedded.outcomes.get(t) != remote.outcomes.get(t)
        and not any(why in remote.messages.get(t, "") for why in EMBEDDED_ONLY)
    }
    assert not differ, differ


@pytest.mark.slow
def test_runtime_url_and_key_come_from_the_environment(tmp_path):
    with agent_process(tmp_path / "agent.sqlite3", "--key", "env-key", "--wait-ms", "1500") as base:
        verdicts = run_suites(
            tmp_path,
            "--a2a-req=VER-01,TASK-05,AUTH-01",
            env={"NYLORUN_RUNTIME_URL": base, "NYLORUN_SERVER_KEY": "env-key", "NYLORUN_A2A_AGENT_ID": "billing"},
        )
    assert verdicts.returncode == 0, verdicts.output[-3000:]
    assert set(verdicts.outcomes.values()) == {"passed"}, verdicts.summary()


@pytest.mark.slow
def test_core_claim_skips_profile_checks_with_a_reason(tmp_path):
    verdicts = run_suites(tmp_path, "--a2a-claim=core")
    assert verdicts.returncode == 0, verdicts.output[-3000:]
    skipped = verdicts.with_outcome("skipped")
    assert skipped and verdicts.with_outcome("passed"), verdicts.summary()
    for test_id in skipped:
        message = verdicts.messages[test_id]
        assert message.startswith("not applicable:"), message
        reasons = ("claims A2A 1.0 core", "pushNotifications true", "streaming false", "extendedAgentCard false")
        assert any(why in message for why in reasons), message


@pytest.mark.slow
def test_target_without_the_scenario_contract_skips_those_checks_with_a_reason(tmp_path):
    with agent_process(tmp_path / "agent.sqlite3", "--key", "kit-key", "--hide-scenarios") as base:
        verdicts = run_suites(
            tmp_path, f"--target-url={base}/v1/a2a/agents/support", "--a2a-key=kit-key", "--a2a-other-subject=a2a:other"
        )
    # The card claims Profile v2, whose scenario checks are not verified: a claim read from the card is not enforced.
    assert verdicts.returncode == 0, verdicts.output[-3000:]
    skipped = verdicts.with_outcome("skipped")
    contract = [t for t in skipped if "does not advertise scenario" in verdicts.messages[t]]
    assert contract and verdicts.with_outcome("passed"), verdicts.summary()
    assert all(verdicts.messages[t].startswith(("not applicable:", "not checked:")) for t in skipped), verdicts.messages


@pytest.mark.slow
def test_summary_reports_the_tier_claimed_and_reached(tmp_path):
    verdicts = run_suites(tmp_path, "--a2a-reference-mutant=text-approves", "--a2a-req=INTER-09,TASK-05", "-n", "2")
    assert verdicts.returncode == 1, verdicts.output[-3000:]
    assert "tier claimed: Profile v2; tier reached: none" in verdicts.output, verdicts.output[-2000:]
    assert "Profile v1: " in verdicts.output and "1 failed (INTER-09)" in verdicts.output
    assert "not verified (" in verdicts.output, "a run of two checks verifies no tier"


def test_the_readme_documents_every_option():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    flags = [options.flag(spec.name) for spec in options.OPTIONS if spec.name not in options.FOREIGN]
    missing = [flag for flag in flags if f"`{flag}`" not in readme]
    assert not missing, f"options the README's table does not name: {missing}"


@pytest.mark.slow
def test_a_frozen_target_stops_the_gate_fast_in_one_line(tmp_path):
    """The target's process stopped (SIGSTOP) while a gated -n 2 run checks it: the gate ends within the
    timeout, the liveness probe and a few seconds, in one line, exit 4, and publishes no verdict."""
    db = tmp_path / "frozen-agent.sqlite3"
    gate = [sys.executable, "-m", "nylorun_a2a_kit.fixtures.gate.cli", "--no-html", "--out", str(tmp_path / "out")]
    with agent_process(db, "--key", "kit-key") as base:
        [pid] = [
            int(p) for p in subprocess.run(["pgrep", "-f", str(db)], capture_output=True, text=True).stdout.split()
        ]
        command = [*gate, "--", f"--target-url={base}/v1/a2a/agents/support", *AGAINST_A_STOPPING_TARGET]
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_XDIST"))}
        running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment)
        read: list[bytes] = []
        checking = threading.Event()

        def reader() -> None:  # the gate's output as it comes: the target freezes once checks are being judged
            while chunk := os.read(running.stdout.fileno(), 4096):
                read.append(chunk)
                if b"".join(read).partition(b" items]")[2].count(b".") >= CHECKED_BEFORE_FREEZE:
                    checking.set()

        reading = threading.Thread(target=reader, daemon=True)
        reading.start()
        try:
            assert checking.wait(timeout=240), b"".join(read).decode(errors="replace")[:3000]
            os.kill(pid, signal.SIGSTOP)
            frozen_at = time.monotonic()
            running.wait(timeout=300)
            took = time.monotonic() - frozen_at
            reading.join(timeout=30)
        finally:
            os.kill(pid, signal.SIGCONT)
            running.kill()
        output = b"".join(read).decode(errors="replace")
    assert running.returncode == USAGE_ERROR, output[-3000:]
    assert took < TIMEOUT_S + silence.PROBE_S + SLACK_S, f"the gate took {took:.0f} s to see the target frozen"
    stopped = [line for line in output.splitlines() if "stopped answering at" in line and "checks not run" in line]
    assert len(stopped) == 1, output[-3000:]
    assert "Traceback" not in output and "INTERNALERROR" not in output, output[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "no-verdict" and not summary["new_failures"], summary["verdict_reasons"]
    assert "no verdict: the target at" in (tmp_path / "out" / "junit.xml").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_push_port_in_use_under_xdist_is_one_line_exit_4(tmp_path):
    port = free_ports(2)
    with (
        agent_process(tmp_path / "agent.sqlite3", "--key", "kit-key") as base,
        socket.create_server(("127.0.0.1", port + 1)),
    ):
        verdicts = run_suites(
            tmp_path,
            f"--target-url={base}/v1/a2a/agents/support",
            "--a2a-key=kit-key",
            f"--a2a-push-listen=127.0.0.1:{port}",
            "-n",
            "2",
            timeout_s=120,
        )
    error = _one_error_line(verdicts)
    assert f"--a2a-push-listen: cannot listen on 127.0.0.1:{port + 1}" in error and "worker 1" in error, error
    assert "INTERNALERROR" not in verdicts.output
