"""Parent-index arrays for every session of an entries table at once, and pointer doubling on them.

Each file's entries form a tree (a forest with orphans); all files are handled in one set of
global row indices, so nothing loops over sessions or entries in Python. Walks up the tree use
binary lifting: ``up[k][i]`` is the ``2**k``-th ancestor of row ``i`` (``-1`` past the root), so a
path sum or a "nearest marked ancestor" costs ``O(n log depth)`` array operations.

Rules (the object model's): the parent of an entry is the entry with ``parent_id`` in the same
file, the later one when an id is duplicated (as pi's index); a missing parent makes an orphan
root; ``leaf`` records are never parents; rows on or below a parent cycle are flagged ``cyclic``
and cut loose so every other walk terminates.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Forest", "as_table", "row_keys"]

_SEP = "\x1f"


def as_table(entries) -> pa.Table:
    """An entries table as Arrow (pandas DataFrames are converted)."""
    if isinstance(entries, pa.Table):
        return entries
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        raise TypeError("entries must be a pyarrow.Table") from None
    if isinstance(entries, pd.DataFrame):
        from ..tables._schema import ENTRY_SCHEMA

        table = pa.Table.from_pandas(entries, preserve_index=False)
        for i, name in enumerate(table.column_names):  # back to the entries schema's types
            if name in ENTRY_SCHEMA.names:
                want = ENTRY_SCHEMA.field(name).type
                if table.schema.field(name).type != want:
                    table = table.set_column(i, name, pc.cast(table[name], want))
        return table
    raise TypeError(f"entries must be a pyarrow.Table or pandas.DataFrame, not {type(entries).__name__}")


def row_keys(table: pa.Table, id_column: str) -> pa.ChunkedArray:
    """``file + SEP + id`` for each row (null where the id is null): the within-file key of ids."""
    return pc.binary_join_element_wise(pc.fill_null(table["file"], ""), table[id_column], _SEP)


def _to_np(a, fill) -> np.ndarray:
    return np.asarray(pc.fill_null(a, fill).to_numpy(zero_copy_only=False))


class Forest:
    """The tree structure of an entries table.

    Attributes:
        parent: int64 row index of each row's parent (-1: root, orphan, or cut at a cycle).
        dangling: rows whose ``parent_id`` is not in their file.
        cyclic: rows on or below a parent cycle (the object model raises ``CycleError`` there).
        depth: 0 for roots.
    """

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        n = table.num_rows
        self.n = n
        self.is_leaf_record = _to_np(pc.equal(table["type"], "leaf"), False)
        keys = row_keys(table, "entry_id")
        keys = pc.if_else(pa.array(self.is_leaf_record), pa.scalar(None, pa.string()), keys)
        self._keys_rev = keys.combine_chunks()[::-1] if n else pa.array([], pa.string())
        pkeys = row_keys(table, "parent_id")
        parent = self.lookup(pkeys)
        has_pid = _to_np(pc.is_valid(table["parent_id"]), False)
        self.dangling = has_pid & (parent < 0) & ~self.is_leaf_record
        self.parent = parent
        self._lift()
        top = self.up[-1] if self.up else np.full(n, -1, np.int64)
        self.cyclic = top >= 0
        if self.cyclic.any():
            self.parent = np.where(self.cyclic, -1, self.parent)
            self._lift()
        self.depth = self.path_sum(np.ones(n, np.int64)) - 1

    def lookup(self, keys) -> np.ndarray:
        """Row index of each key (``file + SEP + id``), the last row when duplicated; -1 if absent."""
        if self.n == 0:
            return np.zeros(len(keys), np.int64)
        idx = pc.index_in(keys, value_set=self._keys_rev, skip_nulls=True)
        out = _to_np(idx, -1).astype(np.int64)
        return np.where(out >= 0, self.n - 1 - out, -1)

    def _lift(self) -> None:
        n = self.n
        levels = max(1, int(np.ceil(np.log2(max(n, 2)))) + 1)
        up = [self.parent.astype(np.int64)]
        for _ in range(levels):
            prev = up[-1]
            nxt = np.where(prev >= 0, prev[np.maximum(prev, 0)], -1)
            up.append(nxt)
            if (nxt < 0).all():
                break
        self.up = up

    def path_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each row and all its ancestors (root included)."""
        s = np.asarray(values).copy()
        for a in self.up:
            has = a >= 0
            if not has.any():
                break
            s = s + np.where(has, s[np.maximum(a, 0)], 0)
        return s

    def nearest(self, mask: np.ndarray) -> np.ndarray:
        """For each row, the nearest row at or above it where ``mask`` is true (-1 if none)."""
        near = np.where(mask, np.arange(self.n), -1)
        for a in self.up:
            has = a >= 0
            if not has.any():
                break
            take = (near < 0) & has
            near = np.where(take, near[np.maximum(a, 0)], near)
        return near

    def ancestor_at_depth(self, rows: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """The ancestor-or-self of each row at ``depth`` (-1 for a row of -1 or a deeper depth)."""
        rows = np.asarray(rows, np.int64)
        k = np.where(rows >= 0, self.depth[np.maximum(rows, 0)] - depth, -1)
        x = np.where(k >= 0, rows, -1)
        bit = 0
        while bit < len(self.up):
            step = ((k >> bit) & 1).astype(bool) & (x >= 0) & (k >= 0)
            x = np.where(step, self.up[bit][np.maximum(x, 0)], x)
            bit += 1
        return x

    def is_ancestor(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether row ``a`` is ``b`` or one of its ancestors (element-wise; -1 is never)."""
        a = np.asarray(a, np.int64)
        b = np.asarray(b, np.int64)
        ok = (a >= 0) & (b >= 0)
        da = np.where(ok, self.depth[np.maximum(a, 0)], 0)
        db = np.where(ok, self.depth[np.maximum(b, 0)], -1)
        ok &= da <= db
        anc = self.ancestor_at_depth(np.where(ok, b, -1), da)
        return ok & (anc == a)
