"""The kit's JSON Schemas (2020-12), loaded once into one ``referencing`` registry.

Every document under this folder carries an ``$id`` below :data:`BASE`; a reference is written
relative to it, e.g. ``a2a/Task.json`` or ``methods/GetTask.json#/$defs/result``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import jsonschema
import jsonschema_rs
import referencing
from referencing.jsonschema import DRAFT202012

BASE = "https://kit.nylorun.example/schemas/"
ROOT: Traversable = resources.files(__name__)
FORMAT_CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
# JSON Schema patterns are ECMA-262: an unescaped '$' ends the string. Python's '$' also matches before a
# final newline, which would let "TASK_NOT_FOUND\n" pass ^[A-Z_]+$; '\Z' restores the ECMA meaning.
_DOLLAR = re.compile(r"(?<!\\)\$")


@cache
def _ecma(pattern: str) -> re.Pattern[str]:
    return re.compile(_DOLLAR.sub(r"\\Z", pattern))


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not _ecma(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


@dataclass(frozen=True)
class ShapeViolation:
    """One way an instance breaks a schema: where (JSON path), which rule, and why."""

    path: str
    rule: str
    schema_path: str
    message: str
    schema_title: str = ""  # the title of the schema the instance broke (a shared one's: "Timestamp")

    @property
    def is_offset_timestamp(self) -> bool:
        """A google.protobuf.Timestamp written as a date-time, but not in UTC with 'Z' (A2A §5.6.1: TASK-01's)."""
        return self.schema_title == "Timestamp" and self.rule == "pattern"

    def __str__(self) -> str:
        return f"{self.path}: {self.rule} — {self.message} (schema {self.schema_path})"


def documents() -> dict[str, dict[str, Any]]:
    """Every schema document by its ``$id``."""
    found: dict[str, dict[str, Any]] = {}
    for relative, item in sorted(_json_files(ROOT, "")):
        document = json.loads(item.read_text(encoding="utf-8"))
        expected = BASE + relative
        if document.get("$id") != expected:
            raise ValueError(f"{relative}: $id must be {expected!r}, found {document.get('$id')!r}")
        found[expected] = document
    return found


def _json_files(folder: Traversable, prefix: str) -> list[tuple[str, Traversable]]:
    out = []
    for item in folder.iterdir():
        if item.is_dir():
            out += _json_files(item, f"{prefix}{item.name}/")
        elif item.name.endswith(".json"):
            out.append((prefix + item.name, item))
    return out


@cache
def method_names() -> tuple[str, ...]:
    """The JSON-RPC methods the kit has a schema for (``methods/<Method>.json``)."""
    prefix = BASE + "methods/"
    return tuple(
        sorted(uri.removeprefix(prefix).removesuffix(".json") for uri in documents() if uri.startswith(prefix))
    )


@cache
def registry() -> referencing.Registry:
    # Every document is 2020-12 (the kit's tests check it). "$schema" is dropped from the registered copies:
    # jsonschema switches to its stock validator class at a "$schema", which would lose the ECMA pattern rule.
    resources = [
        (uri, DRAFT202012.create_resource({k: v for k, v in doc.items() if k != "$schema"}))
        for uri, doc in documents().items()
    ]
    return referencing.Registry().with_resources(resources).crawl()


def absolute(ref: str) -> str:
    return ref if ref.startswith(("http://", "https://")) else BASE + ref


def parse_json(body: bytes | str) -> Any:
    """The body as JSON (RFC 8259), or ValueError: no NaN or Infinity (which Python's parser would take), no
    lone surrogate (it parses, but is no Unicode text: no proto string can hold it), no nesting past the parser.
    The one strict reader, for the kit's client and the reference agent alike."""
    try:
        value = json.loads(body, parse_constant=_not_json)
        if _may_hold_a_surrogate(body):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (RecursionError, UnicodeEncodeError) as exc:
        raise ValueError(str(exc)) from None
    return value


# A surrogate comes into a parsed value only by a \uD800–\uDFFF escape, or raw: in a str, or in bytes as the kit's
# parser reads them (UTF-8 with surrogates let through, where a surrogate's first byte is 0xED). A body with none of
# these is not encoded again to find one: that took as long as parsing it, on every answer the kit reads.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_IN_TEXT = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def _may_hold_a_surrogate(body: bytes | str) -> bool:
    if isinstance(body, str):
        return _SURROGATE_IN_TEXT.search(body) is not None
    if json.detect_encoding(body) != "utf-8":
        return True
    return b"\xed" in body or _SURROGATE_ESCAPE.search(body) is not None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@cache
def validator(ref: str) -> jsonschema.Draft202012Validator:
    """A validator for ``ref`` (relative to :data:`BASE`), with the format checker on."""
    return Validator({"$ref": absolute(ref)}, registry=registry(), format_checker=FORMAT_CHECKER)


# Validation is a sixth of the CPU of a run of every check, almost all of it on values that conform. jsonschema-rs
# answers "does it conform?" a hundred times faster; the verdict is still jsonschema's. A value jsonschema-rs finds
# conforming is taken as conforming, and any other is judged by jsonschema (the one that names each way it breaks),
# so jsonschema-rs may be stricter than jsonschema, never laxer. Formats are checked by jsonschema's own checkers
# (jsonschema-rs's own take year 0000 and a leap second as a date-time where rfc3339-validator does not), patterns by
# ECMA-262's rules in both; tests/test_generators.py and tests/test_schema_examples.py hold the two to one answer.
@cache
def _quick(ref: str) -> jsonschema_rs.Validator:
    return jsonschema_rs.Draft202012Validator(
        {"$ref": absolute(ref)},
        registry=_quick_registry(),
        validate_formats=True,
        formats=_formats(),
        offline=True,  # every document is in the registry: a reference it lacks is an error, never a download
    )


@cache
def _quick_registry() -> jsonschema_rs.Registry:
    return jsonschema_rs.Registry(
        [(uri, {k: v for k, v in doc.items() if k != "$schema"}) for uri, doc in documents().items()],
        draft=jsonschema_rs.Draft202012,
    )


def _formats() -> dict[str, Callable[[str], bool]]:
    return {name: functools.partial(_conforms, name) for name in FORMAT_CHECKER.checkers}


def _conforms(name: str, value: str) -> bool:
    return FORMAT_CHECKER.conforms(value, name)


def warm() -> None:
    """Load the registries and make the quick validators of every document and every method's params and answer: a
    process that forks its runs does it once for all of them (each made its own, 25 ms a run)."""
    registry()
    for uri in documents():
        _quick(uri.removeprefix(BASE))
    for method in method_names():
        for part in ("params", "response"):
            _quick(f"methods/{method}.json#/$defs/{part}")


def conforms_quickly(instance: Any, ref: str) -> bool:
    """Whether jsonschema-rs finds ``instance`` conforming to ``ref``; False for a value it cannot read (jsonschema
    then judges it)."""
    try:
        return _quick(ref).is_valid(instance)
    except (ValueError, TypeError, OverflowError):
        return False


def resolve(ref: str) -> Any:
    """The schema (or any JSON value) that ``ref`` points at."""
    return registry().resolver().lookup(absolute(ref)).contents


def _json_path(parts) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _deepest(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    # For oneOf/anyOf the most useful message is the best-matching branch's own error.
    while error.context:
        error = jsonschema.exceptions.best_match(error.context)
    return error


def errors(instance: Any, ref: str) -> list[jsonschema.ValidationError]:
    """Each way ``instance`` breaks the schema at ``ref``, as the error that says it best (for a oneOf/anyOf, the
    best-matching branch's own)."""
    if conforms_quickly(instance, ref):
        return []
    return [_deepest(error) for error in validator(ref).iter_errors(instance)]


def violations(instance: Any, ref: str, *, at: str = "$") -> list[ShapeViolation]:
    """All the ways ``instance`` breaks the schema at ``ref``; empty when it conforms."""
    out = []
    for error in errors(instance, ref):
        path = _json_path(error.absolute_path)
        out.append(
            ShapeViolation(
                path=at + path[1:],
                rule=str(error.validator),
                schema_path="/".join(str(p) for p in error.absolute_schema_path),
                message=error.message if len(error.message) < 300 else error.message[:300] + "…",
                schema_title=str(error.schema.get("title", "")) if isinstance(error.schema, dict) else "",
            )
        )
    return out


def is_valid(instance: Any, ref: str) -> bool:
    return conforms_quickly(instance, ref) or validator(ref).is_valid(instance)


def is_streaming(method: str) -> bool:
    """Whether the method answers an SSE stream where it is served (``x-a2a.streaming`` of its schema)."""
    return bool(resolve(f"methods/{method}.json").get("x-a2a", {}).get("streaming"))


@cache
def error_codes() -> dict[str, int]:
    """The JSON-RPC and A2A error codes by name, read from ``jsonrpc/error-codes.json``."""
    defs = resolve("jsonrpc/error-codes.json")["$defs"]
    return {name: schema["const"] for name, schema in defs.items()}


def error_reasons() -> dict[int, str]:
    """Each A2A error's own ErrorInfo reason by code, as A2A §10.6 and §11.6 write it: its type in UPPER_SNAKE_CASE
    without 'Error' (-32002: TASK_NOT_CANCELABLE)."""
    return {
        code: re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).upper()
        for name, code in error_codes().items()
        if -32099 <= code <= -32001
    }


@cache
def method_errors(method: str) -> frozenset[int]:
    """The codes an error answer of ``method`` may carry (its schema's ``$defs/errors``): the standard ones, those
    A2A names for the operation, and the ones that answer any method."""
    return frozenset(resolve(f"methods/{method}.json#/$defs/errors")["enum"])


def error_code(name: str) -> int:
    return error_codes()[name]


@dataclass(frozen=True)
class Extension:
    """A profile extension as its schema declares it (``x-a2a-extension``): URI, version, where it rides."""

    uri: str
    since: str
    document: str  # the schema document's reference, e.g. extensions/progress-v1.json
    on: dict[str, str]  # location (agent-message, user-message, status-update, task, artifact) → schema ref

    def ref(self, location: str) -> str | None:
        fragment = self.on.get(location)
        return None if fragment is None else self.document + fragment


def extension_uri(name: str) -> str:
    """The URI of the profile extension named ``name`` (``interactions``, ``effects``, ``progress``…)."""
    return next(uri for uri in extensions() if uri.rstrip("/").rsplit("/", 2)[-2] == name)


def profile_prefix() -> str:
    """What every profile extension's URI begins with (its documentation root): a key or entry starting with it
    names a profile extension, of this version or another."""
    return extension_uri("interactions").rsplit("/", 2)[0] + "/"


def extension_uris(since: str | None = None) -> tuple[str, ...]:
    """The profile's extension URIs, oldest version of the profile first; only those of ``since`` when given."""
    ordered = sorted(extensions().values(), key=lambda e: (e.since, e.uri))
    return tuple(e.uri for e in ordered if since is None or e.since == since)


def tiers() -> tuple[str, ...]:
    """The tiers a target can claim: core A2A 1.0, then one per version of the profile its extensions arrive in."""
    return ("core", *(f"profile-{since}" for since in sorted({e.since for e in extensions().values()})))


@cache
def extensions() -> dict[str, Extension]:
    """The profile's extensions by URI, read from ``schemas/extensions/``."""
    found = {}
    for uri, document in documents().items():
        declared = document.get("x-a2a-extension")
        if declared:
            found[declared["uri"]] = Extension(
                uri=declared["uri"], since=declared["since"], document=uri.removeprefix(BASE), on=declared["on"]
            )
    return found
