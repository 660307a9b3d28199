"""Every check can fail: the suites pass against the clean reference agent and fail under each fault.

Each fault is judged by the mutation engine (``fixtures/mutation``), as every deliberate deviation is: a warm run
against an embedded reference agent started with it, every check of the requirements it names (none left out by
-x: each must be shown failing). The session asks for every verdict at once when it first needs them, and the warm
server runs them as the cores allow, the longest first; the checks below then read them. Under xdist every worker's
session wants every verdict, so the engine's cache is the session's: each is made once and read by the others.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace

import pytest

from nylorun_a2a_kit.fixtures import mutation
from nylorun_a2a_kit.fixtures.requirements import check_ids
from nylorun_a2a_kit.reference_agent import mutants
from nylorun_a2a_kit.reference_agent.faults import FAULTS
from nylorun_a2a_kit.reference_agent.mutants.source import REPLACED_FAULTS
from tests.suite_runs import REPO, Verdicts, clean_run, engine_cache, run_suites

pytestmark = pytest.mark.slow  # whole runs of the suites or of agents, each in a process of its own

# The faults, and the source mutants that replaced hand-written faults (each must be caught as its fault was).
CAUGHT = {name: (fault.breaks, fault.description) for name, fault in FAULTS.items()}
CAUGHT |= {name: (breaks, f"the fault {fault} as a source mutant") for name, (fault, breaks) in REPLACED_FAULTS.items()}


def _judged(name: str, changed: mutation.Deviation, store: mutation.Cache, where) -> mutation.Verdict:
    """A fault's verdict: every check of every requirement it breaks, SHOULD-level ones included, run whole."""
    return mutation.judge(changed, REPO, where, store, whole=True, priority=FAULTS_FIRST + COSTS.get(name, 1))


# How long each of the longer fault runs took (tests/run_costs.json): the server starts the longest first, so that
# none of them is left to run alone at the end.
COSTS_FILE = REPO / "tests" / "run_costs.json"
COSTS: dict[str, float] = json.loads(COSTS_FILE.read_text(encoding="utf-8"))["faults"]
# The fault verdicts start before other tests' runs (the longest faults first): the mutants of the checks no fault
# fails are judged only once every fault's verdict is in, the longest chain of the session.
FAULTS_FIRST = 300
# The deviation that failed each check no fault fails, in the run that wrote them: judged first.
KILLERS: dict[str, str] = json.loads(COSTS_FILE.read_text(encoding="utf-8")).get("killers", {})


@pytest.fixture(scope="session")
def clean(tmp_path_factory) -> Verdicts:
    return clean_run(tmp_path_factory)


@pytest.fixture(scope="session")
def fault_verdicts(request: pytest.FixtureRequest, tmp_path_factory) -> dict[str, Future[mutation.Verdict]]:
    wanted: set[str] = set()
    for item in request.session.items:
        if item.module.__name__ == __name__ and "fault_verdicts" in item.fixturenames:
            callspec = getattr(item, "callspec", None)
            wanted |= {callspec.params["fault"]} if callspec else set(CAUGHT)
    store, where = engine_cache(tmp_path_factory), tmp_path_factory.mktemp("fault-runs")
    # A thread per verdict only waits (on the server, or on the process of the session that makes it): the server
    # sees every run at once and starts the longest first.
    pool = ThreadPoolExecutor(max_workers=max(1, len(wanted)))
    # Each deviation is made here, in the session's own thread: a source mutant's is made by parsing the agent's code,
    # and CPython 3.11's ast module keeps one recursion count for every thread (two parses at once break it).
    made = {name: mutation.deviation(name, breaks=CAUGHT[name][0]) for name in _in_worker_order(sorted(wanted))}
    verdicts = {name: pool.submit(_judged, name, changed, store, where) for name, changed in made.items()}
    yield verdicts
    pool.shutdown(wait=True, cancel_futures=True)
    if os.environ.get("NYLORUN_UPDATE_RUN_COSTS") == "1" and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        took = {f: round(v.result().seconds) for f, v in verdicts.items() if v.done() and not v.exception()}
        document = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
        document["faults"] = {f: s for f, s in sorted(took.items()) if s >= 3}
        COSTS_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def _in_worker_order(names: list[str]) -> list[str]:
    """The names, rotated by the xdist worker's index, so that workers ask for different verdicts first."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    shift = len(names) * (int(worker) if worker.isdigit() else 0) // max(1, count)
    return names[shift:] + names[:shift]


# With push on, the checks of an Agent without push do not apply; they run in the push-off run below. The
# streaming checks apply to an Agent whose card declares streaming (the card-streaming fault's Agent, below), the
# extended card's answer to one that declares it (the card-extended fault's run).
CLEAN_SKIPS = (
    "not applicable: the card says pushNotifications true",
    "not applicable: the card says streaming false",
    "not applicable: the card says extendedAgentCard false",
)


def test_clean_reference_agent_passes_everything(clean):
    verdicts = clean
    assert verdicts.returncode == 0, verdicts.output[-5000:]
    assert verdicts.outcomes, "no checks ran"
    unexpected = [t for t in verdicts.with_outcome("skipped") if not verdicts.messages[t].startswith(CLEAN_SKIPS)]
    assert set(verdicts.outcomes.values()) <= {"passed", "skipped"} and not unexpected, (
        "against the embedded reference agent every check applies and passes; "
        f"got {verdicts.summary()}: {unexpected + verdicts.with_outcome('failed')}"
    )


def test_the_oracle_judges_every_answer_of_a_clean_run(clean):
    """Every JSON-RPC answer the clean run read (each event of a stream too), every push delivery and every feed page
    went through the oracle, every answer was judged, and it found nothing wrong with the reference agent; and the
    run sent every form of every request member the schemas have (oracle.inputs), but those left out with a reason."""
    read = clean.published_summary().get("oracle")
    assert read, "the clean run's summary says nothing of the oracle"
    assert read["answers"] == read["judged"] and read["disagreements"] == 0, read
    assert read["answers"] >= read["requests"] * 0.9 and read["pushed"] and read["feed_pages"], read
    assert read["inputs_not_sent"] == [], f"forms of the request schemas no check sent: {read['inputs_not_sent']}"


STREAM_RULES = ("STREAM-01", "STREAM-02", "STREAM-03", "STREAM-05", "STREAM-06", "STREAM-07")


def test_an_agent_that_streams_as_a2a_has_it_passes_the_stream_checks(tmp_path):
    """card-streaming breaks only the profile's rules: its streams are A2A's, so every stream check passes."""
    verdicts = run_suites(
        tmp_path, "--a2a-reference-mutant=card-streaming", f"--a2a-req={','.join(STREAM_RULES)}", lean=True
    )
    assert verdicts.returncode == 0, verdicts.output[-5000:]
    streamed = [t for t, ids in verdicts.requirements.items() if set(ids) & set(STREAM_RULES)]
    assert streamed and all(verdicts.outcomes[t] == "passed" for t in streamed), verdicts.summary()


def test_an_agent_refusing_chosen_context_ids_fails_that_rule_alone(tmp_path):
    """A2A §3.4.1 lets an Agent refuse a contextId a client chose; the profile's SEND-06 does not. Under
    chosen-context-refused the kit drives every conversation it names with the ids the Agent issues, and a check
    needing a conversation the client names is not checked: one deviation, one failure, in a whole run."""
    verdicts = run_suites(
        tmp_path, "--a2a-reference-mutant=chosen-context-refused", "--a2a-property-profile=quick", lean=True
    )
    assert verdicts.outcomes, verdicts.output[-3000:]
    assert verdicts.failed_requirements() == {"SEND-06"}, verdicts.summary()
    assert not verdicts.with_outcome("error"), verdicts.with_outcome("error")


def test_the_reference_agents_published_verdicts_are_its_own(clean):
    """peers/expected/reference.json (the compatibility table's first column) is the clean run's verdicts;
    NYLORUN_UPDATE_PEER_VERDICTS=1 writes them."""
    verdicts = clean
    path = REPO / "peers" / "expected" / "reference.json"
    got = verdicts.published()
    if os.environ.get("NYLORUN_UPDATE_PEER_VERDICTS") == "1":
        document = {
            "peer": "reference",
            "tier_claimed": "profile-v2",
            "verdicts": got,
            "requirements": {t: verdicts.requirements[t] for t in got},
            "reasons": {},
        }
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8"))["verdicts"] == got, "regenerate: NYLORUN_UPDATE_PEER_VERDICTS=1"


def test_reference_agent_without_push_passes_its_checks(tmp_path):
    """The agent without push (the setup push-off) passes the checks of an Agent without push, none skipped."""
    verdict = mutation.judge(mutation.deviation("setup/push-off", read=("PUSH-03", "PUSH-04")), REPO, tmp_path)
    assert verdict.outcome == "passed" and verdict.checks and not verdict.skipped, verdict.summary()


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_fault_is_caught_by_its_requirements(fault_verdicts, fault: str):
    verdict = fault_verdicts[fault].result()
    summary = f"{verdict.summary()}\n{verdict.output}"
    assert verdict.killed and verdict.returncode == 1, f"the run must fail under fault {fault}: {summary}"
    assert not verdict.missed, f"fault {fault} ({CAUGHT[fault][1]}) is not caught by {verdict.missed}: {summary}"
    assert not verdict.errors, f"checks errored instead of failing: {verdict.errors}"


def test_every_check_fails_under_some_fault(fault_verdicts, clean, tmp_path_factory):
    """Not only every requirement: every single check is shown failing by at least one fault, or by one of the
    mutants derived for its requirement (run here only for the checks no fault fails, until each has failed). The
    mutants that failed a check last time are judged first (``killers`` in tests/run_costs.json, an order only:
    each check is shown failing by a run of this session)."""
    requirements = {check_ids.canonical(test): ids for test, ids in clean.requirements.items()}
    failing = {test for name in CAUGHT for test in fault_verdicts[name].result().by}
    assert requirements, "no checks ran"
    unfailed = set(requirements) - failing
    pending = [mutation.deviation(one) for one in _firsts_of_each_kind_first(mutation.registry().values())]
    pending = [one for one in pending if one.breaks and not one.names[0].startswith("fault/")]
    pending += [
        replace(mutation.deviation(name, breaks=breaks), run_with=SOURCE_KILLERS_RUN_WITH.get(name, ()))
        for name, breaks in SOURCE_KILLERS.items()
    ]
    known = {KILLERS[check] for check in unfailed if check in KILLERS}
    pending.sort(key=lambda one: one.name not in known)  # stable: the rest keep their order
    store, where = engine_cache(tmp_path_factory), tmp_path_factory.mktemp("mutant-runs")
    killers: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=MUTANTS_AT_ONCE) as pool:
        running: set[Future[mutation.Verdict]] = set()
        while unfailed and (pending or running):
            # As one ends, the next that can still fail an unfailed check starts: no run waits on a batch's slowest.
            while pending and len(running) < MUTANTS_AT_ONCE:
                one = pending.pop(0)
                if any(set(requirements.get(t, [])) & set(one.breaks) for t in unfailed):
                    running.add(pool.submit(mutation.judge, one, REPO, where, store, whole=True, priority=FAULTS_FIRST))
            if not running:
                break
            ended, running = wait(running, return_when=FIRST_COMPLETED)
            for verdict in (future.result() for future in ended):
                killers |= {check: verdict.name for check in sorted(unfailed & set(verdict.by))}
                unfailed -= set(verdict.by)
        for future in running:
            future.cancel()
    if os.environ.get("NYLORUN_UPDATE_RUN_COSTS") == "1":
        document = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
        document["killers"] = dict(sorted(killers.items()))
        COSTS_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    assert not sorted(unfailed), f"checks that no fault or mutant makes fail: {sorted(unfailed)}"


# Source mutants that fail checks no fault or derived mutant fails, with the requirements whose checks they fail:
# bugs of the kinds those checks were written for (a key scoped by less, a bound moved, a cursor that stays).
SOURCE_KILLERS = {
    "source/store.Store.task_for_message/sql-where-dropped-1": ("SEND-04",),  # a messageId to another Agent
    "source/store.Store.task_for_message/sql-where-dropped-2": ("SEND-04",),  # a messageId of another subject
    "source/store.Store.task_for_message/sql-equality-prefix-2": ("SEND-04",),  # ... a subject the first begins
    "source/listing._normalise_timestamp/augmented-assignment-1": ("LIST-03",),  # a cut finer than milliseconds
    "source/store.Store.changed_after/sql-bound-moved-2": ("FEED-02",),  # a subject's feed cursor that stays
    "source/push.PushConfigs.cancel_pending/sql-write-keyed-by-less-1": ("PUSH-05",),  # a delete cancels others'
    "source/push.PushConfigs.gone/sql-write-keyed-by-less-1": ("PUSH-05",),  # a 410 stops another task's config
    "source/store.Store._where/sql-equality-prefix-1": ("ISO-02",),  # a subject that begins another's lists it
    "source/store.Store.active_in_context/sql-equality-prefix-2": ("ISO-04",),  # ... or is busy with it
    "source/queue.MessageQueue.waiting/sql-where-dropped-2": ("QUEUE-05",),  # a turn's end takes another's queue
    "source/queue.MessageQueue.waiting/sql-where-dropped-3": ("QUEUE-05",),  # ... another context's
    "source/queue.MessageQueue.waiting/sql-equality-nocase-3": ("QUEUE-05",),  # ... its case twin's
    "source/queue.MessageQueue.waiting/sql-equality-prefix-3": ("QUEUE-05",),  # ... one it begins
    "source/queue.MessageQueue.find/sql-where-dropped-1": ("QUEUE-02", "ISO-05"),  # a queued messageId of another Agent
    "source/queue.MessageQueue.find/sql-where-dropped-2": ("QUEUE-02", "ISO-06"),  # ... of another subject
    "source/policies.Access.allows/swap-op-1": ("ISO-05",),  # a task of the caller's subject on another Agent
    "source/queue.MessageQueue.waiting/sql-where-dropped-1": ("ISO-04",),  # a turn's end takes another Agent's queue
    "source/store.Store.active_in_context/sql-where-dropped-1": ("ISO-04",),  # ... is busy with its turn
    "source/policies.Continuation.check_state/arg-removal-9": ("QUEUE-06",),  # a busy refusal naming no task
    "source/scenarios.parse/swap-op-3": ("PART-01",),  # a message without a text part refused
    "source/push.Destinations.allows/name-1": ("PUSH-11",),  # a URL whose port no parser reads is allowed
    "source/push.PushConfigs.move/sql-write-keyed-by-less-1": ("PUSH-01",),  # a take moves others' configs
    "source/delivery.Sender._attempt/sql-write-keyed-by-less-3": ("PUSH-12",),  # one give-up ends all retries
    "source/rpc.Dispatcher._dispatch/arg-removal-36": ("ERR-03",),  # params omitted
    "source/edge.key_of/symmetric-string-methods-swap-1": ("AUTH-01",),  # Bearer and the key two spaces apart
    "source/status.artifact_event/name-1": ("SHAPE-02",),  # the first chunk of an artifact appends
    "source/store.Store.file_version/sql-order-reversed-1": ("FILE-05",),  # a file's third version
    "source/store.Store.session_turns/sql-where-dropped-2": ("FEED-06",),  # another subject's turns in a session
    "source/store.Store.session_turns/sql-equality-prefix-2": ("FEED-06",),  # ... of one it begins
    "source/store.Store.changed_after/sql-order-reversed-2": ("FEED-02", "FEED-04", "FEED-05"),  # a feed past a page
}
# What a source killer is run together with: the agent serving streams (its card says streaming: true), the kit's
# preferred reading where the rules leave a point open (a fault that asks for it).
SOURCE_KILLERS_RUN_WITH = {
    "source/status.artifact_event/name-1": ("--a2a-reference-mutant=card-streaming",),
    "source/rpc.Dispatcher._dispatch/arg-removal-36": ("--a2a-strict-spec=yes",),
}
MUTANTS_AT_ONCE = 16  # asked of the run server together; it runs them as the cores allow


def _firsts_of_each_kind_first(derived) -> list:
    """The mutants, the first of each kind (axis, what it changes: on the channel axis the object, and where)
    before any kind's second: a kind's first mostly fails every check its kind can, so the loop above seldom
    needs a second of it."""
    rank: Counter = Counter()
    ranked = []
    for one in derived:
        what, _, how = one.member.partition("/")
        kind = (one.axis, what.split(".")[0] if one.axis == "channel" else what, how.partition("@")[2])
        ranked.append((rank[kind], one))
        rank[kind] += 1
    return [one for _, one in sorted(ranked, key=lambda pair: pair[0])]


# Faults whose behaviour is a right reading where A2A leaves the point open: they fail only under the option
# that asks the kit's preferred reading (their run_with), and pass without it.
LENIENT = [name for name, fault in sorted(FAULTS.items()) if "--a2a-strict-spec=yes" in fault.run_with]


@pytest.mark.parametrize("fault", LENIENT)
def test_a_reading_a2a_leaves_open_passes_without_the_strict_option(tmp_path, fault: str):
    """Without the strict option, the fault is an allowed variation: every check of what it breaks passes it."""
    record = mutants.resolve([fault])[0]
    lenient = replace(
        mutation.registry()[record],
        breaks=(),
        equivalent="a reading A2A leaves open",
        read=FAULTS[fault].breaks,
        run_with=tuple(arg for arg in FAULTS[fault].run_with if arg != "--a2a-strict-spec=yes"),
    )
    verdict = mutation.judge(mutation.deviation(lenient), REPO, tmp_path)
    assert verdict.outcome == "passed" and verdict.checks, verdict.summary()
