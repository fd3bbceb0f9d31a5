"""A file's rows of its batch's table (``RowsOf``) joined with its neighbours' as one slice: the
same rows, in the same order, as every file's table one after the other."""

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab._rowsof import RowsOf, batch_tables, joined_tables, row_count

BATCHES = [pa.table({"x": list(range(k * 100, k * 100 + 20))}) for k in range(2)]
HELD = st.one_of(st.none(), st.integers(0, 3).map(lambda n: pa.table({"x": [-1] * n})),
                 st.tuples(st.integers(0, 1), st.integers(0, 12), st.integers(0, 8)))


def _held(item):
    if isinstance(item, tuple):
        b, start, n = item
        return RowsOf(BATCHES[b], start, n)
    return item


def _rows(held) -> list:
    if held is None:
        return []
    t = held.table.slice(held.start, held.n) if type(held) is RowsOf else held
    return t["x"].to_pylist()


@settings(max_examples=300, deadline=None)
@given(st.lists(HELD, max_size=12))
def test_joined_tables_hold_the_rows_in_order(items):
    helds = [_held(i) for i in items]
    joined = joined_tables(helds)
    assert [v for t in joined for v in t["x"].to_pylist()] == [v for h in helds for v in _rows(h)]
    assert sum(t.num_rows for t in joined) == sum(map(row_count, helds))
    # consecutive rows of one batch are one slice: never two slices that could be one
    assert len(joined) <= sum(h is not None for h in helds)
    assert {id(t) for t in batch_tables(helds)} <= {id(b) for b in BATCHES} | {id(h) for h in helds}


def test_consecutive_rows_of_a_batch_are_one_slice():
    helds = [RowsOf(BATCHES[0], 0, 3), RowsOf(BATCHES[0], 3, 4), None, RowsOf(BATCHES[0], 7, 2),
             RowsOf(BATCHES[1], 9, 1), RowsOf(BATCHES[0], 9, 1)]
    assert [t["x"].to_pylist() for t in joined_tables(helds)] == [
        list(range(7)), [7, 8], [109], [9]]
