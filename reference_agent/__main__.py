"""``nylorun-reference-agent``: run the reference agent standalone."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading

from nylorun_a2a_kit.cli import USAGE_ERROR, Parser
from nylorun_a2a_kit.reference_agent import mutants
from nylorun_a2a_kit.reference_agent.app import STOP_GRACE_S, STOP_WITHIN_S, start_site
from nylorun_a2a_kit.reference_agent.config import AgentConfig, parse_key

DEFAULT_KEY = "kit-key"


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="nylorun-reference-agent",
        description="The conformance kit's reference A2A agent (Nylorun Profile v2), on JSON-RPC over HTTP.",
        epilog="A fault is a mutant: --mutant NAME takes its short name (--list-mutants lists every mutant).",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to bind; 0 picks a free one (default 8080)")
    p.add_argument("--db", default="reference-agent.sqlite3", help="SQLite database file (created if missing)")
    p.add_argument(
        "--key",
        action="append",
        metavar="KEY[=SUBJECTS][:SCOPES][@N/SECONDS]",
        help=f"an application key, its subjects ('*' = any), scopes and rate limit; repeatable "
        f"(default: {DEFAULT_KEY}, any subject, sessions:own)",
    )
    p.add_argument("--agent", action="append", metavar="ID", help="an Agent id; repeatable (default: support, billing)")
    p.add_argument(
        "--wait-ms",
        type=int,
        default=300_000,
        help="a2aWaitMs: longest blocking SendMessage (default 300000)",
    )
    p.add_argument("--push-secret", help="turn push notifications on, signing with this secret (whsec_…)")
    p.add_argument(
        "--push-allow", action="append", default=[], metavar="HOST:PORT", help="an allowed push destination; repeatable"
    )
    p.add_argument(
        "--push-time-scale", type=float, default=1.0, help="multiply every retry delay by this (default 1.0)"
    )
    p.add_argument("--push-attempt-timeout-s", type=float, default=10.0, help="one delivery attempt's timeout")
    p.add_argument(
        "--hide-scenarios",
        action="store_true",
        help="do not advertise the kit's scenario contract on the card (the scenarios still run)",
    )
    p.add_argument(
        "--mutant",
        action="append",
        default=[],
        metavar="NAME",
        help="switch on a mutant: a fault (its short name, or fault/…), a derived axis's, an allowed variation's, "
        "source/…; repeatable",
    )
    p.add_argument(
        "--list-mutants",
        action="store_true",
        help="print the mutants but the source axis's (name, what each breaks or why it is allowed) and exit",
    )
    return p


def _requirements_given() -> None:
    """The agent's command line is the mutants' caller: it gives them the kit's requirements to derive from."""
    from nylorun_a2a_kit.fixtures.requirements import load

    mutants.use_requirements(load())


def config_from(args: argparse.Namespace) -> AgentConfig:
    keys = dict(parse_key(spec) for spec in (args.key or [DEFAULT_KEY]))
    if args.mutant:
        _requirements_given()  # the derived axes are derived from the kit's requirements
    named = mutants.resolve(args.mutant)
    setups = mutants.named_setups(named)
    if setups:
        raise ValueError(
            f"setup/{setups[0]} is a shape of the kit's embedded agent (--a2a-reference-mutant=setup/{setups[0]}); "
            "start this agent in it with its own options (--agent, --key, --push-secret, --hide-scenarios)"
        )
    return AgentConfig(
        db_path=args.db,
        agents=tuple(args.agent or ("support", "billing")),
        keys=keys,
        a2a_wait_ms=args.wait_ms,
        mutants=frozenset(named),
        advertise_scenarios=not args.hide_scenarios,
        push_secret=args.push_secret,
        push_allowed=frozenset(args.push_allow),
        push_time_scale=args.push_time_scale,
        push_attempt_timeout_s=args.push_attempt_timeout_s,
    )


async def serve(config: AgentConfig, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, _stopping, stop, sig)
    runner, base = await start_site(config, host, port, shutdown_timeout_s=STOP_GRACE_S)
    print(f"reference agent listening on {base}", flush=True)
    for agent in config.agents:
        print(
            f"  Agent {agent}: {base}/v1/a2a/agents/{agent}  (card: {base}/v1/a2a/agents/{agent}/card)",
            flush=True,
        )
    if config.mutants:
        print(f"  mutants on: {', '.join(sorted(config.mutants))}", flush=True)
    await stop.wait()
    try:
        await asyncio.wait_for(runner.cleanup(), STOP_WITHIN_S)
    except TimeoutError:
        print(f"nylorun-reference-agent: stopped before its cleanup ended ({STOP_WITHIN_S:.0f} s)", file=sys.stderr)


# What it accepted is in its store before it answers, and what was in flight (a turn, a delivery) is taken up
# again on its next start: a stop has nothing to save, so it is bounded (app.STOP_GRACE_S, app.STOP_WITHIN_S);
# a second signal, or a cleanup that does not end, ends the process at once.


def _stopping(stop: asyncio.Event, sig: signal.Signals) -> None:
    if stop.is_set():
        os._exit(128 + sig)
    stop.set()
    watchdog = threading.Timer(STOP_WITHIN_S + 1.0, os._exit, args=(128 + sig,))
    watchdog.daemon = True
    watchdog.start()


def _mutants_listing() -> str:
    _requirements_given()
    lines = []
    for name, one in mutants.catalog().items():
        judged = (
            f"equivalent: {one.equivalent}; {', '.join(one.read)} read"
            if one.equivalent
            else f"breaks {', '.join(one.breaks)}"
        )
        lines.append(f"{name}: {one.description} ({judged})\n")
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.list_mutants:
        try:
            sys.stdout.write(_mutants_listing())
            sys.stdout.flush()
        except BrokenPipeError:  # a reader that stopped early (| head) is no error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    try:
        config = config_from(args)
    except ValueError as exc:
        print(f"nylorun-reference-agent: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        asyncio.run(serve(config, args.host, args.port))
    except OSError as exc:
        print(
            f"nylorun-reference-agent: error: cannot listen on {args.host}:{args.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return USAGE_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
