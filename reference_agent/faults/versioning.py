"""Faults of the version check: which A2A-Version, on which method, in which form, the binding serves."""

from __future__ import annotations

from aiohttp import web

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent import extensions
from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.rpc import SUPPORTED_VERSIONS, Compatibility, parse_version


@declare("no-version-check", "serves a request that has no A2A-Version header", "VER-02")
class NoVersionCheck(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return version_header is None or super().serves(version_header, method)


@declare("accepts-0.3", "serves a request that asks for A2A-Version 0.3", "VER-03")
class Accepts03(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        asks_03 = bool(version_header) and parse_version(version_header) == "0.3"
        return asks_03 or super().serves(version_header, method)


@declare("version-1.0-refused", "A2A-Version 1.0 is refused like any other version", "VER-01")
class Version10Refused(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return False


@declare("accepts-any-version", "any A2A-Version other than 0.3 is served", "VER-04")
class AcceptsAnyVersion(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return parse_version(version_header) not in (None, "0.3") or super().serves(version_header, method)


@declare(
    "send-without-version-served",
    "SendMessage without an A2A-Version header is served; every other method refuses it",
    "VER-02",
)
class SendWithoutVersionServed(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return (version_header is None and method == "SendMessage") or super().serves(version_header, method)


@declare("empty-version-served", "an empty A2A-Version is served as the current version, not read as 0.3", "VER-02")
class EmptyVersionServed(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return version_header == "" or super().serves(version_header, method)


@declare(
    "patch-version-refused",
    "A2A-Version 1.0.3 is refused: the version is compared with its patch",
    "VER-01",
    run_with=("--a2a-strict-spec=yes",),
)
class PatchVersionRefused(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return (version_header or "").strip() == "1.0" and super().serves(version_header, method)


@declare("minor-version-served", "A2A-Version 1.1 is served as 1.0: only the major version is compared", "VER-04")
class MinorVersionServed(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        same_major = (parse_version(version_header) or "").split(".")[0] == "1"
        return same_major or super().serves(version_header, method)


@declare(
    "config-get-version-unchecked",
    "GetTaskPushNotificationConfig skips the version check: served with no, 0.3 or any A2A-Version",
    "VER-02",
    "VER-03",
    "VER-04",
)
class ConfigGetVersionUnchecked(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return method == "GetTaskPushNotificationConfig" or super().serves(version_header, method)


@declare(
    "subscribe-answers-version-error",
    "SubscribeToTask answers VersionNotSupportedError (-32009) to A2A-Version 1.0, as if streaming were 0.3's",
    "VER-01",
    "UNSRV-02",
)
class SubscribeAnswersVersionError(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return method != "SubscribeToTask" and super().serves(version_header, method)


@declare(
    "query-version-served",
    "a version sent only as the A2A-Version request parameter is served, whatever version it names",
    "VER-03",
    "VER-04",
)
@wire.request_headers
def query_version_served(request: web.Request) -> dict[str, str] | None:
    if "A2A-Version" in request.query and "A2A-Version" not in request.headers:
        return {"A2A-Version": SUPPORTED_VERSIONS[0]}
    return None


@declare("v1-client-refused", "a caller activating only the v1 extensions is refused with -32008", "TIER-06")
class V1ClientRefused(Compatibility):
    def check(self, version_header: str | None, caller: Caller, method: str) -> None:
        super().check(version_header, caller, method)
        if caller.extensions == extensions.V1:
            raise RpcError(
                "ExtensionSupportRequiredError", "Activate every profile v2 extension.", reason="EXTENSION_REQUIRED"
            )


@declare(
    "method-found-before-the-version",
    "the method is looked up before the version is checked: a request naming no A2A 1.0 method (an A2A 0.3 client's "
    "message/send) is answered -32601 whatever its A2A-Version, so a 0.3 client never learns its version is refused",
    "VER-02",
    "VER-03",
)
class MethodFoundBeforeTheVersion(Compatibility):
    def serves(self, version_header: str | None, method: str) -> bool:
        return method not in schemas.method_names() or super().serves(version_header, method)
