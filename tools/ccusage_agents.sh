#!/usr/bin/env bash
# Expected usage reports from the real ccusage for the agents read through the registry beyond pi,
# Claude Code and Codex (tests/test_agents_more_agents-a.py).
#
# Each agent's fixture is a home folder, tests/data/agents/<agent>/home/, laid out as the agent
# lays out its files; ccusage runs with HOME set to it (and nothing else from the environment) and
# its JSON reports are written beside it: tests/data/agents/<agent>/ccusage-{daily,monthly,session}.json.
# Installs ccusage (20.0.24 unless CCUSAGE_VERSION says otherwise) from npm into a temporary folder;
# Node and npm are needed here only. Run from anywhere, optionally naming the agents:
#
#   tools/ccusage_agents.sh [gemini ...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="${CCUSAGE_VERSION:-20.0.24}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
npm install --prefix "$WORK/npm" --silent --no-audit --no-fund "ccusage@$VERSION" >/dev/null
CCUSAGE="$WORK/npm/node_modules/.bin/ccusage"
AGENTS=("$@")
[ ${#AGENTS[@]} -gt 0 ] || AGENTS=(opencode gemini qwen kimi amp)
for agent in "${AGENTS[@]}"; do
  dir="$ROOT/tests/data/agents/$agent"
  for report in daily monthly session; do
    env -i PATH="$PATH" HOME="$dir/home" "$CCUSAGE" "$agent" "$report" --json --offline --timezone UTC \
      > "$dir/ccusage-$report.json"
  done
done
echo "$VERSION" > "$ROOT/tests/data/agents/VERSION"
