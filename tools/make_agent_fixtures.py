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


def long_context(folder: Path) -> Path:
    """Two claude-sonnet-4-5 calls, one with a prompt over the 200k long-context threshold, where
    ccusage prices the tier differently (docs/ccusage-differences.md)."""
    import json

    sid = "0b5c1c55-10a1-4c1e-9f0e-5e7a1f0c2a10"
    path = folder / "projects" / "-home-dev-big" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    env = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/big", "sessionId": sid,
           "version": "2.1.77", "gitBranch": "main"}
    lines, parent = [], None
    for k, (read, write, out) in enumerate(((150_000, 2_000, 900), (240_000, 9_997, 1_500))):
        u = {"parentUuid": parent, **env, "type": "user", "uuid": f"00000000-0000-4000-8000-00000000000{2 * k}",
             "timestamp": f"2026-02-05T10:0{k}:00.000Z", "message": {"role": "user", "content": "Read the whole repo."}}
        a = {"parentUuid": u["uuid"], **env, "type": "assistant",
             "uuid": f"00000000-0000-4000-8000-00000000000{2 * k + 1}",
             "timestamp": f"2026-02-05T10:0{k}:30.000Z", "requestId": f"req_011CLONG{k}",
             "message": {"model": "claude-sonnet-4-5-20250929", "id": f"msg_01LONG{k}", "type": "message",
                         "role": "assistant", "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
                         "stop_sequence": None,
                         "usage": {"input_tokens": 3, "cache_creation_input_tokens": write,
                                   "cache_read_input_tokens": read, "output_tokens": out,
                                   "cache_creation": {"ephemeral_5m_input_tokens": write,
                                                      "ephemeral_1h_input_tokens": 0}}}}
        lines += [json.dumps(u, separators=(",", ":")), json.dumps(a, separators=(",", ":"))]
        parent = a["uuid"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(out: Path) -> list[Path]:
    claude, codex = out / "claude" / "generated", out / "codex" / "generated"
    for d in (claude, codex):
        if d.exists():
            shutil.rmtree(d)
    tests = out.resolve().name == "data" and out.resolve().parent.name == "tests"
    if (out / "claude" / "longctx").exists():
        shutil.rmtree(out / "claude" / "longctx")
    paths = [
        *([long_context(out / "claude" / "longctx")] if tests else []),
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
