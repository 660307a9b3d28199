"""The schema registry's own rules: ECMA-262 patterns, violations that name the path and rule."""

from __future__ import annotations

from nylorun_a2a_kit import schemas

ERROR_INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND", "domain": "d"}


def test_pattern_dollar_ends_the_string_as_in_ecma_262():
    assert schemas.is_valid(ERROR_INFO, "jsonrpc/ErrorInfo.json")
    assert not schemas.is_valid({**ERROR_INFO, "reason": "TASK_NOT_FOUND\n"}, "jsonrpc/ErrorInfo.json")


def test_pattern_rule_holds_through_references():
    task = {"id": "t", "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:00Z\n"}}
    answer = {"jsonrpc": "2.0", "id": 1, "result": task}
    [violation] = schemas.violations(answer, "methods/GetTask.json#/$defs/response")
    assert (violation.path, violation.rule) == ("$.result.status.timestamp", "pattern")


def test_oneof_violation_names_the_deepest_rule():
    part = {"text": "a", "data": {}}
    found = schemas.violations(part, "a2a/Part.json")
    assert found and found[0].path == "$" and found[0].rule in ("oneOf", "not", "required")
