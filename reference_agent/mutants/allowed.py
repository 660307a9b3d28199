"""The allowed axis: what a correct Runtime may show, each variation with the rule that allows it. The kit must pass
the agent under each, alone and in pairs (``tests/test_variations.py``).

They are mutants no rule forbids (equivalent, with their reason), as the equivalent mutants of the other axes are:
one kind, the allowed variations of a correct Runtime. Each names the requirements whose checks must pass it (the
rules read): those whose object travels the channel the variation changes.

Derived from what the sources leave open: latency (no rule bounds how long an answer or a delivery takes on the
way), at-least-once delivery (Standard Webhooks' idempotency key), a short page (a2a.proto's ``page_size``: "The
service may return fewer than this value"), and what HTTP stacks and proxies do to an answer
(RFC 9112's chunked transfer coding and ``Connection: close``, RFC 8259's ``charset`` parameter).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent.delivery import RetryPolicy
from nylorun_a2a_kit.reference_agent.edge import RPC_ROUTE
from nylorun_a2a_kit.reference_agent.listing import Paging
from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant, mutant
from nylorun_a2a_kit.reference_agent.scenarios import Scenarios
from nylorun_a2a_kit.reference_agent.turn import Turn

LATE_S = 0.5  # how late a late delivery or answer comes: a Runtime in another region, or under load
LATE_ANSWER_EVERY = 20  # one answer in this many comes late (every answer late would make a run many minutes longer)
DISTANT_S = 0.1  # a Runtime 100 ms away: every request's round trip
INTERLEAVED_S = 0.3  # how far apart two tasks' deliveries may drift on their way
TURN_S = 2.0  # a real Agent's turn: a queue before it, a cold start, a model

AT_LEAST_ONCE = (
    "delivery is at least once: a sender that did not read the 2xx sends the event again, with the same webhook-id "
    "(Standard Webhooks: an event 'sent multiple times maliciously, in error, or due to networking issues')"
)
LATENCY = (
    "neither A2A nor the profile bounds how long an answer or a delivery takes on the way; a Runtime in another "
    "region or under load answers and delivers late"
)
JITTER = (
    "Standard Webhooks recommends 'some level of random jitter' on an exponential backoff; equal jitter (each delay "
    "drawn between half and all of the schedule's) keeps every gap at least half the one before"
)
TURN_TIME = (
    "neither A2A nor the profile bounds how long a turn takes: a blocking SendMessage waits for it up to a2aWaitMs, "
    "and a task is WORKING meanwhile"
)
SHORT_PAGES = (
    "a2a.proto's ListTasksRequest.page_size: 'The service may return fewer than this value'; the rest follows on "
    "the next page, and the page size used is still the one asked (the client page: 50 by default)"
)
HTTP_STACKS = (
    "what an HTTP stack or proxy may do to an answer: RFC 9112 lets a server send any body chunked and close the "
    "connection after an answer (Connection: close); RFC 8259's JSON media type may carry a charset parameter or not"
)


def derive(requirements: dict[str, Any]) -> Iterator[Mutant]:
    pushed = tuple(sorted(r.id for r in requirements.values() if r.area == "push" or "push" in r.channels))
    answered = tuple(sorted(r.id for r in requirements.values() if r.checked_by is None and r.later is None))
    listed = tuple(sorted(r.id for r in requirements.values() if r.area == "list-tasks" or "list" in r.channels))
    yield mutant(
        "allowed/delivery/late",
        f"every push delivery's first attempt comes {LATE_S} s after its event, in order",
        LateDeliveries,
        equivalent=LATENCY,
        read=pushed,
    )
    yield mutant(
        "allowed/delivery/interleaved",
        f"every delivery attempt comes up to {INTERLEAVED_S} s late, drawn at random, in order within its task",
        InterleavedDeliveries,
        equivalent=LATENCY,
        read=pushed,
    )
    yield mutant(
        "allowed/delivery/jittered",
        "every retry's delay is drawn between half and all of the schedule's (equal jitter)",
        JitteredRetries,
        equivalent=JITTER,
        read=pushed,
    )
    yield mutant(
        "allowed/delivery/again-after-2xx",
        "every event acknowledged with 2xx is delivered once more, with the same webhook-id",
        RedeliveredOnce,
        equivalent=AT_LEAST_ONCE,
        read=pushed,
    )
    yield mutant(
        "allowed/answer/late",
        f"one JSON-RPC answer in {LATE_ANSWER_EVERY} comes {LATE_S} s late",
        _late_answers,
        equivalent=LATENCY,
        read=answered,
    )
    yield mutant(
        "allowed/answer/distant",
        f"every HTTP answer comes {DISTANT_S} s after its request: a Runtime {DISTANT_S * 1000:.0f} ms away",
        _distant,
        equivalent=LATENCY,
        read=answered,
    )
    yield mutant(
        "allowed/turn/slow",
        f"every turn works {TURN_S} s before it goes on (WORKING meanwhile)",
        SlowTurns,
        equivalent=TURN_TIME,
        read=answered,
    )
    yield mutant(
        "allowed/list/short-pages",
        "a ListTasks page holds at most half its pageSize (at least one task), the rest on the next pages",
        ShortPages,
        equivalent=SHORT_PAGES,
        read=listed,
    )
    yield mutant(
        "allowed/http/chunked",
        "every JSON-RPC answer is sent with chunked transfer coding, no Content-Length",
        _chunked,
        equivalent=HTTP_STACKS,
        read=answered,
    )
    yield mutant(
        "allowed/http/connection-close",
        "every JSON-RPC answer closes its connection (Connection: close)",
        _closing,
        equivalent=HTTP_STACKS,
        read=answered,
    )
    yield mutant(
        "allowed/http/charset",
        "every JSON-RPC answer's Content-Type names no charset (application/json), where the agent's name utf-8",
        _with_charset,
        equivalent=HTTP_STACKS,
        read=answered,
    )


class LateDeliveries(RetryPolicy):
    def first_due(self, body: dict[str, Any]) -> float:
        return super().first_due(body) + LATE_S


class InterleavedDeliveries(RetryPolicy):
    """Every attempt late by its own draw on the way (a retry too), never before an earlier event of its task: in
    order within a task, interleaved across tasks, and an event's gaps changed by the network as the kit sees them."""

    def __init__(self, time_scale: float):
        super().__init__(time_scale)
        self._last: dict[str, float] = {}
        self._draw = random.Random(f"interleaved:{time.time_ns()}")

    def first_due(self, body: dict[str, Any]) -> float:
        task = _task_of(body)
        due = max(super().first_due(body) + self._draw.uniform(0, INTERLEAVED_S), self._last.get(task, 0.0))
        self._last[task] = due
        return due

    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        delay = super().delay(attempts, retry_after)
        return None if delay is None else delay + self._draw.uniform(0, INTERLEAVED_S)


def _task_of(body: dict[str, Any]) -> str:
    for key, field_name in (("task", "id"), ("statusUpdate", "taskId"), ("artifactUpdate", "taskId")):
        if isinstance(body.get(key), dict):
            return str(body[key].get(field_name, ""))
    return ""


class JitteredRetries(RetryPolicy):
    def __init__(self, time_scale: float):
        super().__init__(time_scale)
        self._draw = random.Random(f"jittered:{time.time_ns()}")

    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        delay = super().delay(attempts, retry_after)
        if delay is None or retry_after is not None:
            return delay
        return delay * self._draw.uniform(0.5, 1.0)


class SlowTurns(Scenarios):
    """Every stage of a turn works a while before it goes on, WORKING meanwhile (a resumed turn too)."""

    async def run(self, turn: Turn) -> None:
        starting = turn.scenario.get("stage") == "start" and turn.task.state != "TASK_STATE_WORKING"
        turn.set_state("TASK_STATE_WORKING", "Working on it." if starting else None)
        await asyncio.sleep(TURN_S)
        await super().run(turn)


class RedeliveredOnce(RetryPolicy):
    """A 2xx is taken for a failure once per event: the event comes again on the retry schedule, then stops."""

    def __init__(self, time_scale: float):
        super().__init__(time_scale)
        self._acknowledged: set[str] = set()

    def delivered(self, status: int | None, webhook_id: str = "") -> bool:
        if not super().delivered(status, webhook_id):
            return False
        if webhook_id in self._acknowledged:
            return True
        self._acknowledged.add(webhook_id)
        return False


class ShortPages(Paging):
    """Pages of half the page size: fewer tasks a page, never fewer tasks in all."""

    def served(self, page_size: int) -> int:
        return max(1, super().served(page_size) // 2)


def _late_answers(config: Any) -> Any:
    chosen = random.Random(f"late-answers:{time.time_ns()}")

    @web.middleware
    async def late(request: web.Request, handler: Any) -> web.StreamResponse:
        response = await handler(request)
        if request.match_info.route.name == RPC_ROUTE and chosen.randrange(LATE_ANSWER_EVERY) == 0:
            await asyncio.sleep(LATE_S)
        return response

    return late


def _distant(config: Any) -> Any:
    @web.middleware
    async def distant(request: web.Request, handler: Any) -> web.StreamResponse:
        await asyncio.sleep(DISTANT_S)
        return await handler(request)

    return distant


def _rpc_answers(change: Any) -> Any:
    """A middleware factory that applies ``change`` to every JSON-RPC answer with a body (not a stream)."""

    def factory(config: Any) -> Any:
        @web.middleware
        async def changed(request: web.Request, handler: Any) -> web.StreamResponse:
            response = await handler(request)
            if request.match_info.route.name == RPC_ROUTE and isinstance(response, web.Response):
                change(response)
            return response

        return changed

    return factory


def _chunk(response: web.Response) -> None:
    response.enable_chunked_encoding()


def _close(response: web.Response) -> None:
    response.force_close()


def _charset(response: web.Response) -> None:
    if response.content_type.endswith("json"):
        response.charset = None  # the agent's own answers name utf-8: the other reading is the bare media type


_chunked, _closing, _with_charset = _rpc_answers(_chunk), _rpc_answers(_close), _rpc_answers(_charset)
