"""CompactionDiffView: pick a compaction, see what it dropped and what it kept, side by side."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis import compaction_diff
from ..tables.corpus import SessionIds
from ._common import StaticFallback, as_table, esc, first_session, html_table, note, session_options, style_widget

__all__ = ["CompactionDiffView"]

_SHOWN = ["position", "entry_id", "role", "tool_name", "est_tokens"]
_HEADERS = ["#", "entry", "role", "tool", "tokens"]


class CompactionDiffView(StaticFallback, W.VBox):
    """The messages a compaction dropped beside those it kept (:func:`~sessionlab.compaction_diff`).

    The diff is computed once, for the sessions given (and the simulated compactions of
    ``simulation``); picking a session or a compaction only lays out its rows.

    Attributes:
        session: Dropdown of the sessions (name or first prompt · day · folder · id prefix).
        compaction: Dropdown of the session's compactions (kind, id, tokens dropped).
        summary: HTML, the compaction's figures (summary, tokens before and after).
        dropped, kept: HTML tables of its dropped and kept messages (position, entry, role, tool,
            estimated tokens), side by side.
        diff: the :func:`~sessionlab.compaction_diff` table the view shows.

    Example:
        >>> view = CompactionDiffView(load("data/"))  # doctest: +SKIP
        >>> view.compaction.value = view.compaction.options[-1][1]  # doctest: +SKIP
    """

    def __init__(self, entries, *, session_id: SessionIds = None, simulation: Any = None, **kwargs: Any) -> None:
        self.entries: pa.Table = as_table(entries)
        self.diff: pa.Table = compaction_diff(self.entries, session_id=session_id, simulation=simulation)
        options = session_options(self.entries, session_id)
        self.session = W.Dropdown(options=options, description="Session", layout=W.Layout(width="auto"))
        self.compaction = W.Dropdown(options=[], description="Compaction", layout=W.Layout(width="auto"))
        self.summary = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.dropped = W.HTML(layout=W.Layout(width="50%", min_width="0"))
        self.kept = W.HTML(layout=W.Layout(width="50%", min_width="0"))
        if options:
            self.session.value = first_session(session_id) or options[0][1]
        kwargs.setdefault("layout", W.Layout(width="auto", max_width="100%", min_width="0"))
        side = W.HBox([self.dropped, self.kept], layout=W.Layout(width="auto", min_width="0"))
        super().__init__(children=[style_widget(), self.session, self.compaction, self.summary, side], **kwargs)
        self.add_class("sessionlab-compaction-diff")
        self.add_class("sessionlab-root")
        self.session.observe(self._on_session, names="value")
        self.compaction.observe(self._show, names="value")
        self._on_session()

    def _rows(self, column: str, value: str | None) -> pa.Table:
        if value is None:
            return self.diff.slice(0, 0)
        return self.diff.filter(pc.fill_null(pc.equal(self.diff[column], value), False))

    def _on_session(self, *_: Any) -> None:
        rows = self._rows("session_id", self.session.value)
        options = []
        for cid in dict.fromkeys(rows["compaction_id"].to_pylist()):
            one = rows.filter(pc.equal(rows["compaction_id"], cid))
            gone = one.filter(pc.equal(one["status"], "dropped"))
            tokens = pc.sum(gone["est_tokens"]).as_py() or 0
            options.append((f"{one['compaction_kind'][0].as_py()} {cid} · {gone.num_rows} messages, "
                            f"{tokens:,} tokens dropped", cid))
        self.compaction.options = options
        self.compaction.value = options[0][1] if options else None
        self._show()

    def _show(self, *_: Any) -> None:
        cid = self.compaction.value
        if cid is None:
            self.summary.value = note("This session has no compaction" +
                                      (" (recorded or simulated)." if self.session.value else "."))
            self.dropped.value = self.kept.value = ""
            return
        rows = self._rows("session_id", self.session.value)
        one = rows.filter(pc.equal(rows["compaction_id"], cid))
        first = one.slice(0, 1).to_pylist()[0]
        figures = [("summary", first["summary_tokens"]), ("tokens before", first["tokens_before"]),
                   ("tokens after", first["tokens_after"]), ("estimated before", first["est_tokens_before"]),
                   ("estimated after", first["est_tokens_after"])]
        shown = " · ".join(f"{esc(k)} <b>{v:,}</b>" for k, v in figures if v is not None)
        policy = f" (policy {esc(first['policy'])})" if first["policy"] else ""
        self.summary.value = f"<div>{esc(first['compaction_kind'])} <code>{esc(cid)}</code>{policy}: {shown}</div>"
        for status, pane in (("dropped", self.dropped), ("kept", self.kept)):
            part = one.filter(pc.equal(one["status"], status)).select(_SHOWN).to_pydict()
            total = sum(v or 0 for v in part["est_tokens"])
            pane.value = html_table(_SHOWN, zip(*(part[c] for c in _SHOWN)), headers=_HEADERS,
                                    caption=f"{status}: {len(part['entry_id'])} messages, {total:,} tokens")
