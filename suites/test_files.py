"""files/v1: each file artifact's kind, version, size, sha256 and path, checked against the actual bytes."""

from __future__ import annotations

import base64
import hashlib
import itertools
import secrets
from urllib.parse import urlsplit

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, extensions
from nylorun_a2a_kit.fixtures.requirements import axes, not_checked
from nylorun_a2a_kit.fixtures.scenarios import FileServer, drivers
from nylorun_a2a_kit.fixtures.target import Target


def _file_artifacts(task: dict) -> list[dict]:
    return [a for a in task.get("artifacts") or [] if any("raw" in p or "url" in p for p in a.get("parts", []))]


def _write(a2a_client: A2AClient, path: str, content: str, **send) -> dict:
    return drivers.settle(a2a_client, a2a_client.send(drivers.scenario("file", f"{path} {content}"), **send).task)


def _origin(url: str) -> tuple:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


def _download(a2a_client: A2AClient, url: str) -> Exchange:
    """GET a file URL as a caller would: plain first, then with the target's credentials.

    The credentials go only to the target's own origin: the kit never hands its key to another host.
    """
    plain = a2a_client.get(url)
    if plain.status == 200 or _origin(url) != _origin(a2a_client.url):
        return plain
    headers = {k: v for k, v in a2a_client.headers().items() if k in ("Authorization", "Nylorun-Subject")}
    return a2a_client.get(url, headers)


def _bytes_of(a2a_client: A2AClient, part: dict) -> tuple[bytes, Exchange | None]:
    if "raw" in part:
        value = part["raw"]
        return base64.urlsafe_b64decode((value + "=" * (-len(value) % 4)).replace("+", "-").replace("/", "_")), None
    download = _download(a2a_client, part["url"])
    if download.status != 200:
        download.fail("a url file part's URL must answer the file's bytes")
    return download.response_body, download


@pytest.mark.req("FILE-01")
@pytest.mark.parametrize(
    "scenario", [pytest.param(name, marks=pytest.mark.scenario(name)) for name in ("file", "complete")]
)
def test_file_artifacts_carry_files_data(a2a_v2_client: A2AClient, scenario: str):
    argument = "notes/summary.txt A short summary." if scenario == "file" else None
    task = drivers.settle(a2a_v2_client, a2a_v2_client.send(drivers.scenario(scenario, argument)).task)
    artifacts = _file_artifacts(task)
    if not artifacts:
        a2a_v2_client.get_task(task["id"]).fail(f"the {scenario} scenario should answer file artifacts")
    for artifact in artifacts:
        file = (artifact.get("metadata") or {}).get(extensions.FILES)
        if not file or not {"kind", "version", "size", "sha256", "path"} <= set(file):
            a2a_v2_client.get_task(task["id"]).fail(
                f"artifact {artifact.get('artifactId')} carries a file without all of files/v1's fields"
            )


@pytest.mark.req("FILE-02")
@pytest.mark.scenario("file")
@pytest.mark.parametrize("version", ["first", "changed"])
def test_size_and_sha256_match_the_bytes(a2a_v2_client: A2AClient, version: str):
    """The first version of a file at a path, and a later one: a digest kept from the first is the wrong file's,
    and the first version's URL, fetched once the later one was written, still answers the first version's bytes."""
    context = drivers.new_context()
    tasks = []
    for _ in range(1 if version == "first" else 2):
        content = f"line one {secrets.token_hex(4)} naïve ✓"
        tasks.append(_write(a2a_v2_client, "reports/check.txt", content, context_id=context))
    read = [(written, artifact) for written in reversed(tasks) for artifact in _file_artifacts(written)]
    for task, artifact in read:
        file = (artifact.get("metadata") or {}).get(extensions.FILES) or {}
        for part in artifact["parts"]:
            if "raw" not in part and "url" not in part:
                continue
            data, _ = _bytes_of(a2a_v2_client, part)
            got = (len(data), hashlib.sha256(data).hexdigest())
            if got != (file.get("size"), str(file.get("sha256", "")).lower()):  # hex in either case (the schema)
                a2a_v2_client.get_task(task["id"]).fail(
                    f"files/v1 says size {file.get('size')} sha256 {file.get('sha256')}, the bytes are {got}"
                )


@pytest.mark.req("FILE-03")
@pytest.mark.scenario("complete")
def test_url_file_parts_can_be_fetched(a2a_v2_client: A2AClient):
    task = drivers.run(a2a_v2_client, "complete")
    urls = [p["url"] for a in task.get("artifacts") or [] for p in a.get("parts", []) if "url" in p]
    if not urls:
        a2a_v2_client.get_task(task["id"]).fail("the complete scenario answers a url file part")
    for url in urls:
        _bytes_of(a2a_v2_client, {"url": url})


# A url part the Agent cannot fetch (a closed loopback port) before the kit's, or none.
UNFETCHABLE = "http://127.0.0.1:9/kit-no-such-file"


@pytest.mark.req("FILE-04")
@pytest.mark.scenario("inspect")
@pytest.mark.parametrize("before", ["nothing", "a url part the Agent cannot fetch"])
def test_url_part_in_a_message_is_read(a2a_target: Target, a2a_v2_client: A2AClient, before: str):
    if urlsplit(a2a_target.url).hostname not in ("127.0.0.1", "localhost", "::1"):
        not_checked(
            "the kit serves the input file on loopback, which a remote target cannot reach",
            needs="a target on this machine (loopback)",
        )
    data = secrets.token_bytes(3000)
    server = FileServer()
    try:
        url = server.add(data, "input.bin")
        part = {"url": url, "filename": "input.bin", "mediaType": "application/octet-stream"}
        parts = [{**part, "url": UNFETCHABLE}, part] if before != "nothing" else [part]
        task = drivers.settle(a2a_v2_client, a2a_v2_client.send(drivers.scenario("inspect"), *parts).task)
    finally:
        server.close()
    reports = [p["data"] for a in task.get("artifacts") or [] for p in a.get("parts", []) if "data" in p]
    seen = [r for report in reports for r in report.get("inspected", []) if r.get("url") == url]
    if not seen or (seen[0].get("size"), seen[0].get("sha256")) != (len(data), hashlib.sha256(data).hexdigest()):
        a2a_v2_client.get_task(task["id"]).fail(f"the Agent must read the url part's file: {len(data)} bytes at {url}")


def _version(task: dict):
    # The file scenario answers one file artifact; its path's form is the Agent's (files/v1 decision).
    files = [(a.get("metadata") or {}).get(extensions.FILES) or {} for a in _file_artifacts(task)]
    return files[0].get("version") if len(files) == 1 else None


# One path written turn after turn in one conversation, each turn's content other than the turn before's: changed
# once, twice, and back to an earlier content (the version follows the latest one, never an earlier turn's).
HISTORIES = {
    "changed once": ("first draft", "second draft"),
    "changed twice": ("first draft", "second draft", "third draft"),
    "changed back": ("first draft", "second draft", "first draft"),
}


@pytest.mark.req("FILE-05")
@pytest.mark.scenario("file")
@pytest.mark.parametrize("history", HISTORIES)
def test_version_changes_when_the_file_changes(a2a_v2_client: A2AClient, history: str):
    context = drivers.new_context()
    tasks = [_write(a2a_v2_client, "drafts/plan.txt", text, context_id=context) for text in HISTORIES[history]]
    versions = [_version(task) for task in tasks]
    for turn, (before, after) in enumerate(itertools.pairwise(versions), 2):
        grew = after > before if isinstance(before, int) and isinstance(after, int) else after != before
        if before is None or after is None or not grew:
            a2a_v2_client.get_task(tasks[turn - 1]["id"]).fail(
                f"a changed file's version must change (grow) from the turn before's: turn {turn} of "
                f"{HISTORIES[history]} has {after!r} after {before!r} (versions {versions})"
            )


# -- files/v1 on every channel the ended task travels, for every file artifact, the last one too


def _file_artifacts_on(views, channel: str) -> dict[str, dict]:
    on_task = [a.get("artifactId") for a in _file_artifacts(views.task)]
    if len(on_task) < 2:
        views.fail("get", "the complete scenario answers two file artifacts (a raw part, a url part)")
    shown = views.artifacts(channel)
    missing = [artifact_id for artifact_id in on_task if artifact_id not in shown]
    if missing:
        views.fail(channel, f"{axes.CHANNELS[channel]} must carry each of the task's artifacts: missing {missing}")
    return {artifact_id: shown[artifact_id] for artifact_id in on_task}


@pytest.mark.shares_turn("files")
@pytest.mark.req("FILE-01")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("channel", axes.members("FILE-01", "channels"))
@pytest.mark.member("several", "artifact.last")
def test_every_file_artifact_carries_files_data_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("files")
    for artifact_id, artifact in _file_artifacts_on(views, channel).items():
        data = (artifact.get("metadata") or {}).get(extensions.FILES) or {}
        missing = [key for key in ("kind", "version", "size", "sha256", "path") if key not in data]
        if missing:
            views.fail(channel, f"artifact {artifact_id} on {axes.CHANNELS[channel]}: files/v1 lacks {missing}")


@pytest.mark.shares_turn("files")
@pytest.mark.req("FILE-02")
@pytest.mark.scenario("complete")
@pytest.mark.parametrize("channel", axes.members("FILE-02", "channels"))
@pytest.mark.member("several", "artifact.last")
def test_size_and_sha256_match_the_bytes_on_every_channel(a2a_channel_views, a2a_client: A2AClient, channel: str):
    views = a2a_channel_views("files")
    for artifact_id, artifact in _file_artifacts_on(views, channel).items():
        data = (artifact.get("metadata") or {}).get(extensions.FILES) or {}
        part = next(p for p in artifact.get("parts") or [] if "raw" in p or "url" in p)
        content, _ = _bytes_of(a2a_client, part)
        digest = hashlib.sha256(content).hexdigest()
        if data.get("size") != len(content) or str(data.get("sha256", "")).lower() != digest:
            views.fail(
                channel,
                f"artifact {artifact_id} on {axes.CHANNELS[channel]}: files/v1 says size {data.get('size')}, sha256 "
                f"{data.get('sha256')}; its bytes are {len(content)} long with sha256 {digest}",
            )
