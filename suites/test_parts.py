"""Parts: text, raw, url and data travel in and out unchanged; artifacts carry the turn's files."""

from __future__ import annotations

import base64
import json

import pytest

from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.client import A2AClient, extensions, new_id
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, queueing

RAW = bytes(range(256)) + "naïve ✓".encode()
PARTS = {
    "text": {"text": "Grüße, 世界 — a text part", "mediaType": "text/plain"},
    "raw": {"raw": base64.b64encode(RAW).decode(), "filename": "bytes.bin", "mediaType": "application/octet-stream"},
    "url": {"url": "https://example.com/files/report.pdf", "filename": "report.pdf", "mediaType": "application/pdf"},
    # A data part is the caller's data, even where it looks like A2A structure: it must come back unchanged.
    "data": {
        "data": {
            "order": "demo-123",
            "lines": [1, 2.5, None, True],
            "nested": {"metadata": {"https://docs.nylorun.com/a2a/progress/v1": {"steps": []}}, "extensions": []},
        }
    },
}
# Contents that a decoder, a normaliser or a re-encoder is apt to change, one case each. Not here: content
# a correct Runtime may change on the way through protobuf (an integer past 2**53 in a data part, which
# google.protobuf.Value holds as a double; an empty raw part or a null data part, which a serialiser may
# drop as a default value).
VARIANTS = {
    "text-emoji-sequences": {"text": "👋🏽 👨‍👩‍👧 🇺🇦 — skin tone, ZWJ family, flag"},
    "text-right-to-left": {"text": "שלום עולם — مرحبا بالعالم"},
    "text-combining-marks": {"text": "e\u0301 is not é: decomposed and composed must both stay as sent"},
    "text-astral-plane": {"text": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝄞 𠜎 — outside the Basic Multilingual Plane"},
    "text-long": {"text": "Größe ✓ " * 2_000},
    "text-surrounding-whitespace": {"text": "  \t leading and trailing blanks,\r\nCRLF and\n\nblank lines \t\n"},
    "text-markup-and-escapes": {"text": '<b>bold</b> & <script>alert(1)</script> {"json": [1]} \\n %s %% ${x} \u0007'},
    "raw-one-zero-byte": {"raw": base64.b64encode(b"\x00").decode()},
    "raw-base64-plus-and-slash": {"raw": base64.b64encode(b"\xfb\xff\xbf" * 40).decode(), "filename": "b64.bin"},
    "raw-64-kib": {
        "raw": base64.b64encode(bytes((i * 7919) % 256 for i in range(65_536))).decode(),
        "mediaType": "application/octet-stream",
    },
    "url-with-query-and-fragment": {
        "url": "https://example.com/a%20b/c.txt?x=1&y=%C3%A9#part-2",
        "mediaType": "text/plain",
    },
    "url-without-filename": {"url": "https://example.com/download?id=42"},
    "data-array": {"data": [1, "two", [3], {"four": 4}]},
    "data-number": {"data": 2.75},
    "data-string": {"data": "just a string"},
    "data-boolean": {"data": False},
    "data-unicode-keys": {"data": {"ключ": "значение", "鍵": ["値"], "emoji 🔑": True}},
    "data-deep": {"data": {"a": {"b": {"c": {"d": {"e": {"f": [[["deep"]]]}}}}}}},
    "data-big-safe-integer": {"data": {"n": 2**53, "neg": -(2**53), "small": 1e-300}},
    "data-null-member": {"data": {"kept": None, "nested": {"also": None, "beside": 0}}},
}


def _bytes(value: str) -> bytes:
    """ProtoJSON bytes: standard or URL-safe base64, padding optional."""
    padded = value + "=" * (-len(value) % 4)
    return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))


def _content(part: dict) -> tuple[str, object]:
    """A part's kind and content, compared exactly: raw as bytes, data as canonical JSON (True is not 1)."""
    for kind in ("text", "raw", "url", "data"):
        if kind in part:
            if kind == "raw":
                return kind, _bytes(part[kind])
            if kind == "data":
                return kind, json.dumps(part[kind], sort_keys=True)
            return kind, part[kind]
    return "none", None


def _differences(sent: list[dict], got: list[dict]) -> list[str]:
    if [_content(p) for p in got] != [_content(p) for p in sent]:
        return ["kinds or contents differ"]
    return [
        f"part {i}: {name} {s[name]!r} came back as {g.get(name)!r}"
        for i, (s, g) in enumerate(zip(sent, got, strict=True))
        for name in ("filename", "mediaType")
        if name in s and g.get(name) != s[name]
    ]


# A client's own metadata on its message (no extension's): its copy in history holds it as sent.
CLIENT_METADATA = {"kit-note": {"ticket": "T-1", "tags": ["a", "b"], "none": None}, "kit-flag": True}


def _echoed(a2a_client: A2AClient, *parts: dict) -> tuple[dict, list[dict]]:
    task = drivers.settle(a2a_client, a2a_client.send(drivers.scenario("echo"), *parts).task)
    return task, [p for a in task.get("artifacts") or [] for p in a.get("parts", [])]


@pytest.mark.req("PART-01")
@pytest.mark.scenario("echo")
@pytest.mark.parametrize("kind", [*PARTS, *VARIANTS])
def test_part_travels_in_and_out(a2a_client: A2AClient, kind: str):
    part = {**PARTS, **VARIANTS}[kind]
    task, got = _echoed(a2a_client, part)
    wrong = _differences([part], got)
    if wrong:
        a2a_client.get_task(task["id"]).fail(f"the {kind} part must come back unchanged in the echo artifact: {wrong}")


@pytest.mark.req("SHAPE-03")
@pytest.mark.scenario("echo")
def test_bytes_are_written_in_standard_base64(a2a_client: A2AClient):
    """Bytes whose base64 has + and / and padding, echoed back: every read writes them the ProtoJSON way (the
    oracle judges each answer's raw parts; this check reads the task on each method)."""
    part = {**VARIANTS["raw-base64-plus-and-slash"], "raw": base64.b64encode(b"\xfb\xff\xbf" * 40 + b"!").decode()}
    task, got = _echoed(a2a_client, part)
    reads = [a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)]
    reads.append(a2a_client.list_tasks(contextId=task["contextId"], includeArtifacts=True))
    shown = [p["raw"] for p in got if isinstance(p.get("raw"), str)]
    for read in reads:
        for listed in [read.task] if "task" in read.result else read.result.get("tasks") or []:
            shown += [p["raw"] for a in listed.get("artifacts") or [] for p in a.get("parts") or [] if "raw" in p]
    wrong = [raw[:40] for raw in shown if not oracle.STANDARD_BASE64.match(raw)]
    if wrong:
        reads[-1].fail(f"raw bytes must be written in standard base64 with padding (ProtoJSON); read as {wrong}")


@pytest.mark.req("TASK-17")
@pytest.mark.parametrize("message_id_length", ["short", "long"])
def test_the_kits_message_keeps_its_parts_in_history(a2a_client: A2AClient, message_id_length: str):
    """An ordinary message of a text part and a data part (null members and all), read back in its task's history:
    the same parts in order, the same text and data (the kit's model holds every channel to the same), under the
    messageId it was sent with, however long."""
    sent = [
        {"text": drivers.ORDINARY_TEXT},
        PARTS["data"],
        VARIANTS["data-null-member"],
        {"text": "  <i>kept</i> & as sent\n"},
    ]
    message_id = new_id("msg") if message_id_length == "short" else drivers.long_id("msg")
    answer = a2a_client.send(*sent, message_id=message_id, message_metadata=CLIENT_METADATA)
    if answer.is_error:
        not_checked(f"the Agent refuses a message of text and data parts: {answer.json.get('error')}")
    task = drivers.settle(a2a_client, drivers.task_of(answer, "no task holds the message"))
    exchange = a2a_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)
    mine = [m for m in exchange.task.get("history") or [] if m.get("messageId") == message_id]
    if not mine:
        exchange.fail(f"the task's history does not hold the kit's message {message_id[:60]}… under its whole id")
    got = mine[0].get("parts") or []
    kept = len(got) == len(sent) and all(
        _content(g)[0] == _content(s)[0] and oracle.rules.same_value(g.get(_content(s)[0]), s[_content(s)[0]])
        for g, s in zip(got, sent, strict=False)
    )  # as JSON values: 1 and 1.0 are one number (RFC 8259; protobuf's Value holds a double)
    if not kept:
        exchange.fail(f"the kit's message {message_id} must keep its parts (text, then data) as sent: got {got}")
    metadata = mine[0].get("metadata") or {}
    lost = {k: v for k, v in CLIENT_METADATA.items() if not oracle.rules.same_value(metadata.get(k), v)}
    if lost:
        exchange.fail(
            f"the kit's message {message_id} must keep the metadata it was sent with: {lost} became {metadata}"
        )


@pytest.mark.req("TASK-17")
def test_the_kits_message_keeps_the_extensions_it_lists(a2a_v2_client: A2AClient):
    """A message listing an extension its request activated, read back in its task's history: the list holds it
    (the oracle holds every read of the message to the same)."""
    listed = [extensions.PROGRESS]
    message_id = new_id("msg")
    answer = a2a_v2_client.send(drivers.ORDINARY_TEXT, message_id=message_id, extensions=listed)
    if answer.is_error:
        not_checked(f"the Agent refuses a message listing an extension it declares: {answer.answer_line()}")
    task = drivers.settle(a2a_v2_client, drivers.task_of(answer, "no task holds the message"))
    exchange = a2a_v2_client.get_task(task["id"], history_length=drivers.HISTORY_ALL)
    mine = [m for m in exchange.task.get("history") or [] if m.get("messageId") == message_id]
    if mine and not set(listed) <= set(mine[0].get("extensions") or []):
        exchange.fail(
            f"the kit's message {message_id} listed {listed}; its history copy lists {mine[0].get('extensions')}"
        )


@pytest.mark.req("PART-01")
@pytest.mark.scenario("echo")
def test_all_kinds_in_one_message(a2a_client: A2AClient):
    task, got = _echoed(a2a_client, *PARTS.values())
    wrong = _differences(list(PARTS.values()), got)
    if wrong:
        a2a_client.get_task(task["id"]).fail(f"the four parts must come back unchanged and in order: {wrong}")


@pytest.mark.req("PART-01")
@pytest.mark.parametrize("kind", [k for k in PARTS if k != "text"])
def test_a_message_of_one_part_of_each_kind_is_accepted(a2a_client: A2AClient, kind: str):
    """A message whose only part is not text (no scenario word to read): answered, with a task or a message, not
    refused or failed."""
    exchange = a2a_client.send(PARTS[kind], return_immediately=True)
    if exchange.is_error:
        exchange.fail(f"a message of one {kind} part must be accepted, got {exchange.answer_line()}")
    task = exchange.result.get("task")
    if task:
        drivers.cancel_quietly(a2a_client, task["id"])


@pytest.mark.req("PART-02")
@pytest.mark.scenario("complete")
def test_agent_answers_every_part_kind(a2a_client: A2AClient):
    task = drivers.run(a2a_client, "complete")
    parts = [p for a in task.get("artifacts") or [] for p in a.get("parts", [])]
    missing = {"text", "raw", "url", "data"} - {_content(p)[0] for p in parts}
    if missing:
        a2a_client.get_task(task["id"]).fail(f"the complete scenario's artifacts lack part kinds {sorted(missing)}")
    for part in parts:
        if "url" in part:
            headers = {k: v for k, v in a2a_client.headers().items() if k in ("Authorization", "Nylorun-Subject")}
            download = a2a_client.get(part["url"], headers)
            if download.status != 200 or not download.response_body:
                download.fail("a url part the Agent answers must fetch its file's bytes (HTTP 200)")


# A message of every kind of part, each way a message reaches its task besides a new conversation: queued in a
# busy conversation until a turn takes it, and as the reply to a task paused on a question.
OTHER_KINDS = [PARTS["raw"], PARTS["url"], PARTS["data"]]


def _kinds(parts: list) -> list[str]:
    return [next((k for k in ("text", "raw", "url", "data") if k in p), "?") for p in parts if isinstance(p, dict)]


@pytest.mark.req("TASK-17")
@pytest.mark.parametrize(
    "taken",
    [
        pytest.param("queued", marks=pytest.mark.scenario("slow", "complete")),
        pytest.param("reply", marks=pytest.mark.scenario("ask")),
    ],
)
def test_the_kits_message_keeps_every_part_however_it_reaches_its_task(
    a2a_client: A2AClient, a2a_cancel_at_end, taken: str
):
    """A text part, then a raw, a url and a data part: the task that takes the message holds it with all four, in
    order (the oracle judges the text's and the data's content on every read)."""
    message_id = new_id("msg")
    if taken == "queued":
        context, running = queueing.busy(a2a_client)
        a2a_cancel_at_end(a2a_client, running["id"])
        sent = a2a_client.send(
            drivers.scenario("complete"),
            *OTHER_KINDS,
            context_id=context,
            message_id=message_id,
            message_metadata=CLIENT_METADATA,
            return_immediately=True,
        )
        if sent.is_error:
            not_checked(f"the Agent refuses a queued message of four kinds of part: {sent.answer_line()}")
        queueing.queued_task(sent, context, running)
        takers = queueing.takers(queueing.drain(a2a_client, context, running), [message_id])[message_id]
        if not takers:
            pytest.fail(f"no task of conversation {context} took the queued message {message_id}")
        taker = takers[0]
    else:
        paused = drivers.paused_on(a2a_client, "question")
        a2a_cancel_at_end(a2a_client, paused["id"])
        sent = a2a_client.send(
            "blue",
            *OTHER_KINDS,
            task_id=paused["id"],
            context_id=paused["contextId"],
            message_id=message_id,
            message_metadata=CLIENT_METADATA,
        )
        if sent.is_error:
            not_checked(f"the Agent refuses a reply of four kinds of part: {sent.answer_line()}")
        taker = drivers.settle(a2a_client, sent.task)
    exchange = a2a_client.get_task(taker["id"], history_length=drivers.HISTORY_ALL)
    mine = [m for m in exchange.task.get("history") or [] if m.get("messageId") == message_id]
    if not mine:
        exchange.fail(f"the task that took the message {message_id} ({taken}) holds it in its history")
    if _kinds(mine[0].get("parts") or []) != ["text", "raw", "url", "data"]:
        exchange.fail(
            f"the message {message_id} ({taken}) was sent with a text, a raw, a url and a data part, in that order; "
            f"its task holds {_kinds(mine[0].get('parts') or [])}"
        )
