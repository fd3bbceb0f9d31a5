"""BranchExplorer: a session's tree, its leaves and fork points, and the branch and context at one."""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as W
import networkx as nx
import pyarrow as pa
import pyarrow.compute as pc

from ..tables.corpus import Corpus, SessionIds, labels_of
from ._common import (
    StaticFallback,
    as_table,
    esc,
    expandable,
    first_session,
    html_table,
    note,
    session_options,
    session_rows,
    session_table,
    show_figure,
    style_widget,
)
from ._live import Live, live_button

__all__ = ["BranchExplorer"]

TEXT_CHARS = 160  # message text shown per context row


def _message_text(d: dict[str, Any]) -> str:
    """The readable text of a message dict (pi's shape), blocks joined by spaces."""
    content = d.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "text":
                parts.append(str(b.get("text", "")))
            elif kind == "thinking":
                parts.append(f"[thinking] {b.get('thinking', '')}")
            elif kind == "toolCall":
                parts.append(f"[{b.get('name', 'tool')}] {json.dumps(b.get('arguments'), ensure_ascii=False)}")
            elif kind == "image":
                parts.append("[image]")
            else:
                parts.append(f"[{kind}]")
    if d.get("summary"):
        parts.append(str(d["summary"]))
    if d.get("command"):
        parts.append(f"$ {d['command']} {d.get('output', '')}")
    return " ".join(" ".join(parts).split())


def _short(text: str, words: int = 8, chars: int = 60) -> str:
    """The first words of a text, cut at ``chars`` (an ellipsis marks a cut)."""
    head = " ".join(text.split()[:words])
    if len(head) > chars:
        head = head[: chars - 1]
    return head + ("…" if head != text else "")


def _when(ts: Any) -> str:
    return ts.strftime("%Y-%m-%d %H:%M") if ts is not None else ""


def entry_option(kind: str, eid: str, node: dict[str, Any], text: str, label: str | None, current: bool) -> str:
    """A picker option: ``kind id · role · time · “first words”``, then ``[label]`` and ``(current)``.

    Dropdown options are plain text in the browser (never HTML), so they are not escaped."""
    what = node.get("role") or node.get("type") or ""
    parts = [f"{kind} {eid}", what, _when(node.get("timestamp"))]
    if text:
        parts.append(f"“{_short(text)}”")
    elif node.get("tool_name"):
        parts.append(f"→ {node['tool_name']}")
    return " · ".join(p for p in parts if p) + (f" [{label}]" if label else "") + (" (current)" if current else "")


class BranchExplorer(StaticFallback, W.VBox):
    """Pick a session and one of its leaves, fork points or labelled entries; see the tree, the
    branch and the context there.

    Attributes (the controls and views, for tests and notebooks):
        session: Dropdown of sessions (name or first prompt · day · folder · id prefix), value the
            session id.
        entry: Dropdown of the session's leaves, fork points and labelled entries (each shown with
            its role, time, first words and label), value the entry id; starts at pi's leaf. The
            tree highlights the branch to the entry picked.
        header: HTML: session name, id, file, counts.
        tree: Output with :func:`sessionlab.plotting.plot_tree`.
        summary: HTML: the :func:`~sessionlab.contexts` row of the picked entry.
        context: HTML table of the context's messages (role, estimated tokens, text; a long text
            opens whole on a click), in a box that scrolls past 20 lines.
        branch: HTML table of the branch root -> entry (id, type, role, estimated tokens, a call's
            context tokens, label), scrolling the same way.
        session_tree: the :class:`~sessionlab.widgets.SessionTree` given, if any: it draws the
            session, and a click on one of its entries picks that entry here.
        context_row: the ``contexts`` row (a dict) shown; messages: the context's message dicts.
        live: ToggleButton: while on, a change to the session files reloads the corpus and redraws
            the picked session at its (new) current leaf (a corpus from ``load()`` only).

    Session names and labels come from the corpus (or, for an entries table, from its
    ``session_info`` and ``label`` rows); only the messages of the context shown are read from the
    session file, which holds their text.

    Example:
        >>> ex = BranchExplorer(load("data/"))  # doctest: +SKIP
        >>> ex.entry.value = ex.entry.options[0][1]  # doctest: +SKIP
    """

    def __init__(self, entries, *, session_id: SessionIds = None, session_tree: Any = None,
                 **kwargs: Any) -> None:
        self.entries: pa.Table = as_table(entries)
        corpus = entries if isinstance(entries, Corpus) else None
        self._labels: pa.Table = corpus.labels if corpus is not None else labels_of(self.entries)
        if corpus is not None:
            self._names = dict(zip(corpus.sessions["session_id"].to_pylist(), corpus.sessions["name"].to_pylist()))
        else:
            self._names = {s["session_id"]: s["name"] for s in session_rows(self.entries)}
        self._label: dict[str, str] = {}
        self._session_id = session_id
        self._live = Live(corpus, self._show)
        self.live = live_button(self._live)
        options = session_options(self.entries, session_id)
        wide = W.Layout(width="auto", min_width="0")
        self.session = W.Dropdown(options=options, description="Session", layout=W.Layout(width="auto"))
        self.entry = W.Dropdown(options=[], description="Entry", layout=W.Layout(width="auto"))
        self.header = W.HTML(layout=wide)
        self.tree = W.Output(layout=W.Layout(width="auto", min_width="0", overflow="hidden"))
        self.summary = W.HTML(layout=wide)
        self.context = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.branch = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.session_tree = session_tree
        self.tabs = W.Tab(children=[self.context, self.branch])
        self.tabs.set_title(0, "Context")
        self.tabs.set_title(1, "Branch")
        self.context_row: dict[str, Any] | None = None
        self.messages: list[dict[str, Any]] = []
        self.graph: nx.DiGraph | None = None
        self._rows: pa.Table | None = None
        self._facts: dict[str, dict[str, Any]] = {}
        self._drawn_at: str | None = None
        self.tabs.layout = W.Layout(width="auto", min_width="0")
        view = session_tree if session_tree is not None else self.tree
        kwargs.setdefault("layout", W.Layout(width="auto", max_width="100%", min_width="0"))
        super().__init__(children=[style_widget(), self.session, self.entry, self.live, self.header, view,
                                   self.summary, self.tabs], **kwargs)
        self.add_class("sessionlab-branch-explorer")
        self.add_class("sessionlab-root")
        for name in ("session", "entry", "header", "tree", "summary", "context", "branch"):
            getattr(self, name).add_class(f"sessionlab-{name}")  # for styling and tests
        if session_tree is not None:
            session_tree.observe(self._on_tree_pick, names="selected_id")
        self.session.observe(self._on_session, names="value")
        self.entry.observe(self._on_entry, names="value")
        if not options:
            self.header.value = note("No sessions: the entries table is empty.")
        if options:
            wanted = first_session(session_id) or options[0][1]
            if self.session.value == wanted:
                self._on_session()
            else:
                self.session.value = wanted

    def close(self) -> None:
        self._live.stop()  # (a closed widget follows nothing)
        super().close()

    def _show(self, corpus: Corpus) -> None:
        """Show a newer corpus of the same source (a change while live): the same session, at its
        current leaf."""
        self.entries = as_table(corpus)
        self._labels = corpus.labels
        self._names = dict(zip(corpus.sessions["session_id"].to_pylist(), corpus.sessions["name"].to_pylist()))
        options = session_options(self.entries, self._session_id)
        sid = self.session.value
        self.session.unobserve(self._on_session, names="value")
        try:
            self.session.options = options
            if options:
                self.session.value = sid if sid in [v for _, v in options] else options[0][1]
        finally:
            self.session.observe(self._on_session, names="value")
        self._on_session()

    # -- session -----------------------------------------------------------------------------
    @staticmethod
    def _entry_facts(rows: pa.Table) -> dict[str, dict[str, Any]]:
        """Per entry id (its last row): type, role, time, tool, and the tokens the table records."""
        cols = ("entry_id", "type", "role", "timestamp", "tool_name", "est_tokens", "context_tokens")
        data = rows.select([c for c in cols if c in rows.column_names]).to_pylist()
        return {d["entry_id"]: d for d in data if d.get("entry_id")}

    def _on_session(self, change: Any = None) -> None:
        from .. import fork_points, leaves, session_tree
        from ..tables.labels import entry_previews

        sid = self.session.value
        if sid is None:
            return
        self._rows = rows = session_table(self.entries, sid)
        g = self.graph = session_tree(rows, session_id=sid)
        path = rows["file"][0].as_py()
        name = self._names.get(sid)
        lab = self._labels.filter(pc.fill_null(pc.equal(self._labels["file"], path), False))
        self._label = dict(zip(lab["target_id"].to_pylist(), lab["label"].to_pylist()))
        current = g.graph.get("leaf_id")
        lv, forks = leaves(g), fork_points(g)
        labels = {eid: self._label.get(eid) for eid in g.nodes}
        labelled = [eid for eid, label in labels.items() if label]
        picks = list(dict.fromkeys([*lv, *forks, *labelled, *([current] if current in g else [])]))
        self._facts = self._entry_facts(rows)
        texts = entry_previews(rows, picks)
        opts = [(entry_option("leaf" if eid in lv else ("fork" if eid in forks else "entry"), eid,
                              self._facts.get(eid, {}), texts.get(eid, ""), labels[eid], eid == current), eid)
                for eid in picks]
        self.header.value = (
            f"<b>{esc(name) if name else '(unnamed session)'}</b> · <code>{esc(sid)}</code><br>"
            f"<small>{esc(path)}</small><br>{len(g):,} entries · {len(lv):,} leaves · {len(forks):,} fork points")
        self._drawn_at = None  # the tree is drawn at the entry picked below (see _highlight)
        if self.session_tree is not None:
            self.session_tree.set_session(rows, sid)
        self.entry.unobserve(self._on_entry, names="value")
        try:  # new options, then pi's leaf: one refresh, not one per step
            self.entry.options = opts
            if current in g:
                self.entry.value = current
        finally:
            self.entry.observe(self._on_entry, names="value")
        self._on_entry()

    def _tree_size(self, rows: pa.Table) -> tuple[float, float]:
        """Full width; taller for deeper trees, within a screen's height."""
        from ..plotting import tree_layout

        y = tree_layout(rows, session_id=self.session.value)["y"]
        depth = float(pc.max(y).as_py() or 0) if rows.num_rows else 0.0
        return (9.2, float(min(max(3.2, 2.0 + 0.012 * depth), 6.0)))

    def _draw_tree(self, ax: Any) -> None:
        from ..plotting import plot_tree
        from ..tables.labels import session_labels

        label = session_labels(self._rows).get(self.session.value)
        plot_tree(self._rows, session_id=self.session.value, ax=ax, leaf_id=self.entry.value,
                  title=f"{label.title} · {label.day}" if label and label.day else None)

    def _on_tree_pick(self, change: Any) -> None:
        """A click in the SessionTree: show that entry's context (added to the picker if new)."""
        eid = change["new"]
        if not eid or self.graph is None or eid not in self.graph:
            if eid and self.session_tree is not None:  # nothing to show for it: no "loading" left behind
                self.session_tree.shown_id = eid
            return
        if eid not in [v for _, v in self.entry.options]:
            from ..tables.labels import entry_previews

            text = entry_previews(self._rows, [eid]).get(eid, "") if self._rows is not None else ""
            option = entry_option("entry", eid, self._facts.get(eid, {}), text, self._label.get(eid), False)
            self.entry.unobserve(self._on_entry, names="value")
            try:  # new options keep the old value: no context of the old entry in between
                self.entry.options = [*self.entry.options, (option, eid)]
            finally:
                self.entry.observe(self._on_entry, names="value")
        self.entry.value = eid

    # -- entry -------------------------------------------------------------------------------
    def _on_entry(self, change: Any = None) -> None:
        from .. import context_messages, contexts, current_branch, estimate_tokens, message_to_dict

        eid = self.entry.value
        if eid is None or self._rows is None or self.graph is None:
            self.context_row, self.messages = None, []
            self.summary.value = self.context.value = self.branch.value = ""
            if self._rows is not None and self.session_tree is None:  # no entry to pick: the tree as it is
                show_figure(self.tree, self._draw_tree, figsize=self._tree_size(self._rows))
            return
        sid = self.session.value
        g = self.graph
        row = contexts(self._rows, at=[eid]).to_pylist()
        self.context_row = row[0] if row else None
        msgs = context_messages(self._rows, eid, session_id=sid)
        self.messages = [message_to_dict(m) for m in msgs]
        c = self.context_row or {}
        self.summary.value = (
            f"<b>Context at <code>{esc(eid)}</code></b>: {c.get('message_count', 0):,} messages · "
            f"{c.get('context_tokens', 0):,} tokens (pi's estimate) · thinking {esc(c.get('thinking_level'))} · "
            f"model {esc(c.get('provider'))}/{esc(c.get('model'))}"
            + (f" · after compaction <code>{esc(c['compaction_id'])}</code>" if c.get("compaction_id") else ""))
        if not msgs:
            self.context.value = note(f"No messages in the context at <code>{esc(eid)}</code>: the branch up to "
                                      "it holds no message (a header-only start, or only settings entries).")
        else:
            self.context.value = html_table(
                ["#", "role", "est_tokens", "text"],
                ([i, d.get("role"), estimate_tokens(m), expandable(_message_text(d), TEXT_CHARS)]
                 for i, (m, d) in enumerate(zip(msgs, self.messages))),
                headers=["#", "role", "est. tokens", "text"])
        ids = current_branch(g, eid)
        facts = self._facts
        self.branch.value = html_table(
            ["#", "entry", "type", "role", "est_tokens", "context_tokens", "label"],
            ([i, x, g.nodes[x].get("type"), g.nodes[x].get("role"), facts.get(x, {}).get("est_tokens"),
              facts.get(x, {}).get("context_tokens"), self._label.get(x)] for i, x in enumerate(ids)),
            headers=["#", "entry", "type", "role", "est. tokens", "context tokens (calls)", "label"])
        self._highlight(eid)

    def _highlight(self, eid: str) -> None:
        """Move the tree's highlight to the branch of the picked entry."""
        if self.session_tree is not None:
            if self.session_tree.selected_id != eid:
                self.session_tree.selected_id = eid
            self.session_tree.shown_id = eid  # the browser drops its "loading" state
        elif eid != self._drawn_at:
            self._drawn_at = eid
            show_figure(self.tree, self._draw_tree, figsize=self._tree_size(self._rows))
