"""The specification index: every MUST and SHOULD sentence of an in-scope section is traced, and only those.

The specification lives beside the repository (``../shared/reference/a2a-1.0/specification.md``), not in the
installed package: without it the checks that read it report "not checked", and on CI they fail.
"""

from __future__ import annotations

import os
import tomllib
from collections import Counter

import pytest

from nylorun_a2a_kit.fixtures.requirements import catalog as requirements
from nylorun_a2a_kit.fixtures.requirements import spec_trace
from tests.suite_runs import REPO

SPECIFICATION = REPO.parent / "shared" / "reference" / "a2a-1.0" / "specification.md"
LEVELS = {"MUST", "SHOULD"}


def specification() -> str:
    if not SPECIFICATION.is_file():
        where = "../shared/reference/a2a-1.0/specification.md beside the repository"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the A2A 1.0 specification is needed on CI: {where}", pytrace=False)
        pytest.skip(f"not checked: the A2A 1.0 specification is not here ({where})")
    return SPECIFICATION.read_text(encoding="utf-8")


def in_scope_sentences(markdown: str) -> list[spec_trace.Sentence]:
    index = spec_trace.load()
    return [s for s in spec_trace.sentences(markdown) if index.scoped(s.section)]


# -- the index as data (no specification needed)


def test_index_entries_are_well_formed():
    index = spec_trace.load()
    known = requirements.load()
    assert index.entries, "the index traces no sentence"
    for entry in index.entries:
        where = f"{entry.source} §{entry.section} {entry.quote!r}"
        assert entry.source in spec_trace.SOURCES, where
        assert entry.level in LEVELS, where
        assert len(spec_trace.normalise(entry.quote)) >= 12, f"{where}: a quote too short to find its sentence by"
        assert bool(entry.requirement) != bool(entry.not_checked), f"{where}: a requirement or not_checked, not both"
        unknown = [r for r in entry.requirement if r not in known]
        assert not unknown, f"{where} names unknown requirements {unknown}"
        assert not [r for r in entry.requirement if known[r].checked_by], f"{where}: a rule on the kit checks no agent"
        if entry.not_checked:
            assert entry.reason_class in spec_trace.REASONS, f"{where}: reason class {entry.reason_class!r}"
            assert entry.not_checked.split(":", 1)[1].strip(), f"{where}: say why"
        assert index.scoped(entry.section, entry.source), f"{where}: the section is not in scope"


def test_index_reasons_are_all_used():
    raw = tomllib.loads(spec_trace.PATH.read_text(encoding="utf-8"))
    used = {e.get("not_checked") for e in raw["trace"]["sentence"]}
    assert not sorted(set(raw["reasons"]) - used), "reasons no sentence uses"
    for name, reason in raw["reasons"].items():
        assert reason.split(":", 1)[0] in spec_trace.REASONS, name


def test_scope_is_decided_once_per_section():
    index = spec_trace.load()
    decided = Counter((s.source, s.section) for s in (*index.in_scope, *index.out_of_scope))
    assert not [k for k, n in decided.items() if n > 1], "a section is both in and out of scope, or listed twice"
    assert all(s.note.strip() for s in (*index.in_scope, *index.out_of_scope)), "each scope decision says why"
    # JSON-RPC 2.0 has no copy here to read its sentences from: each in-scope section has its entries by hand.
    jsonrpc = {s.section for s in index.in_scope if s.source == "jsonrpc"}
    traced = {e.section.split(".", 1)[0] for e in index.entries if e.source == "jsonrpc"}
    assert jsonrpc and jsonrpc <= traced, f"JSON-RPC 2.0 sections in scope with no sentence: {sorted(jsonrpc - traced)}"


def test_spec_requirements_are_traced_at_their_level():
    """A requirement of page kind spec stands on the sentences that name it: the same level, a cited section."""
    index = spec_trace.load()
    for requirement in requirements.load().values():
        if requirement.page != "spec":
            continue
        naming = [e for e in index.entries if requirement.id in e.requirement]
        assert naming, f"{requirement.id} is a spec requirement that no sentence of the index names"
        levels = {e.level for e in naming}
        assert levels == {requirement.level}, f"{requirement.id} is {requirement.level}, its sentences {levels}"


def test_requirements_cite_the_sections_traced_to_them():
    index = spec_trace.load()
    known = requirements.load()
    uncited = sorted(
        {
            f"{rid} (§{e.section}{' of JSON-RPC 2.0' if e.source == 'jsonrpc' else ''})"
            for e in index.entries
            for rid in e.requirement
            if not spec_trace.cites(known[rid].spec, e.source, e.section)
        }
    )
    assert not uncited, f"requirements whose spec does not cite the section of a sentence traced to them: {uncited}"


def test_sentences_are_read_as_the_specification_writes_them():
    markdown = "\n".join(
        [
            "## 3. Operations",
            "### 3.1. One",
            "Agents **MUST** answer. A second sentence that is prose. The client *SHOULD* retry, e.g. `1.0` later.",
            "",
            "- Servers **MUST NOT** leak",
            "  anything to others",
            "- Fields marked `REQUIRED` are checked; a lower-case must is prose.",
            "| a | b |",
            "|---|---|",
            "| x | Agents SHOULD be kind |",
            "```json",
            '{"note": "code MUST be skipped"}',
            "```",
            "#### Request: an example heading",
            "The [agent](#x) MUST act and SHOULD tell.",
            "## Appendix A. More",
            "It MUST end.",
        ]
    )
    found = [(s.section, s.text, sorted(s.levels)) for s in spec_trace.sentences(markdown)]
    assert found == [
        ("3.1", "Agents MUST answer.", ["MUST"]),
        ("3.1", "The client SHOULD retry, e.g. 1.0 later.", ["SHOULD"]),
        ("3.1", "Servers MUST NOT leak anything to others", ["MUST"]),
        ("3.1", "| x | Agents SHOULD be kind |", ["SHOULD"]),
        ("3.1", "The agent MUST act and SHOULD tell.", ["MUST", "SHOULD"]),
        ("A", "It MUST end.", ["MUST"]),
    ]
    assert spec_trace.top_sections(markdown) == ["3", "A"]


# -- the index against the specification


def test_every_in_scope_sentence_of_the_specification_is_traced():
    index = spec_trace.load()
    found = in_scope_sentences(specification())
    assert len(found) > 200, f"only {len(found)} RFC 2119 sentences found: the extraction is broken"
    entries = [e for e in index.entries if e.source == "a2a"]
    untraced = [
        f"§{s.section} ({level}): {s.text[:160]}"
        for s in found
        for level in sorted(s.levels)
        if not any(e.level == level and spec_trace.matches(e, s) for e in entries)
    ]
    assert not untraced, "specification sentences with neither a requirement nor not_checked:\n" + "\n".join(untraced)


def test_every_entry_finds_exactly_one_sentence():
    found = in_scope_sentences(specification())
    index = spec_trace.load()
    wrong, seen = [], Counter()
    for entry in (e for e in index.entries if e.source == "a2a"):
        matched = [s for s in found if spec_trace.matches(entry, s)]
        if len(matched) != 1:
            wrong.append(f"§{entry.section} {entry.quote!r}: {len(matched)} sentences")
        elif entry.level not in matched[0].levels:
            wrong.append(f"§{entry.section} {entry.quote!r}: the sentence has no {entry.level}")
        else:
            seen[(matched[0], entry.level)] += 1
    assert not wrong, "index entries that do not name one sentence of their section:\n" + "\n".join(wrong)
    twice = [f"§{s.section} ({level}): {s.text[:120]}" for (s, level), n in seen.items() if n > 1]
    assert not twice, "sentences traced twice at one level:\n" + "\n".join(twice)


def test_every_section_of_the_specification_has_a_scope_decision():
    index = spec_trace.load()
    tops = spec_trace.top_sections(specification())
    decided = {s.section for s in (*index.in_scope, *index.out_of_scope) if s.source == "a2a"}
    assert set(tops) == decided, f"undecided: {sorted(set(tops) - decided)}; not in the specification: " + str(
        sorted(decided - set(tops))
    )


def test_index_sections_exist_in_the_specification():
    """The index's sections exist in the specification (a renumbered section would leave entries behind)."""
    markdown = specification()
    sections = {s.section for s in spec_trace.sentences(markdown)}
    index = spec_trace.load()
    stale = sorted({e.section for e in index.entries if e.source == "a2a"} - sections)
    assert not stale, f"index sections with no RFC 2119 sentence in the specification: {stale}"
