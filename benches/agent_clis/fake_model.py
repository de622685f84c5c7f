"""A fake model for agent CLIs: just enough of three model APIs to make a CLI call one MCP tool
once and then stop, recording the request that carries the tool's result back to the model.

APIs (one server answers all three, by path):
  - Anthropic Messages (`POST /v1/messages`, streaming SSE or JSON) — Claude Code;
  - OpenAI Responses (`POST /v1/responses`, streaming SSE) — Codex;
  - Gemini (`POST /v1beta/models/<m>:streamGenerateContent?alt=sse`, `:generateContent`,
    `:countTokens`) — Gemini CLI.

Turns of the main loop (a request that offers a tool whose name ends with `tool`):
  1. no tool result in the request yet -> call `tool` with `args`;
  2. a tool result is in the request -> write the request body to `record`, answer "done".
Every other request (title generation, quota probes, classifiers) is answered with plain text.

Only 127.0.0.1, a free port, and a deadline: the server stops itself after `lifetime` seconds.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeModel:
    def __init__(self, tool, args, record, lifetime=180.0, dump=None):
        self.tool, self.args, self.record, self.lifetime, self.dump = tool, args, record, lifetime, dump
        self.calls = 0  # tool calls handed out
        self.log = []  # (path, kind) of every request, for the bench's stderr
        self._server = None

    # --- life -------------------------------------------------------------------------------

    def start(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet: the bench's stderr gets a summary instead
                pass

            def do_GET(self):
                owner.log.append((self.path, "get"))
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    return self._json({"object": "list", "data": [], "models": []})
                self._json({}, 404)

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else self._chunked()
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0]
                if owner.dump:  # every request, numbered, for debugging a CLI's conversation
                    with open(f"{owner.dump}-{len(owner.log):02d}.json", "wb") as f:
                        f.write(raw)
                try:
                    if path.endswith("/messages/count_tokens"):
                        return self._json({"input_tokens": 10})
                    if path.endswith("/messages"):
                        return owner._anthropic(self, body, raw)
                    if path.endswith("/responses"):
                        return owner._responses(self, body, raw)
                    if ":countTokens" in path:
                        return self._json({"totalTokens": 10})
                    if ":streamGenerateContent" in path or ":generateContent" in path:
                        return owner._gemini(self, body, raw, ":streamGenerateContent" in path)
                except (BrokenPipeError, ConnectionResetError):
                    return
                owner.log.append((path, "unknown"))
                self._json({"error": {"message": f"fake model: no route {path}"}}, 404)

            def _chunked(self):
                data = b""
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()

            def _json(self, obj, status=200):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def sse(self, events):
                """`events`: (event name or None, payload) pairs, sent as one SSE response."""
                out = []
                for name, payload in events:
                    if name:
                        out.append(f"event: {name}\n")
                    out.append(f"data: {json.dumps(payload)}\n\n")
                data = "".join(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    @property
    def port(self):
        return self._server.server_address[1]

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self._timer.cancel()

    # --- decisions ---------------------------------------------------------------------------

    def _offered(self, tools):
        """(namespace, name) under which the request offers our tool, or (None, None). Codex
        groups an MCP server's tools in a `namespace` tool (`mcp__lvs` holding `kb_outline`)."""
        found = []

        def walk(v, namespace):
            if isinstance(v, dict):
                name = v.get("name")
                if v.get("type") == "namespace":
                    namespace = name
                elif isinstance(name, str) and name.endswith(self.tool):
                    found.append((namespace, name))
                for x in v.values():
                    walk(x, namespace)
            elif isinstance(v, list):
                for x in v:
                    walk(x, namespace)

        walk(tools, None)
        return found[0] if found else (None, None)

    def _decide(self, kind, name, has_result, raw):
        """'call' (hand out the tool call), 'record' (the result is here) or 'text'."""
        if name and has_result:
            with open(self.record, "wb") as f:
                f.write(raw)
            self.log.append((kind, "record"))
            return "record"
        if name and self.calls == 0:
            self.calls += 1
            self.log.append((kind, "call"))
            return "call"
        self.log.append((kind, "text"))
        return "text"

    # --- Anthropic Messages ------------------------------------------------------------------

    def _anthropic(self, h, body, raw):
        _, name = self._offered(body.get("tools") or [])
        has_result = any(
            isinstance(b, dict) and b.get("type") == "tool_result"
            for m in body.get("messages") or []
            if isinstance(m.get("content"), list)
            for b in m["content"]
        )
        what = self._decide("anthropic", name, has_result, raw)
        model = body.get("model", "claude-fake")
        usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if what == "call":
            block = {"type": "tool_use", "id": "toolu_fake_1", "name": name, "input": self.args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": "done"}
            stop = "end_turn"
        if not body.get("stream"):
            return h._json({
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(self.args)}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": "done"}
        h.sse([
            ("message_start", {"type": "message_start", "message": {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # --- OpenAI Responses --------------------------------------------------------------------

    def _responses(self, h, body, raw):
        items = body.get("input") if isinstance(body.get("input"), list) else []
        # Codex may defer MCP tools behind its client-side `tool_search` tool: the tools a search
        # found come back in a `tool_search_output` input item.
        found = [i for i in items if isinstance(i, dict) and i.get("type") == "tool_search_output"]
        namespace, name = self._offered([body.get("tools") or [], found])
        has_result = any(isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")
                         for i in items)
        searchable = any(isinstance(t, dict) and t.get("type") == "tool_search" for t in body.get("tools") or [])
        if not name and searchable and not found:
            self.log.append(("responses", "tool_search"))
            item = {"type": "tool_search_call", "id": "ts_fake_1", "call_id": "search_fake_1", "execution": "client",
                    "status": "completed", "arguments": {"query": self.tool, "limit": 8}}
            what = "search"
        else:
            what = self._decide("responses", name, has_result, raw)
        if what == "search":
            pass
        elif what == "call":
            item = {"type": "function_call", "id": "fc_fake_1", "call_id": "call_fake_1", "name": name,
                    "arguments": json.dumps(self.args)}
            if namespace:
                item["namespace"] = namespace
        else:
            item = {"type": "message", "role": "assistant", "id": "msg_fake_1", "status": "completed",
                    "content": [{"type": "output_text", "text": "done", "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        h.sse([
            ("response.created", {"type": "response.created", "response": {"id": "resp_fake"}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                "id": "resp_fake", "status": "completed", "output": [item], "usage": usage}}),
        ])

    # --- Gemini ------------------------------------------------------------------------------

    def _gemini(self, h, body, raw, stream):
        _, name = self._offered(body.get("tools") or [])
        has_result = any(
            isinstance(p, dict) and "functionResponse" in p
            for c in body.get("contents") or []
            for p in c.get("parts") or []
        )
        what = self._decide("gemini", name, has_result, raw)
        if what == "call":
            part = {"functionCall": {"name": name, "args": dict(self.args, wait_for_previous=False)}}
        elif "responseSchema" in json.dumps(body.get("generationConfig") or {}) or "responseJsonSchema" in json.dumps(
                body.get("generationConfig") or {}):
            # A JSON side-query (next speaker, routing): answer the one that ends the turn.
            part = {"text": json.dumps({"reasoning": "done", "next_speaker": "user",
                                        "model_choice": "flash"})}
        else:
            part = {"text": "done"}
        resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
        if stream:
            return h.sse([(None, resp)])
        h._json(resp)
