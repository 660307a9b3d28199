"""Where the profile's extension data can ride in an A2A result: each object that may hold ``metadata``; and the
readers the kit's client and its oracle share (the data under a URI as a client reads it, each profile URI named).

The locations are those the extension schemas name in ``x-a2a-extension.on`` (a task, a status update, an
artifact, an agent's or a user's message). The kit's client walks them to check every answer's extension data
against its schema, and the reference agent's mutants walk them to change that data where it rides.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Place = tuple[str, str, dict[str, Any]]  # JSON path, location kind, the object that holds ``metadata``


def _message(path: str, message: Any) -> Iterator[Place]:
    if isinstance(message, dict):
        yield path, "user-message" if message.get("role") == "ROLE_USER" else "agent-message", message


def _task(path: str, task: Any) -> Iterator[Place]:
    if not isinstance(task, dict):
        return
    yield path, "task", task
    status = task.get("status")
    if isinstance(status, dict):
        yield from _message(f"{path}.status.message", status.get("message"))
    for i, message in enumerate(task.get("history") or []):
        yield from _message(f"{path}.history[{i}]", message)
    for i, artifact in enumerate(task.get("artifacts") or []):
        if isinstance(artifact, dict):
            yield f"{path}.artifacts[{i}]", "artifact", artifact


def places(method: str, result: Any) -> Iterator[Place]:
    """Every object in a method's result (or a push body) that may carry extension data."""
    if not isinstance(result, dict):
        return
    if method in ("GetTask", "CancelTask"):
        yield from _task("$.result", result)
    elif method == "ListTasks":
        for i, task in enumerate(result.get("tasks") or []):
            yield from _task(f"$.result.tasks[{i}]", task)
    elif method in ("SendMessage", "StreamResponse"):
        yield from _task("$.result.task", result.get("task"))
        yield from _message("$.result.message", result.get("message"))
        update = result.get("statusUpdate")
        if isinstance(update, dict):
            yield "$.result.statusUpdate", "status-update", update
            yield from _message("$.result.statusUpdate.status.message", (update.get("status") or {}).get("message"))
        artifact_update = result.get("artifactUpdate")
        if isinstance(artifact_update, dict) and isinstance(artifact_update.get("artifact"), dict):
            yield "$.result.artifactUpdate.artifact", "artifact", artifact_update["artifact"]


def extension_data(source: Any, uri: str) -> Any:
    """The data under ``uri``: in the object's own metadata, else its status message's (as the client reads)."""
    if not isinstance(source, dict):
        return None
    own = source.get("metadata")
    own = own.get(uri) if isinstance(own, dict) else None
    if own is not None:
        return own
    status = source.get("status")
    message = status.get("message") if isinstance(status, dict) else None
    metadata = message.get("metadata") if isinstance(message, dict) else None
    return metadata.get(uri) if isinstance(metadata, dict) else None


def mentions(method: str, result: Any, prefix: str) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(where, URI, location, holder) of each URI starting with ``prefix`` an object of a method's result names: a
    metadata key or an ``extensions`` entry. Only the A2A structure is looked at; the contents of parts (an echoed
    data part, say) are data."""
    for path, location, holder in places(method, result):
        for key in holder.get("metadata") or {}:
            if isinstance(key, str) and key.startswith(prefix):
                yield f"{path}.metadata[{key!r}]", key, location, holder
        for uri in holder.get("extensions") or []:
            if isinstance(uri, str) and uri.startswith(prefix):
                yield f"{path}.extensions lists {uri}", uri, location, holder
