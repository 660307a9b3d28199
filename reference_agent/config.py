"""How a reference agent instance is set up: its Agents, keys, limits and switched-on faults."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_SCOPES = ("sessions:own",)


@dataclass(frozen=True)
class KeyGrant:
    """What an application key may do: act for these subjects ("*" = any) with these scopes."""

    subjects: frozenset[str] = frozenset({"*"})
    scopes: frozenset[str] = frozenset(DEFAULT_SCOPES)
    # At most ``rate_limit`` requests per ``rate_window_s`` seconds; 0 means unlimited.
    rate_limit: int = 0
    rate_window_s: float = 60.0

    def allows_subject(self, subject: str) -> bool:
        return "*" in self.subjects or subject in self.subjects


@dataclass(frozen=True)
class AgentConfig:
    db_path: str
    agents: tuple[str, ...] = ("support", "billing")
    keys: dict[str, KeyGrant] = field(default_factory=dict)
    a2a_wait_ms: int = 300_000
    mutants: frozenset[str] = frozenset()  # their registry names (faults among them): reference_agent.mutants
    # Longest a scenario may ask to run; keeps a mistaken "slow" from pinning a turn for hours.
    max_scenario_ms: int = 600_000
    # Off, the card does not advertise the scenario contract: the agent then looks like any opaque Agent.
    advertise_scenarios: bool = True
    # Push notifications: on with a secret (whsec_…); deliveries only to these "host:port" (or "host").
    push_secret: str | None = None
    push_allowed: frozenset[str] = frozenset()
    # Every delay of the retry schedule is multiplied by this (1.0 = real time; 0.0001 runs 24 h in 8.6 s).
    push_time_scale: float = 1.0
    push_attempt_timeout_s: float = 10.0
    # A test setup: restart the turns, the sender and the store on the kept database every n requests, bringing the
    # database back to an older layout first when asked (reference_agent/layouts.py), which the start carries over.
    restart_every: int = 0
    older_layout_at_restart: bool = False

    @property
    def push_enabled(self) -> bool:
        return bool(self.push_secret)


def parse_key(spec: str) -> tuple[str, KeyGrant]:
    """``KEY[=SUBJECT,SUBJECT…][:SCOPE,SCOPE…][@LIMIT/SECONDS]`` → a key and its grant."""
    rate_limit, rate_window = 0, 60.0
    if "@" in spec:
        spec, limit = spec.rsplit("@", 1)
        count, _, window = limit.partition("/")
        rate_limit, rate_window = int(count), float(window or 60)
    scopes = DEFAULT_SCOPES
    if ":" in spec:
        spec, scope_list = spec.split(":", 1)
        scopes = tuple(s for s in scope_list.split(",") if s)
    subjects: tuple[str, ...] = ("*",)
    if "=" in spec:
        spec, subject_list = spec.split("=", 1)
        subjects = tuple(s for s in subject_list.split(",") if s)
    if not spec:
        raise ValueError("a key needs a value before '=', ':' or '@'")
    return spec, KeyGrant(frozenset(subjects), frozenset(scopes), rate_limit, rate_window)
