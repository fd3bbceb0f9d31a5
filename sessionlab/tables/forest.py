"""Parent-index arrays for every session of an entries table at once, and walks up the trees.

This is the one home of the tree engine: :mod:`sessionlab.analysis`, :mod:`sessionlab.compaction`
and :mod:`sessionlab.plotting` build on its public names (it imports nothing from them).

Each file's entries form a tree (a forest with orphans); all files are handled in one set of
global row indices, so nothing loops over sessions or entries in Python.

Walks up the tree run on *chains*: maximal runs of rows where each row's parent is the row just
before it (in a pi file that is almost every row: a conversation appends at its leaf). Inside a
chain a path sum is a cumulative sum and a "nearest marked ancestor" a running maximum; only the
few chain starts (roots, branch points, out-of-order rows) need pointer doubling, on the small
graph of chains. So a walk costs ``O(n)`` array operations plus ``O(c log c)`` for ``c`` chains,
whatever the order of the rows.

Rules (the object model's): the parent of an entry is the entry with ``parent_id`` in the same
file, the later one when an id is duplicated (as pi's index); a missing parent makes an orphan
root; ``leaf`` records are never parents; rows on or below a parent cycle are flagged ``cyclic``
and cut loose so every other walk terminates.

Public interface:

- :class:`Forest` (``parent``, ``depth``, chains, :meth:`~Forest.path_sum`,
  :meth:`~Forest.nearest`, :meth:`~Forest.deepest_at_most`, :meth:`~Forest.is_ancestor`,
  :meth:`~Forest.lookup`, :meth:`~Forest.isin`) and :func:`forest_of` (the shared one of a table);
- :func:`doubling_sum` and :func:`doubling_nearest`, the pointer-doubling walks on any parent array;
- :func:`as_table` (a Corpus, Arrow table or DataFrame as the entries table), :func:`to_numpy` and
  :func:`arrow_indices` (Arrow <-> NumPy without importing pandas);
- :func:`per_table`, the cache every per-table array builder goes through, :func:`at_load` to
  build some of them when a table is loaded, and :func:`clear_caches`.

When cached arrays are reused: :func:`per_table` keys on the table *object* (``id`` plus a weak
reference), so every call given the same ``pa.Table`` (or the same :class:`~sessionlab.Corpus`,
whose ``entries`` is one table) shares one build per builder: contexts, cut points, simulations,
plots and layouts on one loaded table pay for the forest once. A different object holding the same
rows (a filtered or sliced table, ``table.select(...)``, a table rebuilt from pandas, the same files
loaded again) is a new key and builds its own arrays. The cache holds no strong reference to a
table: an entry goes away when its table is garbage collected, and the cached values only refer to
their table weakly (so they never keep it alive). Builders registered with :func:`at_load` run when
:func:`sessionlab.load` builds ``corpus.entries`` (and so in ``entries_table``): the first analysis
on a freshly loaded table finds its arrays ready.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, scalar, strings, to_numpy
from ..errors import TableFreedError
from .corpus import as_entries, on_entries

__all__ = ["Forest", "forest_of", "as_table", "per_table", "at_load", "clear_caches", "to_numpy", "arrow_indices",
           "doubling_sum", "doubling_nearest"]

T = TypeVar("T")

# id(table) -> (weak reference to the table, {builder: value}); an entry is dropped by the weak
# reference's callback when its table dies (and replaced if the id is reused before that runs)
_CACHE: dict[int, tuple[weakref.ref, dict[Callable, Any]]] = {}
_AT_LOAD: list[Callable[[pa.Table], Any]] = []


def _drop(key: int, ref: weakref.ref) -> None:
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is ref:
        del _CACHE[key]


def per_table(build: Callable[[pa.Table], T], table: pa.Table) -> T:
    """``build(table)``, built once per (builder, table object) while the table lives.

    The functions called one after the other on one table (contexts, cut points, simulation,
    layouts) share their arrays this way. A value must not hold ``table`` strongly (hold a
    :class:`Forest`, whose ``table`` is a weak reference), or the table could never be freed.
    """
    key = id(table)
    hit = _CACHE.get(key)
    if hit is None or hit[0]() is not table:
        hit = (weakref.ref(table, lambda ref, key=key: _drop(key, ref)), {})
        _CACHE[key] = hit
    values = hit[1]
    if build not in values:
        values[build] = build(table)
    return values[build]


def at_load(build: Callable[[pa.Table], Any]) -> Callable[[pa.Table], Any]:
    """Register ``build`` (a :func:`per_table` builder) to run when a load builds its entries
    table, so the first analysis of a freshly loaded table finds its arrays (usable as a
    decorator; returns ``build``)."""
    if build not in _AT_LOAD:
        _AT_LOAD.append(build)
    return build


def _prime(table: pa.Table) -> None:
    for build in _AT_LOAD:
        per_table(build, table)


on_entries(_prime)


def clear_caches() -> None:
    """Forget every table's arrays (benchmarks use it to time a cold start)."""
    _CACHE.clear()


def as_table(entries) -> pa.Table:
    """The entries table of a Corpus, an Arrow table or a pandas DataFrame
    (:func:`sessionlab.tables.as_entries`)."""
    return as_entries(entries)


def forest_of(entries) -> Forest:
    """The :class:`Forest` of ``entries`` (a Corpus, Arrow table or DataFrame), shared with every
    other function working on the same table object."""
    return Forest.of(as_table(entries))


def _string_array(ids) -> pa.Array:
    return ids.cast(pa.string()) if isinstance(ids, pa.Array) else strings(list(ids))


def _codes(col) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a string column (nulls share one code) and the first row of each code.

    Tables are built file by file, so equal values usually sit in one run: codes then come from
    comparing neighbours. Only when a value comes back in a later run is the column hashed.
    """
    if col.null_count:
        col = pc.fill_null(col, scalar(""))
    n = len(col)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    starts = np.ones(n, bool)
    if n > 1:
        starts[1:] = to_numpy(pc.not_equal(arr[1:], arr[:-1]), True)
    first = np.nonzero(starts)[0]
    heads = arr.take(arrow_indices(first)).to_pylist()
    if len(set(heads)) == len(heads):
        return np.cumsum(starts) - 1, first
    codes = np.asarray(pc.dictionary_encode(arr).indices, np.int64)
    _, first = np.unique(codes, return_index=True)
    return codes, first


def doubling_sum(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Inclusive sum of ``values`` up each node's parent chain: ``values[i]`` plus the values of
    all ancestors of ``i`` (``parent[i] == -1`` at a root). Pointer doubling: ``O(n log depth)``;
    ``parent`` must be acyclic."""
    s = np.asarray(values).copy()
    a = parent.copy()
    while True:
        has = a >= 0
        if not has.any():
            return s
        ah = np.maximum(a, 0)
        s = s + np.where(has, s[ah], 0)
        a = np.where(has, a[ah], -1)


def doubling_nearest(parent: np.ndarray, near: np.ndarray) -> np.ndarray:
    """For each node, ``near`` of itself or of its nearest ancestor where ``near >= 0`` (-1 when no
    node on its root path has one). Pointer doubling on an acyclic ``parent``."""
    near = near.copy()
    a = parent.copy()
    while True:
        has = (a >= 0) & (near < 0)
        if not has.any():
            return near
        ah = np.maximum(a, 0)
        near = np.where(has, near[ah], near)
        a = np.where(a >= 0, a[ah], -1)


def _cyclic_nodes(parent: np.ndarray) -> np.ndarray:
    """Nodes on or below a cycle: those still not past a root after ``2 * len`` ancestor jumps."""
    a = parent.copy()
    steps = 1
    while steps <= 2 * len(parent) and (a >= 0).any():
        a = np.where(a >= 0, a[np.maximum(a, 0)], -1)
        steps *= 2
    return a >= 0


class Forest:
    """The tree structure of an entries table.

    Attributes:
        parent: int64 row index of each row's parent (-1: root, orphan, or cut at a cycle).
        dangling: rows whose ``parent_id`` is not in their file.
        cyclic: rows on or below a parent cycle (the object model raises ``CycleError`` there).
        depth: 0 for roots.
        file_code, first_row_of_file: each row's file as a code 0..k-1, and each file's first row.
        chain_of, chain_start, chain_parent_row, chain_parent: the chains (see the module doc): each
            row's chain, each chain's first row, the row it hangs from and that row's chain (-1: a root).
        is_leaf_record: ``leaf`` records (never parents).
    """

    @property
    def table(self) -> pa.Table:
        """The entries table this forest was built from (held weakly)."""
        table = self._table()
        if table is None:
            raise TableFreedError("the table of this Forest was freed; keep a reference to the table")
        return table

    @classmethod
    def of(cls, table: pa.Table) -> Forest:
        """The forest of ``table``, shared with the other functions working on the same table."""
        return per_table(cls, table)

    def __init__(self, table: pa.Table) -> None:
        self._table = weakref.ref(table)  # weak: the per-table cache must not keep tables alive
        n = self.n = table.num_rows
        self._categories: dict[str, tuple[np.ndarray, list]] = {}
        self.is_leaf_record = self.isin("type", ("leaf",))
        self.file_code, self.first_row_of_file = _codes(table["file"])
        parent = self._parents_from_index()
        if parent is None:  # a table filtered or assembled by hand: map the parent ids now
            parent = self.lookup(table["parent_id"], np.arange(n))
        has_pid = to_numpy(pc.is_valid(table["parent_id"]), False)
        self.dangling = has_pid & (parent < 0) & ~self.is_leaf_record
        self.parent = parent
        self._chains()
        self.cyclic = np.zeros(n, bool)
        cyc_chain = _cyclic_nodes(self.chain_parent)
        if cyc_chain.any():
            self.cyclic = cyc_chain[self.chain_of]
            self.parent = np.where(self.cyclic, -1, self.parent)
            self._chains()
        self.depth = self.path_sum(np.ones(n, np.int64)) - 1

    def isin(self, column: str, values) -> np.ndarray:
        """Rows whose ``column`` (a string column) value is one of ``values`` (never a null row); each
        column asked about is dictionary-encoded once."""
        cat = self._categories.get(column)
        if cat is None:
            col = self.table[column]
            arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            enc = pc.dictionary_encode(arr)
            cat = (to_numpy(enc.indices, -1).astype(np.int64), enc.dictionary.to_pylist())
            self._categories[column] = cat
        codes, labels = cat
        wanted = [i for i, v in enumerate(labels) if v in values]
        if not wanted:
            return np.zeros(self.n, bool)
        if len(wanted) == 1:
            return codes == wanted[0]
        return np.isin(codes, wanted)

    def _parents_from_index(self) -> np.ndarray | None:
        """Parents from the loader's ``entry_index``/``parent_index`` columns (ids mapped once, at
        load), when every file's rows are its entries 0..k-1 in order; else ``None``."""
        t = self.table
        if "parent_index" not in t.column_names or "entry_index" not in t.column_names:
            return None
        n = self.n
        start = self.first_row_of_file[self.file_code] if n else np.zeros(0, np.int64)
        own = to_numpy(t["entry_index"], -1).astype(np.int64)
        if not np.array_equal(own, np.arange(n) - start):
            return None
        pidx = to_numpy(t["parent_index"], -1).astype(np.int64)
        count = np.bincount(self.file_code, minlength=len(self.first_row_of_file))[self.file_code]
        if (pidx >= count).any():  # rows cut off the end of a file
            return None
        return np.where(pidx >= 0, start + pidx, -1)

    def per_file(self, column: str, rows: np.ndarray) -> pa.Array:
        """``column[rows]`` for a column that is constant within a file (``session_id``, ``file``):
        taken from one row per file rather than from the whole column."""
        values = pc.take(self.table[column], arrow_indices(self.first_row_of_file))
        return pc.take(values, arrow_indices(self.file_code[np.asarray(rows, np.int64)]))

    def lookup(self, ids, rows: np.ndarray) -> np.ndarray:
        """Row index of the entry with id ``ids[i]`` in the file of row ``rows[i]`` (the last such
        row when an id is duplicated, as pi's index; never a seed leaf record); -1 if absent."""
        rows = np.asarray(rows, np.int64)
        out = np.full(len(rows), -1, np.int64)
        if len(rows) == 0 or self.n == 0:
            return out
        ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else _string_array(ids)
        probes = pc.unique(ids.drop_null()) if ids.null_count else pc.unique(ids)
        if len(probes) == 0:
            return out
        want = to_numpy(pc.index_in(ids, value_set=probes), -1).astype(np.int64)
        # the rows whose own id is one of the probes: usually few
        have = to_numpy(pc.index_in(self.table["entry_id"], value_set=probes), -1).astype(np.int64)
        cand = np.nonzero((have >= 0) & ~self.is_leaf_record)[0]
        if cand.size == 0:
            return out
        width = len(probes)
        keys = self.file_code[cand] * width + have[cand]
        order = np.lexsort((cand, keys))  # by key, then row: the last of equal keys wins
        skeys, srows = keys[order], cand[order]
        q = self.file_code[rows] * width + want
        pos = np.searchsorted(skeys, q, side="right") - 1
        posc = np.maximum(pos, 0)
        hit = (want >= 0) & (pos >= 0) & (skeys[posc] == q)
        return np.where(hit, srows[posc], -1)

    def _chains(self) -> None:
        n = self.n
        idx = np.arange(n)
        start = self.parent != idx - 1
        if n:
            start[0] = True
        self.chain_of = np.cumsum(start) - 1
        self.chain_start = idx[start]
        self.chain_parent_row = self.parent[self.chain_start]  # where each chain hangs (-1: a root)
        self.chain_parent = np.where(self.chain_parent_row >= 0,
                                     self.chain_of[np.maximum(self.chain_parent_row, 0)], -1)

    def path_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each row and all its ancestors (root included)."""
        v = np.asarray(values)
        if self.n == 0:
            return v.copy()
        cs = np.cumsum(v)
        before = cs[self.chain_start] - v[self.chain_start]
        within = cs - before[self.chain_of]
        hang = self.chain_parent_row
        w = np.where(hang >= 0, within[np.maximum(hang, 0)], 0)
        offset = doubling_sum(self.chain_parent, w)
        return offset[self.chain_of] + within

    def nearest(self, mask: np.ndarray) -> np.ndarray:
        """For each row, the nearest row at or above it where ``mask`` is true (-1 if none)."""
        n = self.n
        if n == 0:
            return np.zeros(0, np.int64)
        acc = np.maximum.accumulate(np.where(mask, np.arange(n), -1))
        within = np.where(acc >= self.chain_start[self.chain_of], acc, -1)
        hang = self.chain_parent_row
        h = np.where(hang >= 0, within[np.maximum(hang, 0)], -1)
        inherited = doubling_nearest(self.chain_parent, h)
        return np.where(within >= 0, within, inherited[self.chain_of])

    def deepest_at_most(self, values: np.ndarray, rows: np.ndarray, limit: np.ndarray) -> np.ndarray:
        """For each query row, the deepest row on its root path (itself included) whose value is
        at most ``limit``; -1 if none.

        ``values`` must not decrease going down any path (a path sum of non-negative numbers, a
        depth, an exclusive count...). Inside a chain the values are sorted, so one binary search
        per chain on the way up finds the row.
        """
        v = np.asarray(values, np.int64)
        rows = np.asarray(rows, np.int64)
        lim = np.asarray(limit, np.int64) * np.ones(len(rows), np.int64)
        out = np.full(len(rows), -1, np.int64)
        if self.n == 0 or len(rows) == 0:
            return out
        vmin = int(v.min())
        width = int(v.max()) - vmin + 1
        key = self.chain_of * width + (v - vmin)  # sorted: chains are row ranges, values rise inside
        cur = rows.copy()
        active = np.nonzero(cur >= 0)[0]
        while active.size:  # one step per chain on the way up
            x = cur[active]
            lo = lim[active]
            c = self.chain_of[x]
            here = v[x] <= lo
            out[active[here]] = x[here]
            s = self.chain_start[c]
            inside = ~here & (v[s] <= lo)
            if inside.any():
                q = c[inside] * width + np.clip(lo[inside] - vmin, 0, width - 1)
                out[active[inside]] = np.searchsorted(key, q, side="right") - 1
            up = ~here & ~inside
            nxt = self.chain_parent_row[c[up]]
            cur[active[up]] = nxt
            active = active[up][nxt >= 0]
        return out

    def is_ancestor(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether row ``a`` is ``b`` or one of its ancestors (element-wise; -1 is never)."""
        a = np.asarray(a, np.int64)
        x = np.asarray(b, np.int64).copy()
        out = np.zeros(len(a), bool)
        active = np.nonzero((a >= 0) & (x >= 0))[0]
        ca = self.chain_of[np.maximum(a, 0)]
        while active.size:  # one step per chain on the way up: a few, not one per entry
            xa = x[active]
            same = self.chain_of[xa] == ca[active]
            out[active[same]] = a[active[same]] <= xa[same]
            rest = active[~same]
            x[rest] = self.chain_parent_row[self.chain_of[x[rest]]]
            active = rest[x[rest] >= 0]
        return out
