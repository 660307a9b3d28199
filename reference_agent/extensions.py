"""The profile's extensions in the reference agent: activation by header, and data shown only when active.

A turn always records its extension data; what a caller sees is filtered per request by the extensions
that request activated, so a Core caller gets plain A2A 1.0 and a v1 caller gets only the v1 extensions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

INTERACTIONS = "https://docs.nylorun.com/a2a/interactions/v1"
EFFECTS = "https://docs.nylorun.com/a2a/effects/v1"
PROGRESS = "https://docs.nylorun.com/a2a/progress/v1"
TELEMETRY = "https://docs.nylorun.com/a2a/telemetry/v1"
FILES = "https://docs.nylorun.com/a2a/files/v1"
DESCRIPTIONS = {
    INTERACTIONS: "Approvals, questions and connections, typed.",
    EFFECTS: "The effect whose outcome was lost, while the task stays working.",
    PROGRESS: "The agent's plan: up to 20 steps with a label, state and note.",
    TELEMETRY: "The turn's totals and trace id on its terminal status update.",
    FILES: "Each artifact's kind, version, size, sha256 and path.",
}
DECLARED = frozenset(DESCRIPTIONS)
V1 = frozenset({INTERACTIONS, EFFECTS})


def requested(header_values: Iterable[str]) -> list[str]:
    """The URIs of every ``A2A-Extensions`` header field: comma-separated, spaces ignored, repeats joined."""
    out: list[str] = []
    for value in header_values:
        for uri in value.split(","):
            uri = uri.strip()
            if uri and uri not in out:
                out.append(uri)
    return out


def activate(header_values: Iterable[str]) -> frozenset[str]:
    """What a request activates: the URIs it asks for that this Agent declares; unknown ones are ignored."""
    return frozenset(uri for uri in requested(header_values) if uri in DECLARED)


def visible(value: Any, active: frozenset[str]) -> Any:
    """``value`` with the data of extensions the request did not activate removed, wherever it rides."""
    if isinstance(value, list):
        return [visible(item, active) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key == "metadata" and isinstance(item, dict):
            kept = {k: visible(v, active) for k, v in item.items() if k not in DECLARED or k in active}
            if kept:
                out[key] = kept
        elif key == "extensions" and isinstance(item, list) and all(isinstance(u, str) for u in item):
            kept_uris = [u for u in item if u not in DECLARED or u in active]
            if kept_uris:
                out[key] = kept_uris
        else:
            out[key] = visible(item, active)
    return out
