"""Named faults: deliberate deviations the reference agent can be started with.

Each fault names the requirements whose checks must catch it; the kit's own tests start the agent with
the fault, run those checks, and assert that they fail. A fault breaks one behaviour, the way a real
Runtime might get it wrong, so a check that passes under its fault is a check that cannot fail.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    description: str
    breaks: tuple[str, ...]
    # Kit options the fault's run needs besides the fault itself (e.g. an agent with push off).
    run_with: tuple[str, ...] = ()


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
    "cross-subject-list": Fault("ListTasks lists every subject's tasks", ("ISO-02", "PAGE-06")),
    "cross-agent-list": Fault("ListTasks lists the tasks of every Agent", ("ISO-03",)),
    "page-repeats-task": Fault("a page repeats the last task of the previous page", ("LIST-06",)),
    "list-oldest-first": Fault("ListTasks orders oldest status change first", ("LIST-04", "PAGE-03")),
    "last-page-token-missing": Fault("the last page has no nextPageToken", ("LIST-07",)),
    "wrong-total-size": Fault("totalSize counts the page, not the filtered set", ("LIST-08", "PAGE-04")),
    "status-filter-ignored": Fault("ListTasks ignores the status filter", ("LIST-02",)),
    "artifacts-always-listed": Fault("ListTasks includes artifacts without includeArtifacts", ("LIST-10",)),
    "history-on-zero": Fault("GetTask returns history for historyLength 0", ("TASK-07",)),
    "history-by-default": Fault("GetTask returns history when historyLength is not given", ("TASK-08",)),
    "history-too-long": Fault("GetTask ignores a positive historyLength", ("TASK-09",)),
    "new-task-on-retry": Fault("a retried messageId starts a new task", ("SEND-04", "INTER-10")),
    "new-task-on-resume": Fault(
        "an answer to an interrupted task starts a new task", ("TASK-03", "SEND-10", "INTER-05")
    ),
    "ignores-wait-limit": Fault("a blocking SendMessage waits past a2aWaitMs", ("SEND-02",)),
    "ignores-return-immediately": Fault("returnImmediately is ignored: the call blocks", ("SEND-03",)),
    "abandons-background-turns": Fault("a task answered at once is dropped instead of worked on", ("SEND-03",)),
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
    "envelope-not-validated": Fault("a request that is not a valid JSON-RPC envelope is served anyway", ("ERR-03",)),
    "non-object-body-500": Fault(
        "a body that is JSON but not an object (null, 1, [], a string) gets HTTP 500", ("ERR-03",)
    ),
    "cross-subject-cancel": Fault("CancelTask cancels another subject's task", ("ISO-01",)),
    "cross-subject-continue": Fault("a message may continue another subject's task", ("ISO-01",)),
    "text-parts-ascii-only": Fault("text parts lose their non-ASCII characters", ("PART-01",)),
    "url-parts-as-text": Fault("url parts come back as text parts holding the URL", ("PART-01",)),
    "data-parts-as-text": Fault("data parts come back as text parts holding JSON", ("PART-01",)),
    "card-wrong-content-type": Fault("the Agent Card is served as text/plain", ("CARD-01",)),
    "card-wrong-url": Fault("the card's interface URL is not the endpoint the Agent serves", ("CARD-02",)),
    "card-of-another-agent": Fault("an Agent's card endpoint serves another Agent's card", ("CARD-07",)),
    "card-extended": Fault("the card says extendedAgentCard: true", ("CARD-04",)),
    "card-signed": Fault("the card carries a signature", ("CARD-05",)),
    "version-1.0-refused": Fault("A2A-Version 1.0 is refused like any other version", ("VER-01",)),
    "accepts-any-version": Fault("any A2A-Version other than 0.3 is served", ("VER-04",)),
    "no-params-validation": Fault("params are not validated before the method runs", ("ERR-06",)),
    "invalid-params-as-invalid-request": Fault(
        "params that break the method's schema are refused -32600 (Invalid Request), not -32602", ("ERR-06",)
    ),
    "rejects-unknown-fields": Fault("params with a field the Agent does not know are refused", ("ERR-08",)),
    "subject-optional": Fault("a request without Nylorun-Subject acts for a default subject", ("AUTH-02",)),
    "scopes-required": Fault("a request without Nylorun-Scopes is refused", ("AUTH-04",)),
    "no-rate-limit": Fault("rate limits are not enforced", ("AUTH-05",)),
    "context-shared-across-subjects": Fault("a contextId is one conversation for every subject", ("ISO-04",)),
    "blocking-answers-early": Fault("a blocking SendMessage answers at once, like returnImmediately", ("SEND-01",)),
    "reuses-context": Fault("a message without contextId joins one shared conversation", ("SEND-05",)),
    "ignores-given-context": Fault("a given contextId is replaced by a new one", ("SEND-06",)),
    "unknown-task-starts-new": Fault("a message naming an unknown taskId starts a new task", ("SEND-07",)),
    "get-task-stale-state": Fault("GetTask answers an ended task as still working", ("TASK-02",)),
    "get-task-without-artifacts": Fault("GetTask answers the task without its artifacts", ("TASK-04",)),
    "not-found-wrong-reason": Fault("a missing task's ErrorInfo reason is NOT_FOUND", ("TASK-06",)),
    "history-never": Fault("GetTask never answers history", ("TASK-10",)),
    "negative-history-accepted": Fault("a negative historyLength is read as no limit", ("TASK-11",)),
    "one-task-per-context": Fault("a new turn in a conversation reuses the conversation's task id", ("TASK-12",)),
    "fail-reported-completed": Fault("a failed turn ends TASK_STATE_COMPLETED", ("TASK-13",)),
    "context-filter-ignored": Fault("ListTasks ignores the contextId filter", ("LIST-01",)),
    "timestamp-filter-ignored": Fault("ListTasks ignores statusTimestampAfter", ("LIST-03",)),
    "default-page-size-20": Fault("ListTasks pages by 20 when pageSize is not given", ("LIST-05",)),
    "page-size-unbounded": Fault("ListTasks accepts and uses a pageSize above 100", ("LIST-09",)),
    "list-history-ignored": Fault(
        "ListTasks returns each task's whole history whatever historyLength says", ("LIST-11",)
    ),
    "cancel-noop": Fault("CancelTask answers the task without canceling it", ("CANCEL-01",)),
    "cancel-twice-ok": Fault("CancelTask on a canceled task answers the task again", ("CANCEL-04",)),
    "cancel-unknown-wrong-code": Fault("CancelTask on an unknown id answers -32002", ("CANCEL-03",)),
    "complete-without-url-part": Fault("the complete scenario publishes no url part", ("PART-02",)),
    "subscribe-method-not-found": Fault("SubscribeToTask answers -32601 instead of -32004", ("UNSRV-02",)),
    "response-text-plain": Fault("JSON-RPC answers are served as text/plain", ("BIND-02",)),
    "card-security-schemes": Fault("the Runtime card declares a bearer security scheme", ("CARD-08",)),
    "error-code-as-string": Fault("error codes are sent as strings", ("ERR-09",)),
    "answers-message": Fault(
        "a message outside the scenario contract is answered with a Message, not a Task", ("SEND-11",)
    ),
    "send-history-ignored": Fault("SendMessage ignores configuration.historyLength", ("SEND-12",)),
    "page-overfills": Fault("a ListTasks page holds one task more than pageSize", ("LIST-12",)),
    "extended-card-not-configured": Fault("GetExtendedAgentCard answers -32007 instead of -32004", ("UNSRV-03",)),
    # -- the profile's extensions
    "echo-unactivated-extension": Fault("every declared extension is echoed, activated or not", ("EXT-01",)),
    "echo-only-v1": Fault("only the v1 extensions are echoed, whatever else was activated", ("EXT-01",)),
    "echo-unknown-extension": Fault("an undeclared URI in A2A-Extensions is echoed", ("EXT-02",)),
    "extension-data-in-parts": Fault("extension data rides in a data part instead of metadata", ("EXT-03",)),
    "message-extensions-missing": Fault("a message with extension data does not list the URIs", ("EXT-04",)),
    "interaction-answer-ignored": Fault(
        "an answer under interactions/v1 in the reply's metadata is ignored", ("EXT-05", "INTER-05", "INTER-06")
    ),
    "interaction-without-id": Fault("an open interaction has no interactionId", ("EXT-06", "INTER-04")),
    "approval-as-input-required": Fault("an approval pauses the task as INPUT_REQUIRED", ("INTER-01",)),
    "question-as-auth-required": Fault("a question pauses the task as AUTH_REQUIRED", ("INTER-02",)),
    "connection-kind-approval": Fault("a missing connection is shown as an approval", ("INTER-03",)),
    "connection-not-resolved": Fault("value {connected: true} leaves the connection waiting", ("INTER-07",)),
    "both-approved-and-value-accepted": Fault("an answer with both approved and value resolves", ("INTER-08",)),
    "text-approves": Fault("a text reply approves a pending approval", ("INTER-09", "TIER-02")),
    "wrong-interaction-id-accepted": Fault("an answer naming another interactionId resolves", ("INTER-11",)),
    "prompt-only-in-metadata": Fault(
        "an interaction's prompt is not in the status message's text", ("TIER-01", "TIER-03")
    ),
    "data-without-activation": Fault("extension data is answered to callers that did not activate it", ("TIER-04",)),
    "core-gets-plan": Fault("plan steps and totals reach callers that activated no extension", ("TIER-05",)),
    "v1-client-refused": Fault("a caller activating only the v1 extensions is refused with -32008", ("TIER-06",)),
    "uncertain-marked-failed": Fault("a lost outcome fails the task instead of keeping it WORKING", ("EFF-01",)),
    "uncertain-without-id": Fault("a lost outcome carries no effects/v1 data", ("EFF-01",)),
    "uncertain-empty-id": Fault("effects/v1 uncertain is an empty string", ("EFF-02", "EXT-06")),
    "plan-21-steps": Fault("a long plan shows more than 20 steps", ("PROG-01",)),
    "plan-step-without-state": Fault("plan steps carry no state", ("PROG-02", "EXT-07")),
    "no-plan": Fault("a turn with a plan answers no progress/v1 data", ("PROG-01",)),
    "file-size-as-string": Fault("files/v1 size is sent as a string", ("EXT-07",)),
    "trace-id-uppercase": Fault("telemetry/v1 traceId is written in uppercase hex", ("EXT-07",)),
    "refusal-approves": Fault("approved: false runs the action as if approved", ("INTER-05",)),
    "stale-plan-on-get": Fault("GetTask carries the first plan, not the latest", ("PROG-03",)),
    "leaks-tool-call": Fault("a tool call and its result appear in the task's history", ("PROG-04",)),
    "telemetry-without-totals": Fault("telemetry/v1 carries no totals", ("TEL-01",)),
    "telemetry-missing-trace-id": Fault("telemetry/v1 carries no trace id", ("TEL-02",)),
    "traceparent-ignored": Fault("a turn starts a new trace instead of joining the caller's", ("TEL-03",)),
    "no-telemetry-on-get": Fault("GetTask of an ended task carries no telemetry", ("TEL-04",)),
    "telemetry-before-end": Fault("working status updates carry telemetry", ("TEL-05",)),
    "file-metadata-missing": Fault("file artifacts carry no files/v1 data", ("FILE-01",)),
    "wrong-sha256": Fault("files/v1 sha256 is not the digest of the file's bytes", ("FILE-02",)),
    "file-url-unfetchable": Fault("a url file part's URL answers 404", ("FILE-03",)),
    "url-input-ignored": Fault("a url file part in a message is not read", ("FILE-04",)),
    "version-not-growing": Fault("a changed file keeps version 1", ("FILE-05",)),
    # -- push notifications
    "card-hides-push": Fault("the card says pushNotifications false while push is configured", ("PUSH-04",)),
    "capability-without-secret": Fault(
        "the card says pushNotifications true without a push secret", ("PUSH-04",), ("--reference-push=off",)
    ),
    "push-unsupported-wrong-code": Fault(
        "without a push secret the config methods answer -32601", ("PUSH-03",), ("--reference-push=off",)
    ),
    "get-after-delete-found": Fault("GetTaskPushNotificationConfig still answers a deleted config", ("PUSH-01",)),
    "list-missing-config": Fault("ListTaskPushNotificationConfigs leaves out the newest config", ("PUSH-01",)),
    "inline-config-ignored": Fault("a push config inside SendMessage is ignored", ("PUSH-02",)),
    "interrupted-not-pushed": Fault("a task pausing for input is not pushed", ("PUSH-05",)),
    "push-body-bare-task": Fault("a delivery's body is a bare Task, not a StreamResponse", ("PUSH-06",)),
    "wrong-auth-header": Fault("deliveries carry no Authorization from the config's authentication", ("PUSH-07",)),
    "missing-token": Fault("deliveries do not carry the config's token", ("PUSH-08",)),
    "bad-signature": Fault("webhook-signature does not verify", ("PUSH-09",)),
    "stale-timestamp": Fault("webhook-timestamp is a year old", ("PUSH-09",)),
    "timestamp-in-ms": Fault("webhook-timestamp is in milliseconds", ("PUSH-09",)),
    "reserialized-body": Fault("the body sent is not the bytes that were signed", ("PUSH-09",)),
    "new-webhook-id-on-retry": Fault("a retry gets a new webhook-id", ("PUSH-10", "PUSH-12")),
    "loopback-host-allowed": Fault("any loopback host or spelling is an allowed destination", ("PUSH-11",)),
    "redirect-followed": Fault("the sender follows redirects", ("PUSH-11",)),
    "allowlist-resolves-host": Fault("the allowlist is checked against the resolved address", ("PUSH-11",)),
    "allowlist-naive-parse": Fault("the allowlist reads a URL's userinfo as its host", ("PUSH-11",)),
    "no-retries": Fault("a failed delivery is not retried", ("PUSH-10", "PUSH-12")),
    "retries-after-success": Fault("a delivery acknowledged with 2xx is sent again", ("PUSH-12",)),
    "retry-after-ignored": Fault("Retry-After is not honoured", ("PUSH-12",)),
    "retries-shrink": Fault("the gaps between retries shrink", ("PUSH-12",)),
    "gone-ignored": Fault("410 Gone does not stop deliveries", ("PUSH-12",)),
    "retries-forever": Fault("retries go on past 24 hours", ("PUSH-13",)),
    "push-order-reversed": Fault("a config's pending events are attempted newest first", ("PUSH-14",)),
    "delete-not-stopping": Fault("a deleted config still gets deliveries", ("PUSH-15",)),
    "config-cross-subject": Fault("another subject may manage a task's push configs", ("PUSH-16",)),
    # -- the change feed
    "feed-needs-subject": Fault("the feed lists nothing for a key without a subject", ("FEED-01",)),
    "feed-no-cursor-on-empty": Fault("an empty feed page carries no cursor", ("FEED-02",)),
    "feed-cursor-skips": Fault("the page after a cursor skips a turn", ("FEED-02", "FEED-05")),
    "feed-newest-first": Fault("a feed page lists its turns newest change first", ("FEED-03",)),
    "feed-starts-at-now": Fault("without changedAfter the feed starts at its end", ("FEED-04",)),
    "feed-limit-ignored": Fault("limit is ignored", ("FEED-05",)),
    "feed-has-more-wrong": Fault("hasMore is always false", ("FEED-05",)),
    "feed-session-newest-first": Fault("a session's turns come newest first", ("FEED-06",)),
    "feed-subject-leak": Fault("with a subject the feed still lists every subject's turns", ("FEED-07",)),
    "feed-bad-status-word": Fault("a turn's status is 'done'", ("FEED-08",)),
    "feed-missing-a2a": Fault("a turn that is an A2A task has a2a null", ("FEED-09",)),
    "feed-ended-at-early": Fault("endedAt is set while the turn runs", ("FEED-09",)),
    # -- queued messages
    "busy-refused": Fault("a message to a busy context is refused CONTEXT_BUSY instead of queued", ("QUEUE-01",)),
    "queued-id-unknown": Fault("GetTask does not know a queued message's task id", ("QUEUE-02",)),
    "queued-listed": Fault("ListTasks lists queued messages and counts them in totalSize", ("QUEUE-03",)),
    "queued-cancelable": Fault("CancelTask cancels a queued message", ("QUEUE-04",)),
    "queue-lifo": Fault("queued messages are taken newest first", ("QUEUE-05",)),
    "queued-run-twice": Fault("a queued message is taken by two turns", ("QUEUE-05",)),
    "queue-keeps-newest": Fault("a context keeps only its newest queued message: earlier ones are lost", ("QUEUE-05",)),
    "reject-ignored": Fault('delivery "reject" is queued like any other message', ("QUEUE-06",)),
    "reject-without-reason": Fault('delivery "reject" is refused with reason BUSY, not CONTEXT_BUSY', ("QUEUE-06",)),
    # -- paging and generated input
    "list-offset-cursor": Fault("page tokens are offsets: a task created mid-walk repeats one", ("PAGE-01", "PAGE-02")),
    "walk-never-ends": Fault("the last page's nextPageToken starts the walk again", ("PAGE-05",)),
    "forged-cursor-accepted": Fault("an unreadable pageToken starts the walk again", ("PAGE-07",)),
    "foreign-cursor-accepted": Fault("a pageToken issued to another subject is accepted", ("PAGE-07",)),
    "artifacts-empty-array": Fault('without includeArtifacts listed tasks carry "artifacts": []', ("LIST-10",)),
    "500-on-wrong-type": Fault("a params field of the wrong JSON type gets HTTP 500", ("ERR-06",)),
}


def check_faults(names) -> None:
    unknown = sorted(set(names) - set(FAULTS))
    if unknown:
        raise ValueError(f"unknown fault {', '.join(unknown)} (nylorun-reference-agent --list-faults lists them)")
