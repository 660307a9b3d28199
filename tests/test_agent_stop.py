"""The reference agent stops within a few seconds of SIGTERM (and SIGINT) in every state a client can put it in,
keeps what it accepted, and takes up again on its next start what was in flight."""

from __future__ import annotations

import base64
import contextlib
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from nylorun_a2a_kit.fixtures.gate.processes import listening_process
from tests.agent_process import CONSOLE_SCRIPT

pytestmark = pytest.mark.slow  # agents in processes of their own

STOPS_WITHIN_S = 5.0
SECRET = "whsec_" + base64.b64encode(b"s" * 32).decode()
HEADERS = {
    "Authorization": "Bearer kit-key",
    "Nylorun-Subject": "a2a:stop",
    "Nylorun-Scopes": "sessions:own",
    "A2A-Version": "1.0",
}


@contextlib.contextmanager
def hanging_receiver() -> Iterator[int]:
    """A port that accepts connections and never answers (a delivery to it stays in flight)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        held: list[socket.socket] = []
        threading.Thread(target=lambda: [held.append(server.accept()[0]) for _ in range(64)], daemon=True).start()
        try:
            yield server.getsockname()[1]
        finally:
            for connection in held:
                connection.close()


def start(db: Path, *args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "--port", "0", "--db", str(db), "--key", "kit-key", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    line = process.stdout.readline()
    assert "listening on " in line, line
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
    return process, line.split("listening on ", 1)[1].strip()


def send(base: str, text: str, *, wait: bool = True, push_to: int | None = None) -> dict:
    configuration: dict = {"returnImmediately": not wait}
    if push_to is not None:
        configuration["taskPushNotificationConfig"] = {"url": f"http://127.0.0.1:{push_to}/hook", "token": "t"}
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": configuration}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    return httpx.post(f"{base}/v1/a2a/agents/support", json=body, headers=HEADERS, timeout=60).json()


def stop_time(process: subprocess.Popen, sig: signal.Signals = signal.SIGTERM) -> float:
    started = time.monotonic()
    process.send_signal(sig)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return float("inf")
    return time.monotonic() - started


def in_background(call, *args, **kwargs) -> threading.Thread:
    def quietly():
        with contextlib.suppress(httpx.HTTPError):
            call(*args, **kwargs)

    thread = threading.Thread(target=quietly, daemon=True)
    thread.start()
    return thread


def idle(base: str, port: int) -> None:
    pass


def blocking_send_waiting(base: str, port: int) -> None:
    in_background(send, base, "scenario slow 60000")
    time.sleep(0.5)


def deliveries_retrying_to_a_closed_port(base: str, port: int) -> None:
    for _ in range(3):
        send(base, "scenario slow 50", wait=False, push_to=port)
    time.sleep(1.0)


def delivery_in_flight_to_a_receiver_that_never_answers(base: str, port: int) -> None:
    for _ in range(3):
        send(base, "scenario slow 50", wait=False, push_to=port)
    time.sleep(1.0)


def request_half_sent(base: str, port: int) -> None:
    host, _, bound = base.removeprefix("http://").partition(":")
    connection = socket.create_connection((host, int(bound)))
    connection.sendall(b"POST /v1/a2a/agents/support HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{")
    time.sleep(0.3)
    threading.Timer(30, connection.close).start()


STATES = [
    idle,
    blocking_send_waiting,
    deliveries_retrying_to_a_closed_port,
    delivery_in_flight_to_a_receiver_that_never_answers,
    request_half_sent,
]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("state", STATES, ids=[s.__name__ for s in STATES])
def test_the_agent_stops_within_a_bound_in_every_state(tmp_path, state, sig):
    with hanging_receiver() as hanging:
        closed = _closed_port()
        port = hanging if state is delivery_in_flight_to_a_receiver_that_never_answers else closed
        process, base = start(tmp_path / "agent.sqlite3", "--push-secret", SECRET, "--push-allow", f"127.0.0.1:{port}")
        try:
            state(base, port)
            took = stop_time(process, sig)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert took < STOPS_WITHIN_S, f"the agent took {took:.1f} s to stop after {sig.name} ({state.__name__})"
    assert process.returncode in (0, -sig, 128 + sig), process.returncode


def test_what_it_accepted_survives_a_stop_and_what_was_in_flight_runs_again(tmp_path):
    db = tmp_path / "agent.sqlite3"
    process, base = start(db)
    try:
        accepted = send(base, "scenario slow 60000", wait=False)["result"]["task"]
        assert stop_time(process) < STOPS_WITHIN_S
    finally:
        if process.poll() is None:
            process.kill()
    command = [str(CONSOLE_SCRIPT), "--port", "0", "--db", str(db), "--key", "kit-key"]
    with listening_process(command, "reference agent listening on ") as again:
        body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": accepted["id"]}}
        task = httpx.post(f"{again}/v1/a2a/agents/support", json=body, headers=HEADERS, timeout=30).json()
    assert task["result"]["id"] == accepted["id"], task
    assert task["result"]["status"]["state"] in ("TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"), task


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
