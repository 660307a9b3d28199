"""The release gate: known-failures lists, the published summary, Allure results, folded TCK runs."""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures import known_failures, tck
from tests.suite_runs import run_suites

USAGE_ERROR = 4
RELEASE_CLI = (sys.executable, "-m", "nylorun_a2a_kit.fixtures.release_cli")
LISTED = """
[[known]]
requirement = "TASK-05"
reason = "GetTask on a missing task answers -32602"
link = "https://tracker.example/runtime/1"
"""
# One fault, and the checks of the requirement it breaks plus one it does not.
FAULTY = ("--reference-fault=wrong-error-code", "--req=TASK-05,CARD-01")


def _list(tmp_path: Path, text: str, release: str = "9.9.9") -> tuple[str, ...]:
    folder = tmp_path / "known"
    folder.mkdir(exist_ok=True)
    (folder / f"{release}.toml").write_text(text, encoding="utf-8")
    return f"--release={release}", f"--known-failures-dir={folder}"


def _summary(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.req("REL-01")
def test_a_failure_not_on_the_list_blocks_the_release(tmp_path):
    verdicts = run_suites(tmp_path, *FAULTY, *_list(tmp_path, ""), f"--summary-dir={tmp_path / 'out'}", lean=True)
    assert verdicts.returncode == 1, verdicts.output[-2000:]
    assert "release gate: blocked" in verdicts.output
    assert _summary(tmp_path)["new_failures"] == ["suites/test_tasks.py::test_unknown_task_is_not_found"]


@pytest.mark.req("REL-02")
def test_a_listed_failure_is_known_and_does_not_block(tmp_path):
    verdicts = run_suites(tmp_path, *FAULTY, *_list(tmp_path, LISTED), f"--summary-dir={tmp_path / 'out'}", lean=True)
    assert verdicts.returncode == 0, verdicts.output[-2000:]
    test = "suites.test_tasks::test_unknown_task_is_not_found"
    assert verdicts.outcomes[test] == "skipped" and "known failure" in verdicts.messages[test]
    summary = _summary(tmp_path)
    assert summary["verdict"] == "pass" and summary["counts"]["total"].get("known") == 1
    [entry] = summary["known_failures"]
    assert entry["id"] == "TASK-05" and entry["state"] == "failed as expected" and entry["reason"]


@pytest.mark.req("REL-02")
def test_a_listed_check_that_passes_is_reported_fixed_and_fails_only_when_strict(tmp_path):
    listed = _list(tmp_path, LISTED)
    relaxed = run_suites(tmp_path, "--req=TASK-05", *listed, f"--summary-dir={tmp_path / 'out'}", lean=True)
    assert relaxed.returncode == 0, relaxed.output[-2000:]
    assert _summary(tmp_path)["known_failures"][0]["state"] == "fixed: remove it from the list"
    strict = run_suites(tmp_path, "--req=TASK-05", *listed, "--strict-known=yes", lean=True)
    assert strict.returncode == 1, strict.output[-2000:]
    assert "remove it from the list" in strict.output


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[[known]\nrequirement = 'TASK-05'", "not valid TOML"),
        ('[[known]]\nrequirement = "NOPE-01"\nreason = "r"\nlink = "https://t.example/1"', "unknown requirement"),
        (LISTED + LISTED, "a second time"),
        (LISTED + "expires = 2020-01-01\n", "expired on 2020-01-01"),
        ('[[known]]\nrequirement = "TASK-05"\nreason = "r"', "tracking link"),
        (
            '[[known]]\ntest = "suites/test_tasks.py::test_nothing"\nreason = "r"\nlink = "https://t.example/1"',
            "no kit",
        ),
    ],
    ids=["syntax", "unknown-id", "duplicate", "expired", "no-link", "unknown-test"],
)
def test_an_invalid_list_stops_the_run_in_one_line(tmp_path, text, says):
    verdicts = run_suites(tmp_path, "--req=CARD-01", *_list(tmp_path, text), lean=True, timeout_s=60)
    assert verdicts.returncode == USAGE_ERROR, verdicts.output
    errors = [line for line in verdicts.output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and says in errors[0], verdicts.output
    assert "Traceback" not in verdicts.output


@pytest.mark.req("REL-03")
def test_every_run_writes_a_summary_to_publish(tmp_path):
    out = tmp_path / "out"
    verdicts = run_suites(tmp_path, *FAULTY, "--req=TASK-05,CARD-01,PUSH-03", *_list(tmp_path, LISTED),
                          f"--summary-dir={out}", lean=True)  # fmt: skip
    assert verdicts.returncode == 0, verdicts.output[-2000:]
    summary = _summary(tmp_path)
    assert summary["kit"]["version"] and summary["release"] == "9.9.9"
    assert summary["target"]["card_version"] == "0.1.0" and summary["target"]["tier_claimed"] == "profile-v2"
    assert "tier_reached" in summary["target"] and summary["tiers"]
    assert summary["counts"]["by_area"]["card"]["passed"] >= 1 and summary["counts"]["by_tier"]
    assert summary["known_failures"][0]["reason"] and summary["known_failures"][0]["link"]
    assert summary["not_applicable"] and all(
        e["reason"].startswith("not applicable:") for e in summary["not_applicable"]
    )
    assert 0 < summary["requirements"]["coverage_percent"] <= 100
    text = (out / "summary.md").read_text(encoding="utf-8")
    for heading in ("## Checks per area", "## Checks per tier", "## Known failures", "## Not applicable"):
        assert heading in text


def test_allure_results_carry_requirement_labels_exchanges_and_environment(tmp_path):
    results = tmp_path / "allure"
    verdicts = run_suites(tmp_path, *FAULTY, f"--alluredir={results}", f"--summary-dir={tmp_path / 'out'}")
    assert verdicts.returncode == 1, verdicts.output[-2000:]
    found = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    failed = next(r for r in found if r["name"] == "test_unknown_task_is_not_found")
    labels = {(label["name"], label["value"]) for label in failed["labels"]}
    assert {("epic", "tasks"), ("story", "TASK-05"), ("severity", "critical"), ("tag", "core")} <= labels
    assert failed["links"] and "/docs/a2a/client" in failed["links"][0]["url"]
    attachment = next(a for a in failed["attachments"] if a["name"] == "A2A exchanges")
    assert "→ POST" in (results / attachment["source"]).read_text()
    environment = (results / "environment.properties").read_text()
    assert "card.version=0.1.0" in environment and "kit.version=" in environment
    assert json.loads((results / "categories.json").read_text())


def test_parallel_run_gives_the_serial_verdicts(tmp_path):
    args = ("--reference-fault=wrong-error-code", "--req=TASK-05,TASK-06,CARD-01,LIST-04", *_list(tmp_path, LISTED))
    serial = run_suites(tmp_path, *args, f"--summary-dir={tmp_path / 's'}")
    parallel = run_suites(tmp_path, *args, "-n", "2", f"--summary-dir={tmp_path / 'p'}")
    assert serial.outcomes and serial.outcomes == parallel.outcomes, (serial.summary(), parallel.summary())
    assert serial.returncode == parallel.returncode == 1
    one, two = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("s", "p"))
    assert one["counts"] == two["counts"] and one["target"]["tier_reached"] == two["target"]["tier_reached"]


JUNIT = """<testsuites><testsuite name="tck">
<testcase classname="tck.core" name="test_send" time="0.1"/>
<testcase classname="tck.core" name="test_get_unknown" time="0.1"><failure message="expected -32001"/></testcase>
<testcase classname="tck.core" name="test_cancel" time="0.1"><error message="boom"/></testcase>
<testcase classname="tck.optional" name="test_stream" time="0.1"><skipped message="not declared"/></testcase>
</testsuite></testsuites>"""
TCK_LISTED = """
[[known]]
tck = "tck.core::test_get_unknown"
reason = "the error mapping"
link = "https://tracker.example/runtime/2"
"""


def _tck(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    junit = tmp_path / "tck.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    command = [*RELEASE_CLI, "--out", str(tmp_path / "out"), "--no-html"]
    return subprocess.run([*command, *args], capture_output=True, text=True, check=False, timeout=300,
                          cwd=Path(__file__).resolve().parent.parent)  # fmt: skip


def test_a_tck_run_is_folded_into_the_gate(tmp_path):
    folder = tmp_path / "known"
    folder.mkdir()
    (folder / "9.9.9.toml").write_text(LISTED + TCK_LISTED, encoding="utf-8")
    known = known_failures.load("9.9.9", folder)
    junit = tmp_path / "tck.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    summary = tck.fold([junit], known, tmp_path / "out", tmp_path / "allure")
    assert summary["tck"]["known"] == ["tck.core::test_get_unknown"]
    assert summary["tck"]["new_failures"] == ["tck.core::test_cancel"] and summary["verdict"] == "fail"
    assert len(list((tmp_path / "allure").glob("*-result.json"))) == 4
    assert "## Folded TCK run" in (tmp_path / "out" / "summary.md").read_text()


def test_the_release_command_gates_kit_and_tck_together(tmp_path):
    listed = _list(tmp_path, LISTED + TCK_LISTED)
    junit = tmp_path / "tck.xml"
    junit.write_text(JUNIT.replace('<error message="boom"/>', ""), encoding="utf-8")
    clean = subprocess.run(
        [*RELEASE_CLI, *listed, "--tck-junit", str(junit), "--out",
         str(tmp_path / "out"), "--no-html", "--", "-q", *FAULTY, "-p", "no:randomly"],
        capture_output=True, text=True, check=False, timeout=300, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr[-2000:]
    assert "release gate: not blocked" in clean.stdout
    junit.write_text(JUNIT, encoding="utf-8")
    blocked = subprocess.run(
        [*RELEASE_CLI, *listed, "--tck-junit", str(junit), "--out",
         str(tmp_path / "out"), "--no-html", "--", "-q", *FAULTY],
        capture_output=True, text=True, check=False, timeout=300, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert blocked.returncode == 1 and "release gate: blocked" in blocked.stdout, blocked.stdout[-2000:]


def test_an_unknown_tck_entry_stops_the_fold_in_one_line(tmp_path):
    folder = tmp_path / "known"
    folder.mkdir()
    (folder / "9.9.9.toml").write_text(TCK_LISTED.replace("test_get_unknown", "test_nothing"), encoding="utf-8")
    junit = tmp_path / "tck.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    done = subprocess.run(
        [*RELEASE_CLI, "--release", "9.9.9", "--known-failures-dir", str(folder),
         "--tck-junit", str(junit), "--out", str(tmp_path / "out"), "--no-html", "--", "--req=CARD-01"],
        capture_output=True, text=True, check=False, timeout=300, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert done.returncode == USAGE_ERROR, done.stdout[-1000:] + done.stderr[-1000:]
    assert done.stderr.strip().splitlines()[-1].startswith("ERROR:") and "names no test case" in done.stderr


def _browser_tools() -> tuple[list[str] | None, str | None]:
    from nylorun_a2a_kit.fixtures.release_cli import allure_command

    return allure_command(), shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_html_report_opens_in_a_browser_with_the_right_counts(tmp_path):
    allure, chromium = _browser_tools()
    if allure is None or chromium is None:
        missing = "Allure 3 (npm ci)" if allure is None else "Chromium (Debian package chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} is not installed; .ci/run installs it")
        pytest.skip(f"not checked: {missing} is not installed here")
    out = tmp_path / "out"
    done = subprocess.run(
        [*RELEASE_CLI, *_list(tmp_path, LISTED), "--out", str(out), "--",
         "-q", *FAULTY],
        capture_output=True, text=True, check=False, timeout=600, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = out / "allure-report"
    assert (report / "index.html").is_file(), done.stdout[-2000:]
    counts = json.loads((report / "summary.json").read_text())["stats"]
    text = _rendered_text(chromium, report, tmp_path / "profile")
    assert f"Total {counts['total']}" in text and f"Passed {counts['passed']}" in text, text[:2000]
    assert f"Skipped {counts['skipped']}" in text and "release 9.9.9" in text, text[:2000]
    junit_total = len(list((out / "allure-results").glob("*-result.json")))
    assert counts["total"] == junit_total


def _rendered_text(chromium: str, report: Path, profile: Path) -> str:
    """The report's visible text once its scripts ran, served on loopback as a browser would load it."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(report))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--virtual-time-budget=15000", "--dump-dom"]  # fmt: skip
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        dom = subprocess.run([chromium, *flags, url], capture_output=True, text=True, check=False, timeout=120).stdout
    finally:
        server.shutdown()
        thread.join(timeout=10)
    visible = re.sub(r"<script.*?</script>|<style.*?</style>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", visible)))


def test_push_deliveries_are_quoted_in_a_failure_report(tmp_path):
    from nylorun_a2a_kit.reference_agent.faults import FAULTS

    breaks = ",".join(FAULTS["bad-signature"].breaks)
    verdicts = run_suites(tmp_path, "--reference-fault=bad-signature", f"--req={breaks}", "-rf", lean=True)
    assert verdicts.returncode == 1, verdicts.output[-2000:]
    assert "Push deliveries" in verdicts.output and "webhook-signature:" in verdicts.output
