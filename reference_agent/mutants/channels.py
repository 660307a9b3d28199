"""Mutants of the channel axis: each field of the profile's data, changed on one channel it travels only.

Derived from the schemas: for each extension the fields of its data (:mod:`.operators`, from
``schemas/extensions/``) and where it rides (``x-a2a-extension.on``), and for each of the channels a Profile
v2 Agent's tasks travel (``fixtures/scenarios/channels.py``: the SendMessage answer, GetTask, ListTasks, a push
delivery) one mutant per operator. The change feed's turn is derived the same way from ``schemas/feed/Turn.json``.

What each mutant breaks comes from the requirements: EXT-09 (the same data on every channel) for every one, and
the rule of the field itself (below) where that requirement lists the channel among its ``channels``.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent.delivery import Webhooks
from nylorun_a2a_kit.reference_agent.extensions import Disclosure
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.mutants import operators
from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant, mutant
from nylorun_a2a_kit.reference_agent.push import PushConfigs
from nylorun_a2a_kit.schemas.places import places

# Each extension's data as the Agent answers it: the definition in its schema, and the locations it rides.
DATA = {
    "interactions": ("open", ("agent-message", "task")),
    "effects": ("status", ("agent-message", "status-update", "task")),
    "progress": ("plan", ("agent-message", "status-update", "task")),
    "telemetry": ("telemetry", ("agent-message", "status-update", "task")),
    "files": ("file", ("artifact",)),
}
# The method whose answers are each channel (the push channel is the sender's body, before it is signed).
ANSWERED_ON = {"answer": "SendMessage", "get": "GetTask", "list": "ListTasks"}
CHANNELS = (*ANSWERED_ON, "push")
AGREEMENT = "EXT-09"
# The rule of each field, beside EXT-09: (extension, field, operator) → the requirements it breaks. A field not
# named here (a prompt, a detail, a step's label) has no rule of its own but EXT-09's.
RULES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("interactions", "", "dropped"): ("INTER-01", "INTER-02", "INTER-03", "INTER-04"),
    ("interactions", "kind", "altered"): ("INTER-01", "INTER-02", "INTER-03", "INTER-04"),
    ("effects", "", "dropped"): ("EFF-01",),
    ("effects", "uncertain", "dropped"): ("EFF-01", "EFF-02"),
    ("progress", "", "dropped"): ("PROG-01", "PROG-03"),
    ("progress", "steps", "last-dropped"): ("PROG-03",),
    ("progress", "steps.last.label", "altered"): ("PROG-03",),
    ("progress", "steps.last.state", "altered"): ("PROG-03",),
    ("progress", "steps.last.note", "altered"): ("PROG-03",),
    ("telemetry", "", "dropped"): ("TEL-01", "TEL-02", "TEL-03", "TEL-04"),
    ("telemetry", "totals", "dropped"): ("TEL-01", "TEL-04"),
    ("telemetry", "totals.steps", "altered"): ("TEL-04",),
    ("telemetry", "totals.tokens", "altered"): ("TEL-04",),
    ("telemetry", "totals.costUsd", "altered"): ("TEL-04",),
    ("telemetry", "traceId", "altered"): ("TEL-03", "TEL-04"),
    ("telemetry", "traceId", "dropped"): ("TEL-02", "TEL-03", "TEL-04"),
    ("files", "", "dropped"): ("FILE-01",),
    ("files", "size", "altered"): ("FILE-02",),
    ("files", "sha256", "altered"): ("FILE-02",),
}


def derive(requirements: dict[str, Any]) -> Iterator[Mutant]:
    """The channel axis: every field × operator × channel of the profile's data, the messages that carry it and
    the callers it is shown to on each channel, then the feed's turn."""
    for extension, (definition, locations) in DATA.items():
        uri = schemas.extension_uri(extension)
        for field in operators.fields(extension, definition):
            for operator in field.operators:
                for channel in CHANNELS:
                    yield _data_mutant(requirements, extension, uri, locations, field, operator, channel)
    for channel in CHANNELS:
        # The one rule the progress/v1 schema holds itself (maxItems 20): broken on one channel, PROG-01's own.
        yield mutant(
            f"channel/progress.steps/past-20@{channel}",
            f"a plan shows more than 20 steps on {channel} only",
            _on_channel(channel, _rewriter(schemas.extension_uri("progress"), DATA["progress"][1], (), _PAST_20)),
            breaks=("PROG-01",),
        )
        yield mutant(
            f"channel/message.extensions/uris-dropped@{channel}",
            f"a message with the profile's data lists none of its URIs in extensions, on {channel} only",
            _on_channel(channel, _uris_unlisted),
            breaks=("EXT-04",),
        )
        yield mutant(
            f"channel/core-caller/data-shown@{channel}",
            f"a caller that activated no extension is shown the profile's data, on {channel} only",
            _shown_to_core(channel),
            breaks=("TIER-04",),
        )
    yield from _feed_mutants()


def _past_20(plan: Any) -> Any:
    steps = list((plan or {}).get("steps") or [])
    while steps and len(steps) <= 20:
        steps.append({**steps[-1], "label": f"{steps[-1].get('label', 'Step')} (again)"})
    return {**plan, "steps": steps} if steps else plan


_PAST_20 = operators.Operator("past-20", _past_20)


def _uris_unlisted(method: str, result: Any) -> Any:
    result = copy.deepcopy(result)
    for _where, location, holder in places(method, result):
        if location == "agent-message" and isinstance(holder.get("extensions"), list):
            kept = [uri for uri in holder["extensions"] if uri not in schemas.extensions()]
            if kept:
                holder["extensions"] = kept
            else:
                holder.pop("extensions")
    return result


class _ShownToEveryConfig(PushConfigs):
    def deliverable(self, task: Any) -> list[Any]:
        every = frozenset(schemas.extensions())
        return [c if c.extensions else dataclasses.replace(c, extensions=every) for c in super().deliverable(task)]


def _shown_to_core(channel: str) -> type:
    if channel == "push":
        return _ShownToEveryConfig
    method = ANSWERED_ON[channel]

    def visible(self, name: str, result: Any, active: frozenset[str]) -> Any:
        shown = frozenset(schemas.extensions()) if name == method and not active else active
        return Disclosure.visible(self, name, result, shown)

    return type("ShownToCore", (Disclosure,), {"visible": visible})


def _data_mutant(requirements, extension, uri, locations, field, operator, channel) -> Mutant:
    what = f"{extension}.{field.label}" if field.path else extension
    name = f"channel/{what}/{operator.name}@{channel}"
    description = f"{extension}/v1 {field.label or 'data'} {operator.name} on {channel} only"
    rewrite = _rewriter(uri, locations, field.path, operator)
    behaviour = _on_channel(channel, rewrite)
    if operator.equivalent:
        read = (AGREEMENT, *RULES.get((extension, field.label, "altered"), ()))
        return mutant(name, description, behaviour, equivalent=operator.equivalent, read=read)
    # EXT-09 compares each channel with GetTask, so a change on GetTask itself breaks it on every other channel.
    ruled = RULES.get((extension, field.label, operator.name), ())
    breaks = (AGREEMENT, *(rid for rid in ruled if channel in requirements[rid].channels))
    return mutant(name, description, behaviour, breaks=breaks)


def _rewriter(uri: str, locations: tuple[str, ...], path: tuple[str, ...], operator) -> Callable[[str, Any], Any]:
    """A rewrite of one answer (or push body): the data under ``uri`` wherever it rides, changed at ``path``."""

    def rewrite(method: str, result: Any) -> Any:
        result = copy.deepcopy(result)
        for _where, location, holder in places(method, result):
            metadata = holder.get("metadata")
            if location not in locations or not isinstance(metadata, dict) or uri not in metadata:
                continue
            changed = operators.apply(metadata[uri], path, operator)
            if changed is operators.DROP:
                del metadata[uri]
            else:
                metadata[uri] = changed
        return result

    return rewrite


def _on_channel(channel: str, rewrite: Callable[[str, Any], Any]) -> Any:
    if channel == "push":
        return type("PushBodyMutant", (Webhooks,), {"payload": _mutated_payload(rewrite)})
    method = ANSWERED_ON[channel]

    def answered(call: wire.Call) -> None:
        if call.method == method and "result" in call.answer:
            call.answer["result"] = rewrite(method, call.answer["result"])

    return wire.answers(answered)


def _mutated_payload(rewrite: Callable[[str, Any], Any]) -> Callable[..., Any]:
    def payload(self, event: dict[str, Any]) -> dict[str, Any] | None:
        body = Webhooks.payload(self, event)
        return None if body is None else rewrite("StreamResponse", body)

    return payload


# -- the change feed's turn

FEED_RULES = {
    "status": ("next", ("FEED-09",), None),
    "endedAt": ("toggled", ("FEED-09",), None),
    "totals": ("nulled", ("FEED-10",), None),
    "totals.steps": ("altered", ("FEED-10",), None),
    "a2a": ("nulled", ("FEED-09",), None),
    "a2a.contextId": ("altered", ("FEED-09",), None),
    "a2a.taskId": ("altered", ("FEED-09",), None),
    "agentId": ("altered", ("FEED-09",), None),
    "sessionId": ("altered", ("FEED-06",), None),
    "turnId": (
        "altered",
        ("FEED-01", "FEED-06", "FEED-09"),
        "turnId is the turn's opaque name: the kit finds a turn by its a2a taskId, and no rule "
        "of the client page ties the two",
    ),
    "changedAt": (
        "shifted",
        ("FEED-03", "FEED-09"),
        "changedAt is when the turn changed on the Runtime's own clock: no rule ties it to the "
        "task's status timestamp, and a shift of every turn keeps their order",
    ),
    "startedAt": (
        "shifted",
        ("FEED-06", "FEED-09"),
        "startedAt is the Runtime's own time: a shift of every turn keeps a session's turns in their order",
    ),
}
STATUSES = schemas.resolve("feed/Turn.json")["properties"]["status"]["enum"]


def _feed_mutants() -> Iterator[Mutant]:
    for field, (operator, breaks, equivalent) in FEED_RULES.items():
        name = f"channel/turn.{field}/{operator}@feed"
        behaviour = wire.feed_pages(_turns_changed(field.split("."), operator))
        description = f"the change feed's turns: {field} {operator}"
        if equivalent:
            yield mutant(name, description, behaviour, equivalent=equivalent, read=breaks)
        else:
            yield mutant(name, description, behaviour, breaks=breaks)


def _turns_changed(path: list[str], operator: str) -> Callable[[dict[str, Any]], None]:
    def rewrite(page: dict[str, Any]) -> None:
        for turn in page.get("turns") or []:
            holder = turn
            for step in path[:-1]:
                holder = holder.get(step) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and path[-1] in holder:
                holder[path[-1]] = _changed(holder[path[-1]], operator, turn)

    return rewrite


def _changed(value: Any, operator: str, turn: dict[str, Any]) -> Any:
    if operator == "next":
        return STATUSES[(STATUSES.index(value) + 1) % len(STATUSES)] if value in STATUSES else value
    if operator == "toggled":
        return turn.get("changedAt") if value is None else None
    if operator == "nulled":
        return None
    if operator == "shifted" and isinstance(value, str):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")) + timedelta(seconds=1)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    return value + "-altered" if isinstance(value, str) else value
