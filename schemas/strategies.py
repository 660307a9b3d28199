"""Hypothesis strategies built from the kit's JSON Schemas: valid values, and invalid ones with one named flaw.

``ref`` is written as for :func:`schemas.validator`, e.g. ``methods/SendMessage.json#/$defs/params``.

- ``normalise(ref) -> dict``: the schema with every ``$ref`` inlined (merged with its sibling keywords) and
  annotations dropped; ``x-kit-*`` keywords stay.
- ``valid(ref) -> SearchStrategy[Any]``: values valid against the schema.
- ``mutations(ref, kinds=None) -> SearchStrategy[Mutant]``: a valid value broken by exactly one mutation, of one
  of :data:`KINDS` (or of ``kinds``), at any depth below the root (never the root itself).
- ``kinds_for(ref) -> set[str]``: the kinds :func:`mutations` can produce for ``ref``.
- ``unknown_field(ref) -> SearchStrategy[Mutant]``: a valid value plus one member no schema defines
  (``kitUnknownField_x``) in an object that allows it. Kind ``unknown-field``; the value is still VALID.

Safety: every URI generated is ``http://127.0.0.1:9/...`` (the discard port): values go to live agents that may
fetch URLs or deliver webhooks, so no generated string may name a host outside loopback; free text that would
parse as such a URL is filtered out too. Strings stay within 20 characters and arrays within 3 items.
"""

from __future__ import annotations

import base64
import copy
import ipaddress
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import hypothesis.strategies as st
from hypothesis import reject

from nylorun_a2a_kit import schemas

KINDS = frozenset({"missing-required", "wrong-type", "unknown-enum", "excluded-value", "out-of-range", "too-short"})
KINDS |= {"two-contents", "bad-format", "bad-pattern"}
LOOPBACK = "http://127.0.0.1:9/"
UNKNOWN_FIELD = "kitUnknownField_x"
_ANNOTATIONS = {"$schema", "$id", "$comment", "$defs", "title", "description", "deprecated", "examples"}
_SUPPORTED = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "not", "oneOf"}
_SUPPORTED |= {"anyOf", "minLength", "maxLength", "minimum", "maximum", "minItems", "pattern", "format"}
_MAX_STRING, _MAX_ITEMS = 20, 3
_OBJ, _ARR = {"kit": "wrong-type"}, ["kit"]
# Only types no ProtoJSON parser coerces into the field's: it reads a numeric string as an int, a number as an
# enum value and null as "unset", so none of those is a wrong type.
_WRONG_TYPE = {"object": ["kitWrongType", 7], "array": ["kitWrongType", _OBJ]}
_DELETE = object()
_LOOPBACK_NET = ipaddress.ip_network("127.0.0.0/8")


@dataclass(frozen=True)
class Mutant:
    kind: str
    path: tuple[str | int, ...]  # JSON path of the mutated field (missing-required: of the removed one)
    field: str  # the last property name on path, for reports
    value: Any  # the whole instance
    tolerated: tuple[str, ...] = ()  # other answers that are right for it (see _leniency), besides a refusal


def normalise(ref: str) -> dict[str, Any]:
    return copy.deepcopy(_normalised(ref))


def valid(ref: str) -> st.SearchStrategy[Any]:
    return _valid(_normalised(ref))


def mutations(ref: str, kinds: set[str] | frozenset[str] | None = None) -> st.SearchStrategy[Mutant]:
    unknown = set(kinds or ()) - KINDS
    if unknown:
        raise ValueError(f"unknown mutation kinds {sorted(unknown)}")
    return _mutant(_normalised(ref), KINDS if kinds is None else frozenset(kinds))


def kinds_for(ref: str) -> set[str]:
    return _schema_kinds(_normalised(ref), root=True)


def unknown_field(ref: str) -> st.SearchStrategy[Mutant]:
    return _mutant(_normalised(ref), frozenset({"unknown-field"}))


@cache
def _normalised(ref: str) -> dict[str, Any]:
    resolved = schemas.registry().resolver().lookup(schemas.absolute(ref))
    return _inline(resolved.contents, resolved.resolver, ())


def _inline(node: Any, resolver, seen: tuple[int, ...]) -> Any:
    if not isinstance(node, dict):
        return node  # a boolean schema
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: _inline(sub, resolver, seen) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _inline(value, resolver, seen)
        elif key in ("oneOf", "anyOf"):
            out[key] = [_inline(sub, resolver, seen) for sub in value]
        elif key not in _ANNOTATIONS and key not in ("$ref", "allOf"):
            out[key] = value
    parts = [_inline(sub, resolver, seen) for sub in node.get("allOf", ())]
    if "$ref" in node:
        target = resolver.lookup(node["$ref"])
        if id(target.contents) in seen:  # Value.json, the one self-similar schema, is {} and so never loops
            raise NotImplementedError(f"recursive schema at {node['$ref']}")
        parts.append(_inline(target.contents, target.resolver, (*seen, id(target.contents))))
    for part in parts:  # a $ref beside other keywords means both apply, as allOf does: merge them into one tree
        out = _merge(out, part)
    return out


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key not in out or out[key] == value:
            out[key] = value
        elif key == "properties":
            out[key] = {**value, **{k: _merge(v, value[k]) if k in value else v for k, v in out[key].items()}}
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key in ("minimum", "minLength", "minItems", "maximum", "maxLength"):
            out[key] = (max if key.startswith("min") else min)(out[key], value)
        else:
            raise NotImplementedError(f"cannot merge two different {key!r}: {out[key]!r} and {value!r}")
    return out


_BUILT: dict[int, tuple[Any, st.SearchStrategy[Any]]] = {}


def _valid(schema: Any) -> st.SearchStrategy[Any]:
    # Built once per schema node: rebuilding the strategy tree on every draw cost more than drawing from it.
    # The entry keeps the node alive, so its id cannot be reused by another.
    if id(schema) not in _BUILT:
        _BUILT[id(schema)] = (schema, _build(schema))
    return _BUILT[id(schema)][1]


def _build(schema: Any) -> st.SearchStrategy[Any]:
    keywords = {k for k in schema if not k.startswith("x-")} if isinstance(schema, dict) else set()
    if not keywords:
        return _any_json()  # Value.json: any JSON value
    if keywords - _SUPPORTED or not keywords & {"type", "anyOf", "const", "enum"}:
        raise NotImplementedError(f"cannot generate from {schema}")
    if "anyOf" in schema:
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        return st.one_of([_valid(_merge(rest, branch)) for branch in schema["anyOf"]])
    if "const" in schema or "enum" in schema:
        excluded = schema.get("not", {}).get("const", object())
        return st.sampled_from([v for v in schema.get("enum", [schema.get("const")]) if v != excluded])
    low, high = schema.get("minLength", schema.get("minItems", 0)), schema.get("maxLength", _MAX_STRING)
    by_type = {
        "string": lambda: _string(schema, low, max(low, min(high, _MAX_STRING))),
        "object": lambda: st.one_of([_members(schema, *split) for split in _splits(schema)]),
        "array": lambda: st.lists(_valid(schema.get("items", True)), min_size=low, max_size=max(low, _MAX_ITEMS)),
        "integer": lambda: st.integers(schema.get("minimum"), schema.get("maximum")),
        "boolean": st.booleans,
    }
    return st.one_of([by_type[t]() for t in _types(schema)])


def _string(schema: dict[str, Any], low: int, high: int) -> st.SearchStrategy[str]:
    pattern, fmt = schema.get("pattern"), schema.get("format")
    if fmt == "uri":
        strategy = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", max_size=8).map(LOOPBACK.__add__)
    elif fmt == "date-time":
        moments = st.datetimes(datetime(2000, 1, 1), datetime(2099, 12, 31, 23, 59, 59))
        fractions = st.just("") | st.from_regex(r"\.[0-9]{1,9}", fullmatch=True)
        strategy = st.tuples(moments, fractions).map(lambda t: f"{t[0]:%Y-%m-%dT%H:%M:%S}{t[1]}Z")
    elif pattern:
        strategy = _patterns().get(pattern, st.from_regex(schemas._ecma(pattern), fullmatch=True))
        strategy = strategy.filter(schemas._ecma(pattern).search)
    else:
        strategy = _text(low, high)
    return strategy.filter(lambda s: low <= len(s) <= high)


def _splits(schema: dict[str, Any]) -> list[tuple[set[str], set[str]]]:
    """(required, excluded) member names, one pair per oneOf branch: exactly one branch's members appear."""
    required, branches = set(schema.get("required", ())), _branches(schema)
    everything = set().union(*branches)
    return [(required | b, everything - b) for b in branches] or [(required, set())]


def _members(schema: dict[str, Any], required: set[str], excluded: set[str]) -> st.SearchStrategy[dict[str, Any]]:
    props, extra = schema.get("properties", {}), schema.get("additionalProperties")
    named = st.fixed_dictionaries(
        {k: _valid(props.get(k, True)) for k in sorted(required)},
        optional={k: _valid(v) for k, v in props.items() if k not in required | excluded},
    )
    if not isinstance(extra, dict):
        return named
    keys = _text(1, 10).filter(lambda k: k not in props and k not in excluded)
    return st.tuples(named, st.dictionaries(keys, _valid(extra), max_size=_MAX_ITEMS)).map(lambda t: {**t[1], **t[0]})


def _branches(schema: dict[str, Any]) -> list[set[str]]:
    # The one oneOf form the schemas use: "exactly one of these members" (Part, SecurityScheme, OAuthFlows).
    if any(set(branch) != {"required"} for branch in schema.get("oneOf", [])):
        raise NotImplementedError("oneOf is supported only as a list of {'required': [...]} branches")
    return [set(branch["required"]) for branch in schema.get("oneOf", [])]


def _types(schema: dict[str, Any]) -> list[str]:
    return [schema["type"]] if isinstance(schema.get("type"), str) else schema.get("type", [])


# Every character but a lone surrogate (category Cs, the code points UTF-8 cannot encode): one cannot travel as JSON
# text. The same alphabet as codec="utf-8", read off Hypothesis' category table; the codec's own table takes 2 CPU-s
# to make in each directory a process first draws in.
TEXT_ALPHABET = st.characters(exclude_categories=("Cs",))


def _text(low: int = 0, high: int = _MAX_STRING) -> st.SearchStrategy[str]:
    return st.text(TEXT_ALPHABET, min_size=low, max_size=high).filter(lambda s: not _foreign_url(s))


@cache
def _any_json() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False)
    return st.recursive(
        scalars | _text(),
        lambda inner: st.lists(inner, max_size=_MAX_ITEMS) | st.dictionaries(_text(0, 10), inner, max_size=_MAX_ITEMS),
        max_leaves=5,
    )


@cache
def _patterns() -> dict[str, st.SearchStrategy[str]]:
    # Purpose-built where from_regex would be slow (base64) or unsafe (a host:port naming any host at all).
    def encode(raw: bytes, urlsafe: bool, padded: bool) -> str:
        text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
        return text if padded else text.rstrip("=")

    bytes_pattern = schemas.resolve("a2a/Bytes.json")["pattern"]
    host_port = schemas.resolve("a2a/AgentInterface.json#/properties/url/anyOf/1")["pattern"]
    return {
        bytes_pattern: st.builds(encode, st.binary(max_size=12), st.booleans(), st.booleans()),
        host_port: st.just("127.0.0.1:9"),
    }


def _foreign_url(text: str) -> bool:
    try:
        parts = urlsplit(text.strip())
        host = parts.hostname
    except ValueError:
        return False
    if not (parts.scheme and host):
        return False
    try:
        return ipaddress.ip_address(host) not in _LOOPBACK_NET
    except ValueError:
        return True  # a host name: even "localhost" may resolve elsewhere


@st.composite
def _mutant(draw, schema: dict[str, Any], kinds: frozenset[str]) -> Mutant:
    value = draw(_valid(schema))
    sites = [site for site in _sites(schema, value, ()) if site[0] in kinds]
    if not sites:
        reject()
    # The kind first, then where: otherwise kinds with many sites (wrong-type) would crowd out the rare ones.
    kind = draw(st.sampled_from(sorted({site[0] for site in sites})))
    _, path, replacement, tolerated = draw(st.sampled_from([site for site in sites if site[0] == kind]))
    value = copy.deepcopy(value)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if replacement is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(draw(replacement))  # never share the module's constant values
    return Mutant(kind, path, next((s for s in reversed(path) if isinstance(s, str)), ""), value, tolerated)


def _sites(schema: Any, value: Any, path: tuple[str | int, ...], required: bool = True):
    """(kind, path, replacement strategy or _DELETE, tolerated) for every mutation ``value`` allows."""
    if not isinstance(schema, dict):
        return
    for kind, replacement in _field_mutations(schema).items() if path else ():
        leniency = _leniency(schema, kind, required)
        yield kind, path, replacement, (leniency,) if leniency else ()
    if isinstance(value, dict):
        props, branches = schema.get("properties", {}), _branches(schema)
        chosen = [key for b in branches if b <= value.keys() for key in b]
        for key in dict.fromkeys([*schema.get("required", ()), *chosen]):
            yield "missing-required", (*path, key), _DELETE, ()
        for key in sorted(set().union(*branches) - value.keys()) if chosen else ():
            yield "two-contents", (*path, key), _valid(props.get(key, True)), ()
        if props and "additionalProperties" not in schema:
            yield "unknown-field", (*path, UNKNOWN_FIELD), _any_json(), ()
        for key, member in value.items():
            member_schema = props.get(key, schema.get("additionalProperties"))
            yield from _sites(member_schema, member, (*path, key), key in schema.get("required", ()))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _sites(schema.get("items"), item, (*path, index))


def _leniency(schema: dict[str, Any], kind: str, required: bool) -> str | None:
    """What else than a refusal rightly answers the mutation, where A2A, ProtoJSON or the pages leave it open.

    - out-of-range where the schema says so (``x-kit-out-of-range``): a clamp;
    - an unknown enum value in an optional field: ignoring it, as a ProtoJSON parser set to ignore unknown
      fields does (A2A §5.7 has unknown fields ignored), which serves the request as if the field were absent;
    - a timestamp with an offset: taking it, as ProtoJSON parsers do (A2A §5.6 forbids offsets in what is
      generated, not that one be refused).
    """
    if kind == "out-of-range":
        return schema.get("x-kit-out-of-range")
    if kind == "unknown-enum" and not required:
        return "refuse-or-ignore"
    if kind == "bad-pattern" and schema.get("format") == "date-time":
        return "refuse-or-accept"
    return None


def _field_mutations(schema: dict[str, Any]) -> dict[str, st.SearchStrategy[Any]]:
    """The mutations of one field's value, each as a strategy for the replacement."""
    types, out = _types(schema), {}
    wrong = [v for t in types for v in _WRONG_TYPE.get(t, [_OBJ, _ARR]) if _json_type(v) not in types]
    if wrong:
        out["wrong-type"] = st.sampled_from(wrong)
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        prefix = min(schema["enum"], key=len)  # keep the enum's own prefix (TASK_STATE_, ROLE_)
        while not all(member.startswith(prefix) for member in schema["enum"]):
            prefix = prefix[: prefix[:-1].rfind("_") + 1]
        out["unknown-enum"] = st.just(prefix + "BOGUS")
    if "const" in schema.get("not", {}):
        out["excluded-value"] = st.just(schema["not"]["const"])
    bounds = [schema[k] + d for k, d in (("minimum", -1), ("maximum", 1)) if k in schema]
    if bounds:
        out["out-of-range"] = st.sampled_from(bounds)
    if schema.get("minLength", 0) > 0:
        out["too-short"] = st.just("x" * (schema["minLength"] - 1))
    if schema.get("minItems", 0) > 0:
        out["too-short"] = st.lists(_valid(schema.get("items", True)), max_size=schema["minItems"] - 1)
    if schema.get("format") in ("uri", "date-time"):  # a relative reference: no scheme, so no URL to anywhere
        out["bad-format"] = st.just({"uri": "kit-relative/path", "date-time": "2024-13-01T00:00:00Z"}[schema["format"]])
    # An offset timestamp passes format date-time, so only the profile's Z-only pattern rejects it.
    misfit = "2024-01-01T00:00:00+01:00" if schema.get("format") == "date-time" else "!"
    if "pattern" in schema and not schemas._ecma(schema["pattern"]).search(misfit):
        out["bad-pattern"] = st.just(misfit)
    return out


def _schema_kinds(schema: Any, root: bool = False) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    kinds = set() if root else set(_field_mutations(schema))
    branches = _branches(schema)
    kinds |= {"missing-required"} if schema.get("required") or branches else set()
    kinds |= {"two-contents"} if len(branches) > 1 else set()
    subschemas = [*schema.get("properties", {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return kinds.union(*(_schema_kinds(sub) for sub in subschemas))


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}.get(type(value), "number")
