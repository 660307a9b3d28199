"""LangGraph's Agent Server with a one-node echo graph, as a user starts it (`langgraph dev`, in memory).

Run with the Python of an environment that has langgraph-api and langgraph-cli[inmem] (peers/langgraph/
requirements.txt): it starts the server on a free loopback port, finds the echo graph's assistant, prints
``listening <A2A endpoint> card <card URL>`` and serves until it is stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assistant(base: str, server: subprocess.Popen, deadline: float) -> str:
    while server.poll() is None:
        try:
            request = urllib.request.Request(
                base + "/assistants/search", data=b"{}", headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=2) as answer:
                found = json.loads(answer.read())
            if found:
                return found[0]["assistant_id"]
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("LangGraph's server did not start in time")
        time.sleep(0.2)
    raise SystemExit(f"LangGraph's server stopped (exit {server.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    args = parser.parse_args()
    port = args.port or free_port()
    quiet = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}
    env = {**os.environ, **quiet}  # nothing sent anywhere: no analytics, no tracing
    command = [
        str(Path(sys.executable).with_name("langgraph")),
        "dev",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        "--no-browser",
        "--no-reload",
        "--config",
        "langgraph.json",
    ]
    # The in-memory server keeps its state under its working directory (.langgraph_api): a fresh one, removed after.
    workdir = tempfile.mkdtemp(prefix="nylorun-langgraph-peer.")
    config = {"dependencies": [str(HERE)], "graphs": {"echo": f"{HERE / 'echo_graph.py'}:graph"}}
    (Path(workdir) / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    server = subprocess.Popen(command, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    try:
        base = f"http://127.0.0.1:{port}"
        found = assistant(base, server, time.monotonic() + 60)
        print(f"listening {base}/a2a/{found} card {base}/.well-known/agent-card.json?assistant_id={found}", flush=True)
        server.wait()
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
