#!/usr/bin/env bash
# Expected usage reports from the real ccusage, for the tests (tests/test_ccusage.py).
#
# Installs ccusage (20.0.24: the newest release with a linux-x64 binary) from npm into a temporary
# folder (or uses the one CCUSAGE_BIN names), runs it with an empty HOME on the Claude Code and Codex fixtures and writes its JSON
# outputs to tests/data/{claude,codex}/expected/ (pi's: tests/data/pi/ccusage/). Node and npm are
# needed here only; the tests read the committed outputs. Run from anywhere:
#
#   tools/ccusage_expected.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="${CCUSAGE_VERSION:-20.0.24}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/npm" "$WORK/home"
if [ -n "${CCUSAGE_BIN:-}" ]; then
  CCUSAGE="$CCUSAGE_BIN"
else
  npm install --prefix "$WORK/npm" --silent --no-audit --no-fund "ccusage@$VERSION" >/dev/null
  CCUSAGE="$WORK/npm/node_modules/.bin/ccusage"
fi
"$CCUSAGE" --version | grep -qx "ccusage $VERSION"
run() { env -i PATH="$PATH" HOME="$WORK/home" "$@"; }
OPTS=(--json --offline --timezone UTC)

# Claude Code: the generated fixtures as they are; the real session under a projects/ folder
mkdir -p "$WORK/real/projects/real"
cp "$ROOT"/tests/data/claude/real/*.jsonl "$WORK/real/projects/real/"
out="$ROOT/tests/data/claude/expected"
mkdir -p "$out"
for name in generated real longctx; do
  dir="$ROOT/tests/data/claude/$name"
  [ "$name" = real ] && dir="$WORK/real"
  for report in daily monthly session weekly blocks; do
    run CLAUDE_CONFIG_DIR="$dir" "$CCUSAGE" claude "$report" "${OPTS[@]}" --mode calculate \
      > "$out/ccusage-$name-$report.json"
  done
done
# weeks that start on a Monday; blocks of another length. (Every fixture's last call is long past:
# no block is active, so the blocks outputs do not depend on the day they are written.)
run CLAUDE_CONFIG_DIR="$ROOT/tests/data/claude/generated" "$CCUSAGE" claude weekly "${OPTS[@]}" --mode calculate \
  --start-of-week monday > "$out/ccusage-generated-weekly-monday.json"
run CLAUDE_CONFIG_DIR="$ROOT/tests/data/claude/generated" "$CCUSAGE" claude blocks "${OPTS[@]}" --mode calculate \
  --session-length 2 > "$out/ccusage-generated-blocks-2h.json"

# the real Claude Code transcripts (codemie-code: 2.0.64-2.1.7, Bedrock, no requestId), laid out as a
# ~/.claude folder already
for report in daily monthly session weekly blocks; do
  run CLAUDE_CONFIG_DIR="$ROOT/tests/data/claude/real/codemie" "$CCUSAGE" claude "$report" "${OPTS[@]}" \
    --mode calculate > "$out/ccusage-codemie-$report.json"
done

# Codex: generated, the real Codex Desktop 0.104 rollouts (localpush), and the shapes the real files
# do not show (a rollout without a model, Codex 0.142's tool_search_call)
out="$ROOT/tests/data/codex/expected"
mkdir -p "$out"
for report in daily monthly session; do
  run CODEX_HOME="$ROOT/tests/data/codex/generated" "$CCUSAGE" codex "$report" "${OPTS[@]}" \
    > "$out/ccusage-generated-$report.json"
  run CODEX_HOME="$ROOT/tests/data/codex/real/localpush" "$CCUSAGE" codex "$report" "${OPTS[@]}" \
    > "$out/ccusage-localpush-$report.json"
done
# weekly: \`ccusage codex\` has no weekly report; the all-agents \`ccusage weekly\` reads CODEX_HOME (HOME
# is empty: no other agent's files). ccusage's blocks are Claude Code's only.
for name in generated real/localpush; do
  run CODEX_HOME="$ROOT/tests/data/codex/$name" "$CCUSAGE" weekly "${OPTS[@]}" \
    > "$out/ccusage-${name#real/}-weekly.json"
done
for shape in no-model tool-search; do
  run CODEX_HOME="$ROOT/tests/data/codex/shapes/$shape" "$CCUSAGE" codex daily "${OPTS[@]}" \
    > "$out/ccusage-$shape-daily.json"
done

# pi: the repository's pi sessions (data/pi: real, pi 0.x; data/sessions: generated) and pi 1.6.0's
# own files (tests/data/pi/generated-1.6: usage entries, compaction and branch-summary usage)
out="$ROOT/tests/data/pi/ccusage"
mkdir -p "$out"
for report in daily session; do
  run "$CCUSAGE" pi "$report" --pi-path "$ROOT/data/pi,$ROOT/data/sessions" "${OPTS[@]}" \
    > "$out/ccusage-data-$report.json"
  run "$CCUSAGE" pi "$report" --pi-path "$ROOT/tests/data/pi/generated-1.6" "${OPTS[@]}" \
    > "$out/ccusage-generated-1.6-$report.json"
done
# weekly: the all-agents report, pi's folders from PI_AGENT_DIR
run PI_AGENT_DIR="$ROOT/data/pi,$ROOT/data/sessions" "$CCUSAGE" weekly "${OPTS[@]}" > "$out/ccusage-data-weekly.json"
run PI_AGENT_DIR="$ROOT/tests/data/pi/generated-1.6" "$CCUSAGE" weekly "${OPTS[@]}" \
  > "$out/ccusage-generated-1.6-weekly.json"
echo "ccusage $VERSION" > "$out/VERSION"
echo "ccusage $VERSION" > "$ROOT/tests/data/claude/expected/VERSION"
cp "$ROOT/tests/data/claude/expected/VERSION" "$ROOT/tests/data/codex/expected/VERSION"
ls -l "$ROOT"/tests/data/{claude,codex}/expected
