"""The source mutants: what they change, how they are named, and a small fixed sample's verdicts, judged as the
mutation score judges them (the checks that reach the function, -x, strict SHOULDs)."""

from __future__ import annotations

import re

import pytest

from nylorun_a2a_kit.fixtures import mutation
from nylorun_a2a_kit.fixtures.requirements import load as load_requirements
from nylorun_a2a_kit.reference_agent.mutants import check_mutants, source, sql
from tests.suite_runs import REPO, made_once, shared_dir, this_tests_cost

NAME = re.compile(r"^source/[a-z_]+\.[A-Za-z_.0-9]+/[a-z-]+-\d+$")
SQL_OPERATORS = {
    "sql-where-dropped",
    "sql-write-keyed-by-less",
    "sql-equality-prefix",
    "sql-equality-nocase",
    "sql-bound-moved",
    "sql-limit-moved",
    "sql-order-reversed",
}
# A fixed sample and its verdicts: each of the kinds of bug the kit once let pass, now killed by a check of
# its rule's whole class; and a survivor the rules allow.
SAMPLE = {
    "source/push.PushConfigs.delete/sql-write-keyed-by-less-1": "killed",  # a delete of one config deletes all
    "source/push.holder/number-2": "killed",  # a queued messageId's configs held by whoever queues that id
    "source/queue.MessageQueue.find/sql-where-dropped-2": "killed",  # a queued messageId found for another subject
    "source/store.Store.task_for_message/sql-where-dropped-2": "killed",  # a messageId of another subject
    "source/store.Store._where/sql-equality-prefix-1": "killed",  # a contextId filter that is another's beginning
    # one more row read per subject, cut away before the feed's page is made: no rule sees it
    "source/store.Store.changed_after/sql-limit-moved-3": "survived",
}


def test_every_source_mutant_is_named_by_its_place_and_operator():
    made = source.catalog()
    assert len(made) > 3000
    wrong = [name for name in made if not NAME.match(name)]
    assert not wrong, wrong[:5]
    operators = {name.rsplit("/", 1)[1].rsplit("-", 1)[0] for name in made}
    assert operators >= SQL_OPERATORS
    assert {source.module_of(name) for name in made} <= set(source.SERVED)
    check_mutants(list(SAMPLE))
    with pytest.raises(ValueError, match="unknown mutant"):
        check_mutants(["source/store.Store.page/sql-where-dropped-99"])


@pytest.mark.parametrize(
    "query, operator, changed",
    [
        ("SELECT * FROM t WHERE a=? AND b=?", "sql-where-dropped", "SELECT * FROM t WHERE a=? AND (b=? OR 1)"),
        (
            "UPDATE t SET s='x' WHERE a=? AND b=?",
            "sql-write-keyed-by-less",
            "UPDATE t SET s='x' WHERE (a=? OR 1) AND b=?",
        ),
        ("SELECT * FROM t WHERE a=?", "sql-equality-prefix", "SELECT * FROM t WHERE instr(a, ?)=1"),
        ("SELECT * FROM t WHERE a=?", "sql-equality-nocase", "SELECT * FROM t WHERE a=? COLLATE NOCASE"),
        (" AND seq<?", "sql-bound-moved", " AND seq<=?"),
        ("SELECT * FROM t ORDER BY seq LIMIT ?", "sql-limit-moved", "SELECT * FROM t ORDER BY seq LIMIT ? + 1"),
        ("SELECT * FROM t ORDER BY a DESC, b", "sql-order-reversed", "SELECT * FROM t ORDER BY a, b DESC"),
    ],
)
def test_each_sql_operator_changes_one_place_and_keeps_the_parameters(query: str, operator: str, changed: str):
    made = [text for name, text in sql._changed(query) if name == operator]
    assert changed in made
    assert all(text.count("?") == query.count("?") for _, text in sql._changed(query))


def test_an_insert_and_a_set_clause_are_left_alone():
    assert not list(sql._changed("INSERT INTO t VALUES (?,?) ON CONFLICT DO UPDATE SET n=excluded.n"))
    assert [name for name, _ in sql._changed("UPDATE t SET a=? WHERE b=?")].count("sql-write-keyed-by-less") == 1


def test_a_source_mutant_takes_its_functions_place_until_undone():
    name = "source/push.PushConfigs.delete/sql-write-keyed-by-less-1"
    function = source._live_function(source.place(name))
    before = function.__code__
    patched = source.patched([name])
    assert any("OR 1" in c for c in function.__code__.co_consts if isinstance(c, str))
    patched.undo()
    assert function.__code__ is before


@pytest.mark.slow
def test_a_fixed_sample_keeps_its_verdicts(tmp_path_factory):
    shared = shared_dir(tmp_path_factory, "source-mutants")
    cache_dir = made_once(shared, "cache", lambda folder: None)
    digest = mutation.code_digest(REPO)
    # The checks of the areas the sample's functions serve: the engine's plumbing (reach, setups, cache) is what this
    # proves; the score over every check is the benchmark's.
    areas = ("isolation", "push", "queued-messages", "change-feed", "send-message", "list-tasks")
    read = [r.id for r in load_requirements().values() if r.area in areas]
    reach = mutation.reach(REPO, cache_dir, digest, read, priority=this_tests_cost())
    store = mutation.Cache(cache_dir / "verdicts.sqlite3")
    made = source.catalog()
    verdicts = {
        name: mutation.judge_source(
            made[name], reach, REPO, tmp_path_factory.mktemp("runs"), store, digest, this_tests_cost()
        )
        for name in SAMPLE
    }
    got = {name: "killed" if v.killed else v.outcome for name, v in verdicts.items()}
    assert got == SAMPLE, {name: (v.outcome, v.by[:1]) for name, v in verdicts.items()}


def test_every_class_says_where_and_how_a_reviewer_sees_it_and_holds_for_the_code_it_was_written_of():
    """survivors.toml: each class names the setup it shows (or was judged) in and the requests that show it (or why
    none can), and its digest is its mutant's code now: an edited function re-opens what was written of it."""
    from nylorun_a2a_kit.reference_agent import setups

    stale = source.stale_survivors()
    assert not stale, f"read these again (their code changed or is gone): {stale}"
    for name, known in source._survivors().items():
        assert known["class"] in ("equivalent", "unobservable"), name
        assert known.get("shows") and known.get("reason"), f"{name}: no shows or no reason"
        unknown = [one for one in known.get("setup", "").split("+") if one not in setups.SETUPS]
        assert known.get("setup") and not unknown, f"{name}: setup {known.get('setup')!r} names no setup"
        assert known["class"] != "equivalent" or known.get("read"), f"{name}: an equivalent one names the rules read"


def test_an_edited_function_reopens_its_classes(monkeypatch):
    name = next(iter(source._survivors()))
    place = source.place(name)
    assert source.catalog()[name].equivalent or source.catalog()[name].unobservable
    monkeypatch.setitem(source._survivors(), name, {**source._survivors()[name], "digest": "0" * 16})
    source._of_module.cache_clear()
    try:
        reopened = {m.name: m for m in source._of_module(place.module)}[name]
        assert not (reopened.equivalent or reopened.unobservable)
        assert name in source.stale_survivors()
    finally:
        source._of_module.cache_clear()
