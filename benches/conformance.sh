#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) against
# `serve --http` on a copy of the `ja` fixture: the generic server scenarios, each on its own.
#
# Scenarios that call the suite's own fixture tools, prompts or resources (tools-call-*,
# prompts-*, resources-*, completion-complete, logging-set-level, elicitation-*,
# json-schema-2020-12) are not applicable: this server has its kb_* tools only, and no prompts,
# resources, completions or logging capability. The SSE polling scenarios need a session id; the
# server is stateless (docs/design/http.md), so the suite skips their checks with a warning.
#
# Usage: benches/conformance.sh
# Env:   LVS_BIN      the server binary (default: target/debug/local-vector-search-mcp)
#        CONFORMANCE  a `conformance` executable; without it the suite and Node 22 (npm's `node`
#                     package; the suite's newest releases need it) are installed with npm into
#                     $LVS_NPM_CACHE (default ~/.cache/lvs-npm/conformance).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${LVS_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/local-vector-search-mcp}
[[ -x $bin ]] || { echo "no server binary at $bin; run cargo build or set LVS_BIN" >&2; exit 2; }

suite=${CONFORMANCE:-}
if [[ -z $suite ]]; then
  cache=${LVS_NPM_CACHE:-$HOME/.cache/lvs-npm/conformance}
  if [[ ! -x $cache/node_modules/.bin/conformance ]]; then
    echo "installing @modelcontextprotocol/conformance and node@22 into $cache" >&2
    npm install --silent --prefix "$cache" @modelcontextprotocol/conformance node@22 >&2
  fi
  export PATH=$cache/node_modules/.bin:$PATH
  suite=$cache/node_modules/.bin/conformance
fi

work=$(mktemp -d)
server=
cleanup() { [[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cp -r "$repo/tests/fixtures/ja" "$work/project"
"$bin" --project-root "$work/project" --embedding-provider none --search-mode lexical \
  serve --http 127.0.0.1:0 2>"$work/server.log" &
server=$!
url=
for _ in $(seq 1 300); do
  url=$(grep -o 'http://[^ ]*/mcp' "$work/server.log" || true)
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || { echo "the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

generic=(server-initialize ping tools-list dns-rebinding-protection server-sse-polling server-sse-multiple-streams)
failed=0
for scenario in "${generic[@]}"; do
  out=$("$suite" server --url "$url" --scenario "$scenario" 2>&1 || true)
  summary=$(grep -E '^Passed: ' <<<"$out" | tail -1)
  echo "$scenario: ${summary:-no result}"
  if ! grep -qE '^Passed: [0-9]+/[0-9]+, 0 failed' <<<"$out"; then
    failed=1
    echo "$out" >&2
  fi
done
echo "not applicable (need the suite's fixture tools, prompts or resources): $("$suite" list --server 2>/dev/null \
  | sed -n 's/^  - \([^ ]*\).*/\1/p' | grep -vxF -f <(printf '%s\n' "${generic[@]}") | tr '\n' ' ')"
warnings=$(grep -c ' WARN ' "$work/server.log" || true)
echo "server WARN lines during the run: $warnings"
echo "conformance $("$suite" --version)"
exit $failed
