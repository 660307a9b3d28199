"""Faults of the change feed, ``GET /v1/turns``: whose turns, from where, in which order, how a page says more."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.config import KeyGrant
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.feed import MAX_LIMIT, Feed, FeedError
from nylorun_a2a_kit.reference_agent.store import TaskRecord

FeedPage = dict[str, Any]


@declare("feed-needs-subject", "the feed lists nothing for a key without a subject", "FEED-01")
class FeedNeedsSubject(Feed):
    def subjects(self, grant: KeyGrant, subject: str) -> set[str] | None:
        subjects = super().subjects(grant, subject)
        return set() if subjects is None else subjects


@declare("feed-subject-leak", "with a subject the feed still lists every subject's turns", "FEED-07")
class FeedSubjectLeak(Feed):
    def subjects(self, grant: KeyGrant, subject: str) -> set[str] | None:
        return None


@declare(
    "feed-subject-drops-other-agents",
    "with a subject the feed joins that subject's sessions of the Runtime's first Agent only: its turns on the other "
    "Agents are left out",
    "FEED-07",
)
class FeedSubjectDropsOtherAgents(Feed):
    def rows(
        self, after: int, subjects: set[str] | None, limit: int, session: str | None
    ) -> tuple[list[TaskRecord], str]:
        rows, key = super().rows(after, subjects, limit, session)
        if subjects is None or not rows:
            return rows, key
        first = min(row.agent_id for row in rows)
        return [row for row in rows if row.agent_id == first], key


@declare("feed-no-cursor-on-empty", "an empty feed page carries no cursor", "FEED-02")
@wire.feed_pages
def feed_no_cursor_on_empty(page: FeedPage) -> None:
    if not page["turns"]:
        page["cursor"] = None


@declare("feed-cursor-skips", "the page after a cursor skips a turn", "FEED-02", "FEED-05")
class FeedCursorSkips(Feed):
    def rows(
        self, after: int, subjects: set[str] | None, limit: int, session: str | None
    ) -> tuple[list[TaskRecord], str]:
        rows, key = super().rows(after, subjects, limit, session)
        return (rows[1:] if after else rows), key


@declare("feed-starts-at-now", "without changedAfter the feed starts at its end", "FEED-04")
class FeedStartsAtNow(Feed):
    def start(self, cursor: str | None) -> int:
        return super().start(cursor) if cursor else self.store.last_seq()


@declare("feed-limit-ignored", "limit is ignored", "FEED-05")
class FeedLimitIgnored(Feed):
    def limit(self, raw: str) -> int:
        return MAX_LIMIT * 10


@declare("feed-limit-1-refused", "limit 1, the bottom of the range, is refused", "FEED-05")
class FeedLimit1Refused(Feed):
    def limit(self, raw: str) -> int:
        if raw.strip() == "1":
            raise FeedError(f"limit must be from 2 to {MAX_LIMIT}")
        return super().limit(raw)


@declare("feed-has-more-wrong", "hasMore is always false", "FEED-05")
@wire.feed_pages
def feed_has_more_wrong(page: FeedPage) -> None:
    page["hasMore"] = False


@declare(
    "feed-session-cursor-ignored",
    "with sessionId, changedAfter is ignored: every page starts the session again",
    "FEED-06",
)
class FeedSessionCursorIgnored(Feed):
    def session_turns(self, session: str, subjects: set[str] | None, after: int) -> list[TaskRecord]:
        return super().session_turns(session, subjects, 0)


@declare(
    "feed-page-ordered-by-start",
    "a page's turns are sorted by startedAt before they are written (the serializer shared with the session view): a "
    "turn that started earlier but changed later comes first",
    "FEED-03",
)
@wire.feed_pages
def feed_page_ordered_by_start(page: FeedPage) -> None:
    turns = page.get("turns")
    if isinstance(turns, list):
        turns.sort(key=lambda turn: str(turn.get("startedAt")))


@declare("feed-bad-status-word", "a turn's status is 'done'", "FEED-08")
@wire.feed_pages
def feed_bad_status_word(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["status"] = "done"


@declare("feed-cancelled-as-failed", "a canceled turn's status is 'failed'", "FEED-09")
@wire.feed_pages
def feed_cancelled_as_failed(page: FeedPage) -> None:
    for turn in page["turns"]:
        if turn["status"] == "cancelled":
            turn["status"] = "failed"


@declare("feed-missing-a2a", "a turn that is an A2A task has a2a null", "FEED-09")
@wire.feed_pages
def feed_missing_a2a(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["a2a"] = None


@declare("feed-ended-at-early", "endedAt is set while the turn runs", "FEED-09")
@wire.feed_pages
def feed_ended_at_early(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["endedAt"] = turn["changedAt"]


@declare(
    "session-has-more-from-the-tenant",
    "a session page's hasMore comes from the Tenant view's count, without the session condition: it says more follow "
    "whenever the reader sees any turn, and a walk of one session never ends",
    "FEED-06",
)
class SessionHasMoreFromTheTenant(Feed):
    def page(self, query: dict[str, str], subjects: set[str] | None) -> dict[str, Any]:
        page = super().page(query, subjects)
        if query.get("sessionId") and self.store.changed_after(0, subjects, 1):
            page["hasMore"] = True
        return page


_SESSION_STARTS: dict[str, str] = {}  # feed-started-at-of-the-session: each session's first start, as first shown


@declare(
    "feed-started-at-of-the-session",
    "the feed query joins the sessions and selects the session row's started_at: every turn shows the start of its "
    "session's first turn",
    "FEED-08",
)
@wire.feed_pages
def feed_started_at_of_the_session(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["startedAt"] = _SESSION_STARTS.setdefault(turn["sessionId"], turn["startedAt"])


@declare("feed-started-at-moves", "a turn's startedAt is rewritten on each change (it shows changedAt)", "FEED-08")
@wire.feed_pages
def feed_started_at_moves(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["startedAt"] = turn["changedAt"]


@declare("feed-changed-at-frozen", "a turn's changedAt stays at its first change (when it started)", "FEED-03")
@wire.feed_pages
def feed_changed_at_frozen(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["changedAt"] = turn["startedAt"]


@declare(
    "feed-agent-id-default", "every turn names the Runtime's default Agent, whatever Agent its task is of", "FEED-09"
)
@wire.feed_pages
def feed_agent_id_default(page: FeedPage) -> None:
    for turn in page["turns"]:
        turn["agentId"] = "support"
