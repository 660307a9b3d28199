"""Mutants of the several axis: a rule about "the" config, artifact, extension or queued message, broken for the
second or the last of several only (the first is what a check with one of a thing already sees).

From the requirements' ``several`` (fixtures/requirements/axes.py): each member names the thing and what is done
to the second of it; the behaviour beside the member's name here is a variant of the strategy that serves it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent.delivery import Webhooks
from nylorun_a2a_kit.reference_agent.edge import RPC_ROUTE
from nylorun_a2a_kit.reference_agent.extensions import FILES
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant, mutant
from nylorun_a2a_kit.reference_agent.push import Config, PushConfigs
from nylorun_a2a_kit.reference_agent.queue import MessageQueue, Queued
from nylorun_a2a_kit.reference_agent.store import from_row


def derive(requirements: dict[str, Any]) -> Iterator[Mutant]:
    for requirement in requirements.values():
        for member in requirement.several:
            for where, description, behaviour in BUILDERS[member](requirement.id):
                yield mutant(f"several/{member}/{where}", description, behaviour, breaks=(requirement.id,))


# -- two push configs on one task


def _first(configs: PushConfigs, task: Any) -> Config | None:
    listed = PushConfigs.list(configs, task)
    return listed[0] if listed else None


def _first_beside(configs: PushConfigs, key: int) -> Config | None:
    """The first active config of the holder of config ``key``."""
    row = configs.db.execute(
        "SELECT c.* FROM push_configs c JOIN push_configs k ON k.key=? AND (c.agent_id, c.subject, c.task_id, "
        "c.queued)=(k.agent_id, k.subject, k.task_id, k.queued) WHERE c.state='active' ORDER BY c.key LIMIT 1",
        (key,),
    ).fetchone()
    return from_row(Config, row) if row else None


class _SecondNotListed(PushConfigs):
    def list(self, task: Any) -> list[Config]:
        listed = super().list(task)
        return listed[:-1] if len(listed) > 1 else listed

    def deliverable(self, task: Any) -> list[Config]:
        return PushConfigs.list(self, task)


class _SecondGotAsTheFirst(PushConfigs):
    def get(self, task: Any, config_id: str) -> Config | None:
        first = _first(self, task)
        found = super().get(task, config_id)
        return first if found is not None and first is not None and found.id != first.id else found


class _DeleteOfTheSecondDeletesTheFirst(PushConfigs):
    def delete(self, task: Any, config_id: str) -> None:
        first = _first(self, task)
        super().delete(task, first.id if first is not None and first.id != config_id else config_id)


class _SecondNotDelivered(PushConfigs):
    def deliverable(self, task: Any) -> list[Config]:
        configs = super().deliverable(task)
        return configs[:-1] if len(configs) > 1 else configs


def _second_with_the_firsts(field: str) -> type:
    def target(self, key: int) -> Config | None:
        config, first = PushConfigs.target(self, key), _first_beside(self, key)
        if config is None or first is None or first.id == config.id:
            return config
        return dataclasses.replace(config, **{field: getattr(first, field)})

    return type(f"SecondWithTheFirsts{field.capitalize()}", (PushConfigs,), {"target": target})


class _DeletingTheSecondStopsTheFirst(PushConfigs):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.stopped: set[int] = set()  # configs whose deliveries stopped with another's delete

    def delete(self, task: Any, config_id: str) -> None:
        first = _first(self, task)
        super().delete(task, config_id)
        if first is not None and first.id != config_id:
            self.stopped.add(first.key)

    def deliverable(self, task: Any) -> list[Config]:
        return [c for c in super().deliverable(task) if c.key not in self.stopped]

    def target(self, key: int) -> Config | None:
        return None if key in self.stopped else super().target(key)


# -- the last artifact, the last extension, the second queued message


def _last_file_artifact_not_pushed() -> type:
    pushed: dict[str, int] = {}

    def payload(self, event: dict[str, Any]) -> dict[str, Any] | None:
        artifact = (event.get("artifactUpdate") or {}).get("artifact") or {}
        if FILES in (artifact.get("metadata") or {}):
            task_id = event["artifactUpdate"].get("taskId", "")
            pushed[task_id] = pushed.get(task_id, 0) + 1
            if pushed[task_id] == 2:
                return None
        return Webhooks.payload(self, event)

    return type("SecondFileArtifactNotPushed", (Webhooks,), {"payload": payload})


def _tasks_rewritten(method: str, rewrite: Callable[[dict[str, Any]], None]) -> Any:
    def answered(call: wire.Call) -> None:
        if call.method == method:
            for task in call.tasks():
                rewrite(task)

    return wire.answers(answered)


def _last_dropped(task: dict[str, Any]) -> None:
    if len(task.get("artifacts") or []) > 1:
        task["artifacts"] = task["artifacts"][:-1]


def _last_file_data_of_the_first(task: dict[str, Any]) -> None:
    files = [a for a in task.get("artifacts") or [] if FILES in (a.get("metadata") or {})]
    if len(files) > 1:
        files[-1]["metadata"] = {**files[-1]["metadata"], FILES: files[0]["metadata"][FILES]}


def _last_extension_not_echoed() -> Any:
    @wire.served(RPC_ROUTE)
    def echoed(request: web.Request, response: web.Response) -> None:
        uris = [u.strip() for u in response.headers.get("A2A-Extensions", "").split(",") if u.strip()]
        if len(uris) > 1:
            response.headers["A2A-Extensions"] = ", ".join(uris[:-1])

    return echoed


class _SecondQueuedLost(MessageQueue):
    """A conversation's second queued message is marked taken when its turn comes, and no turn runs it."""

    def next(self, agent_id: str, subject: str, context_id: str) -> Queued | None:
        waiting = self.waiting(agent_id, subject, context_id)
        taken = self.db.execute(
            "SELECT COUNT(*) FROM queued WHERE agent_id=? AND subject=? AND context_id=? AND taken_by IS NOT NULL",
            (agent_id, subject, context_id),
        ).fetchone()[0]
        if waiting and taken == 1:
            self.db.execute("UPDATE queued SET taken_by='' WHERE position=?", (waiting[0].position,))
            waiting = waiting[1:]
        return waiting[0] if waiting else None


Built = tuple[str, str, Any]  # the mutant name's tail, its description, its behaviour


def _artifact_last(requirement: str) -> list[Built]:
    return {
        "FILE-01": [("not-pushed", "the task's second file artifact is not pushed", _last_file_artifact_not_pushed())],
        "FILE-02": [
            (
                "files-of-the-first@get",
                "GetTask's last file artifact carries the first one's files/v1 data",
                _tasks_rewritten("GetTask", _last_file_data_of_the_first),
            )
        ],
        "TASK-04": [
            ("dropped@get", "GetTask leaves out the task's last artifact", _tasks_rewritten("GetTask", _last_dropped))
        ],
        "LIST-10": [
            (
                "dropped@list",
                "ListTasks leaves out each task's last artifact",
                _tasks_rewritten("ListTasks", _last_dropped),
            )
        ],
    }[requirement]


BUILDERS: dict[str, Callable[[str], list[Built]]] = {
    "push-config.second-listed": lambda rid: [
        ("not-listed", "List leaves out a task's second config", _SecondNotListed)
    ],
    "push-config.second-got": lambda rid: [
        ("got-as-the-first", "Get of a task's second config answers the first", _SecondGotAsTheFirst)
    ],
    "push-config.second-deleted": lambda rid: [
        (
            "delete-deletes-the-first",
            "Delete of a task's second config deletes the first",
            _DeleteOfTheSecondDeletesTheFirst,
        )
    ],
    "push-config.second-delivered": lambda rid: [
        ("not-delivered", "a task's second config gets no deliveries", _SecondNotDelivered)
    ],
    "push-config.second-authentication": lambda rid: [
        (
            "the-firsts-authentication",
            "the second config's deliveries carry the first's credentials",
            _second_with_the_firsts("authentication"),
        )
    ],
    "push-config.second-token": lambda rid: [
        ("the-firsts-token", "the second config's deliveries carry the first's token", _second_with_the_firsts("token"))
    ],
    "push-config.second-deleted-only": lambda rid: [
        (
            "delete-stops-the-first",
            "deleting a task's second config stops the first one's deliveries too",
            _DeletingTheSecondStopsTheFirst,
        )
    ],
    "artifact.last": _artifact_last,
    "extension.last": lambda rid: [
        ("not-echoed", "of several activated extensions the last is not echoed", _last_extension_not_echoed())
    ],
    "queued-message.second": lambda rid: [
        ("lost", "a conversation's second queued message is never taken by a turn", _SecondQueuedLost)
    ],
}
