"""The specification index: every rule of A2A 1.0 in scope is traced, and only those.

The rules are read out of the specification and a2a.proto (``fixtures/requirements/spec_sources.py``): the
RFC 2119 sentences and the lower-case rules of each in-scope section, each operation's Errors list, §5.4's
error code table, and a2a.proto's rule-stating comments and REQUIRED fields. The specification lives beside
the repository (``../shared/reference/a2a-1.0/``), not in the installed package: without it the checks that
read it report "not checked", and on CI they fail. The proto is also kept in ``tests/reference/``, which
must be the same file.
"""

from __future__ import annotations

import os
import tomllib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.requirements import catalog as requirements
from nylorun_a2a_kit.fixtures.requirements import spec_trace
from tests.suite_runs import REPO

SHARED = REPO.parent / "shared" / "reference" / "a2a-1.0"
SPECIFICATION = SHARED / "specification.md"
PROTO = Path(__file__).resolve().parent / "reference" / "a2a.proto"
UPPER = {"MUST", "SHOULD"}


def specification() -> str:
    return _shared(SPECIFICATION, "the A2A 1.0 specification")


def _shared(path: Path, what: str) -> str:
    if not path.is_file():
        where = f"../shared/reference/a2a-1.0/{path.name} beside the repository"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{what} is needed on CI: {where}", pytrace=False)
        pytest.skip(f"not checked: {what} is not here ({where})")
    return path.read_text(encoding="utf-8")


def proto() -> str:
    return PROTO.read_text(encoding="utf-8")


def in_scope(rules: Sequence, index: spec_trace.Index | None = None) -> list:
    index = index or spec_trace.load()
    return [r for r in rules if index.scoped(r.section)]


def untraced(rules: Sequence, entries: Sequence[spec_trace.Entry], describe) -> list[str]:
    """The rules (at each of their levels) that no entry names."""
    missing = []
    for rule in rules:
        levels = sorted(getattr(rule, "levels", None) or {None})
        for level in levels:
            if not any((level is None or e.level == level) and spec_trace.matches(e, rule) for e in entries):
                missing.append(describe(rule, level))
    return missing


def misplaced(rules: Sequence, entries: Sequence[spec_trace.Entry]) -> list[str]:
    """The entries that name no rule, or more than one, or a level their rule does not have; and rules named
    twice at one level."""
    wrong, seen = [], Counter()
    for entry in entries:
        matched = [r for r in rules if spec_trace.matches(entry, r)]
        if len(matched) != 1:
            wrong.append(f"{entry.where}: {len(matched)} rules")
            continue
        levels = getattr(matched[0], "levels", None)
        if levels is not None and entry.level not in levels:
            wrong.append(f"{entry.where}: its rule has no {entry.level}")
            continue
        seen[(matched[0], entry.level)] += 1
    wrong += [f"{rule} ({level}) is traced twice" for (rule, level), n in seen.items() if n > 1]
    return wrong


def assert_traced(found: Sequence, kind: str, describe, rules: str, one_rule: str) -> None:
    """Every rule ``found`` is traced by an index entry of ``kind``, and every such entry names ``one_rule``."""
    entries = spec_trace.load().of(kind)
    missing = untraced(found, entries, describe)
    assert not missing, f"{rules} with neither a requirement nor not_checked:\n" + "\n".join(missing)
    wrong = misplaced(found, entries)
    assert not wrong, f"{kind} entries that do not name {one_rule}:\n" + "\n".join(wrong)


def _sentence(rule, level) -> str:
    return f"§{rule.section} ({level}): {rule.text[:160]}"


def _listed_error(error, _level) -> str:
    return f"§{error.section} {error.error}: {error.condition[:120]}"


def _proto_rule(rule, level) -> str:
    return f"{rule.section} ({level}): {rule.text[:140]}"


def _required_field(field, _level) -> str:
    return f"{field.element}: {field.comment[:100]}"


# -- the index as data (no specification needed)


def test_index_entries_are_well_formed():
    index = spec_trace.load()
    known = requirements.load()
    assert {e.kind for e in index.entries} == set(spec_trace.KINDS), "an index kind has no entry"
    for entry in index.entries:
        where = entry.where
        assert entry.source in spec_trace.SOURCES, where
        assert entry.level in spec_trace.LEVELS[entry.kind], where
        if entry.kind not in ("required", "error_code"):
            assert len(spec_trace.normalise(entry.quote)) >= 12, f"{where}: a quote too short to find its rule by"
        assert bool(entry.requirement) != bool(entry.not_checked), f"{where}: a requirement or not_checked, not both"
        unknown = [r for r in entry.requirement if r not in known]
        assert not unknown, f"{where} names unknown requirements {unknown}"
        assert not [r for r in entry.requirement if known[r].checked_by], f"{where}: a rule on the kit checks no agent"
        for reason in (entry.not_checked, entry.other):
            if reason:
                assert reason.split(":", 1)[0] in spec_trace.REASONS, f"{where}: reason class {reason!r}"
                assert reason.split(":", 1)[1].strip(), f"{where}: say why"
        if entry.kind in ("sentence", "prose", "error"):
            assert index.scoped(entry.section, entry.source), f"{where}: the section is not in scope"


def test_the_error_table_entries_agree_with_the_kits_error_codes():
    for entry in spec_trace.load().of("error_code"):
        assert entry.cells[0] == str(schemas.error_code(entry.section)), entry.where
        assert entry.other and entry.other.startswith("other binding:"), f"{entry.where}: gRPC, HTTP are not JSON-RPC"


def test_index_reasons_are_all_used():
    raw = tomllib.loads(spec_trace.PATH.read_text(encoding="utf-8"))
    entries = [e for kind in spec_trace.KINDS for e in raw["trace"].get(kind, [])]
    used = {e.get(key) for e in entries for key in ("not_checked", "other")}
    assert not sorted(set(raw["reasons"]) - used), "reasons no rule uses"
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
    """A requirement of page kind spec stands on the rules that name it: at its level, the RFC 2119 sentences
    (or, when none names it, the rules stated otherwise: in lower case, in a list, a table or an annotation)."""
    index = spec_trace.load()
    for requirement in requirements.load().values():
        if requirement.page != "spec":
            continue
        naming = [e for e in index.entries if requirement.id in e.requirement]
        assert naming, f"{requirement.id} is a spec requirement that no rule of the index names"
        upper = {e.level for e in naming if e.kind in ("sentence", "proto") and e.level in UPPER}
        levels = upper or {e.level.upper() for e in naming}
        assert levels == {requirement.level}, f"{requirement.id} is {requirement.level}, its rules {levels}"


def test_requirements_cite_the_sections_traced_to_them():
    """A requirement cites where each rule traced to it stands: its section; for a proto rule a2a.proto, or a
    section that renders the element's message (when the specification is here); for a REQUIRED field also
    §5.7, which says what the annotation asks."""
    index = spec_trace.load()
    known = requirements.load()
    tables = spec_trace.proto_tables(SPECIFICATION.read_text(encoding="utf-8")) if SPECIFICATION.is_file() else {}

    def cited(spec: str | None, entry: spec_trace.Entry) -> bool:
        if entry.kind in ("proto", "required"):
            rendered = tables.get(entry.section.split(".", 1)[0], set()) | (
                {"5.7"} if entry.kind == "required" else set()
            )
            return "a2a.proto" in (spec or "") or any(spec_trace.cites(spec, "a2a", s) for s in rendered)
        section = "5.4" if entry.kind == "error_code" else entry.section
        return spec_trace.cites(spec, entry.source, section)

    uncited = sorted(
        {f"{rid} ({e.where[:80]})" for e in index.entries for rid in e.requirement if not cited(known[rid].spec, e)}
    )
    assert not uncited, f"requirements whose spec does not cite where a rule traced to them stands: {uncited}"


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
    prose = [(s.section, s.text, sorted(s.levels)) for s in spec_trace.prose_sentences(markdown)]
    assert prose == [("3.1", "Fields marked REQUIRED are checked; a lower-case must is prose.", ["must"])]


def test_errors_lists_and_the_error_table_are_read_as_written():
    markdown = "\n".join(
        [
            "#### 3.1.9. An operation",
            "**Errors:**",
            "",
            "- [`TaskNotFoundError`](#332-error-handling): The task cannot be found.",
            "- [`UnsupportedOperationError`](#x): Streaming is not supported.",
            "",
            "**Behavior:**",
            "",
            "The operation cannot fail otherwise.",
            "#### 9.4.6. `Method`",
            "**Error:** Returns `UnsupportedOperationError` if the task ended.",
            "### 5.4. Error Code Mappings",
            "| A2A Error Type | JSON-RPC Code | gRPC Status | HTTP Status |",
            "| :--- | :--- | :--- | :--- |",
            "| `TaskNotFoundError` | `-32001` | `NOT_FOUND` | `404 Not Found` |",
        ]
    )
    errors = [(e.section, e.error, e.condition) for e in spec_trace.listed_errors(markdown)]
    assert errors == [
        ("3.1.9", "TaskNotFoundError", "The task cannot be found."),
        ("3.1.9", "UnsupportedOperationError", "Streaming is not supported."),
        ("9.4.6", "UnsupportedOperationError", "if the task ended."),
    ]
    # An Errors list's items are its errors, not prose rules; the Behavior block after it is prose again.
    assert [s.text for s in spec_trace.prose_sentences(markdown)] == ["The operation cannot fail otherwise."]
    assert spec_trace.error_rows(markdown) == [
        spec_trace.ErrorRow("TaskNotFoundError", "-32001", "NOT_FOUND", "404 Not Found")
    ]


def test_proto_rules_are_read_as_written():
    text = "\n".join(
        [
            "service S {",
            "  // Does a thing.",
            "  // Returns `UnsupportedOperationError` if it cannot.",
            "  rpc Do(R) returns (R) {",
            '    option (google.api.http) = { post: "/x" };',
            "  }",
            "}",
            "// (-- api-linter: core::0133=disabled",
            "//     aip.dev/not-precedent: kept --)",
            "// A message. Its id must be unique.",
            "message M {",
            "  // protolint:disable REPEATED_FIELD_NAMES_PLURALIZED",
            "  // The id. Servers SHOULD set it.",
            "  string id = 1 [(google.api.field_behavior) = REQUIRED];",
            "  // At most 50 will be returned.",
            "  optional int32 size = 2;",
            "  repeated string tags = 3;",
            "}",
        ]
    )
    rules = [(r.section, r.text, sorted(r.levels)) for r in spec_trace.proto_rules(text)]
    assert rules == [
        ("S.Do", "Returns UnsupportedOperationError if it cannot.", ["must"]),
        ("M", "Its id must be unique.", ["must"]),
        ("M.id", "Servers SHOULD set it.", ["SHOULD"]),
        ("M.size", "At most 50 will be returned.", ["must"]),
    ]
    assert spec_trace.proto_required(text) == [spec_trace.RequiredField("M.id", "The id. Servers SHOULD set it.")]


# -- the index against the specification


def test_every_in_scope_sentence_of_the_specification_is_traced():
    found = in_scope(spec_trace.sentences(specification()))
    assert len(found) > 200, f"only {len(found)} RFC 2119 sentences found: the extraction is broken"
    missing = untraced(found, spec_trace.load().of("sentence"), _sentence)
    assert not missing, "specification sentences with neither a requirement nor not_checked:\n" + "\n".join(missing)


def test_every_entry_finds_exactly_one_sentence():
    wrong = misplaced(in_scope(spec_trace.sentences(specification())), spec_trace.load().of("sentence"))
    assert not wrong, "index entries that do not name one sentence of their section:\n" + "\n".join(wrong)


def test_every_in_scope_rule_stated_in_lower_case_is_traced():
    found = in_scope(spec_trace.prose_sentences(specification()))
    assert len(found) > 5, f"only {len(found)} lower-case rules found: the extraction is broken"
    assert_traced(found, "prose", _sentence, "lower-case rules", "one rule of their section")


def test_every_listed_error_of_every_operation_is_traced():
    found = in_scope(spec_trace.listed_errors(specification()))
    operations = {e.section for e in found if e.section.startswith("3.1.")}
    assert len(operations) >= 10, f"Errors lists of only {sorted(operations)} found: the extraction is broken"
    assert_traced(found, "error", _listed_error, "listed errors", "one listed error")


def test_every_row_of_the_error_code_table_is_traced():
    rows = spec_trace.error_rows(specification())
    assert len(rows) >= 9, f"only {len(rows)} rows of §5.4's table found: the extraction is broken"
    entries = spec_trace.load().of("error_code")
    by_error = {e.section: e for e in entries}
    missing = [row.error for row in rows if row.error not in by_error]
    assert not missing, f"§5.4 rows with no entry: {missing}"
    differ = [
        f"{row.error}: the table says {(row.jsonrpc, row.grpc, row.http)}, the index {by_error[row.error].cells}"
        for row in rows
        if (row.jsonrpc, row.grpc, row.http) != by_error[row.error].cells
    ]
    assert not differ, "\n".join(differ)
    assert len(entries) == len(rows), "an error_code entry names no row of §5.4"


def test_the_proto_kept_here_is_the_shared_one():
    assert proto() == _shared(SHARED / "a2a.proto", "a2a.proto"), "tests/reference/a2a.proto is not the shared file"


def test_every_rule_of_a2a_proto_is_traced():
    found = spec_trace.proto_rules(proto())
    assert len(found) > 30, f"only {len(found)} proto rules found: the extraction is broken"
    assert_traced(found, "proto", _proto_rule, "a2a.proto rules", "one rule of their element")


def test_every_required_field_of_a2a_proto_is_traced():
    found = spec_trace.proto_required(proto())
    assert len(found) > 50, f"only {len(found)} REQUIRED fields found: the extraction is broken"
    assert_traced(found, "required", _required_field, "REQUIRED fields", "one REQUIRED field")


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
    sections = {s.section for s in (*spec_trace.sentences(markdown), *spec_trace.prose_sentences(markdown))}
    sections |= {e.section for e in spec_trace.listed_errors(markdown)}
    index = spec_trace.load()
    placed = [e for e in index.entries if e.source == "a2a" and e.kind in ("sentence", "prose", "error")]
    stale = sorted({e.section for e in placed} - sections)
    assert not stale, f"index sections with no rule in the specification: {stale}"
