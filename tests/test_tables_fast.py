"""The loader's fast-path helpers against the plain computations they replace."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from sessionlab.tables import _load, blocks_table, entries_table, sessions_table
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
    t = pa.table({"a": [1, 2, 3]})
    data, counts = _load._to_ipc([t.slice(0, 2), None, t.slice(2, 0), t.slice(2, 1)])
    out = _load._from_ipc(data, counts)
    assert out[1] is None
    assert [o.to_pydict() for o in out if o is not None] == [{"a": [1, 2]}, {"a": []}, {"a": [3]}]
    assert _load._from_ipc(*_load._to_ipc([None, None])) == [None, None]
