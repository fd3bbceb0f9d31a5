"""Contexts benchmark: vectorised contexts() vs the object model, per assistant call, in one run.

Run from the repository root:

    python benchmarks/bench_contexts.py                 # the ~150 MB pi 0.58 corpus in /tmp/sessionlab-bench-0.58
    python benchmarks/bench_contexts.py --corpus DIR    # any folder of sessions

Both paths answer the same question for every assistant call of every session: the context the
model was sent (built at the call's parent) and pi's estimateContextTokens of it. Loading is not
timed in either path: the vectorised path starts from the entries table, the object path from
opened sessions (whose id index was built when they were opened). The vectorised path is timed
cold, the first call on a freshly loaded table (nothing cached from an earlier call; whatever the
load builds for every analysis, see :func:`sessionlab.tables.forest.at_load`, is part of the untimed
load, as the object model's id index is part of opening), and warm (the same table again). The
results of the two paths are compared before anything is printed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

# every load here is a cold one: the loaders' cache (on by default) would serve repeated runs
os.environ["SESSIONLAB_CACHE_DIR"] = ""


def machine() -> str:
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "")
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} CPUs, {model}, {mem:.0f} GiB RAM, Python {platform.python_version()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/sessionlab-bench-0.58")
    ap.add_argument("--repeat", type=int, default=3, help="vectorised runs (best is reported)")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not corpus.exists():
        from sessionlab.synth import generate_corpus
        generate_corpus(corpus, n_sessions=300, target_bytes=150_000_000, seed=0, pi="0.58")

    from sessionlab import estimate_context_tokens, open_session
    from sessionlab.tables import entries_table

    cm = importlib.import_module("sessionlab.analysis.contexts")
    files = sorted(str(p) for p in corpus.rglob("*.jsonl"))
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    cm.contexts(entries_table(files[:2], on_bad_lines="skip"), at="calls")  # imports out of the timing

    best = warm = load_s = float("inf")
    for _ in range(args.repeat):
        t = time.perf_counter()
        table = entries_table(files, on_bad_lines="skip")  # cold: a fresh table, nothing cached
        load_s = min(load_s, time.perf_counter() - t)
        t = time.perf_counter()
        vec = cm.contexts(table, at="calls")
        best = min(best, time.perf_counter() - t)
        t = time.perf_counter()
        cm.contexts(table, at="calls")  # warm: the arrays of this table are kept
        warm = min(warm, time.perf_counter() - t)

    sessions = [open_session(f, on_bad_lines="skip") for f in files]
    t = time.perf_counter()
    obj: dict[tuple[str, str], tuple[int, int]] = {}
    for f, s in zip(files, sessions):
        for e in s.storage.entries:
            if e.type == "message" and getattr(e.message, "role", None) == "assistant":
                msgs = s.build_context(leaf_id=e.parent_id).messages if e.parent_id in s.storage.by_id else []
                obj[(f, e.id)] = (len(msgs), estimate_context_tokens(msgs).tokens)
    obj_s = time.perf_counter() - t

    got = {(r["file"], r["at_id"]): (r["message_count"], r["context_tokens"]) for r in vec.to_pylist()}
    if got != obj:
        print("MISMATCH between the vectorised and the object-model results", file=sys.stderr)
        return 1
    rows = table.num_rows
    print(f"corpus: {len(files)} files, {mb:.1f} MB, {rows} entries, {vec.num_rows} assistant calls ({corpus})")
    print(f"machine: {machine()}")
    print(f"load (entries_table, not in the figures below): {load_s:.3f} s")
    print()
    print("| path | seconds | calls/s | s per 100k entries | speed-up |")
    print("|---|---:|---:|---:|---:|")
    print(f"| contexts(at='calls'), cold | {best:.3f} | {vec.num_rows / best:,.0f} | {best * 1e5 / rows:.3f} | "
          f"{obj_s / best:,.0f}x |")
    print(f"| contexts(at='calls'), warm | {warm:.3f} | {vec.num_rows / warm:,.0f} | {warm * 1e5 / rows:.3f} | "
          f"{obj_s / warm:,.0f}x |")
    print(f"| object model (build_context + estimate per call) | {obj_s:.2f} | {len(obj) / obj_s:,.0f} | "
          f"{obj_s * 1e5 / rows:.2f} | 1x |")
    print()
    print("results: identical for every call (message count and context tokens)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
