"""Named faults: deliberate deviations the reference agent can be started with.

Each fault names the requirements whose checks must catch it; the kit's own tests start the agent with
the fault, run those checks, and assert that they fail. A fault must break exactly one behaviour, so a
passing check under a fault is a check that cannot fail.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    description: str
    breaks: tuple[str, ...]


FAULTS: dict[str, Fault] = {
    "no-version-check": Fault("serves a request that has no A2A-Version header", ("VER-02",)),
    "accepts-0.3": Fault("serves a request that asks for A2A-Version 0.3", ("VER-03",)),
    "wrong-error-code": Fault("answers a missing task with -32602 instead of -32001", ("TASK-05",)),
    "no-error-info": Fault("A2A errors carry no google.rpc.ErrorInfo detail", ("ERR-02",)),
    "no-bad-request-detail": Fault("-32602 carries no google.rpc.BadRequest detail", ("ERR-07",)),
    "wrong-response-id": Fault("answers with an id other than the request's", ("ERR-01",)),
    "http-500-on-bad-json": Fault("answers a body that is not JSON with HTTP 500", ("ERR-03",)),
    "method-not-found-wrong-code": Fault("answers an unknown method with -32600", ("ERR-05",)),
    "cross-subject-get": Fault("GetTask answers another subject's task", ("ISO-01",)),
    "cross-subject-list": Fault("ListTasks lists every subject's tasks", ("ISO-02",)),
    "cross-agent-list": Fault("ListTasks lists the tasks of every Agent", ("ISO-03",)),
    "page-repeats-task": Fault("a page repeats the last task of the previous page", ("LIST-06",)),
    "list-oldest-first": Fault("ListTasks orders oldest status change first", ("LIST-04",)),
    "last-page-token-missing": Fault("the last page has no nextPageToken", ("LIST-07",)),
    "wrong-total-size": Fault("totalSize counts the page, not the filtered set", ("LIST-08",)),
    "status-filter-ignored": Fault("ListTasks ignores the status filter", ("LIST-02",)),
    "artifacts-always-listed": Fault("ListTasks includes artifacts without includeArtifacts", ("LIST-10",)),
    "history-on-zero": Fault("GetTask returns history for historyLength 0", ("TASK-07",)),
    "history-by-default": Fault("GetTask returns history when historyLength is not given", ("TASK-08",)),
    "history-too-long": Fault("GetTask ignores a positive historyLength", ("TASK-09",)),
    "new-task-on-retry": Fault("a retried messageId starts a new task", ("SEND-04",)),
    "new-task-on-resume": Fault("an answer to an interrupted task starts a new task", ("TASK-03",)),
    "ignores-wait-limit": Fault("a blocking SendMessage waits past a2aWaitMs", ("SEND-02",)),
    "ignores-return-immediately": Fault("returnImmediately is ignored: the call blocks", ("SEND-03",)),
    "context-mismatch-accepted": Fault("a message whose contextId differs from its task's is accepted", ("SEND-08",)),
    "terminal-task-accepts-message": Fault("a message to an ended task starts it again", ("SEND-09",)),
    "cancel-ended-task": Fault("CancelTask on an ended task answers the task", ("CANCEL-02",)),
    "drops-raw-parts": Fault("raw parts are dropped from echoed artifacts", ("PART-01",)),
    "card-second-binding": Fault("the card lists an HTTP+JSON interface besides JSON-RPC", ("BIND-01",)),
    "card-streaming": Fault("the card says streaming: true", ("CARD-03",)),
    "card-extension-required": Fault("the card declares an extension with required: true", ("CARD-06",)),
    "streaming-method-not-found": Fault("SendStreamingMessage answers -32601 instead of -32004", ("UNSRV-01",)),
    "no-auth-check": Fault("a request without an application key is served", ("AUTH-01",)),
    "unknown-agent-served": Fault("an unknown Agent id answers as the default Agent", ("AUTH-03",)),
    "timestamp-offset": Fault("status timestamps carry +00:00 instead of Z", ("TASK-01",)),
}


def check_faults(names) -> None:
    unknown = sorted(set(names) - set(FAULTS))
    if unknown:
        known = ", ".join(sorted(FAULTS))
        raise ValueError(f"unknown fault {', '.join(unknown)}; known faults: {known}")
