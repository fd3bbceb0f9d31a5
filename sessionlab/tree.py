"""A session's entries as a networkx tree, with pi's child order and leaf rule.

:func:`session_tree` turns the rows of one session of an entries table into a ``networkx.DiGraph``:
nodes are entry ids carrying their row as attributes, edges go parent -> child. Node order is file
order; each node's successors are in pi's ``getTree`` order (ascending timestamp, ties in file
order). Roots are entries whose parent is null, themselves, or not in the session (orphans). Seed
``leaf`` records are not nodes; they only move ``leaf_id``. Which nodes are leaves and fork points,
and the current leaf, are the facts module's (:func:`sessionlab.tables.leaf_mask`, the sessions
table's ``leaf_id``): a side node (Claude Code progress, a Codex turn context) is never a leaf, and
every face counts the same leaves.

Example:
    >>> from sessionlab.tables import entries_table
    >>> g = session_tree(entries_table("tests/data/pi/generated/sessions"),
    ...                  session_id="00000001-0000-4000-8000-000000000000")
    >>> g.graph["leaf_id"], leaves(g)
    ('00000021', ['0000000d', '00000013', '00000021'])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # networkx and pandas load when a tree is built
    import networkx as nx
    import pandas as pd

    from .tables.corpus import Corpus

from typing import Any

import pyarrow as pa

from .errors import CycleError, EntryNotFoundError
from .tables.corpus import SessionIds, one_session

__all__ = ["session_tree", "roots", "leaves", "fork_points", "depths", "current_branch", "children"]


def session_tree(entries: Corpus | pa.Table | pd.DataFrame, *, session_id: SessionIds = None) -> nx.DiGraph:
    """The tree of one session of an entries table (see the module doc).

    Args:
        entries: A :class:`~sessionlab.Corpus` or an entries table (Arrow or pandas).
        session_id: The session to build (or a list holding just it); may be omitted when the table
            holds one session.

    Returns:
        A ``networkx.DiGraph`` with graph attributes ``session_id`` and ``leaf_id`` (the sessions
        table's: pi's leaf after loading, the last conversation entry in file order or a seed leaf
        record's target); each node carries its row and ``is_leaf`` / ``is_fork``.
    """
    table = one_session(entries, session_id)
    rows = _rows(table)
    import networkx as nx

    from .tables import file_facts, fork_mask, leaf_mask

    g = nx.DiGraph(session_id=rows[0]["session_id"] if rows else session_id, leaf_id=None)
    order: list[tuple[Any, int, str, str]] = []  # (timestamp, file position, parent, child)
    is_leaf, is_fork = leaf_mask(table).tolist(), fork_mask(table).tolist()
    for row, lf, fk in zip(rows, is_leaf, is_fork):  # one pass in file order: nodes, edge list
        eid = row["entry_id"]
        if eid is None or row["type"] == "leaf":
            continue
        if eid in g:  # duplicate id: like pi, the later entry wins
            g.nodes[eid].clear()
        g.add_node(eid, **row, is_leaf=lf, is_fork=fk)
    for pos, row in enumerate(rows):
        eid, pid = row["entry_id"], row["parent_id"]
        if eid is None or row["type"] == "leaf" or pid is None or pid == eid or pid not in g:
            continue
        order.append((row["timestamp"], pos, pid, eid))
    # pi sorts children by timestamp (stable: ties keep file order); missing timestamps go last
    order.sort(key=lambda o: (o[0] is None, o[0] or 0, o[1]))
    g.add_edges_from((p, c) for _, _, p, c in order)
    g.graph["leaf_id"] = _leaf_id(entries, table, file_facts)
    return g


def _leaf_id(entries: Any, table: pa.Table, file_facts: Any) -> str | None:
    """The session's current leaf: its sessions-table row's when given a corpus (a v4 file
    declares it), else the facts module's from the rows."""
    from .tables.corpus import Corpus

    if table.num_rows == 0:
        return None
    file = table["file"][0].as_py()
    if isinstance(entries, Corpus):
        s = entries.sessions
        for f, leaf in zip(s["file"].to_pylist(), s["leaf_id"].to_pylist()):
            if f == file:
                return leaf
    facts = file_facts(table)
    return facts["leaf_id"][0].as_py()


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    """``table.to_pylist()``; UTC millisecond timestamps are converted here, as pyarrow converts
    them (to ``datetime`` in ``ZoneInfo("UTC")``), because pyarrow's conversion imports pandas."""
    utc_ms = [i for i, f in enumerate(table.schema) if f.type == pa.timestamp("ms", tz="UTC")]
    if not utc_ms:
        return table.to_pylist()
    for i in utc_ms:
        table = table.set_column(i, table.field(i).name, table.column(i).cast(pa.int64()))
    rows = table.to_pylist()
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    epoch = datetime(1970, 1, 1, tzinfo=ZoneInfo("UTC"))
    for name in (table.field(i).name for i in utc_ms):
        for row in rows:
            if row[name] is not None:
                row[name] = epoch + timedelta(milliseconds=row[name])
    return rows


def roots(g: nx.DiGraph) -> list[str]:
    """Entries without a parent in the tree (null, self or unknown parent), in file order."""
    return [n for n in g.nodes if g.in_degree(n) == 0]


def leaves(g: nx.DiGraph) -> list[str]:
    """The leaves, in file order: the nodes :func:`session_tree` marked ``is_leaf`` (conversation
    entries that are no conversation entry's parent); for a graph without the mark, entries
    without children."""
    return [n for n, d in g.nodes(data=True) if d.get("is_leaf", g.out_degree(n) == 0)]


def fork_points(g: nx.DiGraph) -> list[str]:
    """The fork points, in file order: the nodes marked ``is_fork`` (conversation entries with two
    or more conversation children); for a graph without the mark, entries with two or more
    children."""
    return [n for n, d in g.nodes(data=True) if d.get("is_fork", g.out_degree(n) >= 2)]


def children(g: nx.DiGraph, entry_id: str) -> list[str]:
    """Children of an entry in pi's order (ascending timestamp, ties in file order)."""
    if entry_id not in g:
        raise EntryNotFoundError(f"entry {entry_id!r} is not in the tree")
    return list(g.successors(entry_id))


def depths(g: nx.DiGraph) -> dict[str, int]:
    """Depth of every entry (roots are 0); entries on a parent cycle have none."""
    out: dict[str, int] = {}
    stack = [(r, 0) for r in reversed(roots(g))]
    while stack:
        n, d = stack.pop()
        out[n] = d
        stack.extend((c, d + 1) for c in g.successors(n))
    return out


def current_branch(g: nx.DiGraph, leaf_id: str | None = None) -> list[str]:
    """Ids root -> leaf of the branch ending at ``leaf_id`` (default: the graph's ``leaf_id``).

    Raises:
        EntryNotFoundError: the leaf is not in the tree.
        CycleError: the parent chain loops.
    """
    leaf = g.graph.get("leaf_id") if leaf_id is None else leaf_id
    if leaf is None:
        return []
    if leaf not in g:
        raise EntryNotFoundError(f"entry {leaf!r} is not in the tree")
    path = [leaf]
    seen = {leaf}
    node = leaf
    while True:
        preds = list(g.predecessors(node))
        if not preds:
            break
        node = preds[0]
        if node in seen:
            raise CycleError(f"parent chain of {leaf!r} loops at {node!r}")
        seen.add(node)
        path.append(node)
    return path[::-1]
