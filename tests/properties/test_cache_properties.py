"""A cached reload equals a fresh load whatever happened to the files in between.

Between loads each file gets random appends (whole lines, parents in the old part), torn last
lines and their completion, truncations, same-size rewrites (the mtime put back), appended bad
lines and duplicated ids, deletions and new files; after every step the cached entries, sessions
and issues must equal a load without the cache.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.synth import generate_session
from sessionlab.tables import entries_table, load_files, sessions_table

_LINES: dict[int, list[bytes]] = {}


def lines_of(seed: int) -> list[bytes]:
    """A generated pi session's lines (a few turns, branches and names)."""
    if seed not in _LINES:
        with tempfile.TemporaryDirectory() as d:
            p = generate_session(d, seed=seed, turns=6, branch_prob=0.3, name_prob=1.0)
            _LINES[seed] = p.read_bytes().splitlines(keepends=True)
    return _LINES[seed]


OPS = st.sampled_from(["append", "append", "append", "torn", "truncate", "rewrite", "bad_line", "duplicate",
                       "delete", "new", "nothing"])


def apply(op: str, f: Path, full: list[bytes], pick: int) -> None:
    data = f.read_bytes() if f.exists() else b""
    if op == "new" or not f.exists():
        f.write_bytes(b"".join(full[: 2 + pick % (len(full) - 1)]))
        return
    if op == "append" or op == "torn":
        done = len(data.splitlines(keepends=True)) if data.endswith(b"\n") else len(data.splitlines())
        nxt = b"".join(full[done: done + 1 + pick % 4]) if data.endswith(b"\n") else (
            full[done - 1][len(data.splitlines(keepends=True)[-1]):] if done - 1 < len(full) else b"\n")
        if op == "torn" and nxt:
            nxt = nxt[: max(1, len(nxt) // 2)]
        with open(f, "ab") as fh:
            fh.write(nxt)
    elif op == "truncate":
        f.write_bytes(data[: len(data) * (1 + pick % 9) // 10])
    elif op == "rewrite":  # same size, same mtime: only the whole-file hash can tell
        st_ = f.stat()
        i = (pick * 7919) % max(len(data), 1)
        swapped = data[:i] + (b"X" if data[i:i + 1] != b"X" else b"Y") + data[i + 1:] if data else data
        f.write_bytes(swapped)
        os.utime(f, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    elif op == "bad_line":
        with open(f, "ab") as fh:
            fh.write(b'{"type": "message", "id": ' + b"\n")
    elif op == "duplicate":
        with open(f, "ab") as fh:
            fh.write(full[1 + pick % (len(full) - 1)])
    elif op == "delete":
        f.unlink()


def check(src: Path, cache: Path) -> None:
    res = load_files(src, on_bad_lines="skip", cache=cache)
    fresh = load_files(src, on_bad_lines="skip", cache=False)
    assert [i for r in res.files for i in r.issues] == [i for r in fresh.files for i in r.issues]
    assert entries_table(src, on_bad_lines="skip", cache=cache).equals(entries_table(src, on_bad_lines="skip", cache=False))
    assert sessions_table(src, on_bad_lines="skip", cache=cache).equals(
        sessions_table(src, on_bad_lines="skip", cache=False))


@settings(max_examples=40, deadline=None)
@given(seeds=st.lists(st.integers(0, 5), min_size=1, max_size=3),
       steps=st.lists(st.tuples(st.integers(0, 2), OPS, st.integers(0, 1000)), min_size=1, max_size=6))
def test_cached_reload_equals_fresh_load(seeds, steps):
    with tempfile.TemporaryDirectory() as d:
        src, cache = Path(d) / "s", Path(d) / "cache"
        src.mkdir()
        files = [src / f"{i}.jsonl" for i in range(len(seeds))]
        for f, seed in zip(files, seeds):
            f.write_bytes(b"".join(lines_of(seed)[:3]))
        check(src, cache)
        for which, op, pick in steps:
            i = which % len(files)
            apply(op, files[i], lines_of(seeds[i]), pick)
            if not any(f.exists() for f in files):
                files[0].write_bytes(b"".join(lines_of(seeds[0])[:2]))
            check(src, cache)
