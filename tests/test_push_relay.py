"""The push relay (``nylorun-a2a-receiver``) and the kit's side that reads it: a Runtime the kit's machine cannot be
reached from delivers to a relay in its own network, and the kit judges what the relay recorded as it judges its
local receiver's deliveries. The verdicts of whole runs, relay against local receiver, are in ``test_relay_runs``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from nylorun_a2a_kit.fixtures.client import PreconditionUnmet
from nylorun_a2a_kit.fixtures.push import RelayedReceiver, RelayError, free_ports, relay, relayed
from tests.test_push_verify import BODY, SECRET, _signed

TOKEN = "relay-token-for-the-kits-tests"
RELAY_SCRIPT = Path(sys.executable).parent / "nylorun-a2a-receiver"
USAGE_ERROR = 4


@contextlib.contextmanager
def relay_here(**given) -> Iterator[str]:
    """A relay in this process, on a thread of its own, on 127.0.0.1 and a free port; its URL."""
    made = relay.Relay(TOKEN, log=lambda line: None, **given)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        port = asyncio.run_coroutine_threadsafe(made.serve("127.0.0.1", 0), loop).result(timeout=10)
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(made.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def _receiver(url: str, **given) -> RelayedReceiver:
    return RelayedReceiver(url, TOKEN, secret=SECRET, token_header="X-A2A-Notification-Token", slow_s=0.2, **given)


def test_the_relays_api_needs_its_token():
    with relay_here() as url:
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": f"Basic {TOKEN}"}):
            for method, path in (("GET", "/info"), ("GET", "/deliveries"), ("PUT", "/endpoints"), ("POST", "/closed")):
                answered = httpx.request(method, f"{url}{relay.API}{path}", headers=headers, json={})
                assert answered.status_code == 401, (method, path, headers, answered.text)
                assert TOKEN not in answered.text
        said = httpx.get(f"{url}{relay.API}/info", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert said["relay"] == "nylorun-a2a-receiver" and said["version"] == relay.kit_version()


def test_the_relay_answers_as_the_kit_scripted_and_the_kit_judges_what_came():
    with relay_here() as url, _receiver(url) as receiver:
        endpoint = receiver.endpoint(["500", "503:2"], token="the-config-token")
        headers = {**_signed(), "X-A2A-Notification-Token": "the-config-token", "Content-Type": "application/json"}
        statuses = [httpx.post(endpoint.url, content=BODY, headers=headers) for _ in range(3)]
        assert [s.status_code for s in statuses] == [500, 503, 204]
        assert statuses[1].headers["Retry-After"] == "2"
        seen = endpoint.wait_for(lambda ds: len(ds) >= 3, 10)
        assert [d.answer for d in seen] == ["500", "503:2", "ok"]
        assert all(d.body == BODY and d.problems == [] for d in seen), [d.problems for d in seen]
        assert seen[0].headers["webhook-id"] == "msg_1" and abs(seen[0].received_at - time.time()) < 5
        forged = {**headers, "webhook-signature": "v1,AAAA"}
        httpx.post(endpoint.url, content=BODY, headers=forged)
        [*_, last] = endpoint.wait_for(lambda ds: len(ds) >= 4, 10)
        assert any(p.requirement == "PUSH-09" for p in last.problems), last.problems  # judged by the kit
        canary = receiver.canary_path()
        assert httpx.post(receiver.public_base + canary, content=b"{}").status_code == 404
        endpoint.quiet_for(0.05, after=10)  # a wait that ends reads all the relay has
        assert [d.path for d in receiver.hits(canary)] == [canary]


def test_each_process_reads_only_the_paths_it_gave_out():
    with relay_here() as url, _receiver(url) as mine, _receiver(url) as theirs:
        assert mine.prefix != theirs.prefix
        hook = theirs.endpoint()
        httpx.post(hook.url, content=BODY, headers=_signed())
        assert len(hook.wait_for(lambda ds: len(ds) >= 1, 10)) == 1
        mine.endpoint().quiet_for(0.05, after=0)
        assert mine.since(0) == []


def test_what_landed_by_now_is_read_when_a_check_asks(monkeypatch):
    """With no poll in between, the deliveries since a check began include all the relay holds (a check's end judges
    what landed during it), and so does a wait that ends."""
    monkeypatch.setattr(RelayedReceiver, "_poll", lambda self: None)
    with relay_here() as url, _receiver(url) as receiver:
        endpoint = receiver.endpoint()
        httpx.post(endpoint.url, content=BODY, headers=_signed())
        assert [d.path for d in receiver.since(0)] == [endpoint.path]
        other = receiver.endpoint()
        httpx.post(other.url, content=BODY, headers=_signed())
        assert len(other.wait_for(lambda ds: len(ds) >= 1, 0)) == 1


def test_a_relay_the_kit_loses_makes_the_wait_not_checked():
    with relay_here() as url:
        receiver = _receiver(url)
        endpoint = receiver.endpoint()
    try:
        with pytest.raises(PreconditionUnmet) as stopped:
            endpoint.wait_for(lambda ds: len(ds) >= 1, 0.2)
        assert "could not read the push relay" in str(stopped.value) and "--a2a-push-relay" in stopped.value.needs
        with pytest.raises(PreconditionUnmet, match="did not take a check's endpoint"):
            receiver.endpoint()
    finally:
        receiver.close()


def test_the_kit_refuses_a_relay_it_cannot_use_in_one_line():
    with relay_here() as url:
        with pytest.raises(RelayError, match="refused the token"):
            relayed.info(url, "not-the-token")
        with pytest.raises(RelayError, match="is it a relay") as wrong:
            relayed.info(f"{url}/elsewhere", TOKEN)
        assert "\n" not in str(wrong.value)
    [port] = [free_ports(1)]
    with pytest.raises(RelayError, match=f"cannot reach the push relay at http://127.0.0.1:{port}"):
        relayed.info(f"http://127.0.0.1:{port}", TOKEN)


def test_a_relay_opens_its_closed_address_when_the_kit_asks():
    closed = free_ports(1)
    with relay_here(closed=("127.0.0.1", closed)) as url, _receiver(url) as receiver:
        assert receiver.named == {"refused": False, "closed": True}
        endpoint = receiver.endpoint()
        with pytest.raises(httpx.ConnectError):
            httpx.post(receiver.closed_url(endpoint.path), content=BODY)
        receiver.open_closed()
        assert httpx.post(receiver.closed_url(endpoint.path), content=BODY, headers=_signed()).status_code == 204
        assert len(endpoint.wait_for(lambda ds: len(ds) >= 1, 10)) == 1
        with _receiver(url) as later:
            assert later.named["closed"] is False, "an address already open refuses nothing: not the closed one"


def _relay_command(*args: str, token: str | None = TOKEN) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != relay.TOKEN_ENV}
    if token is not None:
        environment[relay.TOKEN_ENV] = token
    return subprocess.run([str(RELAY_SCRIPT), *args], capture_output=True, text=True, env=environment, timeout=60)


@pytest.mark.parametrize(
    ("args", "token", "says"),
    [
        ((), None, "no token: set NYLORUN_A2A_PUSH_RELAY_TOKEN or give --token-file"),
        ((), "short", "the token is shorter than 16 characters"),
        (("--token-file", "/nonexistent/token"), None, "--token-file /nonexistent/token:"),
        (("--listen", "relay.example"), TOKEN, "error: argument --listen: 'relay.example' is no host:port"),
        (
            ("--public-url", "relay.example:8090"),
            TOKEN,
            "argument --public-url: 'relay.example:8090' is no http(s) URL",
        ),
        (("--keep-s", "0"), TOKEN, "--keep-s must be a positive number of seconds"),
    ],
)
def test_bad_input_to_the_relay_is_one_line_exit_4(args, token, says):
    ended = _relay_command("--listen", "127.0.0.1:0", *args, token=token)
    assert ended.returncode == USAGE_ERROR, ended.stderr
    assert ended.stderr.count("\n") == 1 and says in ended.stderr and "Traceback" not in ended.stderr, ended.stderr


def test_a_relay_port_in_use_is_one_line_exit_4():
    port = free_ports(1)
    with socket.create_server(("127.0.0.1", port)):
        ended = _relay_command("--listen", f"127.0.0.1:{port}")
    assert ended.returncode == USAGE_ERROR, ended.stderr
    said = f"nylorun-a2a-receiver: --listen: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert ended.stderr.strip() == said, ended.stderr


def test_the_relays_log_says_what_came_never_a_path_a_header_or_a_body():
    environment = {**os.environ, relay.TOKEN_ENV: TOKEN, "PYTHONUNBUFFERED": "1"}
    command = [str(RELAY_SCRIPT), "--listen", "127.0.0.1:0"]
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    try:
        url = running.stdout.readline().removeprefix(relay.ANNOUNCES).strip()
        with _receiver(url) as receiver:
            endpoint = receiver.endpoint(["redirect:http://127.0.0.1:9/elsewhere-secret-path"])
            headers = {
                **_signed(),
                "X-A2A-Notification-Token": "config-token-secret",
                "Authorization": "Basic c2VjcmV0",
            }
            httpx.post(endpoint.url, content=BODY, headers=headers)
            endpoint.wait_for(lambda ds: len(ds) >= 1, 10)
    finally:
        running.terminate()
        output, _ = running.communicate(timeout=30)
    assert running.returncode == 0 and "delivery 1: POST" in output and "answered redirect" in output, output
    for secret in (TOKEN, "/hooks/", "elsewhere-secret-path", "config-token-secret", "Zm9v", "statusUpdate"):
        assert secret not in output, f"the relay's log shows {secret!r}"
