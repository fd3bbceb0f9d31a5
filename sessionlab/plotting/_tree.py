"""Draw a session tree from :func:`tree_layout`: one line collection per edge style, one scatter per node kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..tables.corpus import SessionIds
from ._common import new_axes, plain, session_rows, shorten, to_np
from ._layout import compute_layout

__all__ = ["plot_tree", "NODE_KINDS", "node_kinds"]

# kind: (colour, marker, size factor, smallest size in points^2); legend order. Rare kinds that
# mark events (compactions, branch summaries, labels...) keep a visible size in long sessions.
NODE_KINDS = {
    "user": ("#1f77b4", "o", 1.3, 0),
    "assistant": ("#ff7f0e", "o", 1.0, 0),
    "toolResult": ("#2ca02c", "o", 0.7, 0),
    "bashExecution": ("#8c564b", "s", 1.0, 25),
    "custom message": ("#e377c2", "o", 1.0, 25),
    "compaction": ("#d62728", "*", 4.0, 160),
    "branch_summary": ("#9467bd", "D", 1.8, 45),
    "model_change": ("#17becf", "s", 1.3, 30),
    "thinking_level_change": ("#7f7f7f", "s", 1.0, 20),
    "label": ("#bcbd22", ">", 1.3, 30),
    "custom": ("#f7b6d2", "^", 1.0, 25),
    "session_info": ("#000000", "P", 1.3, 30),
    "other": ("#c7c7c7", "o", 1.0, 0),
}


def node_kinds(types: np.ndarray, roles: np.ndarray) -> np.ndarray:
    """The :data:`NODE_KINDS` key of every entry, from its ``type`` and ``role`` (object arrays)."""
    msg = types == "message"
    conds = [msg & (roles == "user"), msg & (roles == "assistant"), msg & (roles == "toolResult"),
             msg & (roles == "bashExecution"), (msg & (roles == "custom")) | (types == "custom_message")]
    names = ["user", "assistant", "toolResult", "bashExecution", "custom message"]
    for t in ("compaction", "branch_summary", "model_change", "thinking_level_change", "label", "custom",
              "session_info"):
        conds.append(types == t)
        names.append(t)
    return np.select(conds, names, default="other").astype(object)


def current_labels(table: pa.Table) -> pd.DataFrame:
    """target_id -> label in effect: the last label entry of each target; empty or null clears."""
    types = to_np(table["type"], "")
    sel = np.nonzero(types == "label")[0]
    df = pd.DataFrame({"target_id": table["target_id"].to_numpy(zero_copy_only=False)[sel],
                       "label": table["label"].to_numpy(zero_copy_only=False)[sel]})
    df = df.drop_duplicates("target_id", keep="last")
    return df[df["label"].notna() & (df["label"].astype(str) != "")]


def plot_tree(entries, *, session_id: SessionIds = None, ax=None, max_label: int = 24, title: str | None = None,
              leaf_id: str | None = None):
    """Draw a session's tree: parents above children, the current branch highlighted.

    Nodes are coloured by kind (user, assistant, toolResult, bashExecution, custom message,
    compaction, branch_summary, model_change, thinking_level_change, label, custom, session_info);
    edges of the current branch (root to pi's leaf) are thick and its nodes outlined; the labels in
    effect (the last ``label`` entry of each target) are written next to their targets, and
    compactions are marked with their ``tokensBefore``. The layout is :func:`tree_layout`'s; the
    drawing is two ``LineCollection``s (``gid`` ``"edges"`` and ``"current_branch"``) and one
    ``scatter`` per kind, so a 20,000-entry session draws in about a second.

    Args:
        entries: A :class:`~sessionlab.Corpus` or an entries table (Arrow or pandas).
        session_id: The session (or a list holding just it); ``None`` when the table holds one
            session.
        ax: Axes to draw on; default a new figure sized to the tree.
        max_label: Longest label text shown (longer ones are cut with an ellipsis).
        title: Title text instead of ``Session <id prefix>`` (the counts are added; drawn literally).
        leaf_id: An entry id: highlight the branch from the root to it instead of the current branch
            (as ``branch_calls(leaf_id=...)`` takes it)
            (an id not in the tree highlights nothing).

    Returns:
        The matplotlib ``Axes`` (y grows downwards: depth).

    Example:
        >>> from sessionlab import load
        >>> ax = plot_tree(load("data/sessions"), session_id="ec99108d-db5b-4fab-8f4d-3e27dda1494c")  # doctest: +SKIP
    """
    table = session_rows(entries, session_id)
    lay = compute_layout(table)
    x, y, parent, on = lay.x, lay.y, lay.parent, lay.on_branch
    n = lay.nodes.num_rows
    if leaf_id is not None:
        on = _path_to(lay.nodes, parent, leaf_id)
    width = (x.max() + 1) if n else 1
    depth = (y.max() + 1) if n else 1
    ax = new_axes(ax, (float(np.clip(4.5 + 0.6 * width, 6, 18)), float(np.clip(2.5 + 0.06 * depth, 4.5, 16))))
    # marker size from the room per node along the depth
    fig_h = ax.get_window_extent().height / ax.figure.dpi if ax.figure.dpi else 5
    base = float(np.clip((0.6 * fig_h * 72 / max(depth, 1)) ** 2, 5, 40))
    _draw_edges(ax, x, y, parent, on, base, "current branch" if leaf_id is None else "branch to the picked entry")
    _draw_nodes(ax, lay.nodes, x, y, on, base)
    _draw_notes(ax, table, lay.nodes, x, y, max_label)
    if n:
        ax.set_xlim(x.min() - 0.8, x.max() + 0.8 + 0.5 * max(width, 1) ** 0.5)  # room for notes on the right
        # a margin of 4% of the depth (at least one level) so no node or star touches an edge
        pad = max(1.0, 0.04 * depth)
        ax.set_ylim(y.max() + pad, y.min() - pad)
    ax.set_xticks([])
    ax.set_ylabel("depth")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    leaves = int((np.bincount(parent[parent >= 0], minlength=n) == 0).sum()) if n else 0
    noun = "leaf" if leaves == 1 else "leaves"
    sid = table["session_id"][0].as_py()
    head = shorten(title, 72) if title else plain(f"Session {sid[:8] if sid else '?'}")
    ax.set_title(f"{head}: {n:,} entries, {leaves:,} {noun}", fontsize=11, loc="left")
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    for handle in legend.legend_handles:  # legend markers at a readable size whatever the node size
        if hasattr(handle, "set_sizes"):
            handle.set_sizes([30])
    return ax


def _path_to(nodes: pa.Table, parent: np.ndarray, at: str) -> np.ndarray:
    """Which nodes are on the path from the root to entry ``at``."""
    on = np.zeros(len(parent), bool)
    hit = np.nonzero(to_np(nodes["entry_id"], "") == at)[0]
    r = int(hit[-1]) if hit.size else -1
    while r >= 0 and not on[r]:
        on[r] = True
        r = int(parent[r])
    return on


def _draw_edges(ax, x: np.ndarray, y: np.ndarray, parent: np.ndarray, on: np.ndarray, base: float,
                name: str = "current branch") -> None:
    """Two line collections: the edges, and the current branch as a wide halo under the nodes."""
    from matplotlib.collections import LineCollection

    child = np.nonzero(parent >= 0)[0]
    p = parent[child]
    segs = np.stack([np.stack([x[p], y[p]], 1), np.stack([x[child], y[child]], 1)], 1)
    cur = on[child] & on[p]
    ax.add_collection(LineCollection(segs[~cur], colors="0.6", linewidths=0.8, zorder=1, gid="edges"))
    ax.add_collection(LineCollection(segs[cur], colors="#f2b705", alpha=0.55, linewidths=max(4.0, base ** 0.5 + 3),
                                     zorder=2, capstyle="round", gid="current_branch",
                                     label=f"{name} ({int(on.sum()):,} entries)"))


def _draw_nodes(ax, nodes: pa.Table, x: np.ndarray, y: np.ndarray, on: np.ndarray, base: float) -> None:
    """One scatter per node kind; nodes of the current branch outlined (when markers are big enough)."""
    kinds = node_kinds(to_np(nodes["type"], "").astype(object), to_np(nodes["role"], "").astype(object))
    outline = np.array([[0, 0, 0, 1.0 if base >= 12 else 0.0]])
    edge = np.where(on[:, None], outline, np.array([[0, 0, 0, 0.0]]))
    for kind, (colour, marker, factor, smallest) in NODE_KINDS.items():
        sel = np.nonzero(kinds == kind)[0]
        if sel.size:
            special = smallest > 0
            ax.scatter(x[sel], y[sel], s=max(base * factor, smallest), c=colour, marker=marker,
                       edgecolors=edge[sel] if not special else "black", linewidths=0.5,
                       zorder=4 if special else 3, label=f"{kind} ({sel.size:,})", gid=f"nodes:{kind}")


def _draw_notes(ax, table: pa.Table, nodes: pa.Table, x: np.ndarray, y: np.ndarray, max_label: int) -> None:
    """The labels in effect next to their targets, and each compaction's tokensBefore."""
    ids = pd.Index(nodes["entry_id"].to_numpy(zero_copy_only=False))
    labels = current_labels(table)
    at = ids.get_indexer(labels["target_id"])
    for r, text in zip(at, labels["label"]):  # one note per label in effect (few per session)
        if r >= 0:
            ax.annotate(shorten(text, max_label), (x[r], y[r]), xytext=(7, 0), textcoords="offset points",
                        fontsize=9, va="center", usetex=False, gid="label",
                        bbox=dict(boxstyle="round,pad=0.2", fc="#f7f7b0", ec="#bcbd22", lw=0.6))
    comp = np.nonzero(to_np(nodes["type"], "") == "compaction")[0]
    tb = to_np(nodes["tokens_before"], 0).astype(np.int64)
    for r in comp:  # one note per compaction (a handful per session)
        ax.annotate(f"compaction: {tb[r]:,} tokens before", (x[r], y[r]), xytext=(10, 0),
                    textcoords="offset points", fontsize=9, va="center", ha="left", color="#d62728",
                    usetex=False, gid="compaction")
