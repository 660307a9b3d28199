"""Properties of every method over requests generated from the schemas: valid, broken one way, or extended.

Each request must get exactly one JSON-RPC answer carrying its id and valid against the method's schema
(the client checks both on every call, and fails an HTTP failure, a non-JSON body or no answer in time).
The examples come from ``schemas/strategies.py``; how many depends on --a2a-property-profile.
"""

from __future__ import annotations

from typing import Any

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, PreconditionUnmet
from nylorun_a2a_kit.fixtures.requirements import not_applicable
from nylorun_a2a_kit.fixtures.scenarios import methods, properties
from nylorun_a2a_kit.fixtures.target import Target
from nylorun_a2a_kit.schemas import strategies

METHODS = list(schemas.method_names())
# Methods the profile does not serve: they answer their refusal whatever the params (the unserved checks
# prove it), so only the properties of every answer apply to them, not those of params handling.
UNSERVED = {"SendStreamingMessage", "SubscribeToTask", "GetExtendedAgentCard"}
SERVED = sorted(set(METHODS) - UNSERVED)
PUSH_METHODS = {m for m in METHODS if "PushNotificationConfig" in m}
INVALID_PARAMS = schemas.error_code("InvalidParamsError")
PUSH_NOT_SUPPORTED = schemas.error_code("PushNotificationNotSupportedError")


def _params(method: str) -> str:
    return f"methods/{method}.json#/$defs/params"


def _errors(method: str) -> set[int]:
    return set(schemas.method_errors(method))


# A required field missing or an empty one, an unknown enum value (which a ProtoJSON parser ignoring unknown
# fields drops, leaving the field absent), or an enum's zero value (the only excluded value params have is
# Message.role ROLE_UNSPECIFIED, which proto3 reads as the field unset): A2A §5.7 makes refusing these a SHOULD
# (ERR-13). Every other way params break their schema is refused as a MUST (ERR-06, A2A §3.3.2).
PRESENCE_KINDS = {"missing-required", "too-short", "unknown-enum", "excluded-value"}


def _broken_params(methods: list[str], *, by_level: bool = False) -> list:
    """(method, mutation kind) for every kind the generators can make of the method's params: one case each,
    so every kind is tried and a failure names it (a method whose params admit none gets one skipped case).
    With ``by_level``, each case names the requirement its kind falls under."""
    cases = []
    for method in methods:
        kinds = sorted(strategies.kinds_for(_params(method))) or [None]
        for kind in kinds:
            marks = [pytest.mark.req("ERR-13" if kind in PRESENCE_KINDS else "ERR-06")] if by_level else []
            cases.append(pytest.param(method, kind, id=f"{method}-{kind or 'none'}", marks=marks))
    return cases


# Tolerated answers that --a2a-strict-spec=yes turns into failures, each where a decision says so: an ignored unknown
# enum value (ERR-06, ERR-13). A clamp (LIST-09) and a timestamp offset taken (ERR-06) stay right under it.
STRICT_REFUSES = {"refuse-or-ignore"}

# The examples of one method's broken params are shared among its kinds (a kind gets at least one).
KIND_SHARE = 1 / 3


def _push_served(a2a_target: Target) -> bool:
    return bool((a2a_target.card.get("capabilities") or {}).get("pushNotifications"))


# Where each method's params name a task. Generated ids name no task, so an Agent that looks the task up
# before it validates the rest answers -32001; A2A does not fix that order, so -32001 is a fitting refusal
# of a flaw elsewhere in the params, never of a flaw in the task reference itself (ERR-06's decision).
TASK_REFERENCE = {
    "GetTask": ("id",),
    "CancelTask": ("id",),
    "SendMessage": ("message", "taskId"),
    **{m: ("taskId",) for m in PUSH_METHODS},
}
TASK_NOT_FOUND = schemas.error_code("TaskNotFoundError")


def _names_a_task_elsewhere(method: str, mutant: strategies.Mutant) -> bool:
    reference = TASK_REFERENCE.get(method)
    if reference is None or tuple(mutant.path[: len(reference)]) == reference:
        return False
    value: Any = mutant.value
    for key in reference:
        value = value.get(key) if isinstance(value, dict) else None
    return isinstance(value, str) and bool(value)


def _fitting_refusals(method: str, a2a_target: Target) -> set[int]:
    """Codes that rightly answer broken params: -32602 (with -32005 for a message's content, methods.validation_codes),
    or -32003 from an Agent without push."""
    codes = methods.validation_codes(method, a2a_target.strict_spec)
    if method in PUSH_METHODS and not _push_served(a2a_target):
        codes.add(PUSH_NOT_SUPPORTED)
    return codes


# Codes whose meaning A2A 1.0 or JSON-RPC 2.0 fixes: a method may answer those of its own errors only. Any other
# code is implementation-defined (JSON-RPC 2.0 §5.1 leaves -32000..-32099 to servers and everything outside
# -32768..-32000 to applications; A2A §3.3.2 names custom codes for authentication and authorization errors).
FIXED_MEANING = set(schemas.error_codes().values())


def _within_method_errors(exchange: Exchange, method: str) -> None:
    code = exchange.error.get("code") if exchange.is_error else None
    if code is not None and code in FIXED_MEANING and code not in _errors(method):
        exchange.fail(f"{method} answered {code}, whose meaning A2A fixes, not one of {sorted(_errors(method))}")


def _outcome(exchange: Exchange) -> Any:
    return ("error", exchange.error.get("code")) if exchange.is_error else ("result",)


def _without(value: Any, path: tuple) -> Any:
    """``value`` with the member at ``path`` removed (the added unknown field)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if not rest:
        return {k: v for k, v in value.items() if k != head}
    copied = list(value) if isinstance(value, list) else dict(value)
    copied[head] = _without(value[head], rest)
    return copied


@pytest.mark.req("ERR-01", "ERR-09")
@pytest.mark.parametrize("method", METHODS)
def test_valid_params_get_one_valid_answer(a2a_client: A2AClient, method: str):
    def prop(params: dict) -> None:
        _within_method_errors(a2a_client.call(method, params), method)

    properties.check(prop, params=strategies.valid(_params(method)))


@pytest.mark.parametrize(("method", "kind"), _broken_params(SERVED, by_level=True))
def test_params_broken_one_way_are_refused(a2a_client: A2AClient, a2a_target: Target, method: str, kind: str | None):
    fitting = _fitting_refusals(method, a2a_target)
    if kind is None:
        not_applicable(f"{method}'s params schema admits no invalid value the generators make")

    def prop(mutant: strategies.Mutant) -> None:
        exchange = a2a_client.call(method, mutant.value)
        held_to_refusal = a2a_target.strict_spec and STRICT_REFUSES.intersection(mutant.tolerated)
        if mutant.tolerated and not exchange.is_error and not held_to_refusal:
            return  # served: a right answer too where the rules leave it open (ERR-06's decision)
        if not exchange.is_error:
            exchange.fail(f"params with {mutant.kind} at {mutant.field!r} must be refused, got a result")
        if exchange.error.get("code") == methods.METHOD_NOT_FOUND:  # the method is missing: its own checks say so
            raise PreconditionUnmet(
                f"the Agent does not serve {method}, an A2A 1.0 method ({exchange.answer_line()}): the refusal of its "
                "broken params is judged once it is served; the method's own checks judge it missing",
                needs=f"an Agent that serves {method}",
            )
        if exchange.error.get("code") == TASK_NOT_FOUND and _names_a_task_elsewhere(method, mutant):
            return
        if exchange.error.get("code") not in fitting:
            exchange.fail(f"params with {mutant.kind} at {mutant.field!r} must get one of {sorted(fitting)}")

    properties.check(prop, share=KIND_SHARE, mutant=strategies.mutations(_params(method), kinds={kind}))


def _names(mutant: strategies.Mutant) -> set[str]:
    """Names a field violation may use for the mutation: the field, or for a flaw of its object the parent."""
    names = {mutant.field}
    parents = [p for p in mutant.path[:-1] if isinstance(p, str)]
    if mutant.kind in ("missing-required", "two-contents") and parents:
        names.add(parents[-1])
    return {n for n in names if n}


@pytest.mark.req("ERR-07")
@pytest.mark.parametrize(("method", "kind"), _broken_params(SERVED))
def test_refusals_name_the_offending_field(a2a_client: A2AClient, method: str, kind: str | None):
    if kind is None:
        not_applicable(f"{method}'s params schema admits no invalid value the generators make")

    def prop(mutant: strategies.Mutant) -> None:
        exchange = a2a_client.call(method, mutant.value)
        if not exchange.is_error or exchange.error.get("code") != INVALID_PARAMS:
            return  # whether it is refused is ERR-06's property
        detail = exchange.detail("BadRequest") or {}
        said = " ".join(f"{v.get('field', '')} {v.get('description', '')}" for v in detail.get("fieldViolations", []))
        if not any(name in said for name in _names(mutant)):
            exchange.fail(f"-32602 for {mutant.kind} should name {sorted(_names(mutant))} in a BadRequest violation")

    properties.check(prop, share=KIND_SHARE, mutant=strategies.mutations(_params(method), kinds={kind}))


@pytest.mark.req("ERR-08")
@pytest.mark.parametrize("method", SERVED)
def test_unknown_fields_are_ignored(a2a_client: A2AClient, method: str):
    def prop(mutant: strategies.Mutant) -> None:
        plain = a2a_client.call(method, _without(mutant.value, mutant.path))
        extended = a2a_client.call(method, mutant.value)
        if _outcome(plain) != _outcome(extended):
            plain.quoted = True
            extended.fail(
                f"adding the unknown field {mutant.field!r} changed the answer from {_outcome(plain)} to "
                f"{_outcome(extended)}; the first answer was:\n{plain.describe()}"
            )

    properties.check(prop, share=0.5, mutant=strategies.unknown_field(_params(method)))
