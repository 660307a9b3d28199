"""Parts: text, raw, url and data travel in and out unchanged; artifacts carry the turn's files."""

from __future__ import annotations

import base64

import pytest

from fixtures import drivers
from fixtures.client import A2AClient

RAW = bytes(range(256)) + "naïve ✓".encode()
PARTS = {
    "text": {"text": "Grüße, 世界 — a text part", "mediaType": "text/plain"},
    "raw": {"raw": base64.b64encode(RAW).decode(), "filename": "bytes.bin", "mediaType": "application/octet-stream"},
    "url": {"url": "https://example.com/files/report.pdf", "filename": "report.pdf", "mediaType": "application/pdf"},
    "data": {"data": {"order": "demo-123", "lines": [1, 2.5, None, True], "nested": {"k": "v"}}},
}


def _bytes(value: str) -> bytes:
    """ProtoJSON bytes: standard or URL-safe base64, padding optional."""
    padded = value + "=" * (-len(value) % 4)
    return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))


def _content(part: dict) -> tuple[str, object]:
    for kind in ("text", "raw", "url", "data"):
        if kind in part:
            return kind, _bytes(part[kind]) if kind == "raw" else part[kind]
    return "none", None


@pytest.mark.req("PART-01")
@pytest.mark.scenario("echo")
@pytest.mark.parametrize("kind", list(PARTS))
def test_part_travels_in_and_out(client: A2AClient, kind: str):
    exchange = client.send(drivers.scenario("echo"), PARTS[kind])
    task = drivers.settle(client, exchange.task)
    parts = [p for a in task.get("artifacts") or [] for p in a.get("parts", [])]
    if [_content(p) for p in parts] != [_content(PARTS[kind])]:
        client.get_task(task["id"]).fail(f"the {kind} part must come back unchanged in the echo artifact")


@pytest.mark.req("PART-01")
@pytest.mark.scenario("echo")
def test_all_kinds_in_one_message(client: A2AClient):
    exchange = client.send(drivers.scenario("echo"), *PARTS.values())
    task = drivers.settle(client, exchange.task)
    parts = [p for a in task.get("artifacts") or [] for p in a.get("parts", [])]
    if [_content(p) for p in parts] != [_content(p) for p in PARTS.values()]:
        client.get_task(task["id"]).fail("the four parts must come back unchanged and in order")


@pytest.mark.req("PART-02")
@pytest.mark.scenario("complete")
def test_agent_answers_every_part_kind(client: A2AClient):
    task = drivers.run(client, "complete")
    kinds = {_content(p)[0] for a in task.get("artifacts") or [] for p in a.get("parts", [])}
    missing = {"text", "raw", "url", "data"} - kinds
    if missing:
        client.get_task(task["id"]).fail(f"the complete scenario's artifacts lack part kinds {sorted(missing)}")
