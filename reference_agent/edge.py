"""The agent's HTTP edge: the names of its routes, who may call it, and the refusals it answers before JSON-RPC.

Refusals are HTTP errors with a JSON body: 401 (no or unknown key), 429 (rate limit, with ``Retry-After``),
404 (unknown Agent), 400 (no ``Nylorun-Subject``), 403 (a subject or scope the key does not grant).
"""

from __future__ import annotations

import time
from collections import deque

from aiohttp import web

from nylorun_a2a_kit.reference_agent.config import AgentConfig, KeyGrant

# The routes, by name (``request.match_info.route.name``).
RPC_ROUTE, TURNS_ROUTE, FILE_ROUTE = "rpc", "turns", "file"
CARD_ROUTES = ("card", "well-known-card")


def refuse(status: int, reason: str, message: str, **headers: str) -> web.Response:
    body = {"error": {"status": status, "reason": reason, "message": message}}
    return web.json_response(body, status=status, headers=headers)


class Refused(Exception):
    """A request refused before JSON-RPC; ``response`` is the refusal."""

    def __init__(self, status: int, reason: str, message: str, **headers: str):
        super().__init__(message)
        self.response = refuse(status, reason, message, **headers)


def key_of(request: web.Request) -> str:
    """The application key a request sends as ``Authorization: Bearer <key>`` ("" without one)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class RateLimiter:
    """A sliding window per key: at most ``grant.rate_limit`` requests per ``grant.rate_window_s``."""

    def __init__(self) -> None:
        self._seen: dict[str, deque[float]] = {}

    def retry_after(self, key: str, grant: KeyGrant) -> int:
        if not grant.rate_limit:
            return 0
        now = time.monotonic()
        seen = self._seen.setdefault(key, deque())
        while seen and seen[0] <= now - grant.rate_window_s:
            seen.popleft()
        if len(seen) >= grant.rate_limit:
            return max(1, int(seen[0] + grant.rate_window_s - now + 0.999))
        seen.append(now)
        return 0


class Edge:
    """Who a JSON-RPC request acts for: a key's grant, within its rate limit, an Agent, a subject, its scopes."""

    def __init__(self, config: AgentConfig):
        self.config = config
        self.limiter = RateLimiter()

    def admit(self, request: web.Request) -> tuple[str, str]:
        """The Agent and the subject the request acts for; raises :class:`Refused`."""
        key, grant = self.credentials(request)
        self.limit(key, grant)
        agent_id = self.known_agent(request)
        subject = request.headers.get("Nylorun-Subject", "").strip() or self.no_subject()
        self.check_subject(grant, subject)
        self.check_scopes(request, grant)
        return agent_id, subject

    def reader(self, request: web.Request) -> tuple[KeyGrant, str]:
        """Who reads the change feed: a key's grant, and the subject it names ("": the whole Tenant)."""
        _, grant = self.credentials(request)
        subject = request.headers.get("Nylorun-Subject", "").strip()
        if subject:
            self.check_subject(grant, subject)
        return grant, subject

    def check_subject(self, grant: KeyGrant, subject: str) -> None:
        if not grant.allows_subject(subject):
            raise Refused(403, "SUBJECT_NOT_ALLOWED", "This key may not act for that subject.")

    def known_agent(self, request: web.Request) -> str:
        """The Agent a request names; raises :class:`Refused` (404) for one this Runtime does not have."""
        agent_id = self.agent_id(request)
        if agent_id is None:
            raise Refused(404, "AGENT_NOT_FOUND", f"No Agent {request.match_info['agent_id']!r} on this Runtime.")
        return agent_id

    def credentials(self, request: web.Request) -> tuple[str, KeyGrant]:
        key = key_of(request)
        grant = self.config.keys.get(key)
        if grant is None:
            raise Refused(
                401,
                "UNAUTHENTICATED",
                "Send an application key as Authorization: Bearer <key>.",
                **{"WWW-Authenticate": "Bearer"},
            )
        return key, grant

    def limit(self, key: str, grant: KeyGrant) -> None:
        wait = self.limiter.retry_after(key, grant)
        if wait:
            raise Refused(429, "RATE_LIMITED", "Too many requests for this key.", **{"Retry-After": str(wait)})

    def agent_id(self, request: web.Request) -> str | None:
        """The Agent a request names (the first one at a path that names none); None for an unknown one."""
        agent_id = request.match_info.get("agent_id", self.config.agents[0])
        return agent_id if agent_id in self.config.agents else None

    def no_subject(self) -> str:
        raise Refused(400, "SUBJECT_REQUIRED", "An application key acts for a subject: send Nylorun-Subject.")

    def check_scopes(self, request: web.Request, grant: KeyGrant) -> None:
        scopes = {s for s in request.headers.get("Nylorun-Scopes", "sessions:own").replace(",", " ").split() if s}
        if "sessions:own" not in scopes or not scopes <= grant.scopes:
            raise Refused(403, "SCOPE_NOT_GRANTED", "The key does not grant those scopes; sessions:own is needed.")
