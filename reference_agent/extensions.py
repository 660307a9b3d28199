"""The profile's extensions in the reference agent: activation by header, and data shown only when active.

A turn always records its extension data; what a caller sees is filtered per request by the extensions
that request activated, so a Core caller gets plain A2A 1.0 and a v1 caller gets only the v1 extensions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nylorun_a2a_kit import schemas

INTERACTIONS = schemas.extension_uri("interactions")
EFFECTS = schemas.extension_uri("effects")
PROGRESS = schemas.extension_uri("progress")
TELEMETRY = schemas.extension_uri("telemetry")
FILES = schemas.extension_uri("files")
DESCRIPTIONS = {
    INTERACTIONS: "Approvals, questions and connections, typed.",
    EFFECTS: "The effect whose outcome was lost, while the task stays working.",
    PROGRESS: "The agent's plan: up to 20 steps with a label, state and note.",
    TELEMETRY: "The turn's totals and trace id on its terminal status update.",
    FILES: "Each artifact's kind, version, size, sha256 and path.",
}
DECLARED = frozenset(DESCRIPTIONS)
V1 = frozenset(schemas.extension_uris("v1"))


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


def callers_own(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """A caller's request metadata without profile extension keys: only the Agent speaks under those URIs."""
    kept = {k: v for k, v in (metadata or {}).items() if k not in DECLARED}
    return kept or None


def _shown(obj: Any, active: frozenset[str]) -> Any:
    """One A2A object (message, artifact or task) with only the active extensions in metadata/extensions."""
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    metadata = out.pop("metadata", None)
    if isinstance(metadata, dict):
        kept = {k: v for k, v in metadata.items() if k not in DECLARED or k in active}
        if kept:
            out["metadata"] = kept
    uris = out.pop("extensions", None)
    if isinstance(uris, list):
        kept_uris = [u for u in uris if u not in DECLARED or u in active]
        if kept_uris:
            out["extensions"] = kept_uris
    return out


def visible_task(task: dict[str, Any], active: frozenset[str]) -> dict[str, Any]:
    """A Task with the data of extensions the request did not activate removed, wherever it rides.

    Only the A2A structure is walked (the task, its status message, history and artifacts): the contents
    of parts, such as an echoed data part, are the caller's or the Agent's data and stay as they are.
    """
    out = _shown(task, active)
    status = out.get("status")
    if isinstance(status, dict) and isinstance(status.get("message"), dict):
        out["status"] = {**status, "message": _shown(status["message"], active)}
    if isinstance(out.get("history"), list):
        out["history"] = [_shown(m, active) for m in out["history"]]
    if isinstance(out.get("artifacts"), list):
        out["artifacts"] = [_shown(a, active) for a in out["artifacts"]]
    return out


def visible_event(event: dict[str, Any], active: frozenset[str]) -> dict[str, Any]:
    """A StreamResponse (a push's, a stream's) as the caller who made the config, or opened the stream, sees it."""
    if isinstance(event.get("task"), dict):
        return {"task": visible_task(event["task"], active)}
    if isinstance(event.get("statusUpdate"), dict):
        update = _shown(event["statusUpdate"], active)
        status = update.get("status")
        if isinstance(status, dict) and isinstance(status.get("message"), dict):
            update["status"] = {**status, "message": _shown(status["message"], active)}
        return {"statusUpdate": update}
    if isinstance(event.get("artifactUpdate"), dict):
        update = dict(event["artifactUpdate"])
        update["artifact"] = _shown(update.get("artifact"), active)
        return {"artifactUpdate": update}
    return event


class Disclosure:
    """What a caller sees of the extension data: the data of the extensions its request activated."""

    def shown(self, activated: frozenset[str]) -> frozenset[str]:
        return activated

    def visible(self, method: str, result: Any, active: frozenset[str]) -> Any:
        """A method's result as a request with ``active`` extensions sees it."""
        if not isinstance(result, dict):
            return result
        if method in ("GetTask", "CancelTask"):
            return visible_task(result, active)
        if method == "ListTasks" and isinstance(result.get("tasks"), list):
            return {**result, "tasks": [visible_task(t, active) for t in result["tasks"]]}
        if method == "SendMessage":
            if isinstance(result.get("task"), dict):
                return {**result, "task": visible_task(result["task"], active)}
            if isinstance(result.get("message"), dict):
                return {**result, "message": _shown(result["message"], active)}
        return result
