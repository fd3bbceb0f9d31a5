"""The cache-corruption fuzz worker (run by :mod:`tests.fuzz.harness`; not a test module).

It fills a cache for a small folder of sessions (the test data's pi files and one real session),
keeps the cache's files as they are, then, until its time is up: puts the cache back as it was,
damages it with one to three mutations (flipped and replaced bytes, truncations, a zeroed 4 KiB
block, garbage appended, a file deleted, in segments and manifests; fields of the manifest changed,
removed or retyped with its checksum made to match again, so the field checks are reached; a
temporary file left by a dead process), and loads the folder through it. Every load must equal a
fresh load (entries, sessions and issues), whether the cache warned and read afresh or not, and
must raise nothing; the load after it must equal a fresh load too, without a warning (the cache was
written again). A crash (pyarrow reading damaged memory) ends the worker, and the harness keeps
the damaged cache's files.

One JSON line per event on stdout, as :mod:`tests.fuzz.worker`: ``progress``, ``mismatch``,
``done`` (``accepted``: loads that used the damaged cache without a warning; ``refused``: loads
that warned and read the files afresh).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import warnings
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VALUES = [None, True, 0, -1, 1, 7, 2**31, 2**63, 1.5, "", "x", "0" * 32, [], {}, [1, 2], {"a": 1}]
# manifest fields whose change the cache must catch; the session row, issues and loader only get
# values of another type or shape (a same-typed value, such as another session name or one issue
# fewer, under a forged checksum is what only the checksum protects: docs/cache.md)
STRUCTURE = {"format", "fingerprint", "segments", "files", "name", "size", "crc", "segment", "batch", "offset",
             "rows", "path", "dev", "ino", "mtime_ns", "ctime_ns", "head", "tail", "session", "issues", "loader"}
VALUES_ONLY_RETYPED = {"session": dict, "issues": list, "loader": (str, type(None))}


def _segment(d: Path) -> Path:
    return next(d.glob("*.arrow"))


def _manifest(d: Path) -> Path:
    return next(d.glob("*.json"))


def _bytes_op(path: Path, rng: random.Random, op: str) -> None:
    data = bytearray(path.read_bytes())
    if not data:
        return
    if op == "flip":
        for _ in range(rng.choice([1, 1, 2, 4, 8])):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif op == "byte":
        for _ in range(rng.choice([1, 4, 16])):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif op == "truncate":
        del data[rng.randrange(len(data)):]
    elif op == "zero":
        start = rng.randrange(max(len(data) // 4096, 1)) * 4096
        data[start:start + 4096] = bytes(len(data[start:start + 4096]))
    elif op == "append":
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5000)))
    elif op == "delete":
        path.unlink()
        return
    path.write_bytes(bytes(data))


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _manifest_json(path: Path, rng: random.Random) -> None:
    """A field of the manifest changed, removed or retyped, the checksum made to match again."""
    from sessionlab.tables._cache_files import seal_manifest, split_manifest

    meta = json.loads(split_manifest(path.read_bytes())[1])
    paths = [p for p in _paths(meta) if p and isinstance(p[-1], str) and p[-1] in STRUCTURE
             and not (len(p) > 1 and p[-2] in ("session",))]
    p = rng.choice(paths)
    parent = meta
    for k in p[:-1]:
        parent = parent[k]
    op = rng.randrange(3)
    kind = VALUES_ONLY_RETYPED.get(p[-1]) if len(p) == 3 else None
    if kind is not None:  # a value of another type, or the key removed
        if op == 1:
            del parent[p[-1]]
        else:
            parent[p[-1]] = rng.choice([v for v in VALUES if not isinstance(v, kind)])
    elif op == 0:
        parent[p[-1]] = rng.choice(VALUES)
    elif op == 1:
        del parent[p[-1]]
    elif isinstance(parent[p[-1]], int) and not isinstance(parent[p[-1]], bool):
        parent[p[-1]] += rng.choice([-1, 1, 100])
    elif isinstance(parent[p[-1]], list) and parent[p[-1]]:
        parent[p[-1]].append(rng.choice(parent[p[-1]]))  # an entry twice
    else:
        parent[p[-1]] = rng.choice(VALUES)
    path.write_bytes(seal_manifest(json.dumps(meta).encode()))


def _litter(d: Path, rng: random.Random) -> None:
    (d / f"{_segment(d).name}.tmp-{rng.randrange(4_000_000, 4_100_000)}-0badf00d").write_bytes(b"ARROW1")


_OPS = ("flip", "byte", "truncate", "zero", "append", "delete")
MUTATORS = {
    **{f"segment_{op}": partial(lambda op, d, rng: _bytes_op(_segment(d), rng, op), op) for op in _OPS},
    **{f"manifest_{op}": partial(lambda op, d, rng: _bytes_op(_manifest(d), rng, op), op) for op in _OPS},
    "manifest_field": lambda d, rng: _manifest_json(_manifest(d), rng),
    "litter": _litter,
}
WEIGHTS = {"manifest_field": 4.0, "segment_flip": 2.0, "segment_zero": 2.0}


def _tables(src: Path, cache) -> tuple:
    import sessionlab as sl
    from sessionlab.tables import load_files

    res = load_files(src, on_bad_lines="skip", cache=cache)
    e = sl.entries_table(src, on_bad_lines="skip", cache=cache)
    s = sl.sessions_table(src, on_bad_lines="skip", cache=cache)
    u = sl.usage_by(e, by=["day", "model"])  # (a group-by over the rows, as the summary does)
    return e, s, u, [(i.path, i.line, i.kind, i.message) for r in res.files for i in r.issues]


def _same(a: tuple, b: tuple) -> bool:
    return a[0].equals(b[0]) and a[1].equals(b[1]) and a[2].equals(b[2]) and a[3] == b[3]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--current", required=True)
    args = ap.parse_args(argv)
    from sessionlab.errors import CacheWarning

    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="slcachefuzz-"))
    src, cache = tmp / "src", tmp / "cache"
    shutil.copytree(ROOT / "tests" / "data" / "pi" / "generated", src)
    shutil.copy(ROOT / "tests" / "data" / "pi" / "real" / "before-compaction.jsonl", src / "real.jsonl")
    fresh = _tables(src, False)
    _tables(src, cache)
    store = cache / "entries-v1"
    pristine = {f.name: f.read_bytes() for f in store.iterdir()}
    current = Path(args.current)
    names = list(MUTATORS)
    weights = [WEIGHTS.get(n, 1.0) for n in names]
    counts = {"inputs": 0, "accepted": 0, "refused": 0}
    by_mutator: dict[str, int] = {}
    end = time.monotonic() + args.seconds

    def emit(msg: dict) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    try:
        while time.monotonic() < end:
            shutil.rmtree(store)
            store.mkdir()
            for name, data in pristine.items():
                (store / name).write_bytes(data)
            applied = rng.choices(names, weights, k=rng.choice([1, 1, 2, 3]))
            for name in applied:
                try:
                    MUTATORS[name](store, rng)
                except (StopIteration, ValueError, OSError):
                    pass  # (its file already deleted, or the manifest no longer sealed)
                by_mutator[name] = by_mutator.get(name, 0) + 1
            _keep_state(store, current)  # (left behind if the load crashes)
            emit({"kind": "progress", "n": counts["inputs"]})
            try:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    got = _tables(src, cache)
                    warned = any(issubclass(x.category, CacheWarning) for x in w)
                with warnings.catch_warnings(record=True) as w2:
                    warnings.simplefilter("always")
                    again = _tables(src, cache)
                    warned_again = any(issubclass(x.category, CacheWarning) for x in w2)
            except Exception as exc:  # noqa: BLE001 - any exception is a failure to report
                emit({"kind": "mismatch", "input": _keep(current, counts), "mutators": applied,
                      "detail": f"{type(exc).__name__}: {exc}"[:2000]})
                counts["inputs"] += 1
                continue
            if not _same(got, fresh) or not _same(again, fresh) or warned_again:
                emit({"kind": "mismatch", "input": _keep(current, counts), "mutators": applied,
                      "detail": f"same={_same(got, fresh)} again={_same(again, fresh)} warned_again={warned_again}"})
            counts["refused" if warned else "accepted"] += 1
            counts["inputs"] += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emit({"kind": "done", **counts, "by_mutator": by_mutator})
    return 0


def _keep_state(store: Path, current: Path) -> None:
    """The damaged cache's files, as one JSON object of name -> hex, at ``current``."""
    current.write_text(json.dumps({f.name: f.read_bytes().hex() for f in store.iterdir()}))


def _keep(current: Path, counts: dict) -> str:
    kept = current.with_name(f"mismatch-{current.stem}-{counts['inputs']}.json")
    shutil.copy(current, kept)
    return str(kept)


if __name__ == "__main__":
    sys.exit(main())
