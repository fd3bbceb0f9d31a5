"""The one owner of session and call facts: what is a call, which entries are leaves and fork
points, the current leaf, the session's name and its call count.

Every face reads these from here (the sessions table's ``name``, ``leaf_id``, ``leaf_count``,
``fork_count`` and ``call_count`` columns, :func:`call_mask` and :func:`leaf_mask` over an entries
table); none computes them again. They are functions of the entries table alone, so a fresh load,
a cached reload, a Parquet round trip and a Dask partition give the same facts.

The rules:

- **Nodes** are the rows with an id that are not seed ``leaf`` records (a pi ``--mode json`` event
  has no id: no node). **Conversation nodes** are the nodes that are not side nodes
  (``side_node``: Claude Code progress and system lines, Codex turn contexts).
- A conversation node's **conversation parent** is its parent (the loader's ``parent_index``: pi's
  index, a repeated id naming its later entry), or, when that parent is a side node, the nearest
  conversation node above it: side nodes between two messages neither make a leaf nor hide a fork.
- A **leaf** is a conversation node that is no conversation node's conversation parent; a **fork
  point** is one that is the conversation parent of two or more conversation nodes.
- The **current leaf** (``leaf_id``) is pi's leaf after loading: the last node in file order, or the
  target of a later seed ``leaf`` record when that target is a node of the file; side nodes are
  passed over. v4 harness files declare their leaf, tip count and name as values
  (:func:`declared`): those win.
- A **call** is an assistant message the agent sent to the model, by the agent's rule
  (:mod:`sessionlab.agents`): every assistant message of a pi file; in Claude Code and Codex files
  the ones carrying usage (a response's other streamed lines and replayed copies carry none).
- The **name** is pi 1.6's ``getSessionName``: the latest ``session_info`` entry's name, trimmed,
  an empty one clearing it; a file without ``session_info`` entries takes the name its agent's
  reader found (a Claude Code title, for example).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .._arrow import arrow_indices, from_numpy, scalar, strings, to_numpy, valid_mask
from .._arrow import compute as pc
from ..pi.rules import session_name

__all__ = ["call_mask", "leaf_mask", "fork_mask", "current_leaf_rows", "file_facts", "FACT_COLUMNS", "declared"]

#: the sessions-table columns this module owns
FACT_COLUMNS = ("name", "leaf_id", "leaf_count", "fork_count", "call_count")


def _bool(col: Any) -> np.ndarray:
    return np.asarray(to_numpy(col, False), bool)


def call_mask(table: pa.Table) -> np.ndarray:
    """For each row of an entries table, whether it is a call (see the module doc)."""
    from ..agents import calls_need_usage

    asst = _bool(pc.and_(pc.equal(table["type"], scalar("message")), pc.equal(table["role"], scalar("assistant"))))
    if "agent" not in table.column_names or not asst.any():
        return asst
    need = calls_need_usage()  # agents whose calls are the assistant lines that carry usage
    if not need:
        return asst
    agent = table["agent"]
    by_usage = _bool(pc.is_in(agent, value_set=strings(sorted(need))))
    if not by_usage.any():
        return asst
    return asst & (~by_usage | valid_mask(table["input_tokens"]))


def file_codes(table: pa.Table) -> tuple[np.ndarray, pa.Array]:
    """Each row's file as an integer code, and the distinct files in order of first appearance."""
    enc = pc.dictionary_encode(table.column("file").combine_chunks(), null_encoding="encode")
    return np.asarray(to_numpy(enc.indices), np.int64), enc.dictionary


class _Kinds:
    """Which rows are seed leaf records, nodes and conversation nodes (what the current leaf needs)."""

    def __init__(self, table: pa.Table, codes: np.ndarray) -> None:
        n = table.num_rows
        self.codes = codes
        self.leaf_record = _bool(pc.equal(table["type"], scalar("leaf")))
        self.node = valid_mask(table["entry_id"]) & ~self.leaf_record
        self.side = _bool(table["side_node"]) if "side_node" in table.column_names else np.zeros(n, bool)
        self.conv = self.node & ~self.side


class _Shape(_Kinds):
    """The node, conversation and leaf/fork flags of an entries table, on the loader's integer
    parent links (``entry_index``/``parent_index``: pi's index, a repeated id naming its later
    entry), a few array passes."""

    def __init__(self, table: pa.Table, codes: np.ndarray) -> None:
        super().__init__(table, codes)
        n, node, side = table.num_rows, self.node, self.side
        parent = _parent_rows(table, codes)
        parent = np.where((parent >= 0) & node[np.maximum(parent, 0)], parent, -1)  # (a leaf record is no parent)
        if (side & node).any():
            parent = _through_side_nodes(parent, side)
        kids = np.bincount(parent[self.conv & (parent >= 0)], minlength=n)
        self.leaf = self.conv & (kids == 0)
        self.fork = self.conv & (kids >= 2)


def _through_side_nodes(parent: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Conversation parents: a parent that is a side node is replaced by the nearest conversation
    node above it (none: -1). One array step per side node in a row; side nodes on a cycle end at -1."""
    p = parent.copy()
    hop = (p >= 0) & side[np.maximum(p, 0)]
    for _ in range(len(p)):  # (as many passes as the longest run of side nodes between two messages)
        if not hop.any():
            break
        p[hop] = parent[p[hop]]
        hop = (p >= 0) & side[np.maximum(p, 0)]
    else:
        p[hop] = -1
    return p


def _parent_rows(table: pa.Table, codes: np.ndarray) -> np.ndarray:
    """Each row's parent row (-1: none) from the loader's ``entry_index``/``parent_index``, rows in
    any order (a file's rows in entry order, as a load gives them, take the quick way)."""
    index = np.asarray(to_numpy(table["entry_index"], -1), np.int64)
    pidx = np.asarray(to_numpy(table["parent_index"], -1), np.int64)
    n = len(index)
    if n == 0:
        return np.zeros(0, np.int64)
    start = np.r_[True, codes[1:] != codes[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    if (index == np.arange(n) - first).all() and len(np.unique(codes[start])) == start.sum():
        return np.where((pidx >= 0) & (first + pidx < n), first + pidx, -1)
    width = int(max(index.max(initial=0), pidx.max(initial=0))) + 1
    keys = codes * width + index
    order = np.argsort(keys, kind="stable")
    want = codes * width + pidx
    pos = np.minimum(np.searchsorted(keys[order], want), n - 1)
    found = (pidx >= 0) & (keys[order][pos] == want)
    return np.where(found, order[pos], -1)


def _flat(col: Any) -> pa.Array:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return arr.cast(pa.string()) if not pa.types.is_string(arr.type) else arr


def leaf_mask(table: pa.Table) -> np.ndarray:
    """For each row of an entries table, whether it is a leaf (see the module doc)."""
    codes, _ = file_codes(table) if table.num_rows else (np.zeros(0, np.int64), None)
    return _Shape(table, codes).leaf if table.num_rows else np.zeros(0, bool)


def fork_mask(table: pa.Table) -> np.ndarray:
    """For each row of an entries table, whether it is a fork point (see the module doc)."""
    codes, _ = file_codes(table) if table.num_rows else (np.zeros(0, np.int64), None)
    return _Shape(table, codes).fork if table.num_rows else np.zeros(0, bool)


def _file_order(codes: np.ndarray, line: np.ndarray) -> np.ndarray:
    """Row numbers sorted by (file code, line, row)."""
    n = len(codes)
    if n < 2 or (not (np.diff(codes) < 0).any() and not ((np.diff(line) < 0) & (np.diff(codes) == 0)).any()):
        return np.arange(n)
    return np.lexsort((np.arange(n), line, codes))


def _last_per_file(order: np.ndarray, codes: np.ndarray, rows_mask: np.ndarray, k: int) -> np.ndarray:
    """Per file code, its last row (in ``order``) where ``rows_mask`` holds (-1: none)."""
    out = np.full(k, -1, np.int64)
    sel = order[rows_mask[order]]
    out[codes[sel]] = sel  # later assignments win: the last row of each file
    return out


def _leaf_rows(table: pa.Table, shape: _Kinds, order: np.ndarray, k: int) -> np.ndarray:
    """Per file code, the row of pi's leaf after loading (-1: none): a seed leaf record's target
    when the record comes last and its target is a conversation node of the file (the last row
    with that id), else the last conversation node."""
    codes = shape.codes
    last_conv = _last_per_file(order, codes, shape.conv, k)
    last_any = _last_per_file(order, codes, shape.conv | (shape.leaf_record & valid_mask(table["target_id"])), k)
    out = last_conv.copy()
    moved = np.nonzero((last_any >= 0) & (last_any != last_conv) & shape.leaf_record[np.maximum(last_any, 0)])[0]
    for c in moved.tolist():  # (a loop over the few seed files whose last record moves the leaf)
        target = table["target_id"][int(last_any[c])].as_py()
        rows = np.nonzero((codes == c) & shape.conv)[0]
        hit = rows[np.asarray(to_numpy(pc.equal(_flat(table["entry_id"]).take(arrow_indices(rows)),
                                                scalar(target)), False), bool)]
        if len(hit):
            out[c] = hit[-1]
    return out


def current_leaf_rows(table: pa.Table, *, codes: np.ndarray | None = None) -> np.ndarray:
    """For each row of an entries table, the row of its file's current leaf (-1: none), as the
    sessions table's ``leaf_id`` names it (rows only: a v4 file's declared tips are not rows).
    ``codes``: each row's file as an integer (0..k-1), when the caller has them."""
    if table.num_rows == 0:
        return np.zeros(0, np.int64)
    if codes is None:
        codes, _ = file_codes(table)
    order = _file_order(codes, np.asarray(to_numpy(table["line_no"], 0), np.int64))
    return _leaf_rows(table, _Kinds(table, codes), order, int(codes.max()) + 1)[codes]


def _ids_at(table: pa.Table, rows: np.ndarray) -> pa.Array:
    """``entry_id`` at ``rows`` (null where -1)."""
    return pc.take(_flat(table["entry_id"]), arrow_indices(np.maximum(rows, 0), rows < 0))


def _names(table: pa.Table, order: np.ndarray, codes: np.ndarray, k: int) -> tuple[list, np.ndarray]:
    """Per file, pi 1.6's session name from its latest ``session_info`` entry, and whether the
    file has one."""
    info = _bool(pc.equal(table["type"], scalar("session_info")))
    last = _last_per_file(order, codes, info, k)
    has = last >= 0
    names: list = [None] * k
    if has.any():
        values = table["name"].take(arrow_indices(last[has])).to_pylist()
        for c, v in zip(np.nonzero(has)[0].tolist(), values):
            names[c] = session_name(v)
    return names, has


def file_facts(table: pa.Table, *, files: pa.Array | None = None, codes: np.ndarray | None = None) -> pa.Table:
    """One row per file of an entries table (in order of first appearance): ``file``, ``name``,
    ``has_name_entry``, ``leaf_id``, ``leaf_count``, ``fork_count`` and ``call_count``
    (``files``/``codes``: the file column already dictionary-encoded, to share the work)."""
    if table.num_rows == 0:
        return pa.table({"file": pa.array([], pa.string()), "name": pa.array([], pa.string()),
                         "has_name_entry": pa.array([], pa.bool_()), "leaf_id": pa.array([], pa.string()),
                         "leaf_count": pa.array([], pa.int64()), "fork_count": pa.array([], pa.int64()),
                         "call_count": pa.array([], pa.int64())})
    if codes is None or files is None:
        codes, files = file_codes(table)
    k = len(files)
    shape = _Shape(table, codes)
    order = _file_order(codes, np.asarray(to_numpy(table["line_no"], 0), np.int64))
    names, has_name = _names(table, order, codes, k)
    return pa.table({
        "file": files,
        "name": strings(names),
        "has_name_entry": from_numpy(has_name),
        "leaf_id": _ids_at(table, _leaf_rows(table, shape, order, k)),
        "leaf_count": from_numpy(np.bincount(codes[shape.leaf], minlength=k).astype(np.int64)),
        "fork_count": from_numpy(np.bincount(codes[shape.fork], minlength=k).astype(np.int64)),
        "call_count": from_numpy(np.bincount(codes[call_mask(table)], minlength=k).astype(np.int64)),
    })


def declared(session: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """A session's facts: ``facts`` (from :func:`file_facts`) except what its file declares as
    values: a v4 harness file's name, leaf and tip count, and the name an agent's reader found
    when the file has no ``session_info`` entry."""
    out = dict(facts)
    if session.get("version") == 4:
        for c in ("name", "leaf_id", "leaf_count"):
            out[c] = session.get(c)
    elif not facts.get("has_name_entry") and session.get("agent", "pi") != "pi":
        out["name"] = session.get("name")
    return out
