"""Operators on the profile's extension data, derived from its JSON Schemas: each keeps the data valid.

For every field of an extension's data (its ``$defs`` object, walked into nested objects and into the last
item of an array) the schema says what a change may be that the schema still accepts: a string gets a suffix
(or, under a hex pattern, another last digit), a number grows, a boolean flips, a free value is replaced, an
optional field or an array's last item is dropped, and the whole data can be left out. A field whose pattern
takes hex in either case also gets an upper-cased form: the schema allows it, so that mutant is equivalent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from nylorun_a2a_kit import schemas

LAST = "last"  # a path step: the last item of an array
DROP = object()  # what an operator answers to leave the field out


@dataclass(frozen=True)
class Operator:
    name: str
    change: Callable[[Any], Any]  # the field's value → the changed value (or DROP)
    equivalent: str | None = None


@dataclass(frozen=True)
class Field:
    """A field of an extension's data: its path in the data, and what may be done to it."""

    path: tuple[str, ...]
    operators: tuple[Operator, ...]

    @property
    def label(self) -> str:
        return ".".join(self.path)


def fields(extension: str, definition: str) -> list[Field]:
    """Every field of the extension's ``definition`` (and the data as a whole, path ``()``), with its operators."""
    document = schemas.resolve(f"extensions/{extension}-v1.json")
    root = document["$defs"][definition]
    whole = Field((), (Operator("dropped", lambda value: DROP),))
    return [whole, *_walk(document, root, ())]


def _walk(document: dict, schema: Any, path: tuple[str, ...]) -> Iterator[Field]:
    schema = _deref(document, schema)
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return
    required = set(schema.get("required", []))
    for name, sub in schema.get("properties", {}).items():
        sub = _deref(document, sub)
        here = (*path, name)
        kind = sub.get("type") if isinstance(sub, dict) else None
        if kind == "object":
            if name not in required:
                yield Field(here, (Operator("dropped", lambda value: DROP),))
            yield from _walk(document, sub, here)
            continue
        if kind == "array":
            yield Field(here, (Operator("last-dropped", lambda value: value[:-1] if value else value),))
            yield from _walk(document, sub.get("items", {}), (*here, LAST))
            continue
        operators = list(_alterations(sub))
        if name not in required:
            operators.append(Operator("dropped", lambda value: DROP))
        if operators:
            yield Field(here, tuple(operators))


def _deref(document: dict, schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema and schema["$ref"].startswith("#/$defs/"):
        schema = document["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    return schema


def _alterations(schema: Any) -> Iterator[Operator]:
    if schema is True or schema == {}:
        yield Operator("altered", lambda value: {"altered": value})
        return
    if not isinstance(schema, dict) or "const" in schema or "enum" in schema:
        return
    kinds = [option.get("type") for option in schema.get("oneOf", [])] or [schema.get("type")]
    pattern = schema.get("pattern")
    yield Operator("altered", lambda value: _altered(value, kinds, pattern))
    if pattern and _takes_either_case(pattern):
        yield Operator(
            "upper-cased",
            lambda value: value.upper() if isinstance(value, str) else value,
            equivalent=f"the schema's pattern {pattern} takes hex digits in either case",
        )


def _altered(value: Any, kinds: list[Any], pattern: str | None) -> Any:
    if isinstance(value, bool) and "boolean" in kinds:
        return not value
    if isinstance(value, int) and not isinstance(value, bool) and {"integer", "number"} & set(kinds):
        return value + 1
    if isinstance(value, float) and "number" in kinds:
        return round(value + 1.25, 6)
    if isinstance(value, str) and "string" in kinds:
        return _other_hex(value) if pattern else value + "-altered"
    return value


def _other_hex(value: str) -> str:
    """``value`` with its last hex digit replaced by another of the same case."""
    if not value:
        return value
    last = value[-1]
    cycle = "0123456789abcdef0" if not last.isupper() else "0123456789ABCDEF0"
    return value[:-1] + cycle[cycle.index(last) + 1] if last in cycle else value


def _takes_either_case(pattern: str) -> bool:
    return bool(re.fullmatch(pattern, "ab" * 32)) and bool(re.fullmatch(pattern, "AB" * 32))


def apply(data: Any, path: tuple[str, ...], operator: Operator) -> Any:
    """``data`` with ``operator`` applied at ``path`` (a copy; DROP when the whole data is left out). A path that
    is not there (an empty array, an optional field) leaves the data as it is."""
    if not path:
        return operator.change(data)
    if not isinstance(data, dict | list):
        return data
    step, rest = path[0], path[1:]
    copy: Any = list(data) if isinstance(data, list) else dict(data)
    key: Any = len(copy) - 1 if step == LAST and isinstance(copy, list) else step
    if isinstance(copy, list) and not (isinstance(key, int) and 0 <= key < len(copy)):
        return data
    if isinstance(copy, dict) and key not in copy:
        return data
    changed = apply(copy[key], rest, operator)
    if changed is DROP:
        del copy[key]
    else:
        copy[key] = changed
    return copy
