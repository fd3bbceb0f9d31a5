"""A worker's chunk on its way back to the loading process (``_load._pack`` / ``_unpack``): the
tables arrive as they left, the columns that hold no value sent as nothing and put back as nulls."""

from __future__ import annotations

import pickle

import pyarrow as pa

from sessionlab.tables import _load
from sessionlab.tables._file import load_chunk
from sessionlab.tables._schema import ENTRY_SCHEMA

from ._agent_fixtures import use_home


def _held(results):
    out = []
    for r in results:
        e = r.entries
        out.append(None if e is None else (e.table.slice(e.start, e.n) if hasattr(e, "table") else e))
    return out


def test_a_chunk_s_tables_come_back_as_they_left_without_their_empty_columns(monkeypatch):
    use_home(monkeypatch, "amp")
    paths = _load.find_files(None, agents=["amp"])
    results = load_chunk(paths, False, True, price=False)
    before = [None if t is None else pa.table(t.to_pydict(), schema=t.schema) for t in _held(results)]
    assert any(t is not None and t.num_rows for t in before)
    packed = pickle.loads(pickle.dumps(_load._pack(results)))
    data, counts, empty = packed[1]
    assert counts == [-1 if t is None else t.num_rows for t in before]
    # (columns no row of the chunk fills are left out of the bytes, and only those)
    whole = pa.concat_tables([t for t in before if t is not None])
    assert empty == [i for i, c in enumerate(whole.columns) if c.null_count == whole.num_rows] and empty
    assert pa.ipc.open_stream(data).schema.names == [n for i, n in enumerate(ENTRY_SCHEMA.names) if i not in empty]
    after = _held(_load._unpack(packed))
    assert len(after) == len(before)
    for a, b in zip(after, before):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.schema == ENTRY_SCHEMA and a.equals(b)
