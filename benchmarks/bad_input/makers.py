"""The generated cases: bodies, envelopes and headers drawn by case makers, params drawn as schema mutants.

Each category is a class whose methods each draw one case with the run's seeded ``random.Random``; its
WEIGHTS say how often each is drawn. The same seed draws the same cases.
"""

from __future__ import annotations

import collections
import gzip
import json
import random
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

from benchmarks import common
from benchmarks.bad_input.cases import MB, Case, Expect, rpc_error, usual_headers
from benchmarks.bad_input.wire import RESULT

PARAM_METHODS = ("SendMessage", "GetTask", "ListTasks", "CancelTask")
CATEGORIES = {"body": 25, "envelope": 20, "params": 35, "headers": 20}
PARSE_ERROR = rpc_error(-32700)


Maker = TypeVar("Maker", bound=Callable[..., Case])


def weight(n: int) -> Callable[[Maker], Maker]:
    """Mark a method as a case maker of its category, drawn ``n`` times in the sum of the category's weights."""

    def mark(maker: Maker) -> Maker:
        maker.weight = n  # type: ignore[attr-defined]
        return maker

    return mark


class Makers:
    """The case makers of one category: its methods marked with ``@weight``, each drawing one case."""

    def __init__(self, rng: random.Random, task_id: str):
        self.rng, self.task_id = rng, task_id

    def makers(self) -> list[tuple[int, Callable[[], Case]]]:
        """(weight, maker) of each case maker, in the order the class defines them."""
        return [(f.weight, getattr(self, name)) for name, f in vars(type(self)).items() if hasattr(f, "weight")]


class BodyCases(Makers):
    """Bodies that are no readable request: not JSON, broken encodings, too deep, too big."""

    def __init__(self, rng: random.Random, task_id: str):
        super().__init__(rng, task_id)
        self.good = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": task_id}}
        self.good_bytes = json.dumps(self.good).encode()

    def _case(self, name: str, body: bytes, expect: Expect = PARSE_ERROR, **kw: Any) -> Case:
        return Case("body", name, body, expect, **kw)

    @weight(6)
    def garbage(self) -> Case:
        texts = [b"hello", b"{", b"}", b"{'a': 1}", b"[1,2,", b"<xml/>", b"jsonrpc=2.0&method=GetTask", b"\x00" * 10]
        return self._case(
            "not JSON",
            self.rng.choice(texts) + bytes(self.rng.randrange(32, 127) for _ in range(self.rng.randrange(8))),
        )

    @weight(6)
    def truncated(self) -> Case:
        cut = self.rng.randrange(0, len(self.good_bytes) - 1)
        return self._case("truncated", self.good_bytes[:cut])

    @weight(5)
    def bad_utf8(self) -> Case:
        junk = self.rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xa0\xa1", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])
        return self._case("invalid UTF-8", self.good_bytes.replace(self.task_id.encode(), self.task_id.encode() + junk))

    @weight(3)
    def surrogate(self) -> Case:
        return self._case(
            "lone surrogate", self.good_bytes.replace(self.task_id.encode(), self.task_id.encode() + b"\\ud800")
        )

    @weight(4)
    def nan(self) -> Case:
        constant = self.rng.choice([b"NaN", b"Infinity", b"-Infinity"])
        body = json.dumps({**self.good, "params": {"id": self.task_id, "historyLength": 0}}).encode()
        return self._case("NaN / Infinity", body.replace(b'"historyLength": 0', b'"historyLength": ' + constant))

    @weight(2)
    def deep(self) -> Case:
        depth = self.rng.choice([10_000, 20_000, 100_000])
        if self.rng.random() < 0.5:
            body = b"[" * depth + b"]" * depth
        else:
            inner = b'{"a":' * depth + b"1" + b"}" * depth
            body = (
                json.dumps({**self.good, "params": {"id": self.task_id}}).encode()[:-2] + b', "deep": ' + inner + b"}}"
            )
        return self._case("nesting 10k+", body)

    @weight(2)
    def huge_string(self) -> Case:
        size = MB + self.rng.randrange(1000)
        where = self.rng.choice(["method", "task id", "jsonrpc", "agent message"])
        if where == "method":
            return self._case(
                "1 MB string", json.dumps({**self.good, "method": "M" * size}).encode(), rpc_error(-32601, 7)
            )
        if where == "task id":
            body = json.dumps({**self.good, "params": {"id": "t" * size}}).encode()
            return self._case("1 MB string", body, rpc_error(-32001, 7))
        if where == "jsonrpc":
            return self._case(
                "1 MB string", json.dumps({**self.good, "jsonrpc": "2" * size}).encode(), rpc_error(-32600, 7)
            )
        message = common.echo_message("huge-agent", text="x" * size)
        message["role"] = "ROLE_AGENT"  # a caller may not send an agent's message: -32602, nothing stored
        body = common.rpc("SendMessage", {"message": message}, 7)
        return self._case("1 MB string", body, rpc_error(-32602, 7))

    @weight(1)
    def too_big(self) -> Case:
        size = 8 * MB + self.rng.choice([1, 1000, MB])
        return self._case("8+ MB body", b'{"a":"' + b"x" * (size - 8) + b'"}', Expect((413,)))

    @weight(1)
    def gzip_bomb(self) -> Case:
        return self._case(
            "gzip bomb (64 MB inflated)",
            _bomb(),
            Expect((413,)),
            headers={**usual_headers(), "Content-Encoding": "gzip"},
        )


class EnvelopeCases(Makers):
    """JSON that is no JSON-RPC request: its method, version, id or params wrong."""

    def __init__(self, rng: random.Random, task_id: str):
        super().__init__(rng, task_id)
        self.params = {"id": task_id}

    def _case(self, name: str, value: Any, expect: Expect) -> Case:
        return Case("envelope", name, json.dumps(value).encode(), expect)

    @weight(3)
    def no_method(self) -> Case:
        return self._case("no method", {"jsonrpc": "2.0", "id": 3, "params": self.params}, rpc_error(-32600, 3))

    @weight(3)
    def method_type(self) -> Case:
        method = self.rng.choice([7, None, {"name": "GetTask"}, ["GetTask"], True, ""])
        return self._case(
            "method wrong type / empty", {"jsonrpc": "2.0", "id": 3, "method": method}, rpc_error(-32600, 3)
        )

    @weight(3)
    def version(self) -> Case:
        value = {"id": 3, "method": "GetTask", "params": self.params}
        choice = self.rng.choice(["1.0", 2.0, 2, None, "2.00", "missing"])
        if choice != "missing":
            value["jsonrpc"] = choice
        return self._case("wrong jsonrpc", value, rpc_error(-32600, 3))

    @weight(3)
    def id_type(self) -> Case:
        request_id = self.rng.choice([{"a": 1}, [1], True, False, 1.5, -0.25])
        return self._case(
            "id of wrong type",
            {"jsonrpc": "2.0", "id": request_id, "method": "GetTask", "params": self.params},
            rpc_error(-32600, None),
        )

    @weight(1)
    def integral_float_id(self) -> Case:
        # 1.0 passes the envelope schema (an integer in JSON Schema): the answer must then carry the request's
        # id (1.0 or 1); refusing it as an id of the wrong type (-32600, id null) is also right.
        request_id = self.rng.choice([1.0, 2.0, -3.0])
        value = {"jsonrpc": "2.0", "id": request_id, "method": "GetTask", "params": self.params}
        expect = (Expect((200,), (RESULT,), request_id), rpc_error(-32600, None))
        return Case("envelope", "id an integral float (1.0)", json.dumps(value).encode(), expect)

    @weight(2)
    def no_id(self) -> Case:
        # A request without id is a notification: JSON-RPC 2.0 §4.1 has no reply come back (ERR-12), so the
        # HTTP answer carries none (204, or 202).
        value = {"jsonrpc": "2.0", "method": "GetTask", "params": self.params}
        return self._case("no id (a notification)", value, Expect(statuses=(202, 204)))

    @weight(3)
    def params_type(self) -> Case:
        value = self.rng.choice([[self.task_id], self.task_id, 3, None, True])
        return self._case(
            "params not an object",
            {"jsonrpc": "2.0", "id": "p", "method": "GetTask", "params": value},
            rpc_error(-32600, "p"),
        )

    @weight(1)
    def batch(self) -> Case:
        value = self.rng.choice([[], [{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": self.params}]])
        return self._case("batch", value, rpc_error(-32600, None))

    @weight(1)
    def bare(self) -> Case:
        return self._case("bare JSON value", self.rng.choice(["GetTask", 42, None, True, 1.5]), rpc_error(-32600, None))

    @weight(3)
    def unknown(self) -> Case:
        method = self.rng.choice(["getTask", "tasks/get", "message/send", "GetTasks", "SendMessage ", "rpc.discover"])
        return self._case(
            "unknown method", {"jsonrpc": "2.0", "id": 9, "method": method, "params": self.params}, rpc_error(-32601, 9)
        )


class HeaderCases(Makers):
    """A good GetTask with headers wrong: credentials, subject, scopes, version, encoding."""

    def __init__(self, rng: random.Random, task_id: str):
        super().__init__(rng, task_id)
        self.body = common.rpc("GetTask", {"id": task_id}, 5)
        self.ok = rpc_error(RESULT, 5)

    def _case(
        self, name: str, headers: dict[str, str], expect: Expect, data: bytes | None = None, path: str | None = None
    ) -> Case:
        return Case("headers", name, self.body if data is None else data, expect, headers, path)

    def _without(self, *names: str) -> dict[str, str]:
        return {k: v for k, v in usual_headers().items() if k not in names}

    @weight(3)
    def no_auth(self) -> Case:
        return self._case("no Authorization", self._without("Authorization"), Expect((401,)))

    @weight(3)
    def wrong_auth(self) -> Case:
        value = self.rng.choice(
            ["Basic a2l0LWtleTo=", "Bearer wrong-key", "Bearer", "kit-key", "Bearer  ", "Token kit-key"]
        )
        return self._case("wrong credentials", {**usual_headers(), "Authorization": value}, Expect((401,)))

    @weight(2)
    def no_subject(self) -> Case:
        headers = (
            self._without("Nylorun-Subject")
            if self.rng.random() < 0.5
            else {**usual_headers(), "Nylorun-Subject": "  "}
        )
        return self._case("no subject", headers, Expect((400,)))

    @weight(2)
    def scopes(self) -> Case:
        value = self.rng.choice(["admin", "sessions:all", "sessions:own admin", "", ","])
        return self._case(
            "scopes without sessions:own / not granted", {**usual_headers(), "Nylorun-Scopes": value}, Expect((403,))
        )

    @weight(4)
    def version(self) -> Case:
        value = self.rng.choice(["0.3", "2.0", "1", "abc", "", " ", "1.1", "v1.0", None])
        headers = self._without("A2A-Version") if value is None else {**usual_headers(), "A2A-Version": value}
        return self._case("wrong / missing A2A-Version", headers, rpc_error(-32009, 5))

    @weight(3)
    def broken_gzip(self) -> Case:
        encoding, data = self.rng.choice(
            [
                ("gzip", b"not gzip at all"),
                ("gzip", b"\x1f\x8b\x08\x00garbage-after-the-magic"),
                ("deflate", b"not deflate"),
                ("gzip", zlib.compress(self.body)),  # zlib framing under a gzip label
            ]
        )
        return self._case(
            "broken gzip / deflate", {**usual_headers(), "Content-Encoding": encoding}, Expect((400,)), data
        )

    @weight(1)
    def truncated_gzip(self) -> Case:
        packed = gzip.compress(self.body)
        data = packed[: self.rng.randrange(10, len(packed))]
        inflater = zlib.decompressobj(wbits=31)
        try:
            whole = inflater.decompress(data) == self.body
        except zlib.error:
            whole = False
        if whole:  # only (part of) the CRC/length trailer is missing: the request itself inflates whole
            # A strict reader refuses the broken stream (400); a lenient one answers the request it inflated.
            expect = (Expect((400,)), rpc_error(RESULT, 5))
            return self._case("gzip without its trailer", {**usual_headers(), "Content-Encoding": "gzip"}, expect, data)
        # What inflates is a prefix of the request: refused as unreadable (400) or as not JSON (-32700).
        expect = (Expect((400,)), rpc_error(-32700, None))
        return self._case("truncated gzip", {**usual_headers(), "Content-Encoding": "gzip"}, expect, data)

    @weight(1)
    def unsupported_encoding(self) -> Case:
        encoding = self.rng.choice(["br", "zstd"])
        return self._case(
            "unsupported Content-Encoding", {**usual_headers(), "Content-Encoding": encoding}, Expect((400, 415))
        )

    @weight(1)
    def good_gzip(self) -> Case:
        packed = gzip.compress(self.body)
        return self._case("valid gzip (control)", {**usual_headers(), "Content-Encoding": "gzip"}, self.ok, packed)

    @weight(1)
    def huge_header(self) -> Case:
        name = self.rng.choice(["Nylorun-Subject", "X-Padding", "A2A-Extensions"])
        headers = {**usual_headers(), name: "h" * self.rng.choice([9_000, 65_000])}
        return self._case("header past 8 KB", headers, Expect((400, 431)))

    @weight(1)
    def unknown_agent(self) -> Case:
        return self._case("unknown Agent", usual_headers(), Expect((404,)), path="/v1/a2a/agents/no-such-agent")


_BOMB: list[bytes] = []


def _bomb() -> bytes:
    if not _BOMB:
        _BOMB.append(gzip.compress(b" " * (64 * MB), compresslevel=9))
    return _BOMB[0]


def draw_mutants(n: int, seed: int) -> list[tuple[str, Any]]:
    """``n`` (method, Mutant) pairs from schemas.strategies.mutations, reproducibly (Hypothesis, fixed seed)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed
    from hypothesis import strategies as st

    from nylorun_a2a_kit.fixtures.scenarios.properties import without_local_constants
    from nylorun_a2a_kit.schemas.strategies import mutations

    without_local_constants()  # the same mutants for a seed, whatever the kit's source says
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
        ("body", BodyCases(rng, task_id).makers()),
        ("envelope", EnvelopeCases(rng, task_id).makers()),
        ("headers", HeaderCases(rng, task_id).makers()),
    ):
        weights = [w for w, _ in makers]
        for _ in range(counts[category]):
            cases.append(rng.choices([m for _, m in makers], weights=weights)[0]())
    for n, (method, mutant) in enumerate(draw_mutants(counts["params"], seed)):
        cases.append(param_case(method, mutant, n))
    rng.shuffle(cases)
    return cases
