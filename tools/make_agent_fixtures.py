"""Write the generated Claude Code and Codex sessions used by the tests and the sample data.

Run from the repository root::

    python tools/make_agent_fixtures.py tests/data   # tests/data/{claude,codex}/generated
    python tools/make_agent_fixtures.py data         # data/{claude,codex}/generated

The output is deterministic (seeded generators); old ``generated`` folders are replaced. After
regenerating the test fixtures, rerun ``tools/ccusage_expected.sh`` to refresh ccusage's outputs.
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from sessionlab.synth import generate_claude_session, generate_codex_session


def main(out: Path) -> list[Path]:
    claude, codex = out / "claude" / "generated", out / "codex" / "generated"
    for d in (claude, codex):
        if d.exists():
            shutil.rmtree(d)
    paths = [
        # a subagent with a replayed parent response, a rewind, streaming duplicates; crosses midnight UTC
        generate_claude_session(claude, seed=1, turns=8, start=datetime(2026, 1, 30, 22, 40, tzinfo=UTC)),
        # a compaction (small threshold) on opus; January into February
        generate_claude_session(claude, seed=2, turns=10, compact_at=45_000, model="claude-opus-4-6",
                                start=datetime(2026, 1, 31, 23, 5, tzinfo=UTC)),
        # no subagent, sonnet, another project
        generate_claude_session(claude, seed=3, turns=6, subagent=False, model="claude-sonnet-4-5-20250929",
                                start=datetime(2026, 2, 3, 9, 12, tzinfo=UTC)),
    ]
    parent = generate_codex_session(codex, seed=1, turns=6, compact_at=25_000,
                                    start=datetime(2026, 1, 31, 21, 30, tzinfo=UTC))
    paths += [
        parent,
        generate_codex_session(codex, seed=2, turns=5, start=datetime(2026, 2, 2, 14, 0, tzinfo=UTC)),
        # a fork replaying its parent's history
        generate_codex_session(codex, seed=3, turns=3, fork_of=parent),
    ]
    return paths


if __name__ == "__main__":
    for p in main(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data")):
        print(f"{p.stat().st_size:>8,}  {p}")
