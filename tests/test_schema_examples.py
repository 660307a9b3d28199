"""The kit's JSON Schemas are right about examples: every good one validates, every bad one is rejected, by the
JSON Schema keyword it names.

The examples are data, under ``tests/schema_examples/``:

* ``*.json``: examples from the A2A 1.0 specification, one per file, each naming its section and any adaptation:
  ``{"schema": ..., "valid": true|false, "rule": <keyword, when not valid>, "instance": ...}``.
* ``cases/<schema target>.json``: realistic examples written for the kit, one file per schema target
  (``cases/a2a/Task.json`` holds those of ``a2a/Task.json``, ``cases/methods/GetTask.params.json`` those of
  ``methods/GetTask.json#/$defs/params``)::

      {"schema": "a2a/Task.json",
       "good": {"<name>": <instance>, ...},
       "bad": {"<name>": {"rejected_by": "<keyword>", "instance": <instance>,
                          "set": {"<JSON pointer>": <value>, ...}, "remove": ["<JSON pointer>", ...]}, ...}}

  Any object in an instance may be ``{"$use": "<name>", <member>: <value>, ...}``: the named instance, with the
  members given added or replaced. A name is one of ``cases/_shared.json``, or ``spec:<file stem>`` for a
  specification example, optionally followed by a JSON pointer (``spec:agent-card-spec-8.5#/provider``).
  A bad case's ``set`` (then ``remove``) edits its instance at JSON pointers (RFC 6901), so that it reads as
  "that good instance, with this broken".

Test ids are ``<schema target>::good::<name>`` and ``<schema target>::bad::<name>``; specification examples are
named ``spec:<file stem>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nylorun_a2a_kit import schemas
from tests.test_schemas import METHODS

EXAMPLES_DIR = Path(__file__).resolve().parent / "schema_examples"
CASES_DIR = EXAMPLES_DIR / "cases"
SHARED_FILE = CASES_DIR / "_shared.json"

# --------------------------------------------------------------------------------------------- loading


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"duplicate members {duplicates}")
    return dict(pairs)


def _read(path: Path) -> Any:
    """Parse a JSON file, refusing duplicate member names (json.loads would silently keep the last one)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_members)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error


SPEC = {path.stem: _read(path) for path in sorted(EXAMPLES_DIR.glob("*.json"))}
SHARED = {name: value for name, value in _read(SHARED_FILE).items() if name != "$comment"}


def _tokens(pointer: str) -> list[str]:
    if pointer and not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]]


def _step(node: Any, token: str) -> Any:
    return node[int(token)] if isinstance(node, list) else node[token]


def _named(reference: str) -> Any:
    """A fresh copy of ``name`` or ``name#/json/pointer`` (names: ``cases/_shared.json`` and ``spec:<stem>``)."""
    name, _, pointer = reference.partition("#")
    if name.startswith("spec:") and name.removeprefix("spec:") in SPEC:
        node = _resolve(SPEC[name.removeprefix("spec:")]["instance"])
    elif name in SHARED:
        node = _resolve(SHARED[name])
    else:
        raise KeyError(f'{{"$use": {reference!r}}}: no such instance in {SHARED_FILE.name} or the spec examples')
    for token in _tokens(pointer):
        node = _step(node, token)
    return node


def _resolve(node: Any) -> Any:
    """A fresh copy of ``node`` with every ``{"$use": name, ...overrides}`` replaced by what it names."""
    if isinstance(node, list):
        return [_resolve(value) for value in node]
    if not isinstance(node, dict):
        return node
    members = {key: _resolve(value) for key, value in node.items() if key != "$use"}
    if "$use" not in node:
        return members
    used = _named(node["$use"])
    if not members:
        return used
    if not isinstance(used, dict):
        raise ValueError(f"{node['$use']!r} is not an object: members cannot be added to it")
    return {**used, **members}


def _parent(instance: Any, pointer: str) -> tuple[Any, Any]:
    """The container holding what ``pointer`` points at, and the key or index there."""
    *parents, last = _tokens(pointer)
    node = instance
    for token in parents:
        node = _step(node, token)
    return node, int(last) if isinstance(node, list) else last


def _edited(case: dict[str, Any]) -> Any:
    """A bad case's instance: ``instance`` resolved, then each ``set`` applied, then each ``remove``."""
    instance = _resolve(case["instance"])
    for pointer, value in case.get("set", {}).items():
        node, key = _parent(instance, pointer)
        node[key] = _resolve(value)
    for pointer in case.get("remove", []):
        node, key = _parent(instance, pointer)
        del node[key]  # a KeyError: there is nothing at that pointer to remove
    return instance


FILE_KEYS = {"$comment", "schema", "good", "bad"}
BAD_CASE_KEYS = {"$comment", "rejected_by", "instance", "set", "remove"}


@dataclass(frozen=True)
class Case:
    id: str
    schema: str
    instance: Any
    rule: str | None = None  # the JSON Schema keyword that must reject a bad example


def case_file(schema: str) -> Path:
    """The file of a target's cases: ``methods/GetTask.json#/$defs/params`` -> ``cases/methods/GetTask.params.json``."""
    document, _, definition = schema.partition("#/$defs/")
    return CASES_DIR / (f"{document.removesuffix('.json')}.{definition}.json" if definition else document)


def load_cases() -> tuple[list[Case], list[Case]]:
    good: list[Case] = []
    bad: list[Case] = []
    for path in sorted(CASES_DIR.rglob("*.json")):
        if path == SHARED_FILE:
            continue
        data = _read(path)
        schema = data.get("schema")
        if not isinstance(schema, str) or path != case_file(schema) or not set(data) <= FILE_KEYS:
            raise ValueError(f"{path}: expected members {sorted(FILE_KEYS)}, in the file named after its schema")
        for name, instance in data.get("good", {}).items():
            good.append(Case(f"{schema}::good::{name}", schema, _resolve(instance)))
        for name, case in data.get("bad", {}).items():
            if not {"rejected_by", "instance"} <= set(case) <= BAD_CASE_KEYS:
                raise ValueError(
                    f"{path}: bad case {name!r} has members {sorted(case)}; allowed {sorted(BAD_CASE_KEYS)}"
                )
            bad.append(Case(f"{schema}::bad::{name}", schema, _edited(case), case["rejected_by"]))
    for name, example in SPEC.items():
        kind, rule = ("good", None) if example["valid"] else ("bad", example["rule"])
        case = Case(f"{example['schema']}::{kind}::spec:{name}", example["schema"], example["instance"], rule)
        (good if example["valid"] else bad).append(case)
    return good, bad


GOOD, BAD = load_cases()

# --------------------------------------------------------------------------------------------- tests: examples


def _describe(found) -> str:
    return "\n".join(str(v) for v in found) or "(no violation)"


@pytest.mark.parametrize(("ref", "instance"), [pytest.param(c.schema, c.instance, id=c.id) for c in GOOD])
def test_good_example_validates(ref, instance):
    found = schemas.violations(instance, ref)
    assert found == [], _describe(found)
    assert schemas.validator(ref).is_valid(instance), "jsonschema refuses it"
    assert schemas.conforms_quickly(instance, ref), "jsonschema-rs refuses what jsonschema takes"


@pytest.mark.parametrize(
    ("ref", "instance", "rule"), [pytest.param(c.schema, c.instance, c.rule, id=c.id) for c in BAD]
)
def test_bad_example_is_rejected_for_its_reason(ref, instance, rule):
    assert not schemas.is_valid(instance, ref)
    assert not schemas.conforms_quickly(instance, ref), "jsonschema-rs takes what jsonschema refuses"
    found = schemas.violations(instance, ref)
    assert found, "is_valid said no, violations() found nothing"
    assert rule in {v.rule for v in found}, f"expected a {rule!r} violation, got:\n{_describe(found)}"


@pytest.mark.parametrize(
    ("ref", "value", "why"),
    [
        ("a2a/Timestamp.json", "0000-01-01T00:00:00Z", "year 0000: jsonschema-rs's own date-time takes it"),
        ("a2a/Timestamp.json", "2023-12-31T23:59:60Z", "a leap second: jsonschema-rs's own date-time takes it"),
        ("a2a/Timestamp.json", "2024-02-30T00:00:00Z", "no such day"),
        ("a2a/Timestamp.json", "2024-02-29T00:00:00Z", "a day of a leap year"),
        ("feed/Turn.json#/$defs/time", "2023-12-31T23:59:60+01:00", "a leap second"),
    ],
)
def test_the_quick_check_reads_formats_as_jsonschema_does(ref, value, why):
    assert schemas.conforms_quickly(value, ref) == schemas.validator(ref).is_valid(value), why


@pytest.mark.parametrize(
    "value",
    [{"text": "\ud800"}, {"text": "x", "metadata": {"n": 2**70}}, {"text": "x", "metadata": {"n": -(2**70)}}],
    ids=["lone-surrogate", "big", "big-negative"],
)
def test_a_value_the_quick_check_may_not_take_is_judged_as_jsonschema_judges_it(value):
    assert schemas.violations(value, "a2a/Part.json") == []
    assert schemas.is_valid(value, "a2a/Part.json")
    assert schemas.violations({**value, "text": 1}, "a2a/Part.json")


def test_example_ids_are_unique():
    ids = [case.id for case in GOOD + BAD]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_shared_instance_is_used():
    text = "\n".join(path.read_text(encoding="utf-8") for path in CASES_DIR.rglob("*.json"))
    used = set(re.findall(r'"\$use":\s*"([^"#]+)', text))
    assert set(SHARED) - used == set(), f"unused in {SHARED_FILE.name}"


def test_format_checker_is_on():
    # The date is well-formed for the pattern; only the format checker can reject it.
    assert re.fullmatch(schemas.resolve("a2a/Timestamp.json")["pattern"], "2025-13-40T00:00:00Z")
    assert not schemas.is_valid("2025-13-40T00:00:00Z", "a2a/Timestamp.json")


# --------------------------------------------------------------------------------------------- tests: coverage


def _targets(cases: list[Case]) -> set[str]:
    return {case.schema for case in cases}


DOCUMENT_PATHS = sorted(uri.removeprefix(schemas.BASE) for uri in schemas.documents())


@pytest.mark.parametrize("path", [p for p in DOCUMENT_PATHS if not p.startswith(("methods/", "extensions/"))])
def test_every_a2a_and_jsonrpc_document_has_good_examples(path):
    assert path in _targets(GOOD)


EXTENSION_TARGETS = sorted(
    {ext.document + fragment for ext in schemas.extensions().values() for fragment in ext.on.values()}
)


@pytest.mark.parametrize("target", EXTENSION_TARGETS)
def test_every_extension_shape_has_good_and_bad_examples(target):
    assert target in _targets(GOOD) and target in _targets(BAD)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_has_good_and_bad_examples(method):
    good = _targets(GOOD)
    for part in ("params", "result", "request", "response"):
        assert f"methods/{method}.json#/$defs/{part}" in good
    assert any(ref.startswith(f"methods/{method}.json") for ref in _targets(BAD))
