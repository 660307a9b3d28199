"""Faults of ListTasks: who and what is listed, page sizes, page tokens, totals."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.engine import Cancelling
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.listing import Page, Paging
from nylorun_a2a_kit.reference_agent.rpc import Problems, Reading, Rendering
from nylorun_a2a_kit.reference_agent.store import INTERRUPTED, TaskFilter, TaskRecord, session_id


def _filter_ignoring(name: str) -> type[Paging]:
    """A Paging whose filter leaves out ``name`` (a field of TaskFilter): every value of it is listed."""

    class Ignoring(Paging):
        def task_filter(self, caller: Caller, params: dict[str, Any]) -> TaskFilter:
            return replace(super().task_filter(caller, params), **{name: None})

    return Ignoring


# -- who and what is listed

declare("cross-subject-list", "ListTasks lists every subject's tasks", "ISO-02", "PAGE-06")(_filter_ignoring("subject"))
declare("cross-agent-list", "ListTasks lists the tasks of every Agent", "ISO-03")(_filter_ignoring("agent_id"))
declare("status-filter-ignored", "ListTasks ignores the status filter", "LIST-02")(_filter_ignoring("state"))
declare("context-filter-ignored", "ListTasks ignores the contextId filter", "LIST-01")(_filter_ignoring("context_id"))
declare("timestamp-filter-ignored", "ListTasks ignores statusTimestampAfter", "LIST-03")(
    _filter_ignoring("status_after")
)


@declare(
    "unset-filters-taken-as-values",
    'ListTasks reads contextId "" and status TASK_STATE_UNSPECIFIED as values to filter by (the filter tests the '
    "member's presence, not proto3's unset value): a list of them is empty",
    "LIST-01",
    "LIST-02",
)
class UnsetFiltersTakenAsValues(Paging):
    def task_filter(self, caller: Caller, params: dict[str, Any]) -> TaskFilter:
        found = super().task_filter(caller, params)
        if params.get("contextId") == "":
            found = replace(found, context_id="")
        if params.get("status") == "TASK_STATE_UNSPECIFIED":
            found = replace(found, state="TASK_STATE_UNSPECIFIED")
        return found


@declare(
    "empty-page-token-refused",
    'ListTasks reads pageToken "" as a token to decode (it tests presence, not proto3\'s unset value): refused as '
    "one it did not issue",
    "LIST-06",
)
class EmptyPageTokenRefused(Paging):
    def page(self, caller: Caller, params: dict[str, Any]) -> Page:
        if params.get("pageToken") == "":
            self.unreadable("")
        return super().page(caller, params)


@declare(
    "status-or-time-cut",
    "the hand-built WHERE clause groups `state = ? OR status_ts >= ?`: with both a status and a time filter, tasks "
    "of that state from before the cut and tasks of any state changed after it are listed",
    "LIST-02",
    "LIST-03",
)
class StatusOrTimeCut(Paging):
    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        if flt.state is None or flt.status_after is None:
            return super().fetch(flt, before, limit)
        either = super().fetch(replace(flt, status_after=None), before, limit)
        either += super().fetch(replace(flt, state=None), before, limit)
        merged = {task.id: task for task in either}
        return sorted(merged.values(), key=lambda task: task.seq, reverse=True)[:limit]


@declare(
    "total-size-counts-the-page-query",
    "totalSize is counted over the page query's subselect, which carries its LIMIT (the page and one more): a "
    "filter matching more tasks than a page holds is counted as the page and one",
    "LIST-08",
)
class TotalSizeCountsThePageQuery(Paging):
    def total(self, flt: TaskFilter, page: list[TaskRecord]) -> int:
        return min(super().total(flt, page), len(page) + 1)


@declare("timestamp-offset-read-as-utc", "statusTimestampAfter written with an offset is read as UTC", "LIST-13")
class TimestampOffsetReadAsUtc(Reading):
    """Takes a cut written with an offset (the schema refuses one) by dropping the offset: its clock time is read
    as if it were Z."""

    def params(self, name: str, raw: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        after = raw.get("statusTimestampAfter") if name == "ListTasks" and isinstance(raw, dict) else None
        if isinstance(after, str) and re.search(r"[+-]\d\d:\d\d$", after):
            raw = {**raw, "statusTimestampAfter": after[:-6] + "Z"}
        return super().params(name, raw)


@declare("listed-context-internal", "ListTasks shows each task's internal session id as its contextId", "TASK-02")
class ListedContextInternal(Rendering):
    def task(self, task: TaskRecord, method: str, asked: int | None, **kwargs: Any) -> dict[str, Any]:
        out = super().task(task, method, asked, **kwargs)
        if method == "ListTasks":
            out["contextId"] = session_id(task.agent_id, task.subject, task.context_id)
        return out


@declare("status-filter-interrupted-lumped", "status AUTH_REQUIRED also lists INPUT_REQUIRED tasks", "LIST-02")
class StatusFilterInterruptedLumped(Paging):
    """Reads AUTH_REQUIRED as 'waiting on the caller', as INPUT_REQUIRED is: both match it."""

    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        if flt.state != "TASK_STATE_AUTH_REQUIRED":
            return super().fetch(flt, before, limit)
        every = super().fetch(replace(flt, state=None), before, 2**62)
        return [task for task in every if task.state in INTERRUPTED][:limit]


@declare("later-pages-drop-time-filter", "pages after the first ignore statusTimestampAfter", "LIST-03")
class LaterPagesDropTimeFilter(Paging):
    """The keyset query of a next page is built anew, without the time filter."""

    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        return super().fetch(flt if before is None else replace(flt, status_after=None), before, limit)


@declare("cancel-keeps-list-position", "a canceled task keeps the list position of its previous change", "LIST-04")
class CancelKeepsListPosition(Cancelling):
    """CancelTask writes the new state and time, but not the key the list is ordered by."""

    async def cancel(self, task: TaskRecord) -> TaskRecord:
        position = task.seq
        canceled = await super().cancel(task)
        canceled.seq = position
        self.engine.store.save(canceled)
        return canceled


@declare("artifacts-when-false", "includeArtifacts false still lists artifacts", "LIST-10")
class ArtifactsWhenFalse(Rendering):
    def lists_artifacts(self, params: dict[str, Any]) -> bool:
        return "includeArtifacts" in params


@declare("list-history-newest-first", "ListTasks' historyLength cut lists its messages newest first", "LIST-11")
class ListHistoryNewestFirst(Rendering):
    def task(self, task: TaskRecord, method: str, asked: int | None, **shown: Any) -> dict[str, Any]:
        out = super().task(task, method, asked, **shown)
        if method == "ListTasks" and "history" in out:
            out["history"] = out["history"][::-1]
        return out


@declare(
    "listed-artifacts-first-only", "with includeArtifacts, listed tasks carry only their first artifact", "LIST-10"
)
@wire.answers
def listed_artifacts_first_only(call: wire.Call) -> None:
    if call.method == "ListTasks" and call.params.get("includeArtifacts") is True:
        for task in call.tasks():
            task["artifacts"] = task.get("artifacts", [])[:1]


@declare("artifacts-always-listed", "ListTasks includes artifacts without includeArtifacts", "LIST-10")
class ArtifactsAlwaysListed(Rendering):
    def lists_artifacts(self, params: dict[str, Any]) -> bool:
        return True


@declare("artifacts-empty-array", 'without includeArtifacts listed tasks carry "artifacts": []', "LIST-10")
@wire.answers
def artifacts_empty_array(call: wire.Call) -> None:
    if call.method == "ListTasks" and not call.params.get("includeArtifacts"):
        for task in call.tasks():
            task["artifacts"] = []


@declare("list-history-ignored", "ListTasks returns each task's whole history whatever historyLength says", "LIST-11")
class ListHistoryIgnored(Rendering):
    def history_length(self, method: str, task: TaskRecord, asked: int | None) -> int | None:
        return super().history_length(method, task, len(task.history) if method == "ListTasks" else asked)


# -- page sizes


@declare("default-page-size-20", "ListTasks pages by 20 when pageSize is not given", "LIST-05")
class DefaultPageSize20(Paging):
    def page_size(self, params: dict[str, Any]) -> int:
        return params.get("pageSize", 20)


@declare("page-overfills", "a ListTasks page holds one task more than pageSize", "LIST-12")
class PageOverfills(Paging):
    def cut(self, tasks: list[TaskRecord], page_size: int) -> list[TaskRecord]:
        return super().cut(tasks, page_size + 1)


@declare("page-size-capped-at-50", "pageSize above 50 is served as 50", "LIST-12")
class PageSizeCappedAt50(Paging):
    def page_size(self, params: dict[str, Any]) -> int:
        return min(super().page_size(params), 50)


page_size_zero_means_all = declare(
    "page-size-nonpositive-means-all", "pageSize 0 or below lists every matching task", "LIST-09"
)


@page_size_zero_means_all
class PageSizeZeroAccepted(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        size = params.get("pageSize")
        if method == "ListTasks" and isinstance(size, int) and size <= 0:
            problems = [p for p in problems if p[0] != "pageSize"]
        return served, problems


@page_size_zero_means_all
class PageSizeZeroMeansAll(Paging):
    """A page size of 0 or below is read as 'no limit', as a LIMIT of 0 or -1 is in some databases."""

    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        return super().fetch(flt, before, limit if limit > 1 else 2**62)  # pageSize 0 asks for 0 + 1

    def cut(self, tasks: list[TaskRecord], page_size: int) -> list[TaskRecord]:
        return tasks if page_size <= 0 else super().cut(tasks, page_size)


# -- page tokens


@declare("page-repeats-task", "a page repeats the last task of the previous page", "LIST-06")
class PageRepeatsTask(Paging):
    def cursor(self, page: list[TaskRecord], before: int | None, page_size: int) -> int:
        return super().cursor(page, before, page_size) + 1


@declare("last-page-token-missing", "the last page has no nextPageToken", "LIST-07")
@wire.answers
def last_page_token_missing(call: wire.Call) -> None:
    result = call.answer.get("result")
    if call.method == "ListTasks" and isinstance(result, dict) and not result.get("nextPageToken"):
        result.pop("nextPageToken", None)


@declare(
    "unknown-page-token-not-found",
    "a pageToken the agent never issued is answered TaskNotFoundError (-32001: the task it points at is not found), "
    "an error ListTasks cannot meet, instead of -32602",
    "ERR-09",
)
class UnknownPageTokenNotFound(Paging):
    def unreadable(self, token: str) -> int | None:
        raise RpcError("TaskNotFoundError", "Task not found", reason="TASK_NOT_FOUND", metadata={"pageToken": token})


@declare(
    "token-on-a-full-last-page",
    "a page as full as asked carries a nextPageToken even when it holds the last task (more = a full page); the "
    "page after it is empty",
    "LIST-07",
)
class TokenOnAFullLastPage(Paging):
    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        tasks = super().fetch(flt, before, limit - 1)  # no look-ahead: a full page is taken to mean more follow
        return tasks + tasks[-1:] if len(tasks) == limit - 1 else tasks


@declare("list-offset-cursor", "page tokens are offsets: a task created mid-walk repeats one", "PAGE-01", "PAGE-02")
class ListOffsetCursor(Paging):
    """Position by count, as offset paging does: it shifts when tasks change."""

    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        offset = before or 0
        return self.store.page(flt, before_seq=None, limit=offset + limit)[offset:]

    def cursor(self, page: list[TaskRecord], before: int | None, page_size: int) -> int:
        return (before or 0) + page_size


@declare("walk-never-ends", "the last page's nextPageToken starts the walk again", "PAGE-05")
class WalkNeverEnds(Paging):
    def last_token(self, fingerprint: str) -> str:
        return self.token(2**62, fingerprint)  # a position before every task: the newest page again


@declare("forged-cursor-accepted", "an unreadable pageToken starts the walk again", "PAGE-07")
class ForgedCursorAccepted(Paging):
    def unreadable(self, token: str) -> int | None:
        return None


@declare("foreign-cursor-accepted", "a pageToken issued to another subject is accepted", "PAGE-07")
class ForeignCursorAccepted(Paging):
    def fingerprint(self, flt: TaskFilter) -> str:
        return super().fingerprint(replace(flt, subject=None))


# -- totals


@declare("total-ignores-status-filter", "totalSize counts without the status filter", "LIST-08")
class TotalIgnoresStatusFilter(Paging):
    def total(self, flt: TaskFilter, page: list[TaskRecord]) -> int:
        return super().total(replace(flt, state=None), page)


@declare("wrong-total-size", "totalSize counts the page, not the filtered set", "LIST-08", "PAGE-04")
class WrongTotalSize(Paging):
    def total(self, flt: TaskFilter, page: list[TaskRecord]) -> int:
        return len(page)


@declare(
    "filtered-list-oldest-first",
    "ListTasks with a filter (contextId, status or statusTimestampAfter) lists each page oldest first (the filtered "
    "query's ORDER BY ascending)",
    "LIST-04",
)
@wire.answers
def filtered_list_oldest_first(call: wire.Call) -> None:
    result = call.answer.get("result")
    filtered = any(call.params.get(name) for name in ("contextId", "status", "statusTimestampAfter"))
    if call.method == "ListTasks" and filtered and isinstance(result, dict):
        result["tasks"] = list(reversed(result.get("tasks") or []))


_TOKEN_SIZES: dict[str, Any] = {}  # list-page-size-from-token: the page size each page token was made with

LIST_PAGE_SIZE_FROM_TOKEN = declare(
    "list-page-size-from-token",
    "a page token carries the page size it was made with, and the handler uses it instead of the request's: a later "
    "page asking another pageSize gets (and answers) the first page's",
    "LIST-12",
)


@LIST_PAGE_SIZE_FROM_TOKEN
class PageSizeFromToken(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        token = served.get("pageToken") if method == "ListTasks" and not problems else None
        if isinstance(token, str) and token in _TOKEN_SIZES:
            served = {**served, "pageSize": _TOKEN_SIZES[token]}
        return served, problems


@LIST_PAGE_SIZE_FROM_TOKEN
@wire.answers
def remember_page_sizes(call: wire.Call) -> None:
    result = call.answer.get("result")
    if call.method == "ListTasks" and isinstance(result, dict) and isinstance(result.get("nextPageToken"), str):
        _TOKEN_SIZES[result["nextPageToken"]] = result.get("pageSize")


@declare(
    "context-list-drops-paused",
    "ListTasks of a conversation leaves out its tasks paused on an interaction (the listing joins the turns that run "
    "or ended)",
    "LIST-01",
)
@wire.answers
def context_list_drops_paused(call: wire.Call) -> None:
    result = call.answer.get("result")
    if call.method != "ListTasks" or not call.params.get("contextId") or not isinstance(result, dict):
        return
    kept = [t for t in result.get("tasks") or [] if (t.get("status") or {}).get("state") not in INTERRUPTED]
    if len(kept) != len(result.get("tasks") or []):
        result["totalSize"] = max(0, int(result.get("totalSize") or 0) - (len(result["tasks"]) - len(kept)))
        result["tasks"] = kept
