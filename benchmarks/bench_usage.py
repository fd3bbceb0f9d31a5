"""Usage tables benchmark: usage_by, branch_costs, cache_efficiency and branch_calls against a DuckDB read.

Run from the repository root (the corpora of bench_loaders.py):

    python benchmarks/bench_usage.py --corpus /tmp/sessionlab-bench-0.58
    python benchmarks/bench_usage.py --corpus /tmp/sessionlab-bench-1.6

In one process: each step runs on a freshly loaded table (nothing cached from an earlier call;
the previous table is released before the load, so freeing it is not timed), best of
``--rounds``, next to DuckDB's ``read_json`` of the same files (bench_loaders.duckdb_read), whose
best time is the unit of the ratios. The forest build (the parent/chain arrays the branch
functions share) is also timed on its own, on a fresh table.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

os.environ["SESSIONLAB_CACHE_DIR"] = ""  # cold loads
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_loaders import duckdb_read, files_of  # noqa: E402


def _forest():
    from sessionlab.tables import forest
    return forest


def steps() -> dict:
    from sessionlab import branch_calls
    from sessionlab.analysis import branch_costs, cache_efficiency, usage_by
    return {
        'usage_by(by=["day", "model"], tz="Europe/Berlin")':
            lambda t: usage_by(t, by=["day", "model"], tz="Europe/Berlin"),
        'usage_by(by="session_id")': lambda t: usage_by(t, by="session_id"),
        'usage_by(by="branch")': lambda t: usage_by(t, by="branch"),
        "branch_costs": branch_costs,
        "cache_efficiency": cache_efficiency,
        "branch_calls (every session's current branch)": branch_calls,
        "(the forest build alone)": lambda t: _forest().Forest.of(t),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/tmp/sessionlab-bench-0.58")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from sessionlab.tables import entries_table

    files = files_of(args.corpus)
    best: dict[str, float] = {}
    duck = min(_timed(lambda: duckdb_read(files)) for _ in range(args.rounds))
    for _ in range(args.rounds):
        for name, fn in steps().items():
            _forest().clear_caches()
            gc.collect()
            table = entries_table(files, on_bad_lines="skip")
            best[name] = min(best.get(name, float("inf")), _timed(lambda fn=fn, table=table: fn(table)))
    print(f"corpus: {len(files)} files, {table.num_rows:,} rows ({args.corpus}); best of {args.rounds}")
    print(f"DuckDB read_json: {duck:.3f} s")
    print()
    print("| step (fresh table) | s | ratio to the DuckDB read |")
    print("|---|---:|---:|")
    for name, s in best.items():
        print(f"| {name} | {s:.4f} | {s / duck:.3f}x |")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
