"""A local HTTP server on 127.0.0.1 that serves the real data files, well or badly.

URL paths are /<mode>/<dataset>/<file>; modes: ok, truncate (announces the full length,
sends half), alter (one byte flipped), slow (stalls longer than the client's timeout).
Anything else is a 404.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class _Handler(BaseHTTPRequestHandler):
    root: Path
    stall_seconds = 3.0

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) != 3 or parts[0] not in ("ok", "truncate", "alter", "slow"):
            self.send_error(404)
            return
        mode, dataset, name = parts
        path = self.root / dataset / name
        if not path.is_file():
            self.send_error(404)
            return
        body = bytearray(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "slow":
            time.sleep(self.stall_seconds)
        if mode == "alter":
            body[len(body) // 2] ^= 0xFF
        if mode == "truncate":
            body = body[: len(body) // 2]
        try:
            self.wfile.write(bytes(body))
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture(scope="session")
def file_server(data_dir):
    handler = type("Handler", (_Handler,), {"root": data_dir})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
