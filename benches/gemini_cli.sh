#!/usr/bin/env bash
# Gemini CLI against our stdio server, offline: the CLI's model is replaced by a file of canned
# answers (`--fake-responses-non-strict`), everything else is the real CLI and the real binary.
#
# Checks what docs/design/clients.md promises for Gemini CLI:
#   1. one of our errors reaches the model as our code and message (`NOT_FOUND: …`), not as
#      "Structured content does not match the tool's output schema";
#   2. a call carrying `wait_for_previous` (Gemini CLI adds it to every tool) succeeds.
#
# Usage: benches/gemini_cli.sh            (builds nothing: set LVS_BIN or build the debug binary)
# Env:   LVS_BIN     the server binary (default: target/debug/local-vector-search-mcp)
#        GEMINI_CLI  a `gemini` executable; without it `npm install @google/gemini-cli` into
#                    $LVS_NPM_CACHE (default ~/.cache/lvs-npm/gemini) — the only network use.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${LVS_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/local-vector-search-mcp}
[[ -x $bin ]] || { echo "no server binary at $bin; run cargo build or set LVS_BIN" >&2; exit 2; }

gemini=${GEMINI_CLI:-}
if [[ -z $gemini ]]; then
  cache=${LVS_NPM_CACHE:-$HOME/.cache/lvs-npm/gemini}
  if [[ ! -x $cache/node_modules/.bin/gemini ]]; then
    echo "installing @google/gemini-cli into $cache" >&2
    npm install --silent --prefix "$cache" @google/gemini-cli >&2
  fi
  gemini=$cache/node_modules/.bin/gemini
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gemini-home/.gemini" "$work/project"
cp -r "$repo/tests/fixtures/ja/." "$work/project/"

# A private HOME: the user's own Gemini settings and credentials are never read.
python3 - "$work" "$bin" <<'EOF'
import json, sys
work, binary = sys.argv[1], sys.argv[2]
settings = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "mcpServers": {"lvs": {
        "command": binary,
        "args": ["--project-root", f"{work}/project", "--embedding-provider", "none", "--search-mode", "lexical"],
    }},
}
json.dump(settings, open(f"{work}/gemini-home/.gemini/settings.json", "w"))

def turn(parts):
    return {"method": "generateContentStream", "response": [{
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}]}

# MCP tools are named mcp_<server>_<tool> in Gemini CLI.
answers = [
    turn([{"functionCall": {"name": "mcp_lvs_kb_read",
                            "args": {"request": {"path": "no-such-file.md"}, "wait_for_previous": False}}}]),
    turn([{"functionCall": {"name": "mcp_lvs_kb_read",
                            "args": {"request": {"path": "kyoto.md", "maxElements": 1}, "wait_for_previous": True}}}]),
    turn([{"text": "done"}]),
]
with open(f"{work}/answers.jsonl", "w") as f:
    f.write("".join(json.dumps(a) + "\n" for a in answers))
EOF

# Headless runs offer MCP tools only in yolo mode (or for servers configured with "trust": true);
# --skip-trust trusts the folder for this run (stdio servers start only in trusted folders).
(cd "$work/project" && HOME=$work/gemini-home GEMINI_API_KEY=offline "$gemini" -m gemini-2.5-flash \
  -p "Read the missing file, then kyoto.md." --skip-trust --approval-mode yolo \
  --fake-responses-non-strict "$work/answers.jsonl" --output-format stream-json \
  >"$work/events.jsonl" 2>"$work/stderr.txt") || true

python3 - "$work/events.jsonl" <<'EOF'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
results = [e for e in events if e.get("type") == "tool_result"]
version = next((e.get("model") for e in events if e.get("type") == "init"), "?")
if len(results) != 2:
    sys.exit(f"FAIL: expected two tool results, got {len(results)}: {events}")
error, ok = results
shown = json.dumps(error, ensure_ascii=False)
if "NOT_FOUND: Document 'no-such-file.md' was not found." not in shown:
    sys.exit(f"FAIL: the error did not reach the model as CODE: message: {shown}")
if "does not match the tool's output schema" in shown:
    sys.exit(f"FAIL: Gemini CLI validated the error against the output schema: {shown}")
if ok.get("status") != "success" or '"path":"kyoto.md"' not in ok.get("output", ""):
    sys.exit(f"FAIL: the call with wait_for_previous did not succeed: {ok}")
print("ok: the error reached the model as 'NOT_FOUND: Document 'no-such-file.md' was not found.'")
print("ok: kb_read with wait_for_previous=true succeeded")
EOF
echo "gemini-cli $("$gemini" --version 2>/dev/null)"
