"""The release gate: known-failures lists, the published summary, Allure results, folded TCK runs."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate import fold as tck
from nylorun_a2a_kit.fixtures.gate import known_failures, report
from tests.agent_process import agent_process
from tests.suite_runs import REPO, run_suites
from tests.tck_install import installed_tck

pytestmark = pytest.mark.slow  # runs of the suites and of the gate, each in a process of its own

USAGE_ERROR = 4
RELEASE_CLI = (sys.executable, "-m", "nylorun_a2a_kit.fixtures.gate.cli")
TCK_CLI = (
    sys.executable,
    "-c",
    "import sys; from nylorun_a2a_kit.fixtures.gate.cli import tck_main; sys.exit(tck_main())",
)
LISTED = """
[[known]]
requirement = "TASK-05"
reason = "GetTask on a missing task answers -32602"
link = "https://tracker.example/runtime/1"
"""
# One fault, and the checks of the requirement it breaks plus one it does not.
FAULTY = ("--a2a-reference-mutant=wrong-error-code", "--a2a-req=TASK-05,CARD-01")


def _cli(command: list[str], timeout_s: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A kit command as a user runs it from the repository, with none of this machine's NYLORUN_* settings."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_XDIST"))}
    environment.update(env or {})
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=timeout_s, cwd=REPO, env=environment
    )


PARTIAL = ("--a2a-enforce-claim=no",)  # a run of a few checks verifies no tier


def _folder(tmp_path: Path, text: str, release: str) -> Path:
    folder = tmp_path / "known"
    folder.mkdir(exist_ok=True)
    (folder / f"{release}.toml").write_text(text, encoding="utf-8")
    return folder


def _list(tmp_path: Path, text: str, release: str = "9.9.9", *, partial: bool = True) -> tuple[str, ...]:
    """A pytest run's list options; a ``partial`` run (a few checks) does not enforce the claim."""
    folder = _folder(tmp_path, text, release)
    return (f"--a2a-release={release}", f"--a2a-known-failures-dir={folder}") + (PARTIAL if partial else ())


def _gate_list(tmp_path: Path, text: str, release: str = "9.9.9") -> tuple[str, ...]:
    """The gate's own list options (before --)."""
    return "--release", release, "--known-failures-dir", str(_folder(tmp_path, text, release))


def _tck_gate(tmp_path: Path, known: str, junit: Path, *kit: str) -> list[str]:
    """The gate's command with ``known`` as its list and the TCK's ``junit`` folded in; ``kit`` after --."""
    folded = ("--tck-junit", str(junit), "--out", str(tmp_path / "out"), "--no-html")
    return [*RELEASE_CLI, *_gate_list(tmp_path, known), *folded, "--", *kit]


def _fold(junits: list[Path], known, summary_dir: Path, allure: Path | None, *, strict: bool = False) -> dict:
    """Fold as nylorun-a2a-tck does: into the kit run's published summary, written once."""
    folded = tck.read(junits, known, strict=strict)
    summary = tck.into_summary(summary_dir, folded, known)
    report.write(summary, summary_dir)
    if allure is not None:
        tck.write_allure(folded, allure)
    return summary


def _summary(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))


def test_parallel_run_gives_the_serial_verdicts(tmp_path):
    args = (
        "--a2a-reference-mutant=wrong-error-code",
        "--a2a-req=TASK-05,TASK-06,CARD-01,LIST-04",
        *_list(tmp_path, LISTED),
    )
    serial = run_suites(tmp_path, *args, f"--a2a-summary-dir={tmp_path / 's'}")
    parallel = run_suites(tmp_path, *args, "-n", "2", f"--a2a-summary-dir={tmp_path / 'p'}")
    assert serial.outcomes and serial.outcomes == parallel.outcomes, (serial.summary(), parallel.summary())
    assert serial.returncode == parallel.returncode == 1
    one, two = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("s", "p"))
    assert one["counts"] == two["counts"] and one["target"]["tier_reached"] == two["target"]["tier_reached"]


JUNIT = """<testsuites><testsuite name="tck">
<testcase classname="tck.core" name="test_send" time="0.1"/>
<testcase classname="tck.core" name="test_get_unknown" time="0.1"><failure message="expected -32001"/></testcase>
<testcase classname="tck.core" name="test_cancel" time="0.1"><error message="boom"/></testcase>
<testcase classname="tck.optional" name="test_stream" time="0.1"><skipped message="not declared"/></testcase>
<testcase classname="tck.optional" name="test_cache" time="0.1"><skipped type="pytest.xfail" message="SHOULD"/>
</testcase>
</testsuite></testsuites>"""
TCK_LISTED = """
[[known]]
tck = "tck.core::test_get_unknown"
reason = "the error mapping"
link = "https://tracker.example/runtime/2"
"""
# The JUnit of a stock run of the official A2A TCK against the reference agent (265 cases, 16 failed).
REAL_TCK = REPO.parent / "shared" / "data" / "a2a-tck-1.0-dev-vs-reference-agent.junit.xml"
# Two cases that passed in that run, listed as if they had been failing: the fold must name them fixed.
PASSED_IN_REAL_RUN = (
    "tests.compatibility.agent_card.test_agent_card.TestAgentCardStructure::test_required_fields_present",
    "tests.compatibility.jsonrpc.test_error_codes.TestJsonRpcErrorCodeMappings::test_task_not_found_error",
)


def _real_tck() -> Path:
    if not REAL_TCK.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the real TCK JUnit is missing: {REAL_TCK} (../shared beside the clone)")
        pytest.skip(f"not checked: no real TCK JUnit at {REAL_TCK}")
    return REAL_TCK


def _tck_junit(tmp_path: Path, text: str = JUNIT) -> Path:
    """A TCK run's JUnit, as the gate is handed it."""
    junit = tmp_path / "tck.xml"
    junit.write_text(text, encoding="utf-8")
    return junit


def _tck_list(tmp_path: Path, junit: Path, also: tuple[str, ...] = ()) -> known_failures.KnownFailures:
    failing = [c["test"] for c in tck.read_junit(junit) if c["outcome"] == "failed"]
    text = "".join(
        f'[[known]]\ntck = "{test}"\nreason = "listed"\nlink = "https://tracker.example/tck/{n}"\n'
        for n, test in enumerate([*failing, *also])
    )
    folder = tmp_path / "known"
    folder.mkdir(exist_ok=True)
    (folder / "9.9.9.toml").write_text(text, encoding="utf-8")
    return known_failures.load("9.9.9", folder)


@pytest.fixture
def kit_summary(tmp_path) -> Path:
    """A kit run's summary folder, as the gate leaves it before folding the TCK in."""
    out = tmp_path / "out"
    verdicts = run_suites(tmp_path, "--a2a-req=CARD-01", f"--a2a-summary-dir={out}", lean=True)
    assert verdicts.returncode == 0 and (out / "summary.json").is_file(), verdicts.output[-2000:]
    return out


@pytest.mark.req("REL-04")
def test_a_real_tck_run_folds_with_its_listed_failures_known(tmp_path, kit_summary):
    junit = _real_tck()
    summary = _fold([junit], _tck_list(tmp_path, junit), kit_summary, tmp_path / "allure")
    folded = summary["tck"]
    assert folded["counts"] == {"passed": 59, "known": 16, "skipped": 190}, folded["counts"]
    assert folded["new_failures"] == [] and summary["verdict"] == "pass"
    tck_entries = [e for e in summary["known_failures"] if e["kind"] == "tck"]
    assert len(tck_entries) == 16 and {e["state"] for e in tck_entries} == {"failed as expected"}
    rows = [
        line
        for line in (kit_summary / "summary.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| tck `")
    ]
    assert len(rows) == 16 and all("| failed as expected |" in row for row in rows), rows
    assert len(list((tmp_path / "allure").glob("*-result.json"))) == 265


def test_listed_tck_passes_are_named_fixed_and_block_only_when_strict(tmp_path, kit_summary):
    junit = _real_tck()
    known = _tck_list(tmp_path, junit, also=PASSED_IN_REAL_RUN)
    relaxed = _fold([junit], known, kit_summary, None)
    assert relaxed["tck"]["fixed"] == sorted(PASSED_IN_REAL_RUN) and relaxed["verdict"] == "pass"
    text = (kit_summary / "summary.md").read_text(encoding="utf-8")
    assert all(f"Fixed (remove it from the list): `{t}`" in text for t in PASSED_IN_REAL_RUN)
    states = {e["id"]: e["state"] for e in relaxed["known_failures"]}
    assert all(states[t] == "fixed: remove it from the list" for t in PASSED_IN_REAL_RUN)
    strict = _fold([junit], known, kit_summary, None, strict=True)
    assert strict["verdict"] == "fail" and strict["tck"]["new_failures"] == [], "a fixed entry is no new failure"
    assert any("--strict-known" in reason for reason in strict["verdict_reasons"])
    assert "New failure" not in (kit_summary / "summary.md").read_text(encoding="utf-8")


def test_tck_skip_reasons_are_grouped_and_shown(tmp_path, kit_summary):
    summary = _fold([_real_tck()], None, kit_summary, None)
    reasons = {r["reason"]: r["count"] for r in summary["tck"]["skip_reasons"]}
    assert sum(reasons.values()) == 190 and reasons["Transport 'http_json' not configured"] == 48
    assert "| Transport 'http_json' not configured | 48 |" in (kit_summary / "summary.md").read_text()


def test_one_suite_folded_twice_is_counted_once(tmp_path, kit_summary):
    junit = _real_tck()
    summary = _fold([junit, junit], None, kit_summary, None)
    assert sum(summary["tck"]["counts"].values()) == 265 and summary["tck"]["duplicates"] == 265


def test_a_tck_xfail_counts_as_a_should_not_met(tmp_path, kit_summary):
    junit = _tck_junit(tmp_path)
    summary = _fold([junit], None, kit_summary, None)
    assert summary["tck"]["should"] == ["tck.optional::test_cache"]
    assert summary["tck"]["counts"] == {"passed": 1, "failed": 2, "skipped": 1, "should": 1}


def test_the_standalone_fold_refuses_without_a_kit_summary(tmp_path):
    junit = _tck_junit(tmp_path)
    done = _cli([*TCK_CLI, str(junit), "--out", str(tmp_path / "nothing")])
    assert done.returncode == USAGE_ERROR and not (tmp_path / "nothing" / "summary.json").exists()
    [line] = done.stderr.strip().splitlines()
    assert "no kit summary" in line, line


def test_the_release_command_gates_kit_and_tck_together(tmp_path):
    junit = _tck_junit(tmp_path, JUNIT.replace('<error message="boom"/>', ""))
    gate = _tck_gate(tmp_path, LISTED + TCK_LISTED, junit, "-q", *FAULTY, "--a2a-enforce-claim=no", "-p", "no:randomly")
    clean = _cli(gate)
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr[-2000:]
    assert clean.stdout.count("release gate:") == 1 and "release gate: not blocked" in clean.stdout
    junit.write_text(JUNIT, encoding="utf-8")
    blocked = _cli(gate)
    assert blocked.returncode == 1, blocked.stdout[-2000:]
    assert blocked.stdout.count("release gate:") == 1, blocked.stdout[-2000:]
    assert re.search(r"release gate: blocked \(TCK: 1 new failures[;)]", blocked.stdout), blocked.stdout[-2000:]


def test_an_unknown_tck_entry_stops_the_fold_in_one_line(tmp_path):
    unknown = TCK_LISTED.replace("test_get_unknown", "test_nothing")
    done = _cli(_tck_gate(tmp_path, unknown, _tck_junit(tmp_path), "--a2a-req=CARD-01", "--a2a-enforce-claim=no"))
    assert done.returncode == USAGE_ERROR, done.stdout[-1000:] + done.stderr[-1000:]
    assert done.stderr.strip().splitlines()[-1].startswith("ERROR:") and "names no test case" in done.stderr


def test_a_typo_in_a_gate_option_is_one_line_exit_4(tmp_path):
    done = _cli([*RELEASE_CLI, "--relase", "1.0"])
    assert done.returncode == USAGE_ERROR and len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--target-url=http://127.0.0.1:9/a2a"], "pytest's and the kit's (--target-url, --a2a-*, -n) after it"),
        (["-n", "2"], "after it"),
        (["--", "--release", "1.0"], "--release is the gate's own option: put it before --"),
        (["--", "--out=here"], "--out is the gate's own option: put it before --"),
        (["--strict-known=perhaps"], "must be yes or no"),
    ],
    ids=["kit-option-before", "pytest-option-before", "gate-option-after", "gate-out-after", "bad-yes-no"],
)
def test_an_option_on_the_wrong_side_of_the_separator_says_where_it_goes(args, said):
    done = _cli([*RELEASE_CLI, *args])
    [line] = done.stderr.strip().splitlines()
    assert done.returncode == USAGE_ERROR and said in line and "Traceback" not in done.stderr, line


@pytest.mark.parametrize("option", ["--out", "--sarif"])
def test_an_output_the_gate_cannot_write_is_one_line_exit_4(tmp_path, option):
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    done = _cli([*RELEASE_CLI, option, str(tmp_path / "a-file" / "out"), "--", "--a2a-req=CARD-01"])
    [line] = done.stderr.strip().splitlines()
    assert done.returncode == USAGE_ERROR and line.startswith(f"ERROR: {option} ") and "cannot write" in line, line


def test_an_error_names_the_environment_variable_the_key_came_from(tmp_path):
    with agent_process(tmp_path / "agent.sqlite3", "--key", "kit-key") as base:
        done = _cli(
            [
                *RELEASE_CLI,
                "--no-html",
                "--out",
                str(tmp_path / "out"),
                "--",
                f"--target-url={base}/v1/a2a/agents/support",
            ],
            env={"NYLORUN_A2A_KEY": "wrong"},
        )
    assert done.returncode == USAGE_ERROR, done.stdout[-2000:] + done.stderr[-2000:]
    assert "check NYLORUN_A2A_KEY" in done.stdout + done.stderr, done.stdout[-2000:] + done.stderr[-2000:]


def test_listing_the_faults_into_a_closed_pipe_is_no_error():
    done = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m nylorun_a2a_kit.reference_agent --list-mutants | head -1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


@pytest.mark.slow
@pytest.mark.req("REL-04")
def test_the_gate_runs_the_tck_and_blocks_on_what_it_catches(tmp_path):
    tck_dir, python = installed_tck()
    # The kit checks only the card here, so that the verdict is the TCK's: it asks GetTask for an unknown task
    # and expects -32001, which the fault answers -32602.
    gate = [
        *RELEASE_CLI,
        "--release=0.1.0",
        "--tck-dir",
        str(tck_dir),
        "--tck-python",
        str(python),
        "--out",
        str(tmp_path / "out"),
        "--no-html",
        "--",
        "--a2a-req=CARD-01",
        "--a2a-enforce-claim=no",
        "--a2a-reference-mutant=wrong-error-code",
    ]
    done = _cli(gate, timeout_s=900)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "example agent: the reference agent at http://127.0.0.1:" in done.stdout
    assert re.search(r"release gate: blocked \(TCK: \d+ new failures[;)]", done.stdout), done.stdout[-2000:]
    summary = _summary(tmp_path)
    assert (
        "tests.compatibility.jsonrpc.test_error_codes.TestJsonRpcErrorCodeMappings::test_task_not_found_error"
        in (summary["tck"]["new_failures"])
    )
    assert (tmp_path / "out" / "tck-junit.xml").is_file() and (tmp_path / "out" / "junit.xml").is_file()


def _browser_tools() -> tuple[list[str] | None, str | None]:
    from nylorun_a2a_kit.fixtures.gate.allure import allure_command

    return allure_command(), shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_html_report_opens_in_a_browser_with_the_right_counts(tmp_path):
    allure, chromium = _browser_tools()
    if allure is None or chromium is None:
        missing = "Allure 3 (npm ci)" if allure is None else "Chromium (Debian package chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} is not installed; .ci/run installs it")
        pytest.skip(f"not checked: {missing} is not installed here")
    out = tmp_path / "out"
    done = _cli(
        [*RELEASE_CLI, *_gate_list(tmp_path, LISTED), "--out", str(out), "--", "-q", *FAULTY, "--a2a-enforce-claim=no"],
        timeout_s=600,
    )
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
    """The report's visible text once its scripts ran, opened from the file system as a person would open it.

    On a loaded machine the report may not have drawn its counts within the browser's time budget; the page is
    then opened again with a longer one (the verdict is whether it renders, not how fast)."""
    url = (report / "index.html").resolve().as_uri()
    text = ""
    for budget_ms in (15_000, 45_000, 120_000):
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}",
            "--dump-dom",
        ]
        dom = subprocess.run([chromium, *flags, url], capture_output=True, text=True, check=False, timeout=300).stdout
        visible = re.sub(r"<script.*?</script>|<style.*?</style>", " ", dom, flags=re.S)
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", visible)))
        if " Total " in text:
            break
    return text


def test_push_deliveries_are_quoted_in_a_failure_report(tmp_path):
    from nylorun_a2a_kit.reference_agent.faults import FAULTS

    breaks = ",".join(FAULTS["bad-signature"].breaks)
    verdicts = run_suites(tmp_path, "--a2a-reference-mutant=bad-signature", f"--a2a-req={breaks}", "-rf", lean=True)
    assert verdicts.returncode == 1, verdicts.output[-2000:]
    assert "Push deliveries" in verdicts.output and "webhook-signature:" in verdicts.output


def test_the_gates_first_list_over_a_list_is_one_line_exit_4_and_nothing_is_overwritten(tmp_path):
    folder = _folder(tmp_path, LISTED, "9.9.9")
    gate = [*RELEASE_CLI, "--write-baseline", *_gate_list(tmp_path, LISTED), "--out", str(tmp_path / "out")]
    done = _cli([*gate, "--", "--a2a-req=CARD-01"])
    [line] = done.stderr.strip().splitlines()
    assert done.returncode == USAGE_ERROR and line.startswith("ERROR: --write-baseline: ") and "exists" in line, line
    assert (folder / "9.9.9.toml").read_text(encoding="utf-8") == LISTED


def test_the_gates_comparison_with_no_summary_is_one_line_exit_4(tmp_path):
    (tmp_path / "previous.json").write_text("not json", encoding="utf-8")
    gate = [*RELEASE_CLI, "--compare-to", str(tmp_path / "previous.json"), "--out", str(tmp_path / "out")]
    done = _cli([*gate, "--", "--a2a-req=CARD-01"])
    [line] = done.stderr.strip().splitlines()
    assert done.returncode == USAGE_ERROR and line.startswith("ERROR: --compare-to ") and "not JSON" in line, line
