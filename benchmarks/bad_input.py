"""Bad input: 10,000 generated malformed requests against the reference agent; every one must be refused right.

Four categories, each request with the one answer it must get (a JSON-RPC error code with HTTP 200, or an
HTTP refusal), never a 5xx and never a hang:

- ``body``: not JSON, invalid UTF-8, a lone surrogate, truncated requests, NaN/Infinity, ~1 MB strings where
  they are wrong (method, task id, jsonrpc, an agent-role message), nesting 10k–100k deep, 8+ MB bodies, a
  gzip body that inflates past 8 MB;
- ``envelope``: no method, a method of the wrong type or empty, wrong or missing ``jsonrpc``, an id of the
  wrong type or none, params that are not an object, a batch, a bare JSON value, an unknown method;
- ``params``: schema mutations of SendMessage, GetTask, ListTasks and CancelTask params drawn with
  ``schemas.strategies.mutations`` (Hypothesis ``given`` + ``data()`` under a fixed seed, so the same run
  draws the same mutants): each must get -32602;
- ``headers``: no or wrong credentials, no subject, scopes without sessions:own, a wrong or missing
  A2A-Version, a broken gzip/deflate Content-Encoding, an unsupported encoding, a header past aiohttp's limit,
  an unknown Agent.

Requests go over raw HTTP/1.1 (asyncio streams, ``Connection: close``, one connection each) so that what the
agent answers is seen exactly, even when it closes the connection right after a refusal. Every 1,000
requests the agent must still answer a GetTask of a task made at the start, and its RSS (VmRSS) is sampled;
a 100 ms monitor records the peak in between.

Run: ``.venv/bin/python -m benchmarks.bad_input [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gzip
import json
import os
import random
import re
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from benchmarks import common

PARAM_METHODS = ("SendMessage", "GetTask", "ListTasks", "CancelTask")
CATEGORIES = {"body": 25, "envelope": 20, "params": 35, "headers": 20}
REQUEST_TIMEOUT_S = 30.0
MB = 1024 * 1024
RESULT = "result"


@dataclass(frozen=True)
class Expect:
    """HTTP ``statuses`` the answer may have; for 200, the JSON-RPC ``codes`` (RESULT: a result) and the id."""

    statuses: tuple[int, ...] = (200,)
    codes: tuple[int | str, ...] = ()
    request_id: Any = None
    check_id: bool = True


@dataclass
class Case:
    category: str
    name: str
    body: bytes
    expect: Expect | tuple[Expect, ...]  # a tuple: any one of them
    headers: dict[str, str] | None = None  # None: the agent's usual headers
    path: str | None = None


@dataclass
class Answer:
    status: int  # 0: no HTTP answer
    body: bytes = b""
    note: str = ""

    def rpc(self) -> tuple[Any, Any]:
        """(code or RESULT, id) of a JSON-RPC answer; (None, None) when it is not one."""
        try:
            answer = json.loads(self.body)
        except ValueError:
            return None, None
        if not isinstance(answer, dict):
            return None, None
        if "result" in answer:
            return RESULT, answer.get("id")
        error = answer.get("error")
        return (error.get("code") if isinstance(error, dict) else None), answer.get("id")

    def label(self) -> str:
        if self.status == 0:
            return f"no answer ({self.note})"
        if self.status != 200:
            return f"HTTP {self.status}"
        code, _ = self.rpc()
        return f"200 {code}" if code is not None else "200 non-JSON-RPC"


def judge(case: Case, answer: Answer) -> bool:
    return any(meets(expect, answer) for expect in (case.expect if isinstance(case.expect, tuple) else (case.expect,)))


def meets(expect: Expect, answer: Answer) -> bool:
    if answer.status not in expect.statuses:
        return False
    if answer.status != 200:
        return True
    code, answer_id = answer.rpc()
    if code not in expect.codes:
        return False
    return not expect.check_id or answer_id == expect.request_id


# -- raw HTTP/1.1


async def exchange(host: str, port: int, path: str, headers: dict[str, str], body: bytes) -> Answer:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except (OSError, TimeoutError) as exc:
        return Answer(0, note=f"connect failed: {exc!r}")
    head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"

    async def send() -> None:
        try:
            writer.write(head.encode("latin-1") + body)
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the agent refused before reading everything: its answer is read below

    sender = asyncio.create_task(send())
    chunks: list[bytes] = []
    note = ""
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_S):
            while True:
                try:
                    chunk = await reader.read(65536)
                except (ConnectionError, OSError) as exc:
                    note = type(exc).__name__
                    break
                if not chunk:
                    break
                chunks.append(chunk)
    except TimeoutError:
        note = f"no answer within {REQUEST_TIMEOUT_S:.0f} s (hang)"
    finally:
        sender.cancel()
        writer.close()
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 2)
    raw = b"".join(chunks)
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        return Answer(0, raw, note or "closed without an answer")
    status_line, *header_lines = raw[:head_end].split(b"\r\n")
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError):
        return Answer(0, raw, "unparsable status line")
    payload = raw[head_end + 4 :]
    for line in header_lines:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            payload = payload[: int(value.strip() or 0)]
    return Answer(status, payload, note)


# -- the cases


def rpc_error(code: int | str, request_id: Any = None, check_id: bool = True) -> Expect:
    """HTTP 200 with JSON-RPC error ``code`` (or RESULT) and the id ``request_id``."""
    return Expect((200,), (code,), request_id, check_id)


def body_cases(rng: random.Random, task_id: str) -> list[tuple[int, Callable[[], Case]]]:
    good = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": task_id}}
    good_bytes = json.dumps(good).encode()
    parse_error = rpc_error(-32700)

    def case(name: str, body: bytes, expect: Expect = parse_error, **kw: Any) -> Case:
        return Case("body", name, body, expect, **kw)

    def garbage() -> Case:
        texts = [b"hello", b"{", b"}", b"{'a': 1}", b"[1,2,", b"<xml/>", b"jsonrpc=2.0&method=GetTask", b"\x00" * 10]
        return case("not JSON", rng.choice(texts) + bytes(rng.randrange(32, 127) for _ in range(rng.randrange(8))))

    def truncated() -> Case:
        cut = rng.randrange(0, len(good_bytes) - 1)
        return case("truncated", good_bytes[:cut])

    def bad_utf8() -> Case:
        junk = rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xa0\xa1", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])
        return case("invalid UTF-8", good_bytes.replace(task_id.encode(), task_id.encode() + junk))

    def surrogate() -> Case:
        return case("lone surrogate", good_bytes.replace(task_id.encode(), task_id.encode() + b"\\ud800"))

    def nan() -> Case:
        constant = rng.choice([b"NaN", b"Infinity", b"-Infinity"])
        body = json.dumps({**good, "params": {"id": task_id, "historyLength": 0}}).encode()
        return case("NaN / Infinity", body.replace(b'"historyLength": 0', b'"historyLength": ' + constant))

    def deep() -> Case:
        depth = rng.choice([10_000, 20_000, 100_000])
        if rng.random() < 0.5:
            body = b"[" * depth + b"]" * depth
        else:
            inner = b'{"a":' * depth + b"1" + b"}" * depth
            body = json.dumps({**good, "params": {"id": task_id}}).encode()[:-2] + b', "deep": ' + inner + b"}}"
        return case("nesting 10k+", body)

    def huge_string() -> Case:
        size = MB + rng.randrange(1000)
        where = rng.choice(["method", "task id", "jsonrpc", "agent message"])
        if where == "method":
            return case("1 MB string", json.dumps({**good, "method": "M" * size}).encode(), rpc_error(-32601, 7))
        if where == "task id":
            body = json.dumps({**good, "params": {"id": "t" * size}}).encode()
            return case("1 MB string", body, rpc_error(-32001, 7))
        if where == "jsonrpc":
            return case("1 MB string", json.dumps({**good, "jsonrpc": "2" * size}).encode(), rpc_error(-32600, 7))
        message = common.echo_message("huge-agent", text="x" * size)
        message["role"] = "ROLE_AGENT"  # a caller may not send an agent's message: -32602, nothing stored
        body = common.rpc("SendMessage", {"message": message}, 7)
        return case("1 MB string", body, rpc_error(-32602, 7))

    def too_big() -> Case:
        size = 8 * MB + rng.choice([1, 1000, MB])
        return case("8+ MB body", b'{"a":"' + b"x" * (size - 8) + b'"}', Expect((413,)))

    def gzip_bomb() -> Case:
        return case(
            "gzip bomb (64 MB inflated)", _bomb(), Expect((413,)), headers={**_headers(), "Content-Encoding": "gzip"}
        )

    return [
        (6, garbage),
        (6, truncated),
        (5, bad_utf8),
        (3, surrogate),
        (4, nan),
        (2, deep),
        (2, huge_string),
        (1, too_big),
        (1, gzip_bomb),
    ]


_BOMB: list[bytes] = []


def _bomb() -> bytes:
    if not _BOMB:
        _BOMB.append(gzip.compress(b" " * (64 * MB), compresslevel=9))
    return _BOMB[0]


def envelope_cases(rng: random.Random, task_id: str) -> list[tuple[int, Callable[[], Case]]]:
    params = {"id": task_id}

    def case(name: str, value: Any, expect: Expect) -> Case:
        return Case("envelope", name, json.dumps(value).encode(), expect)

    def no_method() -> Case:
        return case("no method", {"jsonrpc": "2.0", "id": 3, "params": params}, rpc_error(-32600, 3))

    def method_type() -> Case:
        method = rng.choice([7, None, {"name": "GetTask"}, ["GetTask"], True, ""])
        return case("method wrong type / empty", {"jsonrpc": "2.0", "id": 3, "method": method}, rpc_error(-32600, 3))

    def version() -> Case:
        value = {"id": 3, "method": "GetTask", "params": params}
        choice = rng.choice(["1.0", 2.0, 2, None, "2.00", "missing"])
        if choice != "missing":
            value["jsonrpc"] = choice
        return case("wrong jsonrpc", value, rpc_error(-32600, 3))

    def id_type() -> Case:
        request_id = rng.choice([{"a": 1}, [1], True, False, 1.5, -0.25])
        return case(
            "id of wrong type",
            {"jsonrpc": "2.0", "id": request_id, "method": "GetTask", "params": params},
            rpc_error(-32600, None),
        )

    def integral_float_id() -> Case:
        # 1.0 passes the envelope schema (an integer in JSON Schema): the answer must then carry the request's
        # id (1.0 or 1); refusing it as an id of the wrong type (-32600, id null) is also right.
        request_id = rng.choice([1.0, 2.0, -3.0])
        value = {"jsonrpc": "2.0", "id": request_id, "method": "GetTask", "params": params}
        expect = (Expect((200,), (RESULT,), request_id), rpc_error(-32600, None))
        return Case("envelope", "id an integral float (1.0)", json.dumps(value).encode(), expect)

    def no_id() -> Case:
        return case("no id", {"jsonrpc": "2.0", "method": "GetTask", "params": params}, rpc_error(-32600, None))

    def params_type() -> Case:
        value = rng.choice([[task_id], task_id, 3, None, True])
        return case(
            "params not an object",
            {"jsonrpc": "2.0", "id": "p", "method": "GetTask", "params": value},
            rpc_error(-32600, "p"),
        )

    def batch() -> Case:
        value = rng.choice([[], [{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": params}]])
        return case("batch", value, rpc_error(-32600, None))

    def bare() -> Case:
        return case("bare JSON value", rng.choice(["GetTask", 42, None, True, 1.5]), rpc_error(-32600, None))

    def unknown() -> Case:
        method = rng.choice(["getTask", "tasks/get", "message/send", "GetTasks", "SendMessage ", "rpc.discover"])
        return case(
            "unknown method", {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}, rpc_error(-32601, 9)
        )

    return [
        (3, no_method),
        (3, method_type),
        (3, version),
        (3, id_type),
        (1, integral_float_id),
        (2, no_id),
        (3, params_type),
        (1, batch),
        (1, bare),
        (3, unknown),
    ]


def header_cases(rng: random.Random, task_id: str) -> list[tuple[int, Callable[[], Case]]]:
    body = common.rpc("GetTask", {"id": task_id}, 5)
    ok = rpc_error(RESULT, 5)

    def case(name: str, headers: dict[str, str], expect: Expect, data: bytes = body, path: str | None = None) -> Case:
        return Case("headers", name, data, expect, headers, path)

    def without(*names: str) -> dict[str, str]:
        return {k: v for k, v in _headers().items() if k not in names}

    def no_auth() -> Case:
        return case("no Authorization", without("Authorization"), Expect((401,)))

    def wrong_auth() -> Case:
        value = rng.choice(["Basic a2l0LWtleTo=", "Bearer wrong-key", "Bearer", "kit-key", "Bearer  ", "Token kit-key"])
        return case("wrong credentials", {**_headers(), "Authorization": value}, Expect((401,)))

    def no_subject() -> Case:
        headers = without("Nylorun-Subject") if rng.random() < 0.5 else {**_headers(), "Nylorun-Subject": "  "}
        return case("no subject", headers, Expect((400,)))

    def scopes() -> Case:
        value = rng.choice(["admin", "sessions:all", "sessions:own admin", "", ","])
        return case(
            "scopes without sessions:own / not granted", {**_headers(), "Nylorun-Scopes": value}, Expect((403,))
        )

    def version() -> Case:
        value = rng.choice(["0.3", "2.0", "1", "abc", "", " ", "1.1", "v1.0", None])
        headers = without("A2A-Version") if value is None else {**_headers(), "A2A-Version": value}
        return case("wrong / missing A2A-Version", headers, rpc_error(-32009, 5))

    def broken_gzip() -> Case:
        encoding, data = rng.choice(
            [
                ("gzip", b"not gzip at all"),
                ("gzip", b"\x1f\x8b\x08\x00garbage-after-the-magic"),
                ("deflate", b"not deflate"),
                ("gzip", zlib.compress(body)),  # zlib framing under a gzip label
            ]
        )
        return case("broken gzip / deflate", {**_headers(), "Content-Encoding": encoding}, Expect((400,)), data)

    def truncated_gzip() -> Case:
        packed = gzip.compress(body)
        data = packed[: rng.randrange(10, len(packed))]
        inflater = zlib.decompressobj(wbits=31)
        try:
            whole = inflater.decompress(data) == body
        except zlib.error:
            whole = False
        if whole:  # only (part of) the CRC/length trailer is missing: the request itself inflates whole
            # A strict reader refuses the broken stream (400); a lenient one answers the request it inflated.
            expect = (Expect((400,)), rpc_error(RESULT, 5))
            return case("gzip without its trailer", {**_headers(), "Content-Encoding": "gzip"}, expect, data)
        # What inflates is a prefix of the request: refused as unreadable (400) or as not JSON (-32700).
        expect = (Expect((400,)), rpc_error(-32700, None))
        return case("truncated gzip", {**_headers(), "Content-Encoding": "gzip"}, expect, data)

    def unsupported_encoding() -> Case:
        encoding = rng.choice(["br", "zstd"])
        return case("unsupported Content-Encoding", {**_headers(), "Content-Encoding": encoding}, Expect((400, 415)))

    def good_gzip() -> Case:
        packed = gzip.compress(body)
        return case("valid gzip (control)", {**_headers(), "Content-Encoding": "gzip"}, ok, packed)

    def huge_header() -> Case:
        name = rng.choice(["Nylorun-Subject", "X-Padding", "A2A-Extensions"])
        headers = {**_headers(), name: "h" * rng.choice([9_000, 65_000])}
        return case("header past 8 KB", headers, Expect((400, 431)))

    def unknown_agent() -> Case:
        return case("unknown Agent", _headers(), Expect((404,)), path="/v1/a2a/agents/no-such-agent")

    return [
        (3, no_auth),
        (3, wrong_auth),
        (2, no_subject),
        (2, scopes),
        (4, version),
        (3, broken_gzip),
        (1, truncated_gzip),
        (1, unsupported_encoding),
        (1, good_gzip),
        (1, huge_header),
        (1, unknown_agent),
    ]


def _headers() -> dict[str, str]:
    return common.reference_headers("bad-input")


def draw_mutants(n: int, seed: int) -> list[tuple[str, Any]]:
    """``n`` (method, Mutant) pairs from schemas.strategies.mutations, reproducibly (Hypothesis, fixed seed)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed
    from hypothesis import strategies as st

    from nylorun_a2a_kit.schemas.strategies import mutations

    drawn: list[tuple[str, Any]] = []
    strategy = st.sampled_from(PARAM_METHODS).flatmap(
        lambda method: mutations(f"methods/{method}.json#/$defs/params").map(lambda mutant: (method, mutant))
    )

    @fixed_seed(seed)
    @settings(
        max_examples=n,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def collect(data: Any) -> None:
        drawn.append(data.draw(strategy))

    for _ in range(20):  # Hypothesis may stop a run short of max_examples; draw again until there are n
        if len(drawn) >= n:
            break
        collect()
    return drawn[:n]


def param_case(method: str, mutant: Any, n: int) -> Case:
    request_id = f"mutant-{n}"
    codes: tuple[int | str, ...] = (-32602,)
    if mutant.tolerated:  # e.g. pageSize out of 1..100: a refusal or a clamp are both right (LIST-09)
        codes = (-32602, RESULT)
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": mutant.value}).encode()
    return Case("params", f"{method} {mutant.kind}", body, Expect((200,), codes, request_id))


def generate(count: int, seed: int, task_id: str) -> list[Case]:
    rng = random.Random(seed)
    counts = collections.Counter(rng.choices(list(CATEGORIES), weights=list(CATEGORIES.values()), k=count))
    cases: list[Case] = []
    for category, makers in (
        ("body", body_cases(rng, task_id)),
        ("envelope", envelope_cases(rng, task_id)),
        ("headers", header_cases(rng, task_id)),
    ):
        weights = [w for w, _ in makers]
        for _ in range(counts[category]):
            cases.append(rng.choices([m for _, m in makers], weights=weights)[0]())
    for n, (method, mutant) in enumerate(draw_mutants(counts["params"], seed)):
        cases.append(param_case(method, mutant, n))
    rng.shuffle(cases)
    return cases


# -- the run


@dataclass
class Tally:
    answers: dict[tuple[str, str], collections.Counter] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    wrong: dict[tuple[str, str], int] = field(default_factory=collections.Counter)
    count: dict[tuple[str, str], int] = field(default_factory=collections.Counter)
    examples: list[str] = field(default_factory=list)
    five_xx: int = 0
    hangs: int = 0
    no_answer: int = 0
    slowest: float = 0.0


async def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    deadline = common.Deadline(args.time_limit)
    tally = Tally()
    rss_samples: list[tuple[int, int | None]] = []
    liveness: list[tuple[int, bool, str]] = []
    with common.workdir("bench-bad-input-") as work, common.reference_agent(work) as server:
        split = urlsplit(server.url)
        host, port, path = split.hostname or "127.0.0.1", split.port or 80, split.path
        made = await exchange(host, port, path, _headers(), common.rpc("SendMessage", {"message": _seed_message()}))
        task_id = json.loads(made.body)["result"]["task"]["id"]
        t0 = time.monotonic()
        cases = generate(args.requests, args.seed, task_id)
        generated_s = time.monotonic() - t0
        print(f"reference agent {server.url} (pid {server.pid}); {len(cases)} cases in {generated_s:.1f} s", flush=True)
        peak = [common.rss_kib(server.pid) or 0]
        rss_samples.append((0, peak[0]))
        stop = asyncio.Event()

        async def monitor() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], common.rss_kib(server.pid) or 0)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.1)

        watcher = asyncio.create_task(monitor())
        cpu = common.CpuWatch([os.getpid(), server.pid])
        queue_index = 0
        aborted = ""

        async def send(case: Case) -> None:
            t = time.monotonic()
            answer = await exchange(host, port, case.path or path, case.headers or _headers(), case.body)
            tally.slowest = max(tally.slowest, time.monotonic() - t)
            key = (case.category, case.name)
            tally.count[key] += 1
            tally.answers[key][answer.label()] += 1
            if answer.status >= 500:
                tally.five_xx += 1
            if answer.status == 0:
                tally.no_answer += 1
                if "hang" in answer.note:
                    tally.hangs += 1
            if not judge(case, answer):
                tally.wrong[key] += 1
                if tally.wrong[key] <= 2 and len(tally.examples) < 16:  # two examples per case at most
                    tally.examples.append(
                        f"{case.category}/{case.name}: sent {case.body[:160]!r}… got {answer.label()} "
                        f"{answer.body[:300]!r}"
                    )

        for start in range(0, len(cases), 1000):
            if deadline.passed:
                aborted = f"stopped after {start} requests: past the {args.time_limit:.0f} s bound"
                break
            batch = cases[start : start + 1000]
            semaphore = asyncio.Semaphore(args.concurrency)

            async def limited(case: Case, semaphore: asyncio.Semaphore = semaphore) -> None:
                async with semaphore:
                    await send(case)

            await asyncio.gather(*(limited(c) for c in batch))
            queue_index = start + len(batch)
            check = await exchange(host, port, path, _headers(), common.rpc("GetTask", {"id": task_id}, "alive"))
            up = check.status == 200 and check.rpc()[0] == RESULT
            liveness.append((queue_index, up, check.label()))
            rss_samples.append((queue_index, common.rss_kib(server.pid)))
            print(
                f"  {queue_index:>6} sent; GetTask {'ok' if up else 'FAILED: ' + check.label()}; "
                f"RSS {rss_samples[-1][1]} KiB; wrong so far {sum(tally.wrong.values())}",
                flush=True,
            )
            if not server.alive():
                aborted = f"the agent exited after {queue_index} requests"
                break
        other = cpu.other_cores()
        stop.set()
        await watcher
        await asyncio.sleep(1.0)
        rss_samples.append((queue_index, common.rss_kib(server.pid)))
        log = server.log_text()
        alive = server.alive()

    total = sum(tally.count.values())
    wrong = sum(tally.wrong.values())
    print(f"\nbad_input: {common.machine_line()}")
    rows = []
    for key in sorted(tally.count):
        answers = ", ".join(f"{label} ×{n}" for label, n in tally.answers[key].most_common(4))
        rows.append((key[0], key[1], tally.count[key], tally.count[key] - tally.wrong[key], tally.wrong[key], answers))
    print(common.table(["category", "case", "sent", "right", "wrong", "answers"], rows, right=False))
    by_category = collections.Counter()
    wrong_by_category = collections.Counter()
    for (category, _), n in tally.count.items():
        by_category[category] += n
    for (category, _), n in tally.wrong.items():
        wrong_by_category[category] += n
    print()
    print(
        common.table(
            ["category", "sent", "right", "wrong"],
            [(c, by_category[c], by_category[c] - wrong_by_category[c], wrong_by_category[c]) for c in CATEGORIES],
        )
    )
    rss = [kib for _, kib in rss_samples if kib]
    print()
    print(
        common.table(
            ["figure", "value"],
            [
                ("requests sent", total),
                ("answered as required", total - wrong),
                ("wrong answers", wrong),
                ("HTTP 5xx", tally.five_xx),
                ("no HTTP answer / of which hangs", f"{tally.no_answer} / {tally.hangs}"),
                ("slowest answer", f"{tally.slowest * 1000:.0f} ms"),
                ("GetTask liveness checks passed", f"{sum(1 for _, up, _ in liveness if up)} of {len(liveness)}"),
                ("RSS start / peak (100 ms monitor) / end", f"{rss[0]} / {max(peak[0], *rss)} / {rss[-1]} KiB"),
                ("RSS every 1,000 requests (KiB)", " ".join(str(k) for _, k in rss_samples)),
                ("case generation", f"{generated_s:.1f} s"),
                ("wall time", f"{time.monotonic() - started:.0f} s"),
                ("other processes' CPU meanwhile", f"{other:.2f} cores"),
            ],
            right=False,
        )
    )
    problems = list(tally.examples)
    if aborted:
        problems.insert(0, f"ABORTED: {aborted}")
    if not alive:
        problems.append("the agent exited")
    if any(not up for _, up, _ in liveness):
        problems.append("a liveness GetTask failed")
    notes = []
    records = collections.Counter(
        (m.group(1), m.group(2)) for m in re.finditer(r"^\S+ \S+ (\S+) ERROR (.*)$", log, flags=re.MULTILINE)
    )
    own = {key: n for key, n in records.items() if key[0] == "reference_agent"}
    if own:  # the agent's own log.exception: a handler failed (it answers -32603 or fails the task)
        problems.append(f"the agent logged its own errors: {own}")
    others = {f"{logger}: {message}": n for (logger, message), n in records.items() if logger != "reference_agent"}
    if others:
        final = collections.Counter(
            line.split(":")[0] for line in log.splitlines() if line.startswith(("aiohttp.", "zlib."))
        )
        notes.append(
            f"aiohttp's server logged {sum(others.values())} ERROR records with tracebacks ({others}); "
            f"exception lines: {dict(final)}. The answers were sent (see the table); the log noise is aiohttp's."
        )
    for note in notes:
        print(f"\nnote: {note}")
    print("\nproblems:" if problems else "\nno problems: every request got its required answer, no 5xx, no hang")
    for problem in problems:
        print(f"  - {problem}")
    print(f"\nreproduce: {common.reproduce('benchmarks.bad_input', sys.argv[1:])}")
    return 1 if wrong or tally.five_xx or tally.hangs or aborted or not alive else 0


def _seed_message() -> dict[str, Any]:
    return common.echo_message(f"bad-input-seed-{time.time_ns()}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bad_input", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run: 500 requests")
    p.add_argument("--requests", type=int, help="malformed requests to send (default 10000)")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight (default 8)")
    p.add_argument("--seed", type=int, default=1, help="seed of the generated cases (default 1)")
    p.add_argument("--time-limit", type=float, default=900.0, help="stop past this many seconds (default 900)")
    args = p.parse_args(argv)
    args.requests = args.requests or (500 if args.quick else 10_000)
    if not (0 < args.requests <= 200_000 and 0 < args.concurrency <= 64 and 0 < args.time_limit <= 3600):
        p.error("requests in 1..200000, concurrency in 1..64, time limit in (0, 3600] s")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
