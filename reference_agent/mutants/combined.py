"""Mutants of the combined axis: two options that combine, one of them dropped only when the other is given.

From the requirements' ``combines`` (fixtures/requirements/axes.py): each member ``<option>+<option>`` names the
pair; the behaviour is a variant of how the binding reads a request's params (:class:`..rpc.Reading`) that reads
one as absent whenever the other is there, so every check of either option alone still passes. Each pair is
mutated both ways: ``<second>-ignored`` drops the second beside the first, ``<first>-ignored`` the first beside the
second (a check of the pair must see both take effect).
"""

from __future__ import annotations

import contextvars
import copy
from collections.abc import Callable, Iterator
from typing import Any

from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant, mutant
from nylorun_a2a_kit.reference_agent.policies import Turns
from nylorun_a2a_kit.reference_agent.rpc import Reading

Params = dict[str, Any]


def derive(requirements: dict[str, Any]) -> Iterator[Mutant]:
    for requirement in requirements.values():
        for member in requirement.combines:
            for tail, (description, behaviour) in ((_tail(member, 1), BUILDERS[member]), *_reversed(member)):
                name = f"combined/{member}/{tail}"
                if isinstance(behaviour, tuple):  # variants of two strategies that act together
                    yield Mutant(name, "combined", description, (requirement.id,), variants=behaviour)
                else:
                    yield mutant(name, description, behaviour, breaks=(requirement.id,))


def _tail(member: str, which: int) -> str:
    return f"{member.split('+', 1)[which]}-ignored"


def _reversed(member: str) -> list[tuple[str, tuple[str, Any]]]:
    return [(_tail(member, 0), REVERSED[member])] if member in REVERSED else []


def _configuration(params: Params) -> Params:
    return params.get("configuration") or {}


def _when(method: str, given: Callable[[Params], bool], drop: Callable[[Params], None]) -> type:
    """A Reading that, for ``method``, reads the params as if ``drop`` had removed an option, when ``given``."""

    def params(self, name: str, raw: Params) -> tuple[Params, Any]:
        read, problems = Reading.params(self, name, raw)
        if name == method and isinstance(read, dict) and given(read):
            read = copy.deepcopy(read)
            drop(read)
        return read, problems

    return type("CombinedOptionDropped", (Reading,), {"params": params})


def _pop(*path: str) -> Callable[[Params], None]:
    def drop(params: Params) -> None:
        holder: Any = params
        for step in path[:-1]:
            holder = holder.get(step) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder.pop(path[-1], None)

    return drop


def _set(value: Any, *path: str) -> Callable[[Params], None]:
    def put(params: Params) -> None:
        holder: Any = params
        for step in path[:-1]:
            holder = holder.setdefault(step, {}) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder[path[-1]] = value

    return put


EVERY_MESSAGE = 1000  # a historyLength past any task's history: an option read as "all of it"


def _delivery_dropped(params: Params) -> None:
    for holder in (params.get("metadata"), (params.get("message") or {}).get("metadata")):
        if isinstance(holder, dict):
            holder.pop("delivery", None)


def _at_once(params: Params) -> bool:
    return bool(_configuration(params).get("returnImmediately"))


def _blocking(params: Params) -> bool:
    return not _at_once(params)


def _continues(params: Params) -> bool:
    return bool((params.get("message") or {}).get("taskId")) and _blocking(params)


def _answered_at_once(params: Params) -> None:
    params.setdefault("configuration", {})["returnImmediately"] = True


_ANSWERED_AT_ONCE: contextvars.ContextVar[bool] = contextvars.ContextVar("answered_at_once", default=False)


class _NotesAnsweredAtOnce(Reading):
    """Notes, for the request being served, whether SendMessage asked to be answered at once."""

    def params(self, method: str, params: Params) -> tuple[Params, Any]:
        if method == "SendMessage" and isinstance(params, dict):
            _ANSWERED_AT_ONCE.set(_at_once(params))
        return super().params(method, params)


class _NewTraceWhenAnsweredAtOnce(Turns):
    def trace_id(self, traceparent: Any) -> str:
        return super().trace_id(None if _ANSWERED_AT_ONCE.get() else traceparent)


def _has_push_config(params: Params) -> bool:
    return bool(_configuration(params).get("taskPushNotificationConfig"))


def _has_history_length(params: Params) -> bool:
    return _configuration(params).get("historyLength") is not None


def _blocks(params: Params) -> None:
    params.setdefault("configuration", {})["returnImmediately"] = False


def _has(*keys: str) -> Callable[[Params], bool]:
    return lambda params: all(params.get(key) not in (None, "", "TASK_STATE_UNSPECIFIED") for key in keys)


BUILDERS: dict[str, tuple[str, Any]] = {
    "returnImmediately+push-config": (
        "with returnImmediately, the push config inside SendMessage is ignored",
        _when("SendMessage", _at_once, _pop("configuration", "taskPushNotificationConfig")),
    ),
    "blocking+push-config": (
        "a blocking SendMessage ignores the push config inside it",
        _when("SendMessage", _blocking, _pop("configuration", "taskPushNotificationConfig")),
    ),
    "returnImmediately+historyLength": (
        "with returnImmediately, configuration.historyLength is ignored: the whole history is answered",
        _when("SendMessage", _at_once, _set(EVERY_MESSAGE, "configuration", "historyLength")),
    ),
    "returnImmediately+delivery-reject": (
        "with returnImmediately, delivery reject is ignored: the message is queued",
        _when("SendMessage", _at_once, _delivery_dropped),
    ),
    "blocking+delivery-reject": (
        "a blocking message with delivery reject to a busy context is queued like any other",
        _when("SendMessage", _blocking, _delivery_dropped),
    ),
    "blocking+continued-task": (
        "a blocking message that continues an interrupted task is answered at once",
        _when("SendMessage", _continues, _answered_at_once),
    ),
    "returnImmediately+traceparent": (
        "a turn answered at once does not join the caller's trace",
        (_NotesAnsweredAtOnce, _NewTraceWhenAnsweredAtOnce),
    ),
    "contextId+status": (
        "ListTasks ignores the status filter when a contextId is given",
        _when("ListTasks", _has("contextId", "status"), _pop("status")),
    ),
    "contextId+statusTimestampAfter": (
        "ListTasks ignores statusTimestampAfter when a contextId is given",
        _when("ListTasks", _has("contextId", "statusTimestampAfter"), _pop("statusTimestampAfter")),
    ),
    "status+statusTimestampAfter": (
        "ListTasks ignores statusTimestampAfter when a status filter is given",
        _when("ListTasks", _has("status", "statusTimestampAfter"), _pop("statusTimestampAfter")),
    ),
    "statusTimestampAfter+status": (
        "ListTasks ignores the status filter when statusTimestampAfter is given",
        _when("ListTasks", _has("status", "statusTimestampAfter"), _pop("status")),
    ),
    "pageToken+status": (
        "ListTasks' later pages (with a pageToken) ignore the status filter",
        _when("ListTasks", _has("pageToken", "status"), _pop("status")),
    ),
    "pageToken+includeArtifacts": (
        "ListTasks' later pages (with a pageToken) carry no artifacts although includeArtifacts is true",
        _when("ListTasks", _has("pageToken", "includeArtifacts"), _pop("includeArtifacts")),
    ),
    "pageToken+historyLength": (
        "ListTasks' later pages (with a pageToken) carry each task's whole history whatever historyLength says",
        _when("ListTasks", _has("pageToken", "historyLength"), _set(EVERY_MESSAGE, "historyLength")),
    ),
    "includeArtifacts+historyLength": (
        "ListTasks ignores historyLength when includeArtifacts is true: every message is listed",
        _when(
            "ListTasks",
            lambda p: bool(p.get("includeArtifacts")) and "historyLength" in p,
            _set(EVERY_MESSAGE, "historyLength"),
        ),
    ),
    "contextId+pageSize": (
        "ListTasks ignores pageSize when a contextId is given",
        _when("ListTasks", _has("contextId", "pageSize"), _pop("pageSize")),
    ),
}

# The other way round: the first option of the pair dropped beside the second. A pair whose first option is the
# absence of another (blocking) has none: dropping "blocking" is answering at once, which the first way does for
# the continued task, and which a refusal (delivery reject) leaves unseen; so does returnImmediately dropped beside
# delivery reject (the refusal is answered at once either way).
REVERSED: dict[str, tuple[str, Any]] = {
    "returnImmediately+push-config": (
        "with a push config inside SendMessage, returnImmediately is ignored: the call blocks",
        _when("SendMessage", lambda p: _at_once(p) and _has_push_config(p), _blocks),
    ),
    "returnImmediately+historyLength": (
        "with configuration.historyLength, returnImmediately is ignored: the call blocks",
        _when("SendMessage", lambda p: _at_once(p) and _has_history_length(p), _blocks),
    ),
    "contextId+status": (
        "ListTasks ignores the contextId filter when a status filter is given",
        _when("ListTasks", _has("contextId", "status"), _pop("contextId")),
    ),
    "contextId+statusTimestampAfter": (
        "ListTasks ignores the contextId filter when statusTimestampAfter is given",
        _when("ListTasks", _has("contextId", "statusTimestampAfter"), _pop("contextId")),
    ),
    "pageToken+status": (
        "ListTasks ignores the pageToken when a status filter is given: every page is the first",
        _when("ListTasks", _has("pageToken", "status"), _pop("pageToken")),
    ),
    "includeArtifacts+historyLength": (
        "ListTasks ignores includeArtifacts when historyLength is given",
        _when(
            "ListTasks", lambda p: bool(p.get("includeArtifacts")) and "historyLength" in p, _pop("includeArtifacts")
        ),
    ),
    "contextId+pageSize": (
        "ListTasks ignores the contextId filter when pageSize is given",
        _when("ListTasks", _has("contextId", "pageSize"), _pop("contextId")),
    ),
}
