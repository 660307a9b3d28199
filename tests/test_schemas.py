"""The kit's JSON Schemas: well-formed 2020-12 documents, fully resolvable, faithful to a2a.proto.

Whether they are right about examples (good ones validate, bad ones are rejected for their reason) is
tests/test_schema_examples.py, with the examples as data under tests/schema_examples/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import jsonschema
import pytest

from nylorun_a2a_kit import schemas

PROTO = Path(__file__).resolve().parent / "reference" / "a2a.proto"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

METHODS = {
    "SendMessage": False,
    "SendStreamingMessage": True,
    "GetTask": False,
    "ListTasks": False,
    "CancelTask": False,
    "SubscribeToTask": True,
    "CreateTaskPushNotificationConfig": False,
    "GetTaskPushNotificationConfig": False,
    "ListTaskPushNotificationConfigs": False,
    "DeleteTaskPushNotificationConfig": False,
    "GetExtendedAgentCard": False,
}

NAMED_ERROR_CODES = {
    "JSONParseError": -32700,
    "InvalidRequestError": -32600,
    "MethodNotFoundError": -32601,
    "InvalidParamsError": -32602,
    "InternalError": -32603,
    "TaskNotFoundError": -32001,
    "TaskNotCancelableError": -32002,
    "PushNotificationNotSupportedError": -32003,
    "UnsupportedOperationError": -32004,
    "ContentTypeNotSupportedError": -32005,
    "InvalidAgentResponseError": -32006,
    "ExtendedAgentCardNotConfiguredError": -32007,
    "ExtensionSupportRequiredError": -32008,
    "VersionNotSupportedError": -32009,
}

# --------------------------------------------------------------------------------------------- tests: documents


def _walk(node: Any, pointer: str = ""):
    """Yield (json-pointer, schema-object) for every object inside a document."""
    if isinstance(node, dict):
        yield pointer, node
        for key, value in node.items():
            yield from _walk(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{pointer}/{index}")


DOCUMENTS = schemas.documents()
DOCUMENT_IDS = sorted(DOCUMENTS)


def _short(uri: str) -> str:
    return uri.removeprefix(schemas.BASE)


@pytest.mark.parametrize("uri", DOCUMENT_IDS, ids=_short)
def test_document_is_a_valid_2020_12_schema(uri):
    document = DOCUMENTS[uri]
    assert document["$schema"] == DIALECT
    assert isinstance(document.get("description"), str) and document["description"]
    jsonschema.Draft202012Validator.check_schema(document)


@pytest.mark.parametrize("uri", DOCUMENT_IDS, ids=_short)
def test_every_ref_resolves(uri):
    resolver = schemas.registry().resolver()
    refs = [(pointer, node["$ref"]) for pointer, node in _walk(DOCUMENTS[uri]) if "$ref" in node]
    for pointer, ref in refs:
        assert not ref.startswith(("http://", "https://")), f"{pointer}: refs are written relative, got {ref}"
        target = urljoin(uri, ref)
        try:
            resolver.lookup(target)
        except Exception as error:  # referencing raises several Unresolvable subclasses
            pytest.fail(f"{_short(uri)}{pointer}: $ref {ref!r} does not resolve ({error!r})")


@pytest.mark.parametrize("uri", DOCUMENT_IDS, ids=_short)
def test_documents_are_indented_json_with_exact_id(uri):
    path = schemas.ROOT / _short(uri)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text)["$id"] == uri
    indents = {len(line) - len(line.lstrip(" ")) for line in text.splitlines()}
    assert all(indent % 2 == 0 for indent in indents), "2-space indentation"
    assert "\t" not in text


def test_no_schema_forbids_unknown_members():
    offenders = [
        f"{_short(uri)}{pointer}"
        for uri, document in DOCUMENTS.items()
        for pointer, node in _walk(document)
        if node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False
    ]
    assert offenders == []
    assert "additionalProperties" in DOCUMENTS[schemas.BASE + "a2a/Task.json"]["$comment"]


# --------------------------------------------------------------------------------------------- tests: methods


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_document_shape(method):
    document = schemas.resolve(f"methods/{method}.json")
    assert document["x-a2a"] == {"method": method, "streaming": METHODS[method]}
    assert set(document["$defs"]) >= {"params", "result", "errors", "response"}
    codes = document["$defs"]["errors"]["enum"]
    assert len(codes) == len(set(codes))
    assert set(codes) <= set(NAMED_ERROR_CODES.values())
    assert {-32700, -32600, -32601, -32602, -32603} <= set(codes)


SPEC_ERRORS = {
    # -32003 too: §3.3.4 (capability validation) answers any use of push, an inline config included, with it.
    "SendMessage": {-32001, -32003, -32004, -32005},
    "SendStreamingMessage": {-32001, -32003, -32004, -32005},
    "GetTask": {-32001},
    "ListTasks": set(),
    "CancelTask": {-32001, -32002},
    "SubscribeToTask": {-32001, -32004},
    "CreateTaskPushNotificationConfig": {-32001, -32003},
    "GetTaskPushNotificationConfig": {-32001, -32003},
    "ListTaskPushNotificationConfigs": {-32001, -32003},
    "DeleteTaskPushNotificationConfig": {-32001, -32003},
    "GetExtendedAgentCard": {-32004, -32007},
}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_errors_are_those_of_spec_section_3_1(method):
    codes = set(schemas.resolve(f"methods/{method}.json#/$defs/errors")["enum"])
    standard = {-32700, -32600, -32601, -32602, -32603}
    cross_cutting = {-32008, -32009}
    assert codes == standard | cross_cutting | SPEC_ERRORS[method]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_streaming_methods_answer_stream_responses(method):
    result = schemas.resolve(f"methods/{method}.json#/$defs/result")
    assert (result.get("$ref") == "../a2a/StreamResponse.json") == METHODS[method]


# --------------------------------------------------------------------------------------------- tests: error codes


def test_error_codes_are_the_14_named_ones():
    assert schemas.error_codes() == NAMED_ERROR_CODES
    assert schemas.error_code("TaskNotFoundError") == -32001


def test_error_code_defs_are_exactly_const_and_description():
    defs = schemas.resolve("jsonrpc/error-codes.json")["$defs"]
    for name, entry in defs.items():
        assert set(entry) == {"const", "description"}, name
        assert isinstance(entry["const"], int) and entry["description"]


# --------------------------------------------------------------------------------------------- tests: proto


def _json_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _proto_messages() -> dict[str, dict[str, Any]]:
    """Top-level messages of a2a.proto: fields (json name -> REQUIRED?) and oneofs (name -> json names)."""
    text = PROTO.read_text(encoding="utf-8")
    text = re.sub(r"//[^\n]*", "", text)
    messages: dict[str, dict[str, Any]] = {}
    for match in re.finditer(r"^message (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        name, body = match.groups()
        fields: dict[str, bool] = {}
        oneofs: dict[str, list[str]] = {}
        for oneof in re.finditer(r"oneof (\w+) \{(.*?)\}", body, re.S):
            oneofs[oneof.group(1)] = [_json_name(f) for f in re.findall(r"(\w+) = \d+", oneof.group(2))]
        for field in re.finditer(r"^\s*(?:optional |repeated )?(?:map<[^>]+>|[\w.]+) (\w+) = \d+([^;]*);", body, re.M):
            fields[_json_name(field.group(1))] = "REQUIRED" in field.group(2)
        messages[name] = {"fields": fields, "oneofs": oneofs}
    return messages


def _proto_enums() -> dict[str, list[str]]:
    text = re.sub(r"//[^\n]*", "", PROTO.read_text(encoding="utf-8"))
    return {
        m.group(1): re.findall(r"(\w+) = \d+;", m.group(2))
        for m in re.finditer(r"^enum (\w+) \{(.*?)^\}", text, re.M | re.S)
    }


def _schema_for(message: str) -> str:
    if (schemas.ROOT / "a2a" / f"{message}.json").exists():
        return f"a2a/{message}.json"
    if message == "StringList":
        return "a2a/SecurityRequirement.json#/$defs/StringList"
    return f"a2a/SecurityScheme.json#/$defs/{message}"


PROTO_MESSAGES = _proto_messages()


@pytest.mark.parametrize("message", sorted(PROTO_MESSAGES))
def test_schema_matches_proto_message(message):
    proto = PROTO_MESSAGES[message]
    schema = schemas.resolve(_schema_for(message))
    assert set(schema["properties"]) == set(proto["fields"]), "camelCase json names of every proto field"
    required = {name for name, is_required in proto["fields"].items() if is_required}
    assert set(schema.get("required", [])) == required
    oneofs = list(proto["oneofs"].values())
    if oneofs:
        (members,) = oneofs
        assert schema["oneOf"] == [{"required": [member]} for member in members]


def test_schema_enums_match_proto():
    enums = _proto_enums()
    assert set(enums) == {"TaskState", "Role"}
    for name, values in enums.items():
        assert schemas.resolve(f"a2a/{name}.json")["enum"] == values


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": "\\ud800"}',
        b'{"a": "\\uDC00"}',
        '{"a": "\\ud800"}',
        '{"a": "\ud800"}',
        b'{"a": "\xed\xa0\x80"}',
        '{"a": "\\ud800"}'.encode("utf-16"),
        b'{"a": NaN}',
    ],
    ids=["escape", "escape-upper-hex", "escape-in-text", "raw-in-text", "raw-in-utf-8", "escape-in-utf-16", "nan"],
)
def test_the_strict_reader_refuses_a_lone_surrogate_however_it_comes(body):
    with pytest.raises(ValueError):
        schemas.parse_json(body)


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (b'{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),
        (b'{"a": "\\\\ud800"}', {"a": "\\ud800"}),
        (b'{"a": "\xed\x9f\xbf"}', {"a": "\ud7ff"}),
        (b'\xef\xbb\xbf{"a": 1}', {"a": 1}),
        ('{"a": "\\u00e9"}', {"a": "é"}),
    ],
    ids=["pair", "escaped-backslash", "last-before-surrogates", "utf-8-bom", "text"],
)
def test_the_strict_reader_takes_what_only_looks_like_a_surrogate(body, value):
    assert schemas.parse_json(body) == value
