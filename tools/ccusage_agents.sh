#!/usr/bin/env bash
# ccusage's reports on the fixtures of the agents read through the agent seam beyond pi, Claude
# Code and Codex, for the tests (tests/test_agents_opencode_gemini_qwen_kimi_amp.py, tests/test_agents_droid_kilo_hermes_openclaw_grok.py,
# tests/test_agents_copilot_goose.py).
#
# Each agent's fixture is a home folder, tests/data/agents/<agent>/home/, laid out as the agent lays
# out its files; ccusage runs with HOME set to it (and nothing else of the environment) and writes
# ccusage-{daily,monthly,session}.json beside it. Installs ccusage (20.0.24 unless CCUSAGE_VERSION
# says otherwise) from npm into a temporary folder unless CCUSAGE names a binary; Node is needed
# here only, the tests read the committed outputs. Run from anywhere:
#
#   tools/ccusage_agents.sh [agent...]      (default: every agent below)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="${CCUSAGE_VERSION:-20.0.24}"
if [ -z "${CCUSAGE:-}" ]; then
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  npm install --prefix "$WORK" --silent --no-audit --no-fund "ccusage@$VERSION" >/dev/null
  CCUSAGE="$WORK/node_modules/.bin/ccusage"
fi
AGENTS=("$@")
[ ${#AGENTS[@]} -gt 0 ] || AGENTS=(opencode gemini qwen kimi amp droid kilo hermes openclaw grok copilot goose)
for agent in "${AGENTS[@]}"; do
  dir="$ROOT/tests/data/agents/$agent"
  [ -d "$dir/home" ] || { echo "no fixture: $dir/home" >&2; exit 1; }
  for report in daily monthly session; do
    env -i PATH="$PATH" HOME="$dir/home" "$CCUSAGE" "$agent" "$report" --json --offline --timezone UTC \
      > "$dir/ccusage-$report.json"
  done
  echo "$VERSION" > "$dir/VERSION"
done
