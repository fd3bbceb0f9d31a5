"""A tidy layout of a session tree, computed on arrays (no matplotlib needed).

Rules (a "leaf-rank" tidy tree, as in Reingold-Tilford without subtree packing):

- ``y`` is the depth (0 for a root); the plot puts roots at the top;
- the leaves, in depth-first order (children in pi's ``getTree`` order: ascending timestamp,
  ties in file order; roots in file order), get ``x = 0, 1, 2...``;
- a node with children sits midway between its first and its last child (which are its leftmost
  and rightmost children), so a node with one child sits right above it.

Every subtree then owns a range of leaf ranks no other subtree at its depth overlaps, so no two
nodes share a position and no edges cross.

How it runs without recursion (``n`` entries, ``c`` chains of the :class:`~sessionlab.tables.forest.Forest`, ``k``
fork points): subtree sizes are chain lengths summed bottom-up over the chain graph (one NumPy
step per chain level) plus a cumulative sum inside each chain; the depth-first position of every
node is a path sum of "1 + sizes of the earlier siblings"; the ``x`` of a node with one child is
the ``x`` of the first node below it with zero or several children (pointer doubling); only the
forks are placed level by level (one step per distinct fork depth). So a 20,000-entry session
with a few hundred branches takes a few dozen array passes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.usage import current_branch_mask
from ..tables import Column, df_variant, returns, schema_of
from ..tables.corpus import SessionIds
from ..tables.forest import Forest, doubling_nearest, doubling_sum
from ._common import session_rows, to_np

__all__ = ["tree_layout", "tree_layout_df", "LAYOUT_COLUMNS", "Layout", "compute_layout"]

LAYOUT_COLUMNS: tuple[Column, ...] = (
    Column("entry_id", pa.string(), "Entry id (seed leaf records are not nodes; a duplicated id keeps its last "
           "row, as pi)."),
    Column("parent_id", pa.string(), "Parent in the layout (null for a root, an orphan, or an entry cut loose at "
           "a parent cycle)."),
    Column("x", pa.float64(), "Horizontal position: leaves at 0, 1, 2... in depth-first order, a parent midway "
           "between its first and last child."),
    Column("y", pa.float64(), "Depth (0 for a root)."),
    Column("type", pa.string(), "Entry type."),
    Column("role", pa.string(), "Message role (null for other types)."),
    Column("on_current_branch", pa.bool_(), "Whether the entry is on the path from the root to pi's leaf."),
)


@dataclass(frozen=True)
class Layout:
    """The layout with what drawing needs: the node rows and their parent row indices."""

    nodes: pa.Table  # the session's rows that are nodes, in file order
    parent: np.ndarray  # row index of the parent in ``nodes`` (-1: none)
    x: np.ndarray
    y: np.ndarray
    on_branch: np.ndarray


def _subtree_sizes(f: Forest) -> np.ndarray:
    """Number of nodes in each row's subtree (itself included), summed over chains."""
    n = f.n
    starts = f.chain_start
    nc = len(starts)
    ends = np.r_[starts[1:], n]
    size = (ends - starts).astype(np.int64)  # per chain: becomes the size of all it carries
    cdepth = doubling_sum(f.chain_parent, np.ones(nc, np.int64)) - 1
    by_depth = np.argsort(-cdepth, kind="stable")
    bounds = np.nonzero(np.diff(cdepth[by_depth]))[0] + 1
    for level in np.split(by_depth, bounds):  # deepest chains first: one step per chain level
        level = level[f.chain_parent[level] >= 0]
        np.add.at(size, f.chain_parent[level], size[level])
    hang = np.zeros(n, np.int64)  # at each row: sizes of the chains hanging below it
    hung = f.chain_parent_row >= 0
    np.add.at(hang, f.chain_parent_row[hung], size[hung])
    cum = np.cumsum(hang)
    rows = np.arange(n)
    end = ends[f.chain_of]
    return (end - rows) + cum[end - 1] - cum + hang


def compute_layout(table: pa.Table) -> Layout:
    """The layout of one session's rows (see the module doc)."""
    n_all = table.num_rows
    on_all = current_branch_mask(table) if n_all else np.zeros(0, bool)
    types = to_np(table["type"], "")
    ids = table["entry_id"]
    keep = (types != "leaf") & to_np(pc.is_valid(ids), False)
    cand = np.nonzero(keep)[0]
    dup = pd.Series(to_np(ids, "")[cand]).duplicated(keep="last").to_numpy()
    keep[cand[dup]] = False  # of a duplicated id only the last row is a node (pi's index)
    nodes = table.filter(pa.array(keep))
    on_branch = on_all[keep]
    n = nodes.num_rows
    if n == 0:
        z = np.zeros(0)
        return Layout(nodes, np.zeros(0, np.int64), z, z, np.zeros(0, bool))
    f = Forest(nodes)
    parent = f.parent
    rows = np.arange(n)
    # sibling order: pi's getTree (timestamp, missing last, ties in file order); roots in file order
    ts_ok = to_np(pc.is_valid(nodes["timestamp"]), False)
    ts = to_np(pc.cast(nodes["timestamp"], pa.int64()), 0).astype(np.int64)
    is_root = parent < 0
    ts_key = np.where(is_root, 0, ts)
    missing = np.where(is_root, 0, ~ts_ok)
    order = np.lexsort((rows, ts_key, missing, parent))
    size = _subtree_sizes(f)
    par_s = parent[order]
    size_s = size[order]
    first = np.r_[True, par_s[1:] != par_s[:-1]]
    last = np.r_[par_s[1:] != par_s[:-1], True]
    cum = np.cumsum(size_s)
    group_start = np.maximum.accumulate(np.where(first, rows, 0))
    earlier = cum - size_s - (cum[group_start] - size_s[group_start])
    offset = np.empty(n, np.int64)
    offset[order] = earlier + (par_s >= 0)
    pre = f.path_sum(offset)  # depth-first (preorder) position of every node
    # leaves get their rank in depth-first order
    n_child = np.bincount(parent[parent >= 0], minlength=n)
    leaf = n_child == 0
    x = np.full(n, np.nan)
    leaf_rows = np.nonzero(leaf)[0]
    x[leaf_rows[np.argsort(pre[leaf_rows], kind="stable")]] = np.arange(len(leaf_rows), dtype=float)
    # first and last child of every parent
    first_child = np.full(n, -1, np.int64)
    last_child = np.full(n, -1, np.int64)
    has_par = par_s >= 0
    first_child[par_s[first & has_par]] = order[first & has_par]
    last_child[par_s[last & has_par]] = order[last & has_par]
    # a node with one child takes the x of the first node below with zero or several children
    down = np.where(n_child == 1, first_child, -1)
    rep = doubling_nearest(down, np.where(n_child != 1, rows, -1))
    forks = np.nonzero(n_child >= 2)[0]
    if forks.size:
        forks = forks[np.argsort(-f.depth[forks], kind="stable")]
        bounds = np.nonzero(np.diff(f.depth[forks]))[0] + 1
        for level in np.split(forks, bounds):  # deepest forks first: one step per fork depth
            x[level] = 0.5 * (x[rep[first_child[level]]] + x[rep[last_child[level]]])
    x = x[rep]
    return Layout(nodes, parent, x, f.depth.astype(float), on_branch)


@returns(LAYOUT_COLUMNS)
def tree_layout(entries, *, session_id: SessionIds = None) -> pa.Table:
    """Positions of a session's entries for drawing its tree (see the module doc for the rules).

    Args:
        entries: A :class:`~sessionlab.Corpus` or an entries table (Arrow or pandas).
        session_id: The session (or a list holding just it); ``None`` when the table holds one
            session.

    Returns:
        One row per entry, in file order, with columns:

{columns}

    Raises:
        EntryNotFoundError: no entries for ``session_id``.
        ValueError: the session is in several files, or ``session_id`` is ``None`` for a table of
            several sessions.

    Example:
        >>> from sessionlab import entries_table
        >>> lay = tree_layout_df(load("data/sessions"),
        ...                      session_id="ec99108d-db5b-4fab-8f4d-3e27dda1494c")  # doctest: +SKIP
        >>> lay[["x", "y"]].duplicated().any()  # doctest: +SKIP
        False
    """
    lay = compute_layout(session_rows(entries, session_id))
    nodes = lay.nodes
    ids = nodes["entry_id"]
    par = lay.parent
    pid = pc.take(ids, pa.array(np.maximum(par, 0), pa.int64(), mask=par < 0)) if len(par) else ids
    return pa.table({
        "entry_id": ids,
        "parent_id": pid,
        "x": pa.array(lay.x, pa.float64()),
        "y": pa.array(lay.y, pa.float64()),
        "type": nodes["type"],
        "role": nodes["role"],
        "on_current_branch": pa.array(lay.on_branch, pa.bool_()),
    }, schema=schema_of(LAYOUT_COLUMNS))


tree_layout_df = df_variant(tree_layout)
