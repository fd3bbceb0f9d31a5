"""Loader benchmark: entries_table vs DuckDB, pyarrow's JSON reader and a per-line json.loads loop.

Run from the repository root:

    python benchmarks/bench_loaders.py                 # a pi 1.6 corpus, generated in /tmp/sessionlab-bench-1.6
    python benchmarks/bench_loaders.py --pi 0.58       # the same sessions as pi 0.58 wrote them
    python benchmarks/bench_loaders.py --corpus DIR    # reuse a folder of sessions

Each method runs in a fresh subprocess (so its peak RSS is its own; for entries_table the peak of
the main process plus that of its largest worker), on the same files, in one run. Its seconds
include importing what it needs (sessionlab.tables pulls in pandas and pyarrow); that import is also
shown on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

# every load here is a cold one: the loaders' cache (on by default) would serve repeated runs
os.environ["SESSIONLAB_CACHE_DIR"] = ""

FIELDS = {"type": "VARCHAR", "id": "VARCHAR", "parentId": "VARCHAR", "timestamp": "VARCHAR",
          "message": "STRUCT(role VARCHAR, content JSON, api VARCHAR, provider VARCHAR, model VARCHAR, "
                     "stopReason VARCHAR, errorMessage VARCHAR, toolName VARCHAR, isError BOOLEAN, command VARCHAR, "
                     "output VARCHAR, customType VARCHAR, usage STRUCT(input BIGINT, output BIGINT, "
                     "cacheRead BIGINT, cacheWrite BIGINT, totalTokens BIGINT, cost STRUCT(total DOUBLE)))",
          "thinkingLevel": "VARCHAR", "provider": "VARCHAR", "modelId": "VARCHAR", "summary": "VARCHAR",
          "firstKeptEntryId": "VARCHAR", "tokensBefore": "BIGINT", "fromId": "VARCHAR", "customType": "VARCHAR",
          "content": "JSON", "targetId": "VARCHAR", "label": "VARCHAR", "name": "VARCHAR"}


def files_of(corpus: str) -> list[str]:
    return sorted(str(p) for p in Path(corpus).rglob("*.jsonl"))


def m_entries_table(files: list[str]) -> int:
    from sessionlab.tables import entries_table
    return entries_table(files, on_bad_lines="skip").num_rows


def m_duckdb(files: list[str]) -> int:
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET threads={os.cpu_count()}")
    q = ("SELECT filename, type, id, parentId, timestamp::TIMESTAMPTZ, message.role, message.content, "
         "message.api, message.provider, message.model, message.stopReason, message.errorMessage, "
         "message.toolName, message.isError, message.command, message.output, message.customType, "
         "message.usage, thinkingLevel, provider, modelId, summary, firstKeptEntryId, tokensBefore, fromId, "
         "customType, content, targetId, label, name "
         "FROM read_json($files, format='newline_delimited', columns=$cols, filename=true)")
    return con.execute(q, {"files": files, "cols": FIELDS}).to_arrow_table().num_rows


def duckdb_read(files: list[str]) -> int:
    """DuckDB's read that the per-step ratios are taken against (bench_steps, bench_usage,
    bench_compaction): every field a table needs, typed, straight into Arrow (no projection of
    nested fields, which costs DuckDB more than the read itself)."""
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET threads={os.cpu_count()}")
    q = "SELECT * FROM read_json($files, format='newline_delimited', columns=$cols, filename=true)"
    return con.sql(q, params={"files": files, "cols": FIELDS}).to_arrow_table().num_rows


def m_pyarrow(files: list[str]) -> int:
    import pyarrow as pa
    import pyarrow.json as pj
    s = pa.string()
    usage = pa.struct([("input", pa.int64()), ("output", pa.int64()), ("cacheRead", pa.int64()),
                       ("cacheWrite", pa.int64()), ("totalTokens", pa.int64()),
                       ("cost", pa.struct([("total", pa.float64())]))])
    # content (a string or a list) cannot be declared: the reader has no union or raw-JSON type
    msg = pa.struct([("role", s), ("api", s), ("provider", s), ("model", s), ("stopReason", s),
                     ("errorMessage", s), ("toolName", s), ("isError", pa.bool_()), ("usage", usage)])
    schema = pa.schema([("type", s), ("id", s), ("parentId", s), ("timestamp", s), ("message", msg),
                        ("thinkingLevel", s), ("provider", s), ("modelId", s), ("summary", s),
                        ("firstKeptEntryId", s), ("tokensBefore", pa.int64()), ("fromId", s),
                        ("customType", s), ("targetId", s), ("label", s), ("name", s)])
    opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    return pa.concat_tables([pj.read_json(f, parse_options=opts) for f in files]).num_rows


def m_json_loop(files: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests/
    from tests._dict_estimate import estimate_tokens_dict  # pi's estimate on dicts (the tests' reference)
    return _json_loop(files, estimate_tokens_dict)


def m_json_loop_plain(files: list[str]) -> int:
    """The same loop without pi's token estimate: json.loads per line and picking raw fields only."""
    return _json_loop(files, None)


def _json_loop(files: list[str], estimate) -> int:
    """json.loads per line, building the same kind of columns (and pi's estimate when given)."""
    cols: dict[str, list] = {k: [] for k in ("file", "type", "id", "parentId", "timestamp", "role", "model",
                                             "input", "output", "cacheRead", "cacheWrite", "total", "cost", "est")}
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                m = d.get("message") or {}
                u = m.get("usage") or {}
                cols["file"].append(f)
                cols["type"].append(d.get("type"))
                cols["id"].append(d.get("id"))
                cols["parentId"].append(d.get("parentId"))
                cols["timestamp"].append(d.get("timestamp"))
                cols["role"].append(m.get("role"))
                cols["model"].append(m.get("model"))
                for k in ("input", "output", "cacheRead", "cacheWrite"):
                    cols[k].append(u.get(k))
                cols["total"].append(u.get("totalTokens"))
                cols["cost"].append((u.get("cost") or {}).get("total"))
                if estimate is not None:
                    cols["est"].append(estimate(m) if m else None)
    return len(cols["type"])


METHODS = {"entries_table": m_entries_table, "duckdb read_json": m_duckdb,
           "pyarrow json (explicit schema, no content)": m_pyarrow,
           "json.loads loop (with pi token estimate)": m_json_loop,
           "json.loads loop (plain: raw fields only, no estimate)": m_json_loop_plain}


# what each method imports: timed as part of its seconds, and also reported on its own
IMPORTS = {"entries_table": "sessionlab.tables", "duckdb read_json": "duckdb",
           "pyarrow json (explicit schema, no content)": "pyarrow.json",
           "json.loads loop (with pi token estimate)": "sessionlab.pi.tokens",  # (what tests._dict_estimate imports)
           "json.loads loop (plain: raw fields only, no estimate)": "json"}


def run_one(name: str, corpus: str) -> None:
    import importlib
    files = files_of(corpus)
    t = time.perf_counter()
    importlib.import_module(IMPORTS[name])
    t_import = time.perf_counter() - t
    rows = METHODS[name](files)
    dt = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"seconds": dt, "import_seconds": t_import, "rows": rows, "peak_rss_kb": rss}))


def machine() -> str:
    model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    mem = next((int(ln.split()[1]) // 1024 // 1024 for ln in open("/proc/meminfo") if ln.startswith("MemTotal")), 0)
    return f"{os.cpu_count()} CPUs (nproc), {model}, {mem} GiB RAM, Python {platform.python_version()}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--out", default=None, help="where to generate the corpus (default /tmp/sessionlab-bench-<pi>)")
    ap.add_argument("--pi", default="1.6", choices=("1.6", "0.58"),
                    help="which pi writes the generated corpus (1.6: system messages, usage entries, edits...)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per method (the fastest is kept)")
    ap.add_argument("--run", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        return run_one(args.run, args.corpus)
    corpus = args.corpus
    if corpus is None:
        from sessionlab.synth import generate_corpus
        corpus = args.out or f"/tmp/sessionlab-bench-{args.pi}"
        if not files_of(corpus):
            t = time.perf_counter()
            generate_corpus(corpus, n_sessions=300, target_bytes=150_000_000, seed=0, pi=args.pi)
            print(f"generated corpus in {time.perf_counter() - t:.0f} s")
    files = files_of(corpus)
    nbytes = sum(os.path.getsize(f) for f in files)
    print(f"corpus: {len(files)} files, {nbytes / 1e6:.1f} MB ({corpus})")
    print(f"machine: {machine()}")
    results: dict[str, dict | None] = {name: None for name in METHODS}
    for _ in range(args.rounds):  # rounds interleave the methods; each keeps its fastest run
        for name in METHODS:
            out = subprocess.run([sys.executable, __file__, "--run", name, "--corpus", corpus],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"{name}: failed: {out.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            r["load_seconds"] = r["seconds"] - r["import_seconds"]
            best = results[name]
            if best is None or r["load_seconds"] < best["load_seconds"]:
                results[name] = r
    ref = results.get("entries_table")
    print(f"(best of {args.rounds} runs per method; 'load' excludes the one-time import, 'total' includes it)")
    print()
    print("| method | rows | load s | import s | load MB/s | peak RSS MB | RSS / bytes | "
          "entries_table speed-up (load) | (total) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        if r is None:
            print(f"| {name} | failed | | | | | | | |")
            continue
        mbs = nbytes / r["load_seconds"] / 1e6
        rss = r["peak_rss_kb"] / 1024
        up = r["load_seconds"] / ref["load_seconds"] if ref else float("nan")
        up_total = r["seconds"] / ref["seconds"] if ref else float("nan")
        print(f"| {name} | {r['rows']} | {r['load_seconds']:.2f} | {r['import_seconds']:.2f} | {mbs:.1f} | "
              f"{rss:.0f} | {r['peak_rss_kb'] * 1024 / nbytes:.2f} | {up:.2f}x | {up_total:.2f}x |")

if __name__ == "__main__":
    main()
