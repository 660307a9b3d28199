"""One turn as the scenarios see it: status changes with extension data, artifacts, files, telemetry.

The scenarios say what happens; this handle says how it is recorded. Every status change goes through
the engine (so waiters wake and the order of changes is kept); the profile's extension data is always
recorded, and :mod:`reference_agent.extensions` hides what a request did not activate.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any, Protocol
from urllib.parse import quote

from nylorun_a2a_kit.reference_agent import status
from nylorun_a2a_kit.reference_agent.extensions import FILES
from nylorun_a2a_kit.reference_agent.store import Store, TaskRecord


class Files:
    """files/v1: the version a published file gets, and the data that describes it."""

    def version(self, store: Store, task: TaskRecord, path: str, data: bytes) -> int:
        """The latest version of the conversation's file at ``path`` if unchanged, else the next."""
        return store.file_version(task, path, data)

    def metadata(self, path: str, version: int, data: bytes) -> dict[str, Any] | None:
        """The metadata of the artifact that hands out the file."""
        described = {
            "kind": "file",
            "version": version,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "path": path,
        }
        return {FILES: described}


Data = dict[str, Any] | None


class Recorder(Protocol):
    """What a turn records through: the engine, which orders the changes and tells the push configs."""

    store: Store
    files: Files

    def set_status(
        self, task: TaskRecord, state: str, text: str | None, *, data: Data = ..., task_data: Data = ...
    ): ...

    def announce(self, task: TaskRecord, event: dict[str, Any]) -> None: ...


class Turn:
    """The scenarios' handle on one task."""

    def __init__(self, engine: Recorder, task: TaskRecord, base_url: str):
        self.engine, self.task, self.base_url = engine, task, base_url
        self.task_id, self.scenario = task.id, task.scenario
        self._outputs = 0

    def _recorded_before(self) -> bool:
        """Whether this stage's next output was recorded by an earlier run of it, cut off by a restart.

        A scenario runs its stage from the start again after a restart and makes the same outputs in the same
        order, so the first ``scenario["outputs"]`` of them are already stored (and their push events queued)
        and are skipped: an artifact or a step is never recorded twice. The count is saved with each output.
        """
        self._outputs += 1
        if self._outputs <= self.scenario.get("outputs", 0):
            return True
        self.scenario["outputs"] = self._outputs
        return False

    def set_state(
        self,
        state: str,
        text: str | None = None,
        *,
        data: dict[str, Any] | None = None,
        task_data: dict[str, Any] | None = None,
    ) -> None:
        """A status change; ``data`` rides on its status message, ``task_data`` on the task (GetTask)."""
        if state == self.task.state == "TASK_STATE_WORKING" and text is None and not data:
            return
        self.engine.set_status(self.task, state, text, data=data, task_data=task_data)

    def step(self, count: int = 1) -> None:
        """Count work done, for the turn's telemetry totals."""
        if self._recorded_before():
            return
        self.scenario["steps"] = self.scenario.get("steps", 0) + count
        self.save_scenario()

    def add_artifact(self, name: str, parts: list[dict[str, Any]], *, metadata: dict[str, Any] | None = None) -> None:
        if self._recorded_before():
            return
        self._record_artifact(name, parts, metadata)

    def _record_artifact(self, name: str, parts: list[dict[str, Any]], metadata: dict[str, Any] | None) -> None:
        artifact: dict[str, Any] = {"artifactId": f"{self.task.id}-{len(self.task.artifacts) + 1}", "name": name}
        artifact["parts"] = parts
        if metadata:
            artifact["metadata"] = metadata
            artifact["extensions"] = sorted(metadata)
        self.task.artifacts.append(artifact)
        with self.engine.store.transaction():  # the artifact and its push events: both or neither
            self.engine.store.save(self.task)
            self.engine.announce(self.task, status.artifact_event(self.task, artifact))

    def publish_file(self, path: str, data: bytes, *, inline: bool, link: bool, media_type: str) -> None:
        """Write ``path`` in the agent's outputs and add it as an artifact with its files/v1 data."""
        if self._recorded_before():  # its file too: a new token would break the URL already handed out
            return
        store, files = self.engine.store, self.engine.files
        with store.transaction():  # the file and the artifact that hands it out: both or neither
            version = files.version(store, self.task, path, data)
            # The URL carries a random token: whoever holds the answer may fetch the file, nobody can guess it.
            token = secrets.token_urlsafe(18)
            store.save_file(self.task, path, version, data, token)
            self._record_artifact(
                path.rsplit("/", 1)[-1],
                self._file_parts(path, data, token, inline, link, media_type),
                files.metadata(path, version, data),
            )

    def _file_parts(self, path: str, data: bytes, token: str, inline: bool, link: bool, media_type: str) -> list:
        name = path.rsplit("/", 1)[-1]
        parts: list[dict[str, Any]] = []
        if inline:
            parts.append({"raw": _b64(data), "filename": name, "mediaType": media_type})
        if link:
            parts.append({"url": self.file_url(token, path), "filename": name, "mediaType": media_type})
        return parts

    def last_user_message(self) -> dict[str, Any]:
        users = [m for m in self.task.history if m.get("role") == "ROLE_USER"]
        return users[-1] if users else {}

    def add_agent_message(self, parts: list[dict[str, Any]]) -> None:
        """A message of the agent's own into the task's history (not a status change)."""
        if self._recorded_before():
            return
        self.task.history.append(
            {
                "messageId": f"{self.task.id}-note-{len(self.task.history)}",
                "role": "ROLE_AGENT",
                "parts": parts,
                "contextId": self.task.context_id,
                "taskId": self.task.id,
            }
        )
        self.engine.store.save(self.task)

    def file_url(self, token: str, path: str) -> str:
        return f"{self.base_url}/files/{self.task.id}/{token}/{quote(path)}"

    def save_scenario(self) -> None:
        self.engine.store.save(self.task)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
