"""Who a request acts for, as the engine and the binding see it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    agent_id: str
    subject: str
    base_url: str  # where this Agent's endpoint is reachable, for the URLs it hands out
    extensions: frozenset[str] = frozenset()  # what this request activated
    traceparent: str | None = None
