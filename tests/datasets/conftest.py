"""A local HTTP server on 127.0.0.1 that serves the real data files, well or badly.

URL paths are /<mode>/<dataset>/<file>; modes: ok, truncate (announces the full length,
sends half), alter (a valid compressed file whose content differs by one digit), slow
(stalls longer than the client's timeout). Anything else is a 404.
"""

from __future__ import annotations

import bz2
import gzip
import re
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
        body = bytearray(_altered(path) if mode == "alter" else path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "slow":
            time.sleep(self.stall_seconds)
        if mode == "truncate":
            body = body[: len(body) // 2]
        try:
            self.wfile.write(bytes(body))
        except (BrokenPipeError, ConnectionResetError):
            pass


def _altered(path: Path) -> bytes:
    """``path`` decompressed, one digit of a value changed, compressed again.

    It decompresses and parses like the original (a fraction digit of a USPS pixel stays in
    [-1, 1]; an IDX byte stays a byte), so only the checksum can tell the difference.
    """
    codec = {".gz": gzip, ".bz2": bz2}[path.suffix]
    content = bytearray(codec.decompress(path.read_bytes()))
    middle = len(content) // 2
    if path.name.startswith("usps"):
        digit = re.compile(rb":-?0\.(\d)").search(content, middle).start(1)
        content[digit] = ord("0") + (content[digit] - ord("0") + 1) % 10
    else:
        content[-1] = (content[-1] + 1) % 10  # the last pixel or label, still valid
    return codec.compress(bytes(content))


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
