"""Raw HTTP/1.1 over asyncio streams, one connection a request (``Connection: close``), so that what the agent
answers is seen exactly, even when it closes the connection right after a refusal."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

REQUEST_TIMEOUT_S = 30.0
RESULT = "result"


@dataclass
class Answer:
    status: int  # 0: no HTTP answer
    body: bytes = b""
    note: str = ""

    def rpc(self) -> tuple[Any, Any]:
        """(code or RESULT, id) of a JSON-RPC answer; (None, None) when it is not one."""
        try:
            answer = json.loads(self.body)
        except ValueError:
            return None, None
        if not isinstance(answer, dict):
            return None, None
        if "result" in answer:
            return RESULT, answer.get("id")
        error = answer.get("error")
        return (error.get("code") if isinstance(error, dict) else None), answer.get("id")

    def label(self) -> str:
        if self.status == 0:
            return f"no answer ({self.note})"
        if self.status != 200:
            return f"HTTP {self.status}"
        code, _ = self.rpc()
        return f"200 {code}" if code is not None else "200 non-JSON-RPC"


async def exchange(host: str, port: int, path: str, headers: dict[str, str], body: bytes) -> Answer:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except (OSError, TimeoutError) as exc:
        return Answer(0, note=f"connect failed: {exc!r}")
    head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"

    async def send() -> None:
        try:
            writer.write(head.encode("latin-1") + body)
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the agent refused before reading everything: its answer is read below

    sender = asyncio.create_task(send())
    try:
        raw, note = await _read_all(reader)
    finally:
        sender.cancel()
        writer.close()
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 2)
    return _parse(raw, note)


async def _read_all(reader: asyncio.StreamReader) -> tuple[bytes, str]:
    """Everything the agent sends until it closes (or REQUEST_TIMEOUT_S passes: a hang), and a note on how it ended."""
    chunks: list[bytes] = []
    note = ""
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_S):
            while True:
                try:
                    chunk = await reader.read(65536)
                except (ConnectionError, OSError) as exc:
                    note = type(exc).__name__
                    break
                if not chunk:
                    break
                chunks.append(chunk)
    except TimeoutError:
        note = f"no answer within {REQUEST_TIMEOUT_S:.0f} s (hang)"
    return b"".join(chunks), note


def _parse(raw: bytes, note: str) -> Answer:
    """The status and the body (cut to its Content-Length) of a raw HTTP answer."""
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        return Answer(0, raw, note or "closed without an answer")
    status_line, *header_lines = raw[:head_end].split(b"\r\n")
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError):
        return Answer(0, raw, "unparsable status line")
    payload = raw[head_end + 4 :]
    for line in header_lines:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            payload = payload[: int(value.strip() or 0)]
    return Answer(status, payload, note)
