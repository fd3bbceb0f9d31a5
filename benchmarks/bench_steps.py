"""Each analysis step on a freshly loaded table, against DuckDB's read of the same files, in one run.

Run from the repository root:

    python benchmarks/bench_steps.py                       # /tmp/sessionlab-bench-0.58 (pi 0.58 files)
    python benchmarks/bench_steps.py --corpus /tmp/sessionlab-bench-1.6
    python benchmarks/bench_steps.py --profile contexts    # cProfile of one step (cold), top 25

Every step is timed on a table loaded just before it (load not timed), so nothing is cached from
an earlier call: the arrays an analysis builds for a table are part of its time unless the load
built them. Best of ``--repeat`` (3). The grids: ``bench_compaction.grid()`` (100 policies with
windows of 64k-400k, most of which never compact) and ``bench_compaction.compacting_grid()`` (96
policies with windows of 16k-64k that compact many times per session). The reference is DuckDB's
``read_json`` of the same files with the columns given (``SELECT *`` with ``bench_loaders.FIELDS``
as the schema, into Arrow), timed in the same process, best of ``--repeat``; ratios are step time /
DuckDB time (lower is better). ``import + first table`` is the wall time from before ``import
sessionlab`` to the entries table of the corpus, in a fresh process, without the cache (every file
scanned) and with it (as by default: the cache folder filled by an earlier process). The ``fresh
process`` column times each step again the way a new notebook or script meets it: in a new process,
right after its first load (best of ``--repeat`` processes), so one-time imports the step triggers
(pandas, say) count.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["SESSIONLAB_CACHE_DIR"] = ""  # every load here is a cold one

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_compaction import compacting_grid, grid  # noqa: E402
from bench_contexts import machine  # noqa: E402
from bench_loaders import duckdb_read, files_of  # noqa: E402

FRESH = """
import os, sys, time
os.environ["SESSIONLAB_CACHE_DIR"] = os.environ.get("BENCH_CACHE_DIR", "")
t0 = time.perf_counter()
import sessionlab
t1 = time.perf_counter()
sessionlab.entries_table(sys.argv[1:], on_bad_lines="skip")
print(t1 - t0, time.perf_counter() - t0)
"""

# one step in a new process, after its first load (``steps`` is this module's)
FRESH_STEP = """
import os, sys, time
os.environ["SESSIONLAB_CACHE_DIR"] = ""
sys.path.insert(0, {here!r})
import sessionlab
from bench_compaction import compacting_grid, grid
from bench_steps import steps
table = sessionlab.entries_table(sys.argv[1:], on_bad_lines="skip")
step = steps(grid(), compacting_grid())[{name!r}]
t0 = time.perf_counter()
step(table)
print(time.perf_counter() - t0)
"""

# name, target (ratio to the DuckDB read; None: none set), what is timed
TARGETS = {"entries_table": 0.8, "load + sessions": 0.8, "contexts(at='calls')": 0.15,
           "find_cut_points(at='calls')": 0.3, "usage_by(day, model; tz)": 0.1, "branch_costs": 0.1,
           "cache_efficiency": 0.1, "simulate_compaction, sessions table": 1.0,
           "simulate_compaction + calls table": 2.0, "simulate_compaction, 96 compacting policies": 1.0,
           "compaction_diff": 0.1, "estimate_accuracy": 0.1,
           "cache_misses": 0.1, "tool_stats": 0.1, "subagent_costs": 0.1}


def steps(policies, compacting):
    import sessionlab as sl
    return {
        "contexts(at='calls')": lambda t: sl.contexts(t, at="calls"),
        "find_cut_points(at='calls')": lambda t: sl.find_cut_points(t, at="calls"),
        "usage_by(day, model; tz)": lambda t: sl.usage_by(t, by=["day", "model"], tz="Europe/Berlin"),
        "branch_costs": lambda t: sl.branch_costs(t),
        "cache_efficiency": lambda t: sl.cache_efficiency(t),
        "simulate_compaction, sessions table": lambda t: sl.simulate_compaction(t, policies).sessions,
        "simulate_compaction + calls table": lambda t: sl.simulate_compaction(t, policies).calls,
        "simulate_compaction, 96 compacting policies": lambda t: sl.simulate_compaction(t, compacting).sessions,
        "compaction_diff": lambda t: sl.compaction_diff(t),
        "estimate_accuracy": lambda t: sl.estimate_accuracy(t),
        "cache_misses": lambda t: sl.cache_misses(t),
        "tool_stats": lambda t: sl.tool_stats(t),
        "subagent_costs": lambda t: sl.subagent_costs(t),
    }


def best(repeat: int, fn, setup=lambda: None) -> tuple[float, object]:
    t_best, out = float("inf"), None
    for _ in range(repeat):
        arg = setup()
        t0 = time.perf_counter()
        out = fn(arg) if arg is not None else fn()
        t_best = min(t_best, time.perf_counter() - t0)
    return t_best, out


def rows(out) -> int:
    return getattr(out, "num_rows", 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/sessionlab-bench-0.58")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", help="profile this step (a prefix of its name) instead of timing")
    ap.add_argument("--only", nargs="+", metavar="PREFIX",
                    help="time only the steps whose names start with one of these (and DuckDB's read)")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not corpus.exists():
        from sessionlab.synth import generate_corpus
        generate_corpus(corpus, n_sessions=300, target_bytes=150_000_000, seed=0,
                        pi="0.58" if corpus.name.endswith("0.58") else "1.6")  # as bench_loaders --pi
    files = files_of(str(corpus))
    import pandas  # noqa: F401  (the _df variants' import is not part of any step)

    import sessionlab as sl
    load = lambda: sl.entries_table(files, on_bad_lines="skip")  # noqa: E731
    policies = grid()
    todo = steps(policies, compacting_grid())
    if args.only:
        todo = {k: v for k, v in todo.items() if k.startswith(tuple(args.only))}
    if args.profile:
        name = next(k for k in todo if k.startswith(args.profile))
        table = load()
        prof = cProfile.Profile()
        prof.runcall(todo[name], table)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        return 0

    duckdb_read(files)  # a first read warms the OS cache and DuckDB's own start-up; not counted
    duck_s, _ = best(args.repeat, lambda: duckdb_read(files))
    results = {}
    if not args.only:
        results["entries_table"] = best(args.repeat, load)
        results["load + sessions"] = best(args.repeat, lambda: sl.load(files, on_bad_lines="skip").sessions)
    for name, fn in todo.items():
        results[name] = best(args.repeat, fn, setup=load)
    fresh = [subprocess.run([sys.executable, "-c", FRESH, *files], check=True, capture_output=True,
                            text=True).stdout.split() for _ in range(args.repeat)]
    imp, first = min(float(f[0]) for f in fresh), min(float(f[1]) for f in fresh)
    with tempfile.TemporaryDirectory() as cache:  # the default: a cache folder, filled by a first process
        env = {**os.environ, "BENCH_CACHE_DIR": cache}
        runs = [subprocess.run([sys.executable, "-c", FRESH, *files], check=True, capture_output=True, text=True,
                               env=env).stdout.split() for _ in range(args.repeat + 1)]
    cached = min(float(f[1]) for f in runs[1:])
    cold = {name: min(float(subprocess.run([sys.executable, "-c", FRESH_STEP.format(here=str(HERE), name=name),
                                            *files], check=True, capture_output=True, text=True).stdout)
                      for _ in range(args.repeat)) for name in todo}

    table = load()
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    calls = sl.contexts(table, at="calls").num_rows
    print(f"corpus: {len(files)} files, {mb:.1f} MB, {table.num_rows} entries, {calls} calls ({corpus})")
    print(f"machine: {machine()}")
    print(f"policies: {len(policies)} (and 96 compacting); best of {args.repeat}; "
          "each step on a freshly loaded table\n")
    print("| step | seconds | rows out | ratio to DuckDB read | target | met | fresh process | ratio | met |\n"
          "|---|---:|---:|---:|---:|:-:|---:|---:|:-:|")
    print(f"| DuckDB read_json (columns given) | {duck_s:.3f} | | 1.00x | | | | | |")
    for name, (s, out) in results.items():
        target = TARGETS.get(name)
        met = "" if target is None else ("yes" if s / duck_s <= target else "no")
        line = f"| {name} | {s:.3f} | {rows(out)} | {s / duck_s:.2f}x | <= {target}x | {met} |"
        if name in cold:
            c = cold[name]
            line += f" {c:.3f} | {c / duck_s:.2f}x | {'yes' if c / duck_s <= target else 'no'} |"
        else:
            line += " | | |"
        print(line)
    print(f"| fresh process: import sessionlab | {imp:.3f} | | | | | | | |")
    print(f"| fresh process: import + first table | {first:.3f} | | {first / duck_s:.2f}x | <= 0.25 s | "
          f"{'yes' if first <= 0.25 else 'no'} | | | |")
    print(f"| fresh process: import + first table, from the cache (the default) | {cached:.3f} | | "
          f"{cached / duck_s:.2f}x | <= 0.25 s | {'yes' if cached <= 0.25 else 'no'} | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
