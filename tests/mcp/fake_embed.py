"""A real OpenAI-compatible embedding server on 127.0.0.1 for the MCP client tests.

Deterministic vectors, no model: hashed characters and character bigrams, L2-normalised (the
same idea as the Rust tests' server in tests/fake_embed/mod.rs), so texts that share words are
close and unrelated texts are not. Answers POST /v1/embeddings only, with the vectors in reverse
order (clients must place them by `index`). Runs in a daemon thread of the test process:

    server = FakeEmbed(dims=64).start()   # server.endpoint == "http://127.0.0.1:<port>/v1"
    ...
    server.stop()

Run on its own (`python3 tests/mcp/fake_embed.py [port]`) it serves until interrupted.
"""

import hashlib
import json
import math
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def vector(text, dims):
    """Hashed characters (weight 0.5) and character bigrams (1.0), whitespace ignored, L2-normalised."""
    v = [0.0] * dims
    chars = [c for c in text if not c.isspace()]

    def bump(key, weight):
        h = int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")
        v[h % dims] += weight

    for i, c in enumerate(chars):
        bump(c, 0.5)
        if i + 1 < len(chars):
            bump(c + chars[i + 1], 1.0)
    norm = math.sqrt(sum(x * x for x in v))
    if norm == 0:
        v[0] = 1.0
        return v
    return [x / norm for x in v]


class FakeEmbed:
    """The server; `texts` lists every input embedded so far, `requests` counts the calls."""

    def __init__(self, dims=64, port=0):
        self.dims = dims
        self.texts = []
        self.requests = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-embed", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: pytest shows stderr of failing tests only
                pass

            def _answer(self, status, payload):
                body = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

            def do_GET(self):
                self._answer(404, {"error": {"message": "no such route"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path != "/v1/embeddings":
                    return self._answer(404, {"error": {"message": "no such route"}})
                try:
                    request = json.loads(raw)
                    inputs = request["input"]
                    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
                except (ValueError, KeyError, TypeError):
                    return self._answer(400, {"error": {"message": "expected JSON with `input`"}})
                with server._lock:
                    server.requests += 1
                    server.texts.extend(inputs)
                data = [{"object": "embedding", "index": i, "embedding": vector(t, server.dims)}
                        for i, t in reversed(list(enumerate(inputs)))]
                self._answer(200, {"object": "list", "data": data, "model": request.get("model", "fake")})

        return Handler


if __name__ == "__main__":
    s = FakeEmbed(port=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(s.endpoint, flush=True)
    s._httpd.serve_forever()
