"""The loader's fast-path helpers against the plain computations they replace."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest

from sessionlab.tables import _fast, _load, blocks_table, entries_table, sessions_table
from sessionlab.tables._fast import _head_lines

DATA = "tests/data"


@pytest.mark.parametrize("seed", range(5))
def test_head_lines_equal_split(seed):
    rng = random.Random(seed)
    for _ in range(2000):
        data = bytes(rng.choice(b"ab{}\n\r ") for _ in range(rng.randint(0, 80)))
        k = rng.randint(1, 25)
        assert _head_lines(data, k) == data.split(b"\n", k)[:k]


@pytest.mark.parametrize("native", ["1", "0"])
def test_pool_results_equal_in_process(monkeypatch, native):
    """Threads (native scanner) or processes (which send their tables back as Arrow IPC streams):
    the result must not change."""
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    serial = (entries_table(DATA, on_bad_lines="skip", max_workers=1),
              blocks_table(DATA, on_bad_lines="skip", max_workers=1),
              sessions_table(DATA, on_bad_lines="skip", max_workers=1))
    monkeypatch.setattr(_load, "_SERIAL_BYTES", 0)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (50_000, 50_000))  # several files per chunk, several chunks
    pooled = (entries_table(DATA, on_bad_lines="skip", max_workers=2),
              blocks_table(DATA, on_bad_lines="skip", max_workers=2),
              sessions_table(DATA, on_bad_lines="skip", max_workers=2))
    for a, b in zip(serial, pooled):
        assert a.schema == b.schema
        assert a.equals(b)
    res = _load.load_files(DATA, on_bad_lines="skip", max_workers=2, want_blocks=True)
    ref = _load.load_files(DATA, on_bad_lines="skip", max_workers=1, want_blocks=True)
    for r, s in zip(res.files, ref.files):
        assert (r.path, r.fast, r.session, r.issues) == (s.path, s.fast, s.session, s.issues)
        for x, y in ((r.entries, s.entries), (r.blocks, s.blocks)):
            assert (x is None) == (y is None)
            assert x is None or x.equals(y)


def test_ipc_round_trip_keeps_missing_tables():
    t = pa.table({"a": [1, 2, 3], "b": pa.nulls(3, pa.int64())})
    data, counts, empty = _load._to_ipc([t.slice(0, 2), None, t.slice(2, 0), t.slice(2, 1)], t.schema)
    assert empty == [1]  # (a column no row fills travels as nothing)
    out = _load._from_ipc(data, counts, empty, t.schema)
    assert out[1] is None
    # (each file's rows of the one table read back, the empty column null again)
    assert [o.table.slice(o.start, o.n).to_pydict() for o in out if o is not None] == [
        {"a": [1, 2], "b": [None, None]}, {"a": [], "b": []}, {"a": [3], "b": [None]}]
    assert out[0].table.schema == t.schema
    assert _load._from_ipc(*_load._to_ipc([None, None], t.schema), t.schema) == [None, None]
    other = pa.schema([("a", pa.int64())])  # (a table not of the schema given: sent whole)
    assert _load._to_ipc([t], other)[2] == []


PI_FILES = sorted({*Path(DATA, "pi").rglob("*.jsonl"), *Path("data", "pi").rglob("*.jsonl"),
                   *Path("data", "sessions").rglob("*.jsonl")})


def _load_all(paths):
    res = _load.load_files([str(p) for p in paths], want_blocks=True, on_bad_lines="skip", max_workers=1)
    return [(r.path, r.loader, r.session, r.issues, r.entries, r.blocks) for r in res.files]


def _assert_same(sliced, whole):
    assert len(sliced) == len(whole)
    for s, w in zip(sliced, whole):
        assert s[:4] == w[:4]
        for x, y in zip(s[4:], w[4:]):
            assert (x is None) == (y is None), s[0]
            assert x is None or (x.schema == y.schema and x.equals(y)), s[0]


@pytest.mark.parametrize("slice_bytes", [1, 700, 20_000])
def test_sliced_decode_equals_whole_file(monkeypatch, slice_bytes):
    """The msgspec path decodes a file a slice of lines at a time: with slices of one line, a few
    lines or more, every repo pi file (bad lines included) gives the tables of a one-slice load."""
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    whole = _load_all(PI_FILES)
    assert sum(w[1] == "msgspec" for w in whole) >= 20  # (most files take the sliced path)
    assert {w[1] for w in whole} >= {"msgspec", "objects"}  # and some are refused: bad lines, v4, seed
    assert any(w[3] for w in whole)  # some files have line issues
    monkeypatch.setattr(_fast, "SLICE_BYTES", slice_bytes)
    _assert_same(_load_all(PI_FILES), whole)


# a pi 1.6 session the msgspec path accepts (its pi 1.6 values need other lines of the file)
CLEAN = next(Path(DATA, "pi", "generated-1.6").rglob("*.jsonl"))


def _edited(tmp_path, name, edit):
    path = tmp_path / name
    path.write_bytes(edit(CLEAN.read_bytes().splitlines(keepends=True)))
    return path


def test_sliced_decode_keeps_whole_file_meaning(monkeypatch, tmp_path):
    """Cross-line values across slices: a header after a blank line, CRLF and blank lines (line
    numbers), a parent in an earlier slice, and a repeated id or a bad line in the last slice (the
    file is refused, as a whole, to the tolerant path)."""
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    files = [
        _edited(tmp_path, "blank-first.jsonl", lambda ls: b"\n" + b"".join(ls)),
        _edited(tmp_path, "crlf.jsonl", lambda ls: b"".join(ln.rstrip(b"\n") + b"\r\n" for ln in ls)),
        _edited(tmp_path, "blanks.jsonl", lambda ls: b"".join(ln + b"\n" * (i % 3 == 0) for i, ln in enumerate(ls))),
        _edited(tmp_path, "no-final-newline.jsonl", lambda ls: b"".join(ls).rstrip(b"\n")),
        _edited(tmp_path, "dup-id-last.jsonl", lambda ls: b"".join(ls) + ls[-1]),
        _edited(tmp_path, "bad-last.jsonl", lambda ls: b"".join(ls) + b"{oops\n"),
    ]
    assert len(lines) > 300
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    whole = _load_all(files)
    assert [w[1] for w in whole] == ["msgspec"] * 4 + ["objects"] * 2
    assert whole[2][4].column("line_no").to_pylist()[:4] == [3, 4, 5, 7]  # (numbers count the blank lines)
    for n in (1, 3000):
        monkeypatch.setattr(_fast, "SLICE_BYTES", n)
        _assert_same(_load_all(files), whole)
