#!/usr/bin/env bash
# Install the official A2A TCK (an a2aproject/a2a-tck checkout) into a virtual environment of its own and print
# that environment's python, the only line on stdout:
#
#   NYLORUN_A2A_TCK_PYTHON="$(scripts/install_tck.sh ../shared/a2a-tck .venv-tck)"
#
# The TCK's dependencies come from the package index pip is configured for. pip installs from a temporary copy
# of the checkout, so nothing is written into the checkout (it may be read-only or shared). An environment
# already installed from the same pyproject.toml and uv.lock is kept.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 TCK_DIR [VENV_DIR (default .venv-tck)]" >&2
  exit 4
fi
tck_dir=$1
venv=${2:-.venv-tck}
if [ ! -f "$tck_dir/run_tck.py" ] || [ ! -f "$tck_dir/pyproject.toml" ] || [ ! -d "$tck_dir/tests/compatibility" ]; then
  echo "$0: $tck_dir is not an A2A TCK checkout (no run_tck.py, pyproject.toml and tests/compatibility/)" >&2
  exit 4
fi

stamp=$(cat "$tck_dir/pyproject.toml" "$tck_dir/uv.lock" 2>/dev/null | sha256sum | cut -d' ' -f1)
imports="import pytest, pytest_asyncio, pytest_html, httpx, grpc, google.protobuf, jsonschema, jinja2, tck"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.nylorun-tck-stamp" 2>/dev/null)" = "$stamp" ] \
  && "$venv/bin/python" -c "$imports" 2>/dev/null; then
  echo "$0: $venv already holds this TCK" >&2
else
  started=$(date +%s)
  rm -rf "$venv"
  python3 -m venv "$venv"
  copy=$(mktemp -d "${TMPDIR:-/tmp}/nylorun-tck-install.XXXXXX")
  trap 'chmod -R u+w "$copy" 2>/dev/null; rm -rf "$copy"' EXIT
  tar -C "$tck_dir" --exclude=./.venv --exclude=./.git --exclude=./reports --exclude='__pycache__' -cf - . \
    | tar -C "$copy" -xf -
  chmod -R u+w "$copy"
  "$venv/bin/pip" install --quiet "$copy" >&2
  "$venv/bin/python" -c "$imports"
  echo "$stamp" >"$venv/.nylorun-tck-stamp"
  echo "$0: installed the A2A TCK into $venv in $(($(date +%s) - started)) s" >&2
fi
echo "$(cd "$venv" && pwd)/bin/python"
