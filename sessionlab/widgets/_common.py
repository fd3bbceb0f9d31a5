"""Shared pieces of the widgets: escaping, HTML tables, figures in Output widgets, session pickers."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as W
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis._forest import as_table

__all__ = ["as_table", "esc", "html_table", "arrow_html", "show_figure", "session_options", "session_rows",
           "session_table", "first_session", "FIGURE_DPI"]

FIGURE_DPI = 72


def esc(value: Any) -> str:
    """``value`` as text safe inside HTML: ``html.escape`` (quotes too), and ``$`` as an entity so
    that no math typesetter picks up ``$...$`` in session text. ``None`` is an empty string."""
    if value is None:
        return ""
    return html.escape(str(value), quote=True).replace("$", "&#36;")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return esc(value)


def html_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str | None = None) -> str:
    """An HTML table; every header and cell is escaped (numbers get thousands separators)."""
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (f'<table class="sessionlab-table">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def arrow_html(table: pa.Table, *, caption: str | None = None) -> str:
    """:func:`html_table` of every row and column of an Arrow table."""
    cols = table.column_names
    data = table.to_pydict()
    return html_table(cols, zip(*(data[c] for c in cols)) if cols else [], caption=caption)


def show_figure(out: W.Output, draw: Callable[[Any], Any], *, figsize: tuple[float, float] = (9, 4)) -> None:
    """Draw with ``draw(ax)`` on a fresh figure and show it as a PNG in ``out``.

    The figure is a plain ``matplotlib.figure.Figure`` (no pyplot state, no backend needed) and its
    PNG is set as ``out.outputs`` directly, so this works with or without a running kernel. An
    error while drawing is shown as text instead of the figure.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=FIGURE_DPI)
    ax = fig.add_subplot()
    try:
        draw(ax)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    except Exception as e:  # shown to the user; a widget callback has nowhere else to report
        out.outputs = ({"output_type": "stream", "name": "stderr",
                        "text": f"could not draw: {type(e).__name__}: {e}\n"},)
        return
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {"image/png": png, "text/plain": "<Figure>"}},)


def session_rows(table: pa.Table) -> list[dict[str, Any]]:
    """One dict per session of an entries table, in table order: session_id, file, name.

    ``name`` is pi's session name: the last ``session_info`` entry's non-empty name (or None).
    """
    ids = table["session_id"].to_pylist()
    files = table["file"].to_pylist()
    order: dict[str, dict[str, Any]] = {}
    for sid, f in zip(ids, files):  # first file of every session id, in table order
        if sid is not None and sid not in order:
            order[sid] = {"session_id": sid, "file": f, "name": None}
    named = table.filter(pc.fill_null(pc.and_(pc.equal(table["type"], "session_info"),
                                              pc.greater(pc.utf8_length(table["name"]), 0)), False))
    for sid, name in zip(named["session_id"].to_pylist(), named["name"].to_pylist()):
        if sid in order:
            order[sid]["name"] = name  # later entries win
    return list(order.values())


def session_options(table: pa.Table, session_id: Any = None) -> list[tuple[str, str]]:
    """(label, session_id) for a Dropdown: ``name · id`` for a named session, else the id; only
    the sessions ``session_id`` names when it is a list (one id, or None: every session).

    Dropdown labels are plain text in the browser (never HTML), so they are not escaped.
    """
    only = set(session_id) if session_id is not None and not isinstance(session_id, str) else None
    out = []
    for s in session_rows(table):
        sid = s["session_id"]
        if only is None or sid in only:
            out.append((f"{s['name']} · {sid}" if s["name"] else sid, sid))
    return out


def first_session(session_id: Any) -> str | None:
    """The session a picker starts at: ``session_id`` itself, or the first of a list."""
    if session_id is None or isinstance(session_id, str):
        return session_id
    ids = list(session_id)
    return ids[0] if ids else None


def session_table(table: pa.Table, session_id: str) -> pa.Table:
    """The rows of one session."""
    return table.filter(pc.equal(table["session_id"], session_id))
