"""A2A-Version on every method: 1.0 (its patch numbers aside) is served; no version, an empty one (both read as
0.3), 0.3 and versions the Agent does not serve are refused with VersionNotSupportedError."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target

VERSION_NOT_SUPPORTED = schemas.error_code("VersionNotSupportedError")
EVERY_METHOD = pytest.mark.parametrize("method", methods.EVERY)
# A2A §3.6: versions are Major.Minor and patch numbers MUST NOT be considered, so 1.0.3 is 1.0 (and 0.3.1 is 0.3).
SERVED_FORMS = {"1.0": "1.0", "patch": "1.0.3"}
# A2A §3.6.1: an empty value is read as 0.3 (and HTTP strips a field value's surrounding whitespace, RFC 9110 §5.5).
NO_VERSION_FORMS = {"absent": None, "empty": ""}
FORMS_OF_0_3 = {"0.3": "0.3", "patch": "0.3.1"}
# Versions a 1.0 interface does not serve: another major, a later minor (A2A §3.6.2 matches Major.Minor, and the
# card names the latest minor an interface serves, a2a.proto AgentInterface.protocol_version), an earlier one.
UNSERVED_VERSIONS = {"9.9": "9.9", "2.0": "2.0", "minor-1.1": "1.1", "0.2": "0.2"}


def _refused(exchange: Exchange, call: methods.Harmless, a2a_client: A2AClient, what: str) -> None:
    error = exchange.error if exchange.is_error else None
    if error is None or error.get("code") != VERSION_NOT_SUPPORTED:
        exchange.fail(
            f"{what} must be refused with VersionNotSupportedError ({VERSION_NOT_SUPPORTED}) on {call.method}"
        )
    call.started_nothing(a2a_client, what)


@pytest.mark.req("VER-01")
@pytest.mark.parametrize("version", list(SERVED_FORMS.values()), ids=list(SERVED_FORMS))
@EVERY_METHOD
def test_version_1_0_is_served(a2a_client: A2AClient, a2a_target: Target, method: str, version: str):
    # Served: a result, or the method's own answer to a task nobody has (TaskNotFoundError, or -32004 for a
    # method the Agent does not serve). Only a version refusal says 1.0 was not understood.
    exchange = methods.Harmless(method).send(a2a_client, version=version)
    if version != SERVED_FORMS["1.0"] and not a2a_target.strict_spec:
        return  # A2A §14.2.1 has the header Major.Minor: a 1.0.3 refused as malformed is a reading it allows
    if exchange.is_error and exchange.error.get("code") == VERSION_NOT_SUPPORTED:
        exchange.fail(f"A2A-Version: {version} is 1.0 (A2A §3.6 ignores patch numbers): {method} must serve it")


def _serves_only_1_x(a2a_target: Target) -> None:
    """A request without a version is 0.3's (A2A §3.6.2): refused where the card lists no 0.3 interface."""
    if "0.3" in _declared_versions(a2a_target):
        not_applicable("the card lists a 0.3 interface, which may serve a request read as 0.3")


@pytest.mark.req("VER-02")
@pytest.mark.parametrize("version", list(NO_VERSION_FORMS.values()), ids=list(NO_VERSION_FORMS))
@EVERY_METHOD
def test_request_without_version_is_refused(
    a2a_target: Target, a2a_client: A2AClient, method: str, version: str | None
):
    _serves_only_1_x(a2a_target)
    call = methods.Harmless(method)
    what = "a request without A2A-Version" if version is None else "a request with an empty A2A-Version"
    _refused(call.send(a2a_client, version=version), call, a2a_client, f"{what} (read as 0.3)")


@pytest.mark.req("VER-02")
def test_message_without_version_starts_nothing(a2a_target: Target, a2a_client: A2AClient):
    _serves_only_1_x(a2a_target)
    context = drivers.new_context()
    params = {
        "message": {
            "messageId": drivers.new_context(),
            "role": "ROLE_USER",
            "contextId": context,
            "parts": [{"text": drivers.ORDINARY_TEXT}],
        }
    }
    a2a_client.call("SendMessage", params, headers=a2a_client.headers(version=None)).expect_error(
        "VersionNotSupportedError"
    )
    listed = a2a_client.list_tasks(contextId=context)
    if listed.result["tasks"]:
        listed.fail("a refused SendMessage must not start a task")


@pytest.mark.req("VER-03")
@pytest.mark.parametrize("version", list(FORMS_OF_0_3.values()), ids=list(FORMS_OF_0_3))
@EVERY_METHOD
def test_version_0_3_is_refused(a2a_target: Target, a2a_client: A2AClient, method: str, version: str):
    if "0.3" in _declared_versions(a2a_target):
        not_applicable("the card lists an interface of version 0.3: the Agent serves it")
    call = methods.Harmless(method)
    _refused(call.send(a2a_client, version=version), call, a2a_client, f"A2A-Version: {version}")


# What an A2A 0.3 client sends: 0.3's method names, with no A2A-Version (0.3 had none) or with 0.3 itself. An Agent
# that serves no 0.3 interface tells it so (-32009), whatever it would answer the name under 1.0 (ERR-05's).
OLD_NAMES = {"message/send": "SendMessage", "tasks/get": "GetTask", "tasks/cancel": "CancelTask"}


@pytest.mark.parametrize(
    "version",
    [
        pytest.param(None, marks=pytest.mark.req("VER-02"), id="no-version"),
        pytest.param("0.3", marks=pytest.mark.req("VER-03"), id="0.3"),
    ],
)
@pytest.mark.parametrize("name", list(OLD_NAMES))
def test_an_a2a_0_3_clients_request_is_refused_as_0_3(
    a2a_target: Target, a2a_client: A2AClient, name: str, version: str | None
):
    if "0.3" in _declared_versions(a2a_target):
        not_applicable("the card lists an interface of version 0.3: the Agent serves it")
    call = methods.Harmless(OLD_NAMES[name])
    exchange = a2a_client.call(name, call.params, headers=call.headers(a2a_client, version=version))
    what = f"A2A 0.3's {name} {'without A2A-Version' if version is None else 'with A2A-Version: 0.3'}"
    _refused(exchange, call, a2a_client, what)


def _declared_versions(a2a_target: Target) -> set[str]:
    """The Major.Minor versions the card's interfaces name (patch numbers are not considered, A2A §3.6)."""
    interfaces = a2a_target.card.get("supportedInterfaces") or []
    named = [i.get("protocolVersion") for i in interfaces if isinstance(i, dict)]
    return {".".join(v.split(".")[:2]) for v in named if isinstance(v, str)}


@pytest.mark.req("VER-04")
@pytest.mark.parametrize("version", list(UNSERVED_VERSIONS.values()), ids=list(UNSERVED_VERSIONS))
@EVERY_METHOD
def test_unknown_version_is_refused(a2a_target: Target, a2a_client: A2AClient, method: str, version: str):
    if version in _declared_versions(a2a_target):
        not_applicable(f"the card lists an interface of version {version}")
    call = methods.Harmless(method)
    _refused(call.send(a2a_client, version=version), call, a2a_client, f"A2A-Version: {version}")


# A2A §3.6.1 lets a client send the version as a request parameter instead of the header, while §9.2 has
# JSON-RPC carry service parameters in headers: an Agent may read the parameter, or read the request as one
# without a version (0.3). Either way a parameter naming a version the Agent does not serve is refused.
@pytest.mark.parametrize(
    "version",
    [pytest.param("0.3", marks=pytest.mark.req("VER-03")), pytest.param("9.9", marks=pytest.mark.req("VER-04"))],
)
@EVERY_METHOD
def test_unserved_version_as_request_parameter_is_refused(
    a2a_target: Target, a2a_client: A2AClient, method: str, version: str
):
    if version in _declared_versions(a2a_target):
        not_applicable(f"the card lists an interface of version {version}: the Agent serves it")
    call = methods.Harmless(method)
    asking = a2a_client.with_(url=methods.with_query(a2a_client.url, **{"A2A-Version": version}))
    what = f"the request parameter A2A-Version={version} (with no header)"
    _refused(call.send(asking, version=None), call, a2a_client, what)


# -- the version as a client may write it


@pytest.mark.req("VER-01")
@pytest.mark.parametrize("spelling", axes.members("VER-01", "spellings"))
@EVERY_METHOD
def test_the_version_header_is_read_however_its_name_is_written(a2a_client: A2AClient, method: str, spelling: str):
    call = methods.Harmless(method)
    headers = methods.respelled(call.headers(a2a_client), "A2A-Version", axes.kind(spelling))
    exchange = call.send(a2a_client, headers=headers)
    if exchange.is_error and exchange.error.get("code") == VERSION_NOT_SUPPORTED:
        exchange.fail(f"header field names are case-insensitive (RFC 9110 §5.1): {method} must read {list(headers)}")


@pytest.mark.req("VER-05")
@pytest.mark.parametrize("spelling", axes.members("VER-05", "spellings"))
@EVERY_METHOD
def test_version_1_0_as_a_request_parameter_is_served(a2a_client: A2AClient, method: str, spelling: str):
    call = methods.Harmless(method)
    asking = a2a_client.with_(url=methods.with_query(a2a_client.url, **{"A2A-Version": "1.0"}))
    exchange = call.send(asking, version=None)
    if exchange.is_error and exchange.error.get("code") == VERSION_NOT_SUPPORTED:
        exchange.fail(f"A2A §3.6.1 lets a client give A2A-Version=1.0 as a request parameter: {method} should serve it")
