"""A malformed request, the one answer it must get, and the judgement of the answer it got."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks import common
from benchmarks.bad_input.wire import Answer

MB = 1024 * 1024


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


def rpc_error(code: int | str, request_id: Any = None, check_id: bool = True) -> Expect:
    """HTTP 200 with JSON-RPC error ``code`` (or RESULT) and the id ``request_id``."""
    return Expect((200,), (code,), request_id, check_id)


def usual_headers() -> dict[str, str]:
    """The agent's usual headers, for the subject ``bad-input``."""
    return common.reference_headers("bad-input")
