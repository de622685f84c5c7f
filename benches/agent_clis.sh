#!/usr/bin/env bash
# What Claude Code, Codex and Gemini CLI pass to their model for a large tool answer (issue #44):
# each CLI runs offline against a local fake model (benches/agent_clis/fake_model.py: Anthropic
# Messages, OpenAI Responses and Gemini APIs on 127.0.0.1) and the real server over stdio, in a
# private HOME, and calls kb_outline on a generated 780-heading Markdown file (Japanese, then
# ASCII) with maxBytes 24576 … 65536 and without maxBytes. The fake model records the request
# that carries the tool result; the bench compares it with what the server sent (measured with
# the Python MCP SDK). Markdown table on stdout, logs on stderr. docs/design/clients.md has the
# results ("Agent CLIs and the answer budget").
#
# Usage: benches/agent_clis.sh            (builds nothing: set LVS_BIN or build the debug binary)
# Env:   LVS_BIN         the server binary (default: target/debug/local-vector-search-mcp)
#        LVS_AGENT_CLIS  which CLIs to run (default: claude,codex,gemini)
#        CLAUDE_CLI, CODEX_CLI, GEMINI_CLI   executables to use instead of the npm installs
#        LVS_NPM_CACHE   where the CLIs are installed from npm when missing (default
#                        ~/.cache/lvs-npm: claude-code/, codex/, gemini/) — the only network use
#        LVS_AGENT_SIZES maxBytes values (default 24576,32768,40960,49152,65536)
#        LVS_AGENT_LANGS which pages: ja (Japanese), en (ASCII) (default ja,en)
#        LVS_AGENT_TIMEOUT seconds per CLI run (default 120)
#        LVS_AGENT_KEEP  a directory to keep every run's files in (requests, logs, HOMEs)
# Needs python3 with the MCP SDK (`mcp`, as .ci/setup installs) and, to install the CLIs, npm.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${LVS_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/local-vector-search-mcp}
[[ -x $bin ]] || { echo "no server binary at $bin; run cargo build or set LVS_BIN" >&2; exit 2; }
cache=${LVS_NPM_CACHE:-$HOME/.cache/lvs-npm}
wanted=,${LVS_AGENT_CLIS:-claude,codex,gemini},

# install NAME PACKAGE BIN: prints the executable, installing PACKAGE into $cache/NAME if needed;
# prints nothing (and says why on stderr) when it cannot.
install() {
  local dir=$cache/$1
  if [[ ! -x $dir/node_modules/.bin/$3 ]]; then
    command -v npm >/dev/null || { echo "skip $2: npm is not installed" >&2; return 0; }
    echo "installing $2 into $dir" >&2
    npm install --silent --no-audit --no-fund --prefix "$dir" "$2" >&2 \
      || { echo "skip $2: npm install failed" >&2; return 0; }
  fi
  echo "$dir/node_modules/.bin/$3"
}

claude='' codex='' gemini=''
# Claude Code 2.1.332 is the version issue #44 reports on (.ci/setup pins 2.1.197 for `claude
# plugin validate`; its cut-offs are measured here with the newer one).
[[ $wanted == *,claude,* ]] && claude=${CLAUDE_CLI:-$(install claude-code @anthropic-ai/claude-code@2.1.332 claude)}
[[ $wanted == *,codex,* ]] && codex=${CODEX_CLI:-$(install codex @openai/codex@0.171.0 codex)}
[[ $wanted == *,gemini,* ]] && gemini=${GEMINI_CLI:-$(install gemini @google/gemini-cli gemini)}

exec python3 "$repo/benches/agent_clis/run.py" --bin "$bin" \
  --claude "$claude" --codex "$codex" --gemini "$gemini" \
  --sizes "${LVS_AGENT_SIZES:-24576,32768,40960,49152,65536}" \
  --langs "${LVS_AGENT_LANGS:-ja,en}" --timeout "${LVS_AGENT_TIMEOUT:-120}" ${LVS_AGENT_KEEP:+--keep "$LVS_AGENT_KEEP"}
