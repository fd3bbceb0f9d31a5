"""Cache benchmark: reloading a 150 MB corpus with nothing changed and with 1% of the files appended to.

Run from the repository root:

    python benchmarks/bench_cache.py                 # the corpus of bench_loaders.py (/tmp/sessionlab-bench)
    python benchmarks/bench_cache.py --corpus DIR    # any folder of sessions

The corpus is copied into a temporary folder (the appends must not touch the shared one) with a
temporary cache folder; both are deleted after. In one process, imports done first, each timed
call is ``entries_table(...)``:

- cold: ``cache=False`` (imports done, pandas included: see below) (the loader as it is without a cache), best of 3;
- first load with the cache (parses everything and writes the cache), once;
- reload, nothing changed: the first in the process (it reads every segment to check its checksum,
  as a new process's first load does), then best of 5 (a segment whose stat has not changed since
  its check is not read again);
- reload after appending 5 entries (a user prompt and assistant replies, parented on the file's
  last entry) to 1% of the files, best of 3 rounds (new appends each round).

Then, each in a fresh process (its imports counted, as a command's or a new kernel's are), best of
3: a cold load, and a reload from the cache after new appends to the same 1% of the files.

Every cached result is checked equal to a fresh load (outside the timings).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def machine() -> str:
    model = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} CPUs, {model}, {mem:.0f} GiB RAM, Python {platform.python_version()}"


def ensure_corpus(path: Path) -> Path:
    if not any(path.rglob("*.jsonl")):
        from sessionlab.synth import generate_corpus

        print(f"generating ~150 MB in {path} ...", flush=True)
        generate_corpus(path, n_sessions=300, target_bytes=150_000_000, seed=0)
    return path


def append_turn(path: Path, round_: int) -> None:
    """Append a user message and four assistant replies after the file's last entry (pi's way)."""
    last = json.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
    parent, ts = last["id"], last.get("timestamp", "2026-02-01T00:00:00.000Z")
    lines = []
    for k in range(5):
        eid = f"b{round_:02d}{k:02d}{abs(hash(path.name)) % 10**4:04d}"
        msg: dict = ({"role": "user", "content": [{"type": "text", "text": f"and now step {k} of round {round_}"}],
                      "timestamp": 0} if k == 0 else
                     {"role": "assistant", "content": [{"type": "text", "text": "Done: " + "ok " * 40}],
                      "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                      "usage": {"input": 10, "output": 50, "cacheRead": 1000, "cacheWrite": 20, "totalTokens": 1080,
                                "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0,
                                         "total": 0.001}},
                      "stopReason": "stop", "timestamp": 0})
        lines.append(json.dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": msg},
                                separators=(",", ":")))
        parent = eid
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def _forget_verified() -> None:
    """Make the next load check every segment's checksum, as a new process's first load does."""
    try:
        from sessionlab.tables._cache_files import _VERIFIED
    except ImportError:  # (a version without segment checksums)
        return
    _VERIFIED.clear()


FRESH = """
import sys, time
t0 = time.perf_counter()
from sessionlab.tables import load_files
r = load_files(sys.argv[1], on_bad_lines="skip", progress=False, cache=False if sys.argv[2] == "off" else sys.argv[2])
print(time.perf_counter() - t0, len(r.changes.appended) if r.changes else 0, "pandas" in sys.modules)
"""


def fresh(corpus: Path, cache: str) -> tuple[float, int, bool]:
    """(seconds, files appended, pandas imported) of a load in a new process."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    out = subprocess.run([sys.executable, "-c", FRESH, str(corpus), cache], check=True, capture_output=True,
                         text=True, env=env).stdout.split()
    return float(out[0]), int(out[1]), out[2] == "True"


def best(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="/tmp/sessionlab-bench")
    args = ap.parse_args()
    from sessionlab.tables import entries_table
    from sessionlab.tables._cache import cache_size

    src = ensure_corpus(Path(args.corpus))
    tmp = Path(tempfile.mkdtemp(prefix="sessionlab-cache-bench-"))
    try:
        corpus, cache = tmp / "corpus", tmp / "cache"
        shutil.copytree(src, corpus)
        files = sorted(corpus.rglob("*.jsonl"))
        nbytes = sum(f.stat().st_size for f in files)
        time.sleep(2.1)  # the copies are older than the cache's "recently modified" window, as a history is

        def load(c):
            return entries_table(corpus, on_bad_lines="skip", progress=False, cache=c)

        load(False)  # warm: imports, page cache
        # a file that grew is parsed by the msgspec/object paths, whose pa.array calls import pandas
        # (pyarrow does, once per process: ~1 s); a notebook has it imported already
        import pandas  # noqa: F401
        cold = best(lambda: load(False), 3)
        t0 = time.perf_counter()
        load(cache)
        first = time.perf_counter() - t0
        _forget_verified()
        t0 = time.perf_counter()
        load(cache)
        first_reload = time.perf_counter() - t0
        unchanged = best(lambda: load(cache), 5)
        assert load(cache).equals(load(False))
        size = cache_size(cache)
        step = max(1, len(files) // 100)
        picked = files[::step][: max(1, len(files) // 100)]
        appended = []
        for r in range(3):
            for f in picked:
                append_turn(f, r)
            t0 = time.perf_counter()
            got = load(cache)
            appended.append(time.perf_counter() - t0)
            assert got.equals(load(False)), "cached reload differs from a fresh load"
        grown = min(appended)
        fresh_cold = min(fresh(corpus, "off")[0] for _ in range(3))
        fresh_grown = []
        for r in range(3, 6):
            for f in picked:
                append_turn(f, r)
            seconds, n_appended, pandas_imported = fresh(corpus, str(cache))
            assert n_appended == len(picked) and not pandas_imported, (n_appended, pandas_imported)
            fresh_grown.append(seconds)
        fresh_grown_s = min(fresh_grown)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"corpus: {len(files)} files, {nbytes / 1e6:.1f} MB ({src}, copied)")
    print(f"machine: {machine()}\n")
    print("| load | seconds | vs cold load | target |")
    print("|---|---:|---:|---|")
    print(f"| cold (`cache=False`), best of 3 | {cold:.3f} | 1.00x | |")
    print(f"| first load with the cache (parse + write) | {first:.3f} | {first / cold:.2f}x | |")
    print(f"| reload, nothing changed, first in a process (segment checksums read) | {first_reload:.3f} | "
          f"{first_reload / cold:.3f}x | |")
    print(f"| reload, nothing changed, best of 5 | {unchanged:.3f} | {unchanged / cold:.3f}x | <= 0.1x |")
    print(f"| reload, {len(picked)} files ({len(picked) / len(files):.0%}) appended to, best of 3 | {grown:.3f} | "
          f"{grown / cold:.3f}x | <= 0.2x |")
    print(f"| fresh process: cold load (imports counted), best of 3 | {fresh_cold:.3f} | 1.00x | |")
    print(f"| fresh process: reload, {len(picked)} files appended to, best of 3 | {fresh_grown_s:.3f} | "
          f"{fresh_grown_s / fresh_cold:.3f}x (of the fresh cold load) | <= 0.2x |")
    print(f"\ncache on disk: {size / 1e6:.1f} MB ({size / nbytes:.2f}x the JSONL)")


if __name__ == "__main__":
    main()
