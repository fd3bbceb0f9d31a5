"""A searchable session picker: a search box that narrows a Dropdown of labelled sessions, newest
first, each subagent session right under the session that spawned it and marked as one."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pyarrow as pa

__all__ = ["picker_options", "SessionSearch"]

SUB = "↳ subagent"  # the mark of a subagent session's label


def picker_options(table: pa.Table, session_id: Any = None) -> list[tuple[str, str]]:
    """(label, session_id) per session: top sessions newest first (by the label's day), each followed
    by its subagent sessions, labelled ``↳ subagent (type) · label``; only the sessions
    ``session_id`` names when it is a list. Plain text (Dropdown labels are never HTML)."""
    from ..tables.labels import session_labels

    only = set(session_id) if session_id is not None and not isinstance(session_id, str) else None
    labels = {sid: lab for sid, lab in session_labels(table).items() if only is None or sid in only}
    parent: dict[str, str] = {}
    kind: dict[str, str] = {}
    if "root_session_id" in table.column_names:
        cols = [table[c].to_pylist() for c in ("session_id", "root_session_id")]
        types = table["subagent_type"].to_pylist() if "subagent_type" in table.column_names else [None] * len(cols[0])
        for sid, root, typ in zip(*cols, types):
            if root and root != sid and root in labels:
                parent[sid] = root
                if typ:
                    kind[sid] = typ
    tops = [sid for sid in labels if sid not in parent]
    tops.sort(key=lambda s: labels[s].day or "", reverse=True)  # stable: table order within a day
    out: list[tuple[str, str]] = []
    for top in tops:
        out.append((labels[top].text, top))
        for sid in (s for s in labels if parent.get(s) == top):
            mark = f"{SUB} ({kind[sid]})" if sid in kind else SUB
            out.append((f"{mark} · {labels[sid].text}", sid))
    return out


class SessionSearch(W.Text):
    """A search box for a session Dropdown: typing keeps the options whose label (or id) holds
    every typed word; the session picked stays listed, so typing never switches sessions.

    New options make a Dropdown pick its first one for a moment; ``busy`` is true while the
    picked session is put back, and a view observing the Dropdown ignores the changes then."""

    def __init__(self, dropdown: W.Dropdown, options: list[tuple[str, str]], **kwargs: Any) -> None:
        kwargs.setdefault("placeholder", f"search {len(options):,} sessions: name, prompt, day, folder, id…")
        kwargs.setdefault("description", "Find")
        kwargs.setdefault("layout", W.Layout(width="auto", min_width="0"))
        super().__init__(continuous_update=True, **kwargs)
        self.dropdown = dropdown
        self.all_options = list(options)
        self.busy = False
        self.observe(self._narrow, names="value")

    def matches(self, text: str) -> list[tuple[str, str]]:
        words = text.lower().split()
        return [(label, sid) for label, sid in self.all_options
                if all(w in label.lower() or w in sid.lower() for w in words)]

    def _narrow(self, change: Any = None) -> None:
        found = self.matches(self.value)
        current = self.dropdown.value
        if current is not None and all(sid != current for _, sid in found):
            found = [(label, sid) for label, sid in self.all_options if sid == current] + found
        if found != list(self.dropdown.options):
            self.busy = True
            try:
                self.dropdown.options = found
                if current is not None:
                    self.dropdown.value = current
            finally:
                self.busy = False
        self.description = "Find" if not self.value.strip() else f"{len(self.matches(self.value)):,} found"
