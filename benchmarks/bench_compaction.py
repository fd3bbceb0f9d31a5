"""Compaction-policy grid benchmark: 100 policies over the corpus vs a DuckDB read of it, in one run.

Run from the repository root:

    python benchmarks/bench_compaction.py                 # the pi 0.58 corpus in /tmp/sessionlab-bench-0.58
    python benchmarks/bench_compaction.py --corpus DIR    # e.g. /tmp/sessionlab-bench-1.6
    python benchmarks/bench_compaction.py --profile       # and where the cold grid's time goes

Prints, in one process and each the best of three: DuckDB's ``read_json`` of the files with the
columns given (as in ``bench_loaders.py``), ``entries_table``, the grid of 100 policies on every
session's current branch on a freshly loaded table (cold: every per-table array is built inside),
the per-call table built on first access, the grid again with the per-table arrays warm, and the
replay alone (its inputs, the calls' arrays and every keep rule's cut points, built beforehand).
Ratios are to the DuckDB read; the targets are the sessions table in at most 1x and the sessions
and calls tables together in at most 2x. Modules are imported before anything is timed.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

from bench_contexts import machine
from bench_loaders import duckdb_read

# every load here is a cold one: the loaders' cache (on by default) would serve repeated runs
os.environ["SESSIONLAB_CACHE_DIR"] = ""


def grid():
    from sessionlab.compaction.policies import (
        FractionPolicy,
        KeepLastTurnsPolicy,
        NeverCompact,
        PiThresholdPolicy,
        RetainedTailPolicy,
        SummarySize,
    )

    pols = [FractionPolicy(w, fr, keep) for w in (100_000, 200_000, 400_000)
            for keep in (5_000, 10_000, 20_000, 40_000) for fr in (0.5, 0.6, 0.7, 0.8, 0.9)]
    pols += [PiThresholdPolicy(w, r, k) for w in (128_000, 200_000) for r in (8_192, 16_384)
             for k in (10_000, 20_000, 30_000)]
    pols += [PiThresholdPolicy(200_000, summary=SummarySize(tokens=None, fraction=f)) for f in (0.02, 0.05, 0.1)]
    pols += [KeepLastTurnsPolicy(w, n) for w in (64_000, 100_000, 200_000) for n in (1, 2, 4, 8)]
    pols += [RetainedTailPolicy(w, n) for w in (64_000, 100_000, 200_000) for n in (5, 10, 20, 40)]
    pols += [NeverCompact(200_000)]
    return pols


def compacting_grid():
    """96 policies that compact many times per session on the benchmark corpora (their contexts
    reach 20k-200k): pi's rule with windows of 16k-64k, reserves of 2k-16k and keeps of 2k-20k
    (the window 16k with the reserve 16k compacts after every turn). The replay's rounds are as
    many as the most compactions of any session (hundreds), where :func:`grid`'s policies make a
    few."""
    from sessionlab.compaction.policies import PiThresholdPolicy

    return [PiThresholdPolicy(w, r, k) for w in (16_000, 32_000, 48_000, 64_000)
            for r in (2_000, 4_000, 8_000, 16_000) for k in (2_000, 4_000, 6_000, 8_000, 12_000, 20_000)]


def best_of(n: int, fn) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def replay_only(table, pols) -> float:
    """Best of three of the replay alone (the sessions table from the laid-out calls and the
    policies' arrays), everything it reads built beforehand: the part the policies' count scales."""
    from sessionlab.analysis.contexts import context_arrays
    from sessionlab.compaction import fit_prices
    from sessionlab.compaction import simulate as sim
    from sessionlab.compaction._replay import replay
    from sessionlab.tables._pi16 import table_rules_for

    which = table_rules_for(table, None)
    prep = context_arrays(table, which)
    rows = sim._row_arrays(table, prep, "replace")
    kept = sim._kept_at(table, prep, which, rows.call_rows, sorted({p.keep for p in pols if p.keep[0] != "none"}))
    runs = [(leaf, c) for leaf, c in sim._runs(table, prep.forest, prep, "current") if len(c)]
    laid = sim._lay_out(runs, rows, fit_prices(table))
    arrays = sim._policy_arrays(pols, kept, laid.rows)
    return best_of(3, lambda: sim._sessions_table(table, [replay(laid, arrays)[0]], pols))


def profile(table, pols, top: int = 25) -> str:
    """cProfile of one cold grid run with its calls table, sessionlab functions by cumulative time."""
    from sessionlab.compaction import simulate_compaction
    from sessionlab.tables.forest import clear_caches

    clear_caches()
    pr = cProfile.Profile()
    pr.enable()
    res = simulate_compaction(table, pols)
    res.calls  # noqa: B018 (built on first access)
    pr.disable()
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats("cumulative").print_stats("sessionlab", top)
    return out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/sessionlab-bench-0.58")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of one cold grid run")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not corpus.exists():
        sys.exit(f"no corpus at {corpus}: make one with sessionlab.synth.generate_corpus(dir, pi='0.58')")
    # imports first, outside the timings: the analysis layer's Arrow-to-NumPy conversions import
    # pandas (pyarrow checks for it), which the loader no longer does, and a notebook has it loaded
    import duckdb  # noqa: F401
    import pandas  # noqa: F401

    from sessionlab.compaction import simulate_compaction
    from sessionlab.tables import entries_table
    from sessionlab.tables.forest import clear_caches

    files = sorted(str(p) for p in corpus.rglob("*.jsonl"))
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    pols = grid()
    assert len(pols) == 100, len(pols)
    # best of three for each step (this shared VM's timings vary by 10-30%)
    duck_s = best_of(3, lambda: duckdb_read(files))
    load_s = best_of(3, lambda: entries_table(files, on_bad_lines="skip"))
    sim_s = calls_s = float("inf")
    for _ in range(3):  # cold: a freshly loaded table, every per-table array built inside the timed call
        table = entries_table(files, on_bad_lines="skip")
        clear_caches()
        t = time.perf_counter()
        res = simulate_compaction(table, pols)
        sim_s = min(sim_s, time.perf_counter() - t)
        t = time.perf_counter()
        calls = res.calls  # built on first access
        calls_s = min(calls_s, time.perf_counter() - t)
    simulate_compaction(table, pols)  # the per-table arrays of this table are now built
    warm_s = best_of(3, lambda: simulate_compaction(table, pols))
    replay_s = replay_only(table, pols)
    print(f"corpus: {len(files)} files, {mb:.1f} MB, {table.num_rows} entries, {res.sessions.num_rows // 100} "
          f"branches, {calls.num_rows // 100} calls ({corpus})")
    print(f"machine: {machine()}")
    print()
    print("| step | seconds | rows out | ratio to DuckDB read | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| DuckDB read_json (columns given) | {duck_s:.3f} | {table.num_rows} | 1.00x | |")
    print(f"| entries_table (load) | {load_s:.3f} | {table.num_rows} | {load_s / duck_s:.2f}x | |")
    print(f"| simulate_compaction, 100 policies (sessions table), cold | {sim_s:.3f} | "
          f"{res.sessions.num_rows} | {sim_s / duck_s:.2f}x | <= 1x |")
    print(f"| + its calls table, on first access | {calls_s:.3f} | {calls.num_rows} | "
          f"{(sim_s + calls_s) / duck_s:.2f}x (both) | <= 2x |")
    print(f"| simulate_compaction, per-table arrays warm | {warm_s:.3f} | {res.sessions.num_rows} | "
          f"{warm_s / duck_s:.2f}x | |")
    print(f"| the replay alone (inputs built) | {replay_s:.3f} | {res.sessions.num_rows} | "
          f"{replay_s / duck_s:.2f}x | |")
    if args.profile:
        print()
        print(profile(entries_table(files, on_bad_lines="skip"), pols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
