"""Extension activation with A2A-Extensions, the echo, and where extension data rides."""

from __future__ import annotations

import json
import re

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, extensions
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target

UNKNOWN_URI = "https://extensions.example/kit-unknown/v1"


def _echoed(exchange: Exchange) -> set[str]:
    values = exchange.response_headers.get_list("a2a-extensions")
    return {uri.strip() for value in values for uri in value.split(",") if uri.strip()}


def _list(a2a_client: A2AClient, headers) -> Exchange:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 1}}).encode()
    return a2a_client.post(body, method="ListTasks", headers=headers, schema="methods/ListTasks.json#/$defs/response")


@pytest.mark.req("EXT-01")
@pytest.mark.member("several", "extension.last")
@pytest.mark.parametrize(
    "activated",
    [extensions.V2, extensions.V1, (extensions.PROGRESS, extensions.FILES)],
    ids=["all-five", "v1", "progress-and-files"],
)
def test_activated_extensions_are_echoed(a2a_client: A2AClient, activated: tuple[str, ...]):
    exchange = a2a_client.with_(extensions=list(activated)).list_tasks(pageSize=1)
    if _echoed(exchange) != set(activated):
        exchange.fail(f"the answer must echo exactly the activated extensions {sorted(activated)}")


def _claimed(a2a_target: Target) -> tuple[str, ...]:
    """The profile extensions the target's claim declares: all five for a v2 Agent, the v1 ones otherwise."""
    return extensions.V2 if a2a_target.claim == "profile-v2" else extensions.V1


@pytest.mark.req("EXT-01")
@pytest.mark.parametrize("uri", extensions.V2, ids=[uri.rsplit("/", 2)[-2] for uri in extensions.V2])
def test_each_extension_activated_alone_is_echoed(a2a_target: Target, a2a_client: A2AClient, uri: str):
    if uri not in _claimed(a2a_target):
        not_applicable(f"{uri} is a profile v2 extension; the target claims {a2a_target.claim}")
    exchange = a2a_client.with_(extensions=[uri]).list_tasks(pageSize=1)
    if _echoed(exchange) != {uri}:
        exchange.fail(f"activated alone, {uri} must be echoed alone")


@pytest.mark.req("EXT-01")
@pytest.mark.parametrize("spelling", axes.members("EXT-01", "spellings"))
def test_activation_is_read_however_the_header_is_written(a2a_target: Target, a2a_client: A2AClient, spelling: str):
    """The request's A2A-Extensions written in lower case activates as written the kit's way; the echo is read
    whatever case the Agent writes its name in (RFC 9110 §5.1)."""
    activated = _claimed(a2a_target)
    headers = {**a2a_client.headers(), "A2A-Extensions": ", ".join(activated)}
    if "echoed" not in spelling:
        headers = methods.respelled(headers, "A2A-Extensions", axes.kind(spelling))
    exchange = _list(a2a_client, headers)
    exchange.no_response_if_server_failed()  # no Response at all is ERR-14's
    if _echoed(exchange) != set(activated):
        exchange.fail(f"{list(headers)}: the answer must echo the activated extensions {sorted(activated)}")


# How a client may write the comma-separated list (A2A §3.2.6, §9.2; RFC 9110 §5.6.1 allows spaces around the
# commas and empty list elements).
LIST_FORMS = {
    "no-spaces": ",",
    "comma-space": ", ",
    "spaces-around": " ,  ",
    "empty-elements": ", ,,",
}


@pytest.mark.req("EXT-01")
@pytest.mark.parametrize("separator", list(LIST_FORMS.values()), ids=list(LIST_FORMS))
def test_every_form_of_the_list_activates_each_uri(a2a_target: Target, a2a_client: A2AClient, separator: str):
    activated = _claimed(a2a_target)
    headers = {**a2a_client.headers(), "A2A-Extensions": separator.join(activated)}
    exchange = _list(a2a_client, headers)
    if exchange.is_error or _echoed(exchange) != set(activated):
        exchange.fail(f"A2A-Extensions {headers['A2A-Extensions']!r} activates each of {sorted(activated)}")


def _served(method: str, a2a_client: A2AClient, activating: A2AClient, receiver: PushReceiver, cancel_at_end):
    """``method`` answered with a result to ``activating``, on a task ``a2a_client`` started for it."""
    if method == "SendMessage":
        return activating.send(drivers.scenario("complete"))
    if method == "ListTasks":
        return activating.list_tasks(pageSize=1)
    if method == "GetTask":
        return activating.get_task(drivers.run(a2a_client, "complete")["id"])
    if method == "CancelTask":
        task = a2a_client.send(drivers.scenario("slow", 120_000), return_immediately=True).task
        cancel_at_end(a2a_client, task["id"])
        return activating.cancel(task["id"])
    task = drivers.run(a2a_client, "ask")
    cancel_at_end(a2a_client, task["id"])
    if method == "CreateTaskPushNotificationConfig":
        return drivers.create_push_config(activating, task["id"], receiver.endpoint().url)
    config_id = drivers.create_push_config(a2a_client, task["id"], receiver.endpoint().url).result["id"]
    params = {"taskId": task["id"]}
    if method != "ListTaskPushNotificationConfigs":
        params["id"] = config_id
    return activating.call(method, params)


SCENARIO_OF = {"SendMessage": "complete", "GetTask": "complete", "CancelTask": "slow"}
SERVED_METHODS = [
    pytest.param(m, marks=[] if m == "ListTasks" else [pytest.mark.scenario(SCENARIO_OF.get(m, "ask"))])
    for m in methods.SERVED + methods.PUSH_CONFIG
]


@pytest.mark.req("EXT-01")
@pytest.mark.parametrize("method", SERVED_METHODS)
def test_every_method_echoes_the_activated_extensions(
    a2a_target: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, method: str, a2a_cancel_at_end
):
    if method in methods.PUSH_CONFIG and not (a2a_target.card.get("capabilities") or {}).get("pushNotifications"):
        not_applicable("the card says pushNotifications false: the config methods serve no result to echo on")
    activated = _claimed(a2a_target)
    activating = a2a_client.with_(extensions=list(activated))
    exchange = _served(method, a2a_client, activating, a2a_push_receiver, a2a_cancel_at_end)
    exchange.ok()
    if _echoed(exchange) != set(activated):
        exchange.fail(f"{method}'s answer must echo exactly the activated extensions {sorted(activated)}")


@pytest.mark.req("EXT-01")
def test_header_is_read_as_http_reads_it(a2a_client: A2AClient):
    # Header names are case-insensitive, a field may repeat, and list items may carry spaces (RFC 9110 §5.3).
    headers = [(k, v) for k, v in a2a_client.headers().items()]
    headers += [
        ("a2a-extensions", f"{extensions.INTERACTIONS}  ,  {extensions.INTERACTIONS}"),
        ("A2A-EXTENSIONS", extensions.PROGRESS),
    ]
    exchange = _list(a2a_client, headers)
    if exchange.is_error or _echoed(exchange) != {extensions.INTERACTIONS, extensions.PROGRESS}:
        exchange.fail("repeated, differently cased A2A-Extensions fields with spaces activate their union")


# A URI the card does not declare, asked for alone and beside declared ones (A2A §4.6.3: it is ignored).
UNKNOWN_FORMS = {"alone": (), "beside-declared": (extensions.INTERACTIONS, extensions.EFFECTS)}


@pytest.mark.req("EXT-02")
@pytest.mark.parametrize("beside", list(UNKNOWN_FORMS.values()), ids=list(UNKNOWN_FORMS))
def test_unknown_extension_is_ignored(a2a_target: Target, a2a_client: A2AClient, beside: tuple[str, ...]):
    listed = {e.get("uri") for e in (a2a_target.card.get("capabilities") or {}).get("extensions") or []}
    asked = [UNKNOWN_URI, *(uri for uri in beside if uri in listed)]
    exchange = a2a_client.with_(extensions=asked).list_tasks(pageSize=1)
    if exchange.is_error:
        exchange.fail("an undeclared URI in A2A-Extensions is ignored, not refused")
    if UNKNOWN_URI in _echoed(exchange):
        exchange.fail("an undeclared URI must never be echoed")


# An extension URI that ends in its version (A2A §4.6.3: extensions SHOULD carry it in the URI).
VERSIONED_URI = re.compile(r"^(?P<base>.+/v)(?P<major>\d+)/?$")


@pytest.mark.req("EXT-08")
def test_other_version_does_not_fall_back_to_the_declared_one(a2a_target: Target, a2a_client: A2AClient):
    listed = (a2a_target.card.get("capabilities") or {}).get("extensions") or []
    declared = {e["uri"] for e in listed if isinstance(e, dict) and isinstance(e.get("uri"), str)}
    others = {}
    for uri in sorted(declared):
        versioned = VERSIONED_URI.match(uri)
        other = f"{versioned['base']}{int(versioned['major']) + 98}" if versioned else None
        if other and other not in declared:
            others[uri] = other
    if not others:
        not_applicable("the card declares no extension URI that ends in its version (…/v<N>)")
    exchange = a2a_client.with_(extensions=sorted(others.values())).list_tasks(pageSize=1)
    fell_back = sorted(_echoed(exchange) & set(others))
    if fell_back:
        exchange.fail(
            f"asked for {', '.join(others[u] for u in fell_back)}, the Agent activated {', '.join(fell_back)}: "
            "an unsupported version must not fall back to another one (A2A §4.6.3)"
        )


# The scenarios whose answers carry extension data in their messages.
EXTENSION_DATA_SCENARIOS = pytest.mark.parametrize(
    "scenario", [pytest.param(name, marks=pytest.mark.scenario(name)) for name in ("approve", "plan")]
)


def _paused_with_history(a2a_v2_client: A2AClient, scenario: str, a2a_cancel_at_end) -> tuple:
    task = a2a_v2_client.send(drivers.scenario(scenario)).task
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    got = a2a_v2_client.get_task(task["id"], history_length=50)
    return got, [got.task["status"].get("message") or {}, *(got.task.get("history") or [])]


@pytest.mark.req("EXT-03")
@EXTENSION_DATA_SCENARIOS
def test_extension_data_rides_in_metadata(a2a_v2_client: A2AClient, scenario: str, a2a_cancel_at_end):
    got, messages = _paused_with_history(a2a_v2_client, scenario, a2a_cancel_at_end)
    uri = extensions.INTERACTIONS if scenario == "approve" else extensions.PROGRESS
    if extensions.read(got.task, uri) is None:
        got.fail(f"the {scenario} scenario's data must ride in metadata under {uri}")
    in_parts = [
        part
        for message in messages
        for part in message.get("parts", [])
        if "data" in part and any(u in json.dumps(part["data"]) for u in extensions.V2)
    ]
    if in_parts:
        got.fail("extension data rides in metadata keyed by its URI, never in parts")


@pytest.mark.req("EXT-04")
@EXTENSION_DATA_SCENARIOS
def test_message_with_extension_data_lists_the_uri(a2a_v2_client: A2AClient, scenario: str, a2a_cancel_at_end):
    got, messages = _paused_with_history(a2a_v2_client, scenario, a2a_cancel_at_end)
    for message in messages:
        carried = {k for k in (message.get("metadata") or {}) if k.startswith(extensions.PROFILE_PREFIX)}
        missing = carried - set(message.get("extensions") or [])
        if missing:
            got.fail(f"message {message.get('messageId')} carries {sorted(missing)} but does not list them")
    if not any(m.get("metadata") for m in messages):
        got.fail(f"the {scenario} scenario should answer a message with extension data")


# The scenarios whose answers carry each extension's data.
SHAPE_RUNS = {
    extensions.INTERACTIONS: (("approve", None), ("ask", None), ("connect", None)),
    extensions.EFFECTS: (("uncertain", 120_000),),
    extensions.PROGRESS: (("plan", 3),),
    extensions.TELEMETRY: (("echo", None),),
    extensions.FILES: (("file", "notes/shape.txt Checked for its shape."),),
}
V1_SHAPE = pytest.mark.req("EXT-06")
V2_SHAPE = pytest.mark.req("EXT-07")


def _shape_case(uri: str, requirement):
    marks = [requirement, *(pytest.mark.scenario(name) for name, _ in SHAPE_RUNS[uri])]
    return pytest.param(uri, marks=marks, id=uri.rsplit("/", 2)[-2])


@pytest.mark.parametrize(
    "uri",
    [_shape_case(uri, V1_SHAPE) for uri in extensions.V1]
    + [_shape_case(uri, V2_SHAPE) for uri in extensions.V2 if uri not in extensions.V1],
)
def test_extension_data_has_the_profile_shape(request, uri: str, a2a_recorder: list, a2a_cancel_at_end):
    # Every answer's extension data is checked against schemas/extensions/ as it arrives and recorded on
    # the exchange; this check drives the scenarios that produce this extension's data and reads the record.
    a2a_client = request.getfixturevalue("a2a_v1_client" if uri in extensions.V1 else "a2a_v2_client")
    seen = False
    for name, argument in SHAPE_RUNS[uri]:
        task = a2a_client.send(drivers.scenario(name, argument), return_immediately=True).task
        a2a_cancel_at_end(a2a_client, task["id"])
        task = drivers.wait_for(
            a2a_client, task["id"], lambda t: drivers.state(t) in drivers.SETTLED or bool(extensions.read(t, uri))
        )
        got = a2a_client.get_task(task["id"], history_length=50)
        a2a_client.list_tasks(contextId=task["contextId"], includeArtifacts=True, historyLength=50)
        seen = seen or any(uri in m for m in extensions.profile_mentions(got.method, got.result))
    wrong = [(e, v) for e in a2a_recorder for v in e.extension_violations.get(uri, [])]
    if wrong:
        exchange, _ = wrong[0]
        listed = "\n".join(f"  {v}" for _, v in wrong[:10])
        exchange.fail(f"{uri} data breaks its schema (schemas/extensions/):\n{listed}")
    if not seen:
        a2a_client.get_task(task["id"]).fail(f"the scenarios should answer {uri} data")


# -- the profile's data on every channel an object travels

# Each kind of task whose views carry the profile's data, with the scenario it is made of.
DATA_KINDS = {
    "plan": "plan",
    "files": "complete",
    "approval": "approve",
    "question": "ask",
    "connection": "connect",
    "uncertain": "uncertain",
}
STATUS_DATA = (extensions.INTERACTIONS, extensions.EFFECTS, extensions.PROGRESS, extensions.TELEMETRY)


def _kind_cases(requirement: str) -> list:
    """Each kind × each channel of the requirement."""
    return [
        pytest.param(
            kind,
            channel.values[0],
            id=f"{kind}-{channel.values[0]}",
            marks=[*channel.marks, pytest.mark.scenario(scenario)],
        )
        for kind, scenario in DATA_KINDS.items()
        for channel in axes.members(requirement, "channels")
    ]


def _applies(a2a_target: Target, kind: str) -> None:
    if kind == "connection" and not a2a_target.claims("profile-v2"):
        not_applicable("a connection interaction is Profile v2's")


def _listed_without_data(task: dict) -> list[str]:
    """Each profile URI a message the Agent wrote in ``task`` lists in its extensions without carrying its data."""
    messages = [(task.get("status") or {}).get("message"), *(task.get("history") or [])]
    return [
        f"{message.get('messageId')}: {uri}"
        for message in messages
        if isinstance(message, dict) and message.get("role") == "ROLE_AGENT"
        for uri in message.get("extensions") or []
        if uri in extensions.V2 and uri not in (message.get("metadata") or {})
    ]


@pytest.mark.req("EXT-11")
@pytest.mark.scenario("ask")
def test_a_message_lists_only_the_uris_of_its_data(a2a_v2_client: A2AClient, a2a_cancel_at_end):
    """A paused task's status message carries interactions/v1 data with all five extensions activated: it lists
    that URI, and none of the four whose data it does not carry (the oracle's rule listed-uris, on every read)."""
    task = drivers.run(a2a_v2_client, "ask")
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    for read in (
        a2a_v2_client.get_task(task["id"], history_length=10),
        a2a_v2_client.list_tasks(contextId=task["contextId"], historyLength=10),
    ):
        shown = [read.task] if read.method == "GetTask" else read.result.get("tasks") or []
        listed = [entry for one in shown for entry in _listed_without_data(one)]
        if listed:
            read.fail(f"a message lists only the extensions whose data it carries; listed without data: {listed}")


@pytest.mark.shares_turn("*")
@pytest.mark.req("EXT-04")
@pytest.mark.parametrize(("kind", "channel"), _kind_cases("EXT-04"))
def test_a_message_lists_the_uris_of_its_data_on_every_channel(a2a_target: Target, a2a_channel_views, kind, channel):
    _applies(a2a_target, kind)
    views = a2a_channel_views(kind)
    for where, shown in views.on(channel):
        message = ((shown or {}).get("status") or {}).get("message") or {}
        carried = {k for k in (message.get("metadata") or {}) if k.startswith(extensions.PROFILE_PREFIX)}
        missing = carried - set(message.get("extensions") or [])
        if missing:
            views.fail(channel, f"{where}: its status message carries {sorted(missing)} but does not list them")


@pytest.mark.shares_turn("*")
@pytest.mark.req("EXT-09")
@pytest.mark.parametrize(("kind", "channel"), _kind_cases("EXT-09"))
def test_the_profile_data_is_the_same_on_every_channel(a2a_target: Target, a2a_channel_views, kind, channel):
    """What GetTask shows of the settled task, the other channels show the same: its status-level data (the
    settled state's newest delivery on the push channel) and each artifact's files/v1 data, by artifactId."""
    _applies(a2a_target, kind)
    views = a2a_channel_views(kind)
    shown = views.on(channel)
    if not shown:
        views.fail(channel, f"{axes.CHANNELS[channel]} must show the task in the state it settled in")
    where, there = shown[-1]
    for uri in STATUS_DATA:
        if extensions.read(views.task, uri) != extensions.read(there or {}, uri):
            views.fail(
                channel,
                f"{where} shows {uri} as {json.dumps(extensions.read(there or {}, uri))}; GetTask shows "
                f"{json.dumps(extensions.read(views.task, uri))}: the same object's data is the same on every channel",
            )
    on_task, on_channel = views.artifacts("get"), views.artifacts(channel)
    for artifact_id, artifact in on_task.items():
        files = _as_meant((artifact.get("metadata") or {}).get(extensions.FILES))
        other = _as_meant(((on_channel.get(artifact_id) or {}).get("metadata") or {}).get(extensions.FILES))
        if files is not None and other != files:
            views.fail(
                channel,
                f"artifact {artifact_id}: files/v1 {json.dumps(other)} on {axes.CHANNELS[channel]}, "
                f"{json.dumps(files)} on GetTask",
            )


def _as_meant(files: dict | None) -> dict | None:
    """files/v1 data as it means: a sha256 is 64 hex digits in either case (schemas/extensions/files-v1.json)."""
    if not isinstance(files, dict) or not isinstance(files.get("sha256"), str):
        return files
    return {**files, "sha256": files["sha256"].lower()}


# -- each extension activated alone

ALONE_UNCERTAIN_MS = 3000  # long enough for a few reads while it works, short enough to be the wait's own end


@pytest.mark.req("EXT-10")
@pytest.mark.parametrize(
    "uri",
    [
        pytest.param(uri, marks=[pytest.mark.scenario(SHAPE_RUNS[uri][0][0])], id=uri.rsplit("/", 2)[-2])
        for uri in extensions.V2
    ],
)
def test_an_extension_activated_alone_carries_its_data_and_no_other(a2a_client: A2AClient, uri: str, a2a_cancel_at_end):
    """A client may activate one extension: its data rides as with all five (one block gated on another extension's
    activation loses it), and no other extension's data rides beside it. A Profile v2 card declares all five."""
    alone = a2a_client.with_(extensions=[uri])
    name, argument = SHAPE_RUNS[uri][0]
    argument = ALONE_UNCERTAIN_MS if name == "uncertain" else argument  # its own end is the deadline of the wait
    task = alone.send(drivers.scenario(name, argument), return_immediately=True).task
    a2a_cancel_at_end(alone, task["id"])
    shown: list[dict] = []

    def settled_or_shown(current: dict) -> bool:
        if extensions.read(current, uri) is not None:
            shown.append(current)
        return drivers.state(current) in drivers.SETTLED

    drivers.wait_for(alone, task["id"], settled_or_shown)
    got = alone.get_task(task["id"], history_length=50)
    mentions = list(extensions.profile_mentions(got.method, got.result))
    if not shown and not any(uri in m for m in mentions):
        got.fail(f"with only {uri} activated, the {name} turn must carry its {uri} data, as with all five activated")
    others = [m for m in mentions if uri not in m]
    if others:
        got.fail(f"with only {uri} activated, no other extension's data rides: {', '.join(others[:5])}")
