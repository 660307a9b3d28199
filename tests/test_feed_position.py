"""Where the change feed stands when a run begins: found once, shared, carried to the next run, bounded.

Against the reference agent in this process, its store seeded with earlier turns (three pages of the feed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.requirements.outcomes import Unjudged
from nylorun_a2a_kit.fixtures.scenarios import Feed, FeedPosition
from nylorun_a2a_kit.fixtures.scenarios import feed as feed_module
from nylorun_a2a_kit.reference_agent.app import serve_in_thread
from nylorun_a2a_kit.reference_agent.config import AgentConfig, KeyGrant
from nylorun_a2a_kit.reference_agent.store import encode_cursor
from tests.history import History, seed

EARLIER = 1200  # turns: three pages of 500


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("feed-position") / "agent.sqlite3"
    seed(db, History(EARLIER, "support", ("a2a:conformance", "a2a:another")))
    agent = serve_in_thread(AgentConfig(db_path=str(db), keys={"kit-key": KeyGrant()}))
    yield agent.url.split("/v1/")[0]
    agent.stop()


class Counting(Feed):
    """A feed that counts the pages it was asked for."""

    asked = 0

    def get(self, **kwargs):
        Counting.asked += 1
        return super().get(**kwargs)


@pytest.fixture
def feed(runtime: str) -> Iterator[Counting]:
    client = A2AClient(f"{runtime}/v1/a2a/agents/support", key="kit-key", subject="a2a:conformance")
    Counting.asked = 0
    yield Counting(runtime, client)
    client.close()


def test_the_start_is_walked_to_once_and_each_check_walks_on_from_the_newest_end(runtime, feed, tmp_path):
    position = FeedPosition(runtime, tmp_path, None)
    end = position.tail(feed)
    assert Counting.asked == 4  # three pages from the beginning, then the empty page after them
    assert position.tail(feed) == end and Counting.asked == 5  # walked on from the end: one page


def test_another_process_reads_the_start_the_first_found(runtime, feed, tmp_path):
    FeedPosition(runtime, tmp_path, None).tail(feed)
    Counting.asked = 0
    FeedPosition(runtime, tmp_path, None).tail(feed)
    assert Counting.asked == 1, "the second reads the start from the run's folder and walks one page on"


def test_a_start_found_on_a_thread_is_the_one_the_checks_use(runtime, feed, tmp_path):
    position = FeedPosition(runtime, tmp_path, None)
    position.begin(feed)
    other = FeedPosition(runtime, tmp_path, None)
    end = other.tail(feed)  # waits on the run's lock for the thread, then reads what it wrote
    assert position.tail(feed) == end
    position.stop()


def test_a_feed_longer_than_the_bound_is_not_checked_and_says_what_to_give(runtime, feed, tmp_path, monkeypatch):
    monkeypatch.setattr(feed_module, "START_PAGES", 2)
    with pytest.raises(Unjudged) as refused:
        FeedPosition(runtime, tmp_path, None).tail(feed)
    assert "--a2a-feed-cursor-file" in refused.value.needs and refused.value.outcome == "not-checked"
    with pytest.raises(Unjudged):  # said once for the run: the next process is told without walking
        FeedPosition(runtime, tmp_path, None).tail(feed)


def test_a_saved_cursor_starts_the_next_run_there_and_each_runtime_keeps_its_own(runtime, feed, tmp_path, monkeypatch):
    cursor_file = tmp_path / "feed-cursor.json"
    cursor_file.write_text(json.dumps({"cursors": {"http://elsewhere": "x", runtime: encode_cursor({"p": 1000})}}))
    monkeypatch.setattr(feed_module, "START_PAGES", 1)  # from the beginning this would be too long
    position = FeedPosition(runtime, tmp_path / "run", cursor_file)
    (tmp_path / "run").mkdir()
    end = position.tail(feed)
    position.save()
    saved = json.loads(cursor_file.read_text())["cursors"]
    assert saved == {"http://elsewhere": "x", runtime: end}


def test_a_saved_cursor_the_feed_refuses_is_not_checked_naming_the_file(runtime, feed, tmp_path):
    cursor_file = tmp_path / "feed-cursor.json"
    cursor_file.write_text(json.dumps({"cursors": {runtime: encode_cursor({"p": 10**9})}}))  # past this feed's end
    with pytest.raises(Unjudged) as refused:
        FeedPosition(runtime, None, cursor_file).tail(feed)
    assert str(cursor_file) in refused.value.reason


def test_a_cursor_file_that_holds_no_cursors_ends_the_run_in_one_line(runtime, feed, tmp_path):
    cursor_file = tmp_path / "feed-cursor.json"
    cursor_file.write_text("not json")
    with pytest.raises(pytest.exit.Exception) as ended:
        FeedPosition(runtime, None, cursor_file).tail(feed)
    assert ended.value.returncode == 4 and str(cursor_file) in str(ended.value) and "\n" not in str(ended.value)
