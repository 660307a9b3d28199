#!/usr/bin/env bash
# Install the LangGraph peer (peers/langgraph/requirements.txt, pinned whole) into a virtual environment of its own
# and print that environment's python, the only line on stdout:
#
#   NYLORUN_LANGGRAPH_PYTHON="$(scripts/install_langgraph_peer.sh .venv-langgraph)"
#
# Its own environment: langgraph-api needs protobuf 6, the kit's a2a-sdk protobuf 7. An environment already
# installed from the same requirements is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 1 ]; then
  echo "usage: $0 [VENV_DIR (default .venv-langgraph)]" >&2
  exit 4
fi
venv=${1:-.venv-langgraph}
requirements=peers/langgraph/requirements.txt
stamp=$(sha256sum "$requirements" | cut -d' ' -f1)
imports="import langgraph_api, langgraph_runtime_inmem, langgraph_cli, langchain_core"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.nylorun-peer-stamp" 2>/dev/null)" = "$stamp" ] \
  && "$venv/bin/python" -c "$imports" 2>/dev/null; then
  echo "$0: $venv already holds the LangGraph peer" >&2
else
  started=$(date +%s)
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  "$venv/bin/pip" install --quiet -r "$requirements" >&2
  "$venv/bin/python" -c "$imports"
  echo "$stamp" >"$venv/.nylorun-peer-stamp"
  echo "$0: installed the LangGraph peer into $venv in $(($(date +%s) - started)) s" >&2
fi
echo "$(cd "$venv" && pwd)/bin/python"
