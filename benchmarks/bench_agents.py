"""Claude Code and Codex loading: entries_table vs DuckDB's read_json with the schema given.

Run from the repository root:

    python benchmarks/bench_agents.py                  # generates the corpora in /tmp/sessionlab-bench-agents
    python benchmarks/bench_agents.py --claude DIR --codex DIR   # or any folders of sessions

The corpora (~150 MB of Claude Code transcripts with subagents, ~75 MB of Codex rollouts) come
from ``sessionlab.synth`` (seeded). For each corpus, on the same files and in one run, each method
runs in a fresh subprocess three times, interleaved, keeping its fastest run: ``entries_table``
(format detection, the streaming reader, usage deduplicated and priced across files, Arrow
tables) and DuckDB ``read_json`` (newline-delimited, the columns the tables need declared, message
content kept as JSON). Seconds exclude imports (each method imports its modules first); MB/s is
corpus bytes / seconds; the last column is entries_table's throughput relative to DuckDB's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

USAGE = "STRUCT(input_tokens BIGINT, output_tokens BIGINT, cache_creation_input_tokens BIGINT, " \
        "cache_read_input_tokens BIGINT, cache_creation STRUCT(ephemeral_5m_input_tokens BIGINT, " \
        "ephemeral_1h_input_tokens BIGINT))"
CLAUDE_COLUMNS = {
    "type": "VARCHAR", "uuid": "VARCHAR", "parentUuid": "VARCHAR", "logicalParentUuid": "VARCHAR",
    "sessionId": "VARCHAR", "timestamp": "VARCHAR", "isSidechain": "BOOLEAN", "agentId": "VARCHAR",
    "version": "VARCHAR", "cwd": "VARCHAR", "requestId": "VARCHAR", "costUSD": "DOUBLE", "subtype": "VARCHAR",
    "message": f"STRUCT(id VARCHAR, role VARCHAR, model VARCHAR, content JSON, stop_reason VARCHAR, usage {USAGE})",
    "compactMetadata": "STRUCT(\"trigger\" VARCHAR, preTokens BIGINT, postTokens BIGINT)",
    "summary": "VARCHAR", "data": "STRUCT(type VARCHAR)", "isApiErrorMessage": "BOOLEAN",
}
TU = "STRUCT(input_tokens BIGINT, cached_input_tokens BIGINT, output_tokens BIGINT, " \
     "reasoning_output_tokens BIGINT, total_tokens BIGINT)"
CODEX_COLUMNS = {
    "timestamp": "VARCHAR", "type": "VARCHAR",
    "payload": f"STRUCT(type VARCHAR, role VARCHAR, content JSON, name VARCHAR, arguments VARCHAR, \"input\" VARCHAR, "
               f"call_id VARCHAR, output JSON, summary JSON, info STRUCT(total_token_usage {TU}, "
               f"last_token_usage {TU}, model_context_window BIGINT), model VARCHAR, id VARCHAR, "
               f"cli_version VARCHAR, cwd VARCHAR, forked_from_id VARCHAR, message VARCHAR)",
}


def files_of(corpus: str) -> list[str]:
    return sorted(str(p) for p in Path(corpus).rglob("*.jsonl"))


def m_entries_table(files: list[str]) -> int:
    from sessionlab.tables import entries_table
    return entries_table(files, on_bad_lines="skip").num_rows


def m_duckdb(files: list[str], columns: dict) -> int:
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET threads={os.cpu_count()}")
    q = "SELECT * FROM read_json($files, format='newline_delimited', columns=$cols, filename=true)"
    return con.execute(q, {"files": files, "cols": columns}).to_arrow_table().num_rows


def _child(method: str, corpus: str, kind: str) -> None:
    files = files_of(corpus)
    if method == "entries_table":
        import sessionlab.tables  # noqa: F401  (imports before timing)
        fn = m_entries_table
        args: tuple = (files,)
    else:
        import duckdb  # noqa: F401
        fn = m_duckdb
        args = (files, CLAUDE_COLUMNS if kind == "claude" else CODEX_COLUMNS)
    t0 = time.perf_counter()
    rows = fn(*args)
    print(json.dumps({"seconds": time.perf_counter() - t0, "rows": rows}))


def generate(root: Path, claude_mb: int, codex_mb: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from sessionlab.synth import generate_claude_session, generate_codex_session

    claude, codex = root / "claude", root / "codex"
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    if not claude.exists():
        size, seed = 0, 0
        while size < claude_mb << 20:
            p = generate_claude_session(claude, seed=seed, turns=20, compact_at=150_000,
                                        start=start + timedelta(hours=7 * seed))
            size += sum(f.stat().st_size for f in [p, *p.with_suffix("").rglob("*.jsonl")])
            seed += 1
    if not codex.exists():
        size, seed = 0, 0
        parent = None
        while size < codex_mb << 20:
            fork = parent if seed % 10 == 9 else None
            p = generate_codex_session(codex, seed=seed, turns=20, compact_at=150_000, fork_of=fork,
                                       start=start + timedelta(hours=5 * seed))
            parent = p
            size += p.stat().st_size
            seed += 1
    return claude, codex


def run(method: str, corpus: str, kind: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run([sys.executable, __file__, "--child", method, corpus, kind], capture_output=True,
                         text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude")
    ap.add_argument("--codex")
    ap.add_argument("--root", default="/tmp/sessionlab-bench-agents")
    ap.add_argument("--child", nargs=3)
    a = ap.parse_args()
    if a.child:
        _child(*a.child)
        return
    claude, codex = generate(Path(a.root), 150, 75)
    corpora = [("claude", a.claude or str(claude)), ("codex", a.codex or str(codex))]
    print(f"{platform.python_version()} on {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}")
    print(f"{'corpus':8} {'files':>6} {'MB':>7} {'method':15} {'rows':>9} {'load s':>7} {'MB/s':>7} {'vs DuckDB':>9}")
    for kind, corpus in corpora:
        files = files_of(corpus)
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        best: dict[str, dict] = {}
        for _ in range(3):  # interleaved, fastest of three
            for method in ("entries_table", "duckdb"):
                r = run(method, corpus, kind)
                if method not in best or r["seconds"] < best[method]["seconds"]:
                    best[method] = r
        ratio = best["duckdb"]["seconds"] / best["entries_table"]["seconds"]
        for method in ("entries_table", "duckdb"):
            r = best[method]
            rel = f"{ratio:.2f}x" if method == "entries_table" else ""
            print(f"{kind:8} {len(files):>6} {mb:>7.1f} {method:15} {r['rows']:>9,} {r['seconds']:>7.2f} "
                  f"{mb / r['seconds']:>7.1f} {rel:>9}")


if __name__ == "__main__":
    main()
