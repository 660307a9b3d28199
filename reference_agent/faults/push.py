"""Faults of push notifications: configs, destinations, what a delivery carries, when it is retried."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import secrets
import socket
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from nylorun_a2a_kit.reference_agent.delivery import SCHEDULE_S, TOKEN_HEADER, RetryPolicy, Webhooks
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.push import Config, Destinations, PushConfigs, holder
from nylorun_a2a_kit.reference_agent.rpc import PUSH_METHODS, Problems, Reading
from nylorun_a2a_kit.reference_agent.store import INTERRUPTED, TERMINAL, from_row

Headers = dict[str, str]

# -- the config methods


@declare(
    "push-unsupported-wrong-code",
    "without a push secret the config methods answer -32601",
    "PUSH-03",
    run_with=("--a2a-reference-push=off",),
)
@wire.refusals("PUSH_NOT_SUPPORTED", PUSH_METHODS)
def push_unsupported_wrong_code(call: wire.Call) -> None:
    call.answer_error(wire.METHOD_NOT_FOUND)


@declare(
    "push-unsupported-message-a-list",
    "without a push secret the config methods' -32003 carries its message as a list of lines, not a string",
    "ERR-09",
    run_with=("--a2a-reference-push=off",),
)
@wire.refusals("PUSH_NOT_SUPPORTED", PUSH_METHODS)
def push_unsupported_message_a_list(call: wire.Call) -> None:
    call.answer["error"]["message"] = [call.answer["error"].get("message", "")]


@declare("list-missing-config", "ListTaskPushNotificationConfigs leaves out the newest config", "PUSH-01")
@wire.answers
def list_missing_config(call: wire.Call) -> None:
    result = call.answer.get("result")
    if call.method == "ListTaskPushNotificationConfigs" and isinstance(result, dict):
        result["configs"] = result["configs"][:-1]


@declare("inline-config-ignored", "a push config inside SendMessage is ignored", "PUSH-02")
class InlineConfigIgnored(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        configuration = served.get("configuration")
        if method == "SendMessage" and isinstance(configuration, dict):
            configuration = {k: v for k, v in configuration.items() if k != "taskPushNotificationConfig"}
            served = {**served, "configuration": configuration}
        return served, problems


@declare(
    "config-rewrite-kept",
    "a Create naming a config id the task already has keeps the stored config, yet answers the new values (an "
    "INSERT OR IGNORE)",
    "PUSH-01",
)
class ConfigRewriteKept(PushConfigs):
    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        before = self.get(task, params["id"]) if params.get("id") else None
        if before is None:
            return super().create(task, params, extensions)
        authentication = params.get("authentication") or None
        return dataclasses.replace(
            before, url=params["url"], token=params.get("token") or None, authentication=authentication
        )


@declare(
    "inline-config-id-dropped",
    "a push config inside SendMessage is stored under an id of the Agent's, not the one the client gave it",
    "PUSH-02",
)
class InlineConfigIdDropped(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        configuration = served.get("configuration")
        inline = configuration.get("taskPushNotificationConfig") if isinstance(configuration, dict) else None
        if method == "SendMessage" and isinstance(inline, dict) and "id" in inline:
            inline = {k: v for k, v in inline.items() if k != "id"}
            served = {**served, "configuration": {**configuration, "taskPushNotificationConfig": inline}}
        return served, problems


@declare(
    "config-url-query-dropped",
    "a push config's url is stored rebuilt from its scheme, host and path: its query is dropped (Create's answer, Get, "
    "List and the deliveries all use the url without it)",
    "PUSH-01",
)
class ConfigUrlQueryDropped(PushConfigs):
    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        parts = urlsplit(params["url"])
        return super().create(task, {**params, "url": parts._replace(query="").geturl()}, extensions)


@declare(
    "config-list-empty-once-task-failed",
    "ListTaskPushNotificationConfigs answers no config on a task that failed or was canceled (its query skips tasks "
    "that ended in error); Get still answers each, and each is still delivered to",
    "PUSH-01",
)
class ConfigListEmptyOnceTaskFailed(PushConfigs):
    def list(self, task: Any) -> list[Config]:
        if getattr(task, "state", None) in ("TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
            return []
        return super().list(task)

    def deliverable(self, task: Any) -> list[Config]:
        return super().list(task)


@declare(
    "authentication-scheme-forced-bearer",
    "a config's authentication is stored with the scheme Bearer whatever was asked (Basic…): the config's reads and "
    "its deliveries' Authorization say Bearer",
    "PUSH-07",
)
class AuthenticationSchemeForcedBearer(PushConfigs):
    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        authentication = params.get("authentication")
        if isinstance(authentication, dict):
            params = {**params, "authentication": {**authentication, "scheme": "Bearer"}}
        return super().create(task, params, extensions)


@declare(
    "queued-inline-config-dropped",
    "a queued message's inline push config is not kept with it: the turn that takes the message gets no config, "
    "and its updates are told to nobody (a message to an idle conversation keeps its config)",
    "PUSH-02",
)
class QueuedInlineConfigDropped(PushConfigs):
    """The queue keeps the message, not the request's configuration: the config created as a turn takes it is lost."""

    taking: str | None = None

    def move(self, position: int, to_task: str) -> None:
        self.taking = to_task  # a turn is taking a queued message: the inline config comes next
        super().move(position, to_task)

    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        if self.taking is not None and getattr(task, "id", None) == self.taking:
            self.taking = None
            return Config(**{f.name: None for f in dataclasses.fields(Config)})
        return super().create(task, params, extensions)


@declare("delete-not-stopping", "a deleted config still gets deliveries", "PUSH-15")
class DeleteNotStopping(PushConfigs):
    """A deleted config is only hidden from the config methods: its events are still delivered."""

    def delete(self, task: Any, config_id: str) -> None:
        config = self.get(task, config_id)
        if config is not None:
            self.db.execute("UPDATE push_configs SET state='listed-deleted' WHERE key=?", (config.key,))

    def deliverable(self, task: Any) -> list[Config]:
        rows = self.db.execute(
            "SELECT * FROM push_configs WHERE agent_id=? AND subject=? AND task_id=? AND queued=? "
            "AND state IN ('active', 'listed-deleted') ORDER BY key",
            holder(task),
        )
        return [from_row(Config, row) for row in rows]

    def target(self, key: int) -> Config | None:
        row = self.db.execute(
            "SELECT * FROM push_configs WHERE key=? AND state IN ('active', 'listed-deleted')", (key,)
        ).fetchone()
        return from_row(Config, row) if row else None


@declare(
    "deleted-config-id-tombstoned",
    "Delete leaves a tombstone per (task, config id) that the outbox checks before each delivery, and Create does "
    "not clear it: a config made again under a deleted id is listed and gettable but never delivered to",
    "PUSH-05",
)
class DeletedConfigIdTombstoned(PushConfigs):
    def delete(self, task: Any, config_id: str) -> None:
        _TOMBSTONES.add((task.id, config_id))
        super().delete(task, config_id)

    def deliverable(self, task: Any) -> list[Config]:
        return [c for c in super().deliverable(task) if (c.task_id, c.id) not in _TOMBSTONES]


_TOMBSTONES: set[tuple[str, str]] = set()  # deleted-config-id-tombstoned: every (task, config id) deleted


# -- what is pushed


def _not_pushed(states: frozenset[str]) -> type[Webhooks]:
    """Webhooks that push no status update to one of ``states``."""

    class NotPushed(Webhooks):
        def payload(self, event: dict[str, Any]) -> dict[str, Any] | None:
            return None if _state_of(event) in states else super().payload(event)

    return NotPushed


declare("interrupted-not-pushed", "a task pausing for input is not pushed", "PUSH-05")(_not_pushed(INTERRUPTED))
declare("end-not-pushed", "a task's terminal state is not pushed", "PUSH-05")(_not_pushed(TERMINAL))
declare("canceled-not-pushed", "a task's cancellation is not pushed", "PUSH-05")(
    _not_pushed(frozenset({"TASK_STATE_CANCELED"}))
)


@declare("push-body-bare-task", "a delivery's body is a bare Task, not a StreamResponse", "PUSH-06")
class PushBodyBareTask(Webhooks):
    def payload(self, event: dict[str, Any]) -> dict[str, Any] | None:
        update = event.get("statusUpdate")
        if update is None:
            return super().payload(event)
        return {"id": update["taskId"], "contextId": update["contextId"], "status": update["status"]}


@declare("pushed-agent-message-as-user", "deliveries carry the Agent's messages as ROLE_USER", "TASK-15")
class PushedAgentMessageAsUser(Webhooks):
    def payload(self, event: dict[str, Any]) -> dict[str, Any] | None:
        body = copy.deepcopy(super().payload(event))
        for payload in (body or {}).values():
            if not isinstance(payload, dict):
                continue
            status = payload.get("status") if isinstance(payload.get("status"), dict) else {}
            for message in [payload, status.get("message"), *(payload.get("history") or [])]:
                if isinstance(message, dict) and message.get("role") == "ROLE_AGENT":
                    message["role"] = "ROLE_USER"
        return body


def _state_of(body: dict[str, Any]) -> str:
    """The state a status update event carries ("" for any other event)."""
    return ((body.get("statusUpdate") or {}).get("status") or {}).get("state", "")


# -- how a delivery is signed and sent


def _without(header: str) -> type[Webhooks]:
    """Webhooks whose deliveries leave out ``header``."""

    class Without(Webhooks):
        def request(self, config: Config, webhook_id: str, body: bytes) -> tuple[bytes, Headers]:
            body, headers = super().request(config, webhook_id, body)
            headers.pop(header, None)
            return body, headers

    return Without


declare("wrong-auth-header", "deliveries carry no Authorization from the config's authentication", "PUSH-07")(
    _without("Authorization")
)
declare("missing-token", "deliveries do not carry the config's token", "PUSH-08")(_without(TOKEN_HEADER))


def _retried_without(header: str) -> type[Webhooks]:
    """Webhooks whose retries (a webhook-id attempted before) leave out ``header``: only first attempts have it."""

    class RetriedWithout(Webhooks):
        def __init__(self, secret: str | None):
            super().__init__(secret)
            self._attempted: set[str] = set()

        def request(self, config: Config, webhook_id: str, body: bytes) -> tuple[bytes, Headers]:
            body, headers = super().request(config, webhook_id, body)
            if webhook_id in self._attempted:
                headers.pop(header, None)
            self._attempted.add(webhook_id)
            return body, headers

    return RetriedWithout


declare("retry-without-token", "a retried delivery does not carry the config's token", "PUSH-08")(
    _retried_without(TOKEN_HEADER)
)
declare("retry-without-authorization", "a retried delivery carries no Authorization", "PUSH-07")(
    _retried_without("Authorization")
)
declare("retry-unsigned", "a retried delivery carries no webhook-signature", "PUSH-09")(
    _retried_without("webhook-signature")
)


@declare("bad-signature", "webhook-signature does not verify", "PUSH-09")
class BadSignature(Webhooks):
    def request(self, config: Config, webhook_id: str, body: bytes) -> tuple[bytes, Headers]:
        body, headers = super().request(config, webhook_id, body)
        headers["webhook-signature"] = "v1," + headers["webhook-signature"].split(",", 1)[1][::-1]
        return body, headers


@declare("stale-timestamp", "webhook-timestamp is a year old", "PUSH-09")
class StaleTimestamp(Webhooks):
    def moment(self) -> datetime:
        now = super().moment()
        return now.replace(year=now.year - 1)


@declare("timestamp-in-ms", "webhook-timestamp is in milliseconds", "PUSH-09")
class TimestampInMs(Webhooks):
    def timestamp(self, moment: datetime) -> str:
        return str(int(moment.timestamp() * 1000))


@declare("reserialized-body", "the body sent is not the bytes that were signed", "PUSH-09")
class ReserializedBody(Webhooks):
    def request(self, config: Config, webhook_id: str, body: bytes) -> tuple[bytes, Headers]:
        signed, headers = super().request(config, webhook_id, body)
        return json.dumps(json.loads(signed), indent=1).encode(), headers


@declare("redirect-followed", "the sender follows redirects", "PUSH-11")
class RedirectFollowed(Webhooks):
    follows_redirects = True


# -- where deliveries may go


@declare("loopback-host-allowed", "any loopback host or spelling is an allowed destination", "PUSH-11")
class LoopbackHostAllowed(Destinations):
    def listed(self, host: str, port: int | None) -> bool:
        return host.startswith(("127.", "localhost", "::1")) or super().listed(host, port)


HTTPS_ALLOW_LIST = ("--a2a-reference-mutant=setup/https-allow-list",)


@declare(
    "allowlist-host-entry-ignored",
    "an allow-list entry that names a host without a port admits nothing",
    "PUSH-20",
    run_with=HTTPS_ALLOW_LIST,
)
class AllowlistHostEntryIgnored(Destinations):
    def listed(self, host: str, port: int | None) -> bool:
        return f"{host}:{port}" in self.allowed


@declare(
    "allowlist-port-as-written",
    "a url's port is compared as written: https://host/… does not match host:443, nor https://host:443/… host",
    "PUSH-21",
    run_with=HTTPS_ALLOW_LIST,
)
class AllowlistPortAsWritten(Destinations):
    def allows(self, url: str) -> bool:
        try:
            parts = urlsplit(url)
            written = parts.port
        except ValueError:
            return False
        if written is None:
            return super().allows(url) and parts.hostname in self.allowed
        return super().allows(url) and f"{parts.hostname}:{written}" in self.allowed


@declare("allowlist-resolves-host", "the allowlist is checked against the resolved address", "PUSH-11")
class AllowlistResolvesHost(Destinations):
    """Compares the resolved address, so any spelling passes; connects to it, as anti-rebinding code does."""

    def listed(self, host: str, port: int | None) -> bool:
        with contextlib.suppress(OSError):
            return f"{socket.gethostbyname(host)}:{port}" in self.allowed
        return super().listed(host, port)

    def address(self, url: str) -> str:
        parts = urlsplit(url)
        with contextlib.suppress(OSError, ValueError):
            resolved = socket.gethostbyname(parts.hostname or "")
            return parts._replace(netloc=f"{resolved}:{parts.port or 80}").geturl()
        return url


@declare("allowlist-naive-parse", "the allowlist reads a URL's userinfo as its host", "PUSH-11")
class AllowlistNaiveParse(Destinations):
    def allows(self, url: str) -> bool:
        netloc = url.split("//", 1)[-1].split("/", 1)[0].split("@", 1)[0]
        return netloc in self.allowed


# -- when a delivery is retried


@declare("push-order-reversed", "a config's pending events are attempted newest first", "PUSH-14")
class PushOrderReversed(RetryPolicy):
    def first_due(self, body: dict[str, Any]) -> float:
        state = _state_of(body)
        delay = 0.3 if state and state not in TERMINAL else 0.0  # a working update goes out after the end
        return super().first_due(body) + delay


@declare("no-retries", "a failed delivery is not retried", "PUSH-10", "PUSH-12")
class NoRetries(RetryPolicy):
    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        return None


@declare("retries-after-success", "a delivery acknowledged with 2xx is sent again on the schedule", "PUSH-19")
class RetriesAfterSuccess(RetryPolicy):
    def delivered(self, status: int | None, webhook_id: str = "") -> bool:
        return False


@declare("retry-after-ignored", "Retry-After is not honoured", "PUSH-12")
class RetryAfterIgnored(RetryPolicy):
    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        return super().delay(attempts, None)


@declare("retries-shrink", "the first retry waits hours, every later one seconds", "PUSH-22")
class RetriesShrink(RetryPolicy):
    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        if retry_after is not None or attempts >= len(SCHEDULE_S):
            return super().delay(attempts, retry_after)
        # The first gap from a step of the schedule long enough to stand above the kit's arrival allowance on the test
        # clock (5 hours: 1.8 s at the embedded agent's scale), then the schedule's first.
        return (SCHEDULE_S[5] if attempts == 1 else SCHEDULE_S[1]) * self.scale


@declare("gone-ignored", "410 Gone does not stop deliveries", "PUSH-12")
class GoneIgnored(RetryPolicy):
    def gone(self, status: int | None) -> bool:
        return False


@declare("not-found-is-gone", "404 disables the config, as 410 Gone does", "PUSH-12")
class NotFoundIsGone(RetryPolicy):
    def gone(self, status: int | None) -> bool:
        return status == 404 or super().gone(status)


@declare("new-webhook-id-on-retry", "a retry gets a new webhook-id", "PUSH-10", "PUSH-12")
class NewWebhookIdOnRetry(RetryPolicy):
    def retry_id(self, webhook_id: str) -> str:
        return f"msg_{secrets.token_hex(12)}"


@declare("retries-forever", "retries go on past 24 hours", "PUSH-13")
class RetriesForever(RetryPolicy):
    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        if retry_after is not None:
            return super().delay(attempts, retry_after)
        return SCHEDULE_S[2] * self.scale

    def expired(self, first_at: float, next_at: float) -> bool:
        return False


# -- a task, or a config, that does not exist (A2A §3.1.7–§3.1.10 Errors)


def _missing_answered(method: str, reason: str, rewrite: Any) -> Any:
    """A rewrite: ``method``'s TaskNotFoundError of ``reason`` (a task, or a config, not found) answered otherwise."""

    def answered(call: wire.Call) -> None:
        if call.method == method and call.reason == reason:
            rewrite(call)

    return wire.answers(answered)


def _invalid(call: wire.Call) -> None:
    call.answer_error(RpcError("InvalidParamsError", "Invalid parameters: id", reason="INVALID_ARGUMENT"))


def _result(make: Any) -> Any:
    """A rewrite: the error becomes the result ``make(params)``."""

    def rewrite(call: wire.Call) -> None:
        call.answer.pop("error", None)
        call.answer["result"] = make(call.params)

    return rewrite


declare(
    "push-create-on-missing-task",
    "CreateTaskPushNotificationConfig naming a task that does not exist answers the config as created",
    "PUSH-17",
)(
    _missing_answered(
        "CreateTaskPushNotificationConfig", "TASK_NOT_FOUND", _result(lambda p: {**p, "id": "push-config-1"})
    )
)
declare(
    "push-get-on-missing-task-invalid",
    "GetTaskPushNotificationConfig naming a task that does not exist answers -32602",
    "PUSH-17",
)(_missing_answered("GetTaskPushNotificationConfig", "TASK_NOT_FOUND", _invalid))
declare(
    "push-list-on-missing-task-empty",
    "ListTaskPushNotificationConfigs naming a task that does not exist answers an empty list",
    "PUSH-17",
)(
    _missing_answered(
        "ListTaskPushNotificationConfigs", "TASK_NOT_FOUND", _result(lambda p: {"configs": [], "nextPageToken": ""})
    )
)
declare(
    "push-delete-on-missing-task-ok",
    "DeleteTaskPushNotificationConfig naming a task that does not exist answers success",
    "PUSH-17",
)(_missing_answered("DeleteTaskPushNotificationConfig", "TASK_NOT_FOUND", _result(lambda p: {})))
declare(
    "push-get-missing-config-invalid",
    "GetTaskPushNotificationConfig naming a config the task does not have answers -32602",
    "PUSH-17",
)(_missing_answered("GetTaskPushNotificationConfig", "PUSH_CONFIG_NOT_FOUND", _invalid))
