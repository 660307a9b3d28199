"""A target that goes silent mid-run: a loopback relay to a real agent that stops answering after N requests."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator

import httpx


@contextlib.contextmanager
def relay_that_goes_silent(upstream: str, answered_posts: int) -> Iterator[str]:
    """Relay GETs (the card) and the first ``answered_posts`` POSTs to ``upstream``; then accept every connection
    and answer nothing, as a frozen process would. Yields the relay's base URL."""
    released = threading.Event()
    posts = {"seen": 0}
    lock = threading.Lock()

    class Relay(http.server.BaseHTTPRequestHandler):
        def _forward(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            answer = httpx.request(method, upstream + self.path, content=body, headers=headers, timeout=30)
            self.send_response(answer.status_code)
            for name, value in answer.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        def do_GET(self):
            self._forward("GET")

        def do_POST(self):
            with lock:
                posts["seen"] += 1
                silent = posts["seen"] > answered_posts
            if silent:
                released.wait(timeout=120)  # the connection stays open and unanswered
                return
            self._forward("POST")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        released.set()
        server.shutdown()
        thread.join(timeout=10)
