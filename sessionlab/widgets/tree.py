"""SessionTree: a session's tree drawn on a canvas in the browser, with pan, zoom, hover and selection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import traitlets as T

from ..errors import MissingDependencyError

try:
    import anywidget
except ImportError as e:  # pragma: no cover - depends on the environment
    raise MissingDependencyError('SessionTree needs anywidget: pip install "sessionlab[notebook]"') from e

from ..plotting import NODE_KINDS, compute_layout, current_labels, node_kinds, session_rows, to_np
from ..tables import call_mask
from ..tables.corpus import Corpus, SessionIds
from ._live import Live

__all__ = ["SessionTree", "tree_payload"]

_JS = Path(__file__).parent / "_static" / "session_tree.js"
TEXT_CHARS = 200  # message text shown in the tooltip


def _round(a: np.ndarray, digits: int = 3) -> list[float]:
    return np.round(a.astype(float), digits).tolist()


def _texts(nodes: pa.Table) -> list[str]:
    """A short text per node for the tooltip (tool name, error, summary length...); no file reads."""
    tool = nodes["tool_name"].to_pylist()
    err = nodes["error_message"].to_pylist()
    custom = nodes["custom_type"].to_pylist()
    thinking = nodes["thinking_level"].to_pylist()
    out = []
    for t, e, c, th in zip(tool, err, custom, thinking):  # one short string per entry, for the browser
        parts = [f"tool {t}" if t else "", f"error: {e}" if e else "", f"custom type {c}" if c else "",
                 f"thinking {th}" if th else ""]
        text = " · ".join(p for p in parts if p)
        out.append(text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…")
    return out


def tree_payload(entries, session_id: str | None) -> dict[str, Any]:
    """What the browser draws: :func:`~sessionlab.plotting.tree_layout`'s arrays plus kinds, the
    current branch, compactions, labels in effect and the tooltip fields, as JSON-ready lists.

    Keys: ``n``, ``ids``, ``x``, ``y`` (leaf rank, depth), ``parent`` (row, -1 for none),
    ``kind`` (index into ``kinds``: ``[name, colour]``), ``kindCounts``, ``branch`` (0/1: on the
    current branch), ``compaction`` (0/1), ``tokensBefore``, ``tokens`` (the call's context
    tokens for assistant messages, pi's estimate for others, or null), ``time`` (epoch ms or
    null), ``role``, ``model``, ``text``, ``labels`` (``[row, label]``), ``assistantKind``,
    ``minX``/``maxX``/``minY``/``maxY``.
    """
    table = session_rows(entries, session_id)
    lay = compute_layout(table)
    nodes, n = lay.nodes, lay.nodes.num_rows
    types = to_np(nodes["type"], "").astype(object)
    roles = to_np(nodes["role"], "").astype(object)
    kinds = node_kinds(types, roles)
    names = list(NODE_KINDS)
    kind_index = {k: i for i, k in enumerate(names)}
    kind = np.array([kind_index[k] for k in kinds], np.int64) if n else np.zeros(0, np.int64)
    is_call = call_mask(nodes)
    ctx = to_np(nodes["context_tokens"], -1).astype(np.int64)
    est = to_np(nodes["est_tokens"], -1).astype(np.int64)
    tok = np.where(is_call, ctx, est)
    ts = pc.cast(nodes["timestamp"], pa.int64()).to_pylist()
    ids = nodes["entry_id"].to_pylist()
    row_of = {eid: i for i, eid in enumerate(ids)}
    labels = current_labels(table)
    label_rows = [[row_of[t], str(lab)] for t, lab in zip(labels["target_id"], labels["label"]) if t in row_of]
    return {
        "n": n,
        "ids": ids,
        "x": _round(lay.x),
        "y": _round(lay.y),
        "parent": lay.parent.astype(np.int64).tolist(),
        "kind": kind.tolist(),
        "kinds": [[k, NODE_KINDS[k][0]] for k in names],
        "kindCounts": np.bincount(kind, minlength=len(names)).tolist(),
        "branch": lay.on_branch.astype(np.int8).tolist(),
        "compaction": (types == "compaction").astype(np.int8).tolist(),
        "tokensBefore": to_np(nodes["tokens_before"], 0).astype(np.int64).tolist(),
        "tokens": [int(v) if v >= 0 else None for v in tok.tolist()],
        "time": ts,
        "role": nodes["role"].to_pylist(),
        "model": nodes["model"].to_pylist(),
        "text": _texts(nodes),
        "labels": label_rows,
        "assistantKind": kind_index["assistant"],
        "minX": float(lay.x.min()) if n else 0.0,
        "maxX": float(lay.x.max()) if n else 0.0,
        "minY": float(lay.y.min()) if n else 0.0,
        "maxY": float(lay.y.max()) if n else 0.0,
    }


STATIC_MAX_NODES = 5_000  # larger trees get a sentence instead of a picture in saved notebooks


class SessionTree(anywidget.AnyWidget):
    """A session's tree on a canvas: drag to pan, Ctrl+wheel (pinch, or wheel after a click) to zoom,
    hover for an entry, click to select.

    Nodes are coloured by kind (role for messages, type for other entries, the colours of
    :func:`~sessionlab.plotting.plot_tree`); the current branch (root to pi's leaf) is drawn
    under a wide yellow line, compactions are red triangles with their ``tokensBefore``, fork
    points are ringed and labels in effect are written beside their entries. Hovering shows the
    entry's kind, id, tokens, time, label and model; a click sets :attr:`selected_id`. The
    browser draws the arrays of :func:`~sessionlab.plotting.tree_layout` (one canvas, no DOM node
    per entry), so a 20,000-entry session draws in well under a second. Its JavaScript ships
    inside the package; nothing is loaded from the network. Session text reaches the page only
    as canvas text or ``textContent``, never as HTML.

    Give it to :class:`~sessionlab.widgets.BranchExplorer` (``session_tree=``) and a click shows
    that entry's context there.

    Attributes:
        selected_id: Entry id of the last clicked entry (``None`` before any click); settable.
        shown_id: Entry id whose context the surrounding BranchExplorer shows; after a click the
            explorer reads "loading" (never the previous entry's context) until the two agree.
        draw_ms: How long the browser's first full draw took (milliseconds), reported back.
        title: Text above the tree. height: Canvas height in CSS pixels.
        session_id: The session shown (or a list holding it; ``None`` when the table holds one).
        live: While True (the "live" box above the tree), a change to the session files redraws
            the tree (:meth:`sessionlab.Corpus.follow`); only for a corpus from ``load()``
            (``can_follow`` says whether it is one).

    Example:
        >>> from sessionlab import entries_table  # doctest: +SKIP
        >>> tree = SessionTree(entries_table("data/sessions"), "b627ef1d-8e91-479a-a1c3-a39e50c19172")  # doctest: +SKIP
        >>> tree  # doctest: +SKIP
    """

    _esm = _JS
    tree = T.Dict().tag(sync=True)
    title = T.Unicode("").tag(sync=True)
    height = T.Int(420).tag(sync=True)
    selected_id = T.Unicode(None, allow_none=True).tag(sync=True)
    shown_id = T.Unicode(None, allow_none=True).tag(sync=True)
    draw_ms = T.Float(-1.0).tag(sync=True)
    empty_message = T.Unicode("No entries to draw.").tag(sync=True)
    live = T.Bool(False).tag(sync=True)
    can_follow = T.Bool(False).tag(sync=True)

    def __init__(self, entries=None, *, session_id: SessionIds = None, height: int = 420, **kwargs: Any) -> None:
        super().__init__(height=height, **kwargs)
        self.session_id: str | None = None
        self._rows: pa.Table | None = None
        self._live = Live(None, self._show)
        self.add_class("sessionlab-tree-widget")
        self.observe(lambda change: self._live.set(change["new"]), names="live")
        if entries is not None:
            self.set_session(entries, session_id)

    def set_session(self, entries, session_id: str | None) -> None:
        """Draw another session (``session_id=None``: the table's only session)."""
        from ..tables.labels import session_labels

        if isinstance(entries, Corpus):  # (a corpus can be followed: see live)
            self._live.corpus = entries
            self.can_follow = True
        payload = tree_payload(entries, session_id)
        rows = session_rows(entries, session_id)
        sid = rows["session_id"][0].as_py()
        label = session_labels(rows).get(sid)
        leaves = payload["n"] - len({p for p in payload["parent"] if p >= 0})
        head = label.text if label else sid
        self.session_id = sid
        self._rows = rows
        self.selected_id = None
        self.title = f"{head} — {payload['n']:,} entries, {leaves:,} {'leaf' if leaves == 1 else 'leaves'}"
        self.tree = payload

    def close(self) -> None:
        self._live.stop()  # (a closed widget follows nothing)
        super().close()

    def _show(self, corpus: Corpus) -> None:
        """Draw the same session from a newer corpus (a change while live), keeping the selection."""
        picked = self.selected_id
        self.set_session(corpus, self.session_id)
        if picked in self.tree.get("ids", ()):
            self.selected_id = picked

    def static_html(self) -> str:
        """A picture of the tree (``plot_tree``) for notebooks opened without their kernel."""
        from ._common import esc, png_html

        if self._rows is None or not self.tree.get("n"):
            return ""
        if self.tree["n"] > STATIC_MAX_NODES:
            return f"<p>{esc(self.title)} (interactive tree: run the notebook to see it)</p>"

        def draw(ax: Any) -> None:
            from ..plotting import plot_tree

            plot_tree(self._rows, session_id=self.session_id, ax=ax, title=self.title.split(" — ")[0])

        return png_html(draw, figsize=(9.2, 4))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data: Any = bundle[0] if isinstance(bundle, tuple) else bundle  # (data, metadata) or data
        if isinstance(data, dict):
            static = self.static_html()
            if static:
                data["text/html"] = static
        return bundle
