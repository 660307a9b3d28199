"""schemas/strategies.py: valid values validate, every mutant is invalid near its mutation, every kind it
announces is really produced, and no generated URL leaves loopback."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import json_strings
from nylorun_a2a_kit.schemas import strategies

METHOD_REFS = [f"methods/{path.stem}.json#/$defs/params" for path in sorted((schemas.ROOT / "methods").glob("*.json"))]
REFS = [*METHOD_REFS, "a2a/Task.json", "a2a/Message.json"]
LIST_TASKS = "methods/ListTasks.json#/$defs/params"
# Each of the 13 refs runs every property here: 30 examples apiece keep the fast loop fast; the suites' own
# property checks exercise the same strategies at the run's profile.
SETTINGS = settings(max_examples=30, derandomize=True, database=None, deadline=None)
# find() without shrinking: the first example that fits is enough, and shrinking nested values is slow.
FIND = settings(max_examples=500, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
# Where a violation is reported: at the parent object for a missing or an extra member, at the field otherwise.
AT_PARENT = {"missing-required", "two-contents"}


def _short(ref: str) -> str:
    return ref.removeprefix("methods/").removesuffix(".json#/$defs/params")


def _foreign_urls(value: Any) -> list[str]:
    """Every string with a scheme and a host that is not an address in 127.0.0.0/8."""
    found = []
    for text in json_strings(value):
        try:
            parts = urlsplit(text.strip())
            host = parts.hostname
        except ValueError:
            continue
        if not (parts.scheme and host):
            continue
        try:
            if ipaddress.ip_address(host) in ipaddress.ip_network("127.0.0.0/8"):
                continue
        except ValueError:
            pass
        found.append(text)
    return found


def _error_paths(instance: Any, ref: str) -> list[tuple]:
    return [tuple(error.absolute_path) for error in schemas.validator(ref).iter_errors(instance)]


def _assert_invalid_near(mutant: strategies.Mutant, ref: str) -> None:
    paths = _error_paths(mutant.value, ref)
    assert paths, f"{mutant.kind} at {mutant.path} left the value valid: {mutant.value!r}"
    where = mutant.path[:-1] if mutant.kind in AT_PARENT else mutant.path
    assert any(path[: len(where)] == where for path in paths), (mutant, paths)


def test_foreign_url_check_catches_what_it_must():
    assert _foreign_urls({"a": ["http://127.0.0.1:9/x", "ROLE_USER", "kit-relative/path"]}) == []
    assert _foreign_urls({"http://localhost/": 1}) == ["http://localhost/"]
    assert _foreign_urls([{"u": "https://example.com"}, "ftp://10.0.0.1/x"]) == [
        "https://example.com",
        "ftp://10.0.0.1/x",
    ]


@pytest.mark.parametrize("ref", REFS, ids=_short)
def test_normalised_schema_has_no_refs_left(ref):
    text = repr(strategies.normalise(ref))
    assert "$ref" not in text and "$id" not in text


@pytest.mark.parametrize("ref", REFS, ids=_short)
@SETTINGS
@given(data=st.data())
def test_valid_values_validate(ref, data):
    value = data.draw(strategies.valid(ref))
    assert schemas.violations(value, ref) == [] and _error_paths(value, ref) == [], "jsonschema refuses it"
    assert schemas.conforms_quickly(value, ref), "jsonschema-rs refuses what jsonschema takes"
    assert _foreign_urls(value) == []


@pytest.mark.parametrize("ref", REFS, ids=_short)
@SETTINGS
@given(data=st.data())
def test_every_mutant_is_invalid_near_its_mutation(ref, data):
    mutant = data.draw(strategies.mutations(ref))
    assert mutant.kind in strategies.kinds_for(ref)
    assert mutant.path and mutant.field == next(s for s in reversed(mutant.path) if isinstance(s, str))
    _assert_invalid_near(mutant, ref)
    assert not schemas.conforms_quickly(mutant.value, ref), "jsonschema-rs takes what jsonschema refuses"
    assert _foreign_urls(mutant.value) == []


@pytest.mark.parametrize("ref", REFS, ids=_short)
@SETTINGS
@given(data=st.data())
def test_unknown_field_keeps_the_value_valid(ref, data):
    mutant = data.draw(strategies.unknown_field(ref))
    assert mutant.kind == "unknown-field" and mutant.field.startswith("kitUnknownField_")
    node = mutant.value
    for step in mutant.path:
        node = node[step]  # the extra member is really there
    assert schemas.violations(mutant.value, ref) == []
    assert _foreign_urls(mutant.value) == []


@pytest.mark.parametrize(
    ("ref", "kind"),
    [(ref, kind) for ref in REFS for kind in sorted(strategies.kinds_for(ref))],
    ids=lambda x: _short(x) if "/" in x else x,
)
def test_every_announced_kind_is_produced(ref, kind):
    mutant = find(strategies.mutations(ref, {kind}), lambda m: True, settings=FIND)
    assert mutant.kind == kind
    _assert_invalid_near(mutant, ref)


def test_kinds_per_method():
    # No bad-format for SendMessage: its URL fields carry no URI format (a2a.proto sets none).
    full = {"bad-pattern", "missing-required", "out-of-range", "too-short", "wrong-type"}
    full |= {"excluded-value", "two-contents", "unknown-enum"}
    assert strategies.kinds_for("methods/SendMessage.json#/$defs/params") == full
    assert strategies.kinds_for(LIST_TASKS) == {
        "bad-format",
        "bad-pattern",
        "out-of-range",
        "unknown-enum",
        "wrong-type",
    }
    assert strategies.kinds_for("methods/GetExtendedAgentCard.json#/$defs/params") == {"wrong-type"}
    assert strategies.kinds_for("methods/GetTask.json#/$defs/params") == {
        "missing-required",
        "out-of-range",
        "too-short",
        "wrong-type",
    }


@pytest.mark.parametrize("bound", [0, 101])
def test_page_size_out_of_range_is_tolerated(bound):
    mutant = find(
        strategies.mutations(LIST_TASKS, {"out-of-range"}),
        lambda m: m.path == ("pageSize",) and m.value["pageSize"] == bound,
        settings=FIND,
    )
    assert mutant.tolerated == ("refuse-or-clamp",) and mutant.field == "pageSize"


def test_history_length_out_of_range_is_tolerated_as_a_clamp():
    # A negative historyLength may be served as 0 (TASK-11's decision), so the schema marks it refuse-or-clamp.
    mutant = find(
        strategies.mutations(LIST_TASKS, {"out-of-range"}), lambda m: m.field == "historyLength", settings=FIND
    )
    assert mutant.value["historyLength"] in (-1, 2**31) and mutant.tolerated == ("refuse-or-clamp",)


def test_unknown_enum_values_are_tolerated_only_where_the_field_is_optional():
    optional = find(strategies.mutations(LIST_TASKS, {"unknown-enum"}), lambda m: m.field == "status", settings=FIND)
    required = find(
        strategies.mutations("methods/SendMessage.json#/$defs/params", {"unknown-enum"}),
        lambda m: m.field == "role",
        settings=FIND,
    )
    assert optional.tolerated == ("refuse-or-ignore",) and required.tolerated == ()


def test_mutations_reject_unknown_kinds():
    with pytest.raises(ValueError, match="unknown mutation kinds"):
        strategies.mutations(LIST_TASKS, {"wrong-kind"})


def test_named_mutations_look_as_documented():
    role = find(strategies.mutations("a2a/Message.json", {"excluded-value"}), lambda m: True, settings=FIND)
    assert role.path == ("role",) and role.value["role"] == "ROLE_UNSPECIFIED"
    state = find(strategies.mutations(LIST_TASKS, {"unknown-enum"}), lambda m: True, settings=FIND)
    assert state.value["status"] == "TASK_STATE_BOGUS"
    both = find(strategies.mutations("a2a/Message.json", {"two-contents"}), lambda m: True, settings=FIND)
    part = both.value["parts"][both.path[1]]
    assert both.path[0] == "parts" and len({"text", "raw", "url", "data"} & part.keys()) == 2


def test_normalise_merges_a_ref_with_its_sibling_keywords():
    params = strategies.normalise("methods/GetTaskPushNotificationConfig.json#/$defs/params")
    assert set(params["required"]) == {"taskId", "id"}
    assert params["properties"]["taskId"] == {"type": "string", "minLength": 1}
    role = strategies.normalise("a2a/Message.json")["properties"]["role"]
    assert role["not"] == {"const": "ROLE_UNSPECIFIED"} and "ROLE_USER" in role["enum"]
    page_size = strategies.normalise(LIST_TASKS)["properties"]["pageSize"]
    assert page_size == {"type": "integer", "minimum": 1, "maximum": 100, "x-kit-out-of-range": "refuse-or-clamp"}


def test_mutations_reach_inside_parts():
    params = "methods/SendMessage.json#/$defs/params"
    mutant = find(
        strategies.mutations(params), lambda m: m.path[:2] == ("message", "parts") and len(m.path) > 3, settings=FIND
    )
    _assert_invalid_near(mutant, params)
