"""Small pieces the insight tables (compaction diff, estimate accuracy, cache misses, tools, subagents)
share: each row's agent, timestamps as seconds, and the one warning an analysis gives when an
agent does not record what it needs."""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, from_numpy, scalar, to_numpy
from ..errors import UnrecordedDataWarning
from ..tables.forest import Forest

__all__ = ["agent_codes", "agents_lacking", "edit_deltas", "seconds", "take", "warn_unrecorded"]


def agent_codes(table: pa.Table, f: Forest) -> tuple[np.ndarray, list[str]]:
    """Each row's agent as a code into the returned names ('pi' where the table has no agent)."""
    if "agent" not in table.column_names:
        return np.zeros(table.num_rows, np.int64), ["pi"]
    col = pc.fill_null(table["agent"], scalar("pi"))
    enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    return np.asarray(to_numpy(enc.indices, 0), np.int64), [str(v) for v in enc.dictionary.to_pylist()]


def agents_lacking(codes: np.ndarray, names: list[str], rows: np.ndarray, has: np.ndarray) -> list[str]:
    """The agents among ``rows`` none of whose rows has what ``has`` (per row of ``rows``) says."""
    present = np.zeros(len(names), bool)
    any_has = np.zeros(len(names), bool)
    present[codes[rows]] = True
    any_has[codes[rows][has]] = True
    return [names[i] for i in np.nonzero(present & ~any_has)[0]]


def seconds(table: pa.Table, rows: np.ndarray) -> np.ndarray:
    """The timestamps of ``rows`` as float seconds since the epoch (NaN for a null or -1 row)."""
    rows = np.asarray(rows, np.int64)
    ts = table["timestamp"]
    ms = np.asarray(to_numpy(pc.cast(ts, pa.int64()), -2**62), np.int64)
    out = ms[np.maximum(rows, 0)].astype(np.float64) / 1000.0
    out[(rows < 0) | (ms[np.maximum(rows, 0)] == -2**62)] = np.nan
    return out


def warn_unrecorded(function: str, what: str, agents: list[str], *, then: str = "those values are null",
                    stacklevel: int = 3) -> None:
    """One :class:`~sessionlab.UnrecordedDataWarning` for ``function``: ``agents`` do not record
    ``what``, and ``then`` says what that leaves out."""
    if agents:
        warnings.warn(UnrecordedDataWarning(
            f"{function}: {', '.join(sorted(agents))} sessions do not record {what}; {then}"),
            stacklevel=stacklevel)


def take(col, rows: np.ndarray) -> pa.Array:
    """``col[rows]`` (null where ``rows`` is -1) of a string column, decoded from a dictionary array
    whose dictionary is the column: several times faster than a take (a column of one chunk per
    file is combined first)."""
    rows = np.asarray(rows, np.int64)
    values = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if len(values) >= 2**31 - 1 or not pa.types.is_string(values.type):
        return pc.take(values, arrow_indices(rows, rows < 0))
    indices = from_numpy(rows.astype(np.int32), mask=rows < 0)
    return pa.DictionaryArray.from_arrays(indices, values).cast(values.type)


def edit_deltas(prep, base: np.ndarray, r: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pi 1.6's context edits inside the contexts at ``base`` (``r``: their aggregates): ``(k, x,
    delta)``, the context's position ``k``, an edited message row ``x`` and the change of its
    estimate there (minus its estimate when removed; the replacement's minus its own when
    replaced), as :mod:`._edits` corrects the contexts' totals. Edits that correction does not cover
    (of a compaction or a system message) are left out."""
    from ._edits import edit_pairs

    empty = np.zeros(0, np.int64)
    if "edited" not in r or not r["edited"].any():
        return empty, empty, empty
    f = prep.forest
    idx = np.nonzero(r["edited"])[0]
    sd = r["start_depth"][idx]
    k, e, x = edit_pairs(prep, base[idx], sd)
    c = r["comp"][idx]
    xx = np.maximum(x, 0)
    bad = (x >= 0) & ((x == c[k]) | prep.is_sys[xx] | prep.is_comp[xx] | ~prep.edit_above[e])
    applies = (x >= 0) & ~bad & (f.depth[xx] >= sd[k]) & prep.gives[xx]
    removed = applies & (prep.edit_action[e] == "remove")
    delta = np.where(removed, -prep.est_msg[xx],
                     np.where(applies & prep.edit_est_valid[e], prep.est[e] - prep.est_msg[xx], 0))
    keep = delta != 0
    return idx[k[keep]], xx[keep], delta[keep].astype(np.int64)
