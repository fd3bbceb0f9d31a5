"""Shared pieces of the widgets: escaping, HTML tables, figures in Output widgets, session pickers."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as W
import pyarrow as pa

from ..tables.corpus import select_sessions
from ..tables.forest import as_table

__all__ = ["as_table", "esc", "Raw", "expandable", "html_table", "arrow_html", "show_figure", "session_options",
           "session_rows",
           "session_table", "first_session", "note", "png_html", "style_widget", "STYLE", "StaticFallback",
           "FIGURE_DPI", "FIGURE_WIDTH_PX", "TABLE_HEIGHT"]

FIGURE_DPI = 144  # the PNG's pixels per inch: crisp on high-density screens
FIGURE_WIDTH_PX = 920  # CSS width a full-width figure is shown at (fits a 1,000 px notebook)
TABLE_HEIGHT = "20em"  # tables taller than this scroll inside their box
_NUM = "text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums;padding:1px 6px"
_TXT = "text-align:left;padding:1px 6px"
_TF = ("position:sticky;bottom:0;background:var(--jp-layout-color1,#fff);font-weight:600;"
       "border-top:1px solid var(--jp-border-color1,#bbb)")
_TH = ("position:sticky;top:0;z-index:1;background:var(--jp-layout-color1,#fff);vertical-align:bottom;"
       "border-bottom:1px solid var(--jp-border-color1,#bbb);font-weight:600;padding:2px 6px")


# flex items grow to their content's width unless told otherwise: keep HTML views inside the widget
STYLE = ("<style>.sessionlab-root .widget-html, .sessionlab-root .widget-html-content {min-width:0;max-width:100%}"
         ".sessionlab-root .widget-html-content {white-space:normal;overflow-wrap:anywhere;line-height:1.45}"
         ".sessionlab-root .sessionlab-scroll td, .sessionlab-root .sessionlab-scroll th {overflow-wrap:normal}"
         ".sessionlab-root .sessionlab-scroll td.text {min-width:12em;overflow-wrap:anywhere}"
         ".sessionlab-root .sessionlab-scroll th {hyphens:manual}"
         ".sessionlab-root .sessionlab-invalid input {border-color:#b00020;outline:1px solid #b00020}"
         # a figure in a narrow cell scrolls sideways rather than shrinking its text below ~9 px
         ".sessionlab-compaction-lab .sessionlab-plot img {min-width:600px}"
         # after a click in a SessionTree, until the kernel has the new context: never the old one
         ".sessionlab-loading .sessionlab-summary > *, .sessionlab-loading .sessionlab-context,"
         " .sessionlab-loading .sessionlab-branch {visibility:hidden}"
         ".sessionlab-loading .sessionlab-summary::before {content:'Loading the context of the clicked entry…';"
         "color:var(--jp-ui-font-color2,#555)}</style>")


def style_widget() -> W.HTML:
    """An invisible HTML widget carrying :data:`STYLE` (put one in each widget's children)."""
    return W.HTML(STYLE, layout=W.Layout(display="none"))


def esc(value: Any) -> str:
    """``value`` as text safe inside HTML: ``html.escape`` (quotes too), and ``$`` as an entity so
    that no math typesetter picks up ``$...$`` in session text. ``None`` is an empty string."""
    if value is None:
        return ""
    return html.escape(str(value), quote=True).replace("$", "&#36;")


class Raw(str):
    """A table cell that is already HTML (its session text escaped by whoever made it)."""


def expandable(text: str, limit: int, *, most: int = 20_000) -> str:
    """``text`` as a cell: whole when short, else its first ``limit`` characters that open to the
    whole text (up to ``most`` characters) on a click (``<details>``, no script). Escaped."""
    if len(text) <= limit:
        return text
    rest = f" … ({len(text) - most:,} more characters)" if len(text) > most else ""
    return Raw(f'<details class="sessionlab-more"><summary style="cursor:pointer">{esc(text[: limit - 1])}…'
               f'</summary><div style="white-space:pre-wrap">{esc(text[:most])}{esc(rest)}</div></details>')


def is_cost(column: str) -> bool:
    """Whether a column holds US dollars (``cost_usd``, ``recorded_cost_usd``...)."""
    return column.endswith("_usd") or column == "cost"


def fmt_cell(column: str, value: Any) -> tuple[str, bool]:
    """(escaped text, is a number) of a cell: dollars as ``$1,234.56`` (``<$0.01`` for a positive
    amount below a cent), integers with thousands separators, other floats with two decimals."""
    if isinstance(value, Raw):
        return str(value), False
    if isinstance(value, bool) or value is None:
        return esc(value), False
    if isinstance(value, (int, float)) and is_cost(column):
        if value != value:  # NaN
            return "", True
        if 0 < abs(value) < 0.005:
            return "&lt;&#36;0.01", True
        return ("-" if value < 0 else "") + f"&#36;{abs(value):,.2f}", True
    if isinstance(value, int):
        return f"{value:,}", True
    if isinstance(value, float):
        return ("" if value != value else f"{value:,.2f}"), True
    return esc(value), False


def header_text(column: str) -> str:
    """A column name as a header: ``cost_usd`` -> ``cost (USD)``, ``_tokens`` -> `` tokens``."""
    if column.endswith("_usd"):
        column = column[:-4] + " (USD)"
    return column.replace("_", " ")


def html_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str | None = None,
               headers: Sequence[str] | None = None, max_height: str | None = TABLE_HEIGHT,
               footer: Sequence[Any] | None = None) -> str:
    """An HTML table in a box that scrolls (both ways) past ``max_height`` and the widget's width.

    Every header and cell is escaped; numbers are right-aligned with thousands separators, and
    dollar columns (``*_usd``) read ``$1,234.56``. ``headers`` replaces the shown column names.
    ``footer`` is one more row (a totals row) that stays at the bottom of the scrolling box.
    """
    shown = list(headers) if headers is not None else [header_text(c) for c in columns]
    body = []
    aligned = [False] * len(columns)
    for row in rows:
        cells = []
        for i, (c, v) in enumerate(zip(columns, row)):
            text, num = fmt_cell(c, v)
            aligned[i] = aligned[i] or num
            cells.append(f'<td style="{_NUM if num else _TXT}">{text}</td>' if num or len(text) < 40 else
                         f'<td class="text" style="{_TXT}">{text}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f'<th style="{_TH};text-align:{"right" if a else "left"}">{esc(h)}</th>'
                   for h, a in zip(shown, aligned))
    cap = (f'<caption style="text-align:left;caption-side:top;padding:2px 0">{esc(caption)}</caption>'
           if caption else "")
    table = (f'<table class="sessionlab-table" style="border-collapse:collapse;font-size:13px">{cap}'
             f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    foot = ""
    if footer is not None:
        cells = "".join(f'<td style="{_NUM if num else _TXT};{_TF}">{text}</td>'
                        for text, num in (fmt_cell(c, v) for c, v in zip(columns, footer)))
        foot = f'<tfoot><tr class="sessionlab-total">{cells}</tr></tfoot>'
        table = table.replace("</tbody></table>", f"</tbody>{foot}</table>")
    limit = f"max-height:{max_height};" if max_height else ""
    return f'<div class="sessionlab-scroll" style="{limit}max-width:100%;overflow:auto">{table}</div>'


def arrow_html(table: pa.Table, *, caption: str | None = None, headers: Sequence[str] | None = None,
               max_height: str | None = TABLE_HEIGHT, footer: Sequence[Any] | None = None) -> str:
    """:func:`html_table` of every row and column of an Arrow table."""
    cols = table.column_names
    data = table.to_pydict()
    return html_table(cols, zip(*(data[c] for c in cols)) if cols else [], caption=caption, headers=headers,
                      max_height=max_height, footer=footer)


def note(text: str, *, kind: str = "info") -> str:
    """A one-line message (already escaped HTML) for an empty or clamped case."""
    colour = {"info": "var(--jp-ui-font-color2,#555)", "warn": "#a15c00"}[kind]
    return f'<div class="sessionlab-note" style="color:{colour};padding:4px 0">{text}</div>'


def show_figure(out: W.Output, draw: Callable[[Any], Any], *, figsize: tuple[float, float] = (9.2, 4),
                width_px: int | None = None) -> None:
    """Draw with ``draw(ax)`` on a fresh figure and show it as a PNG in ``out``.

    The figure is a plain ``matplotlib.figure.Figure`` (no pyplot state, no backend needed) and its
    PNG is set as ``out.outputs`` directly, so this works with or without a running kernel. The
    PNG has :data:`FIGURE_DPI` pixels per inch and is shown ``width_px`` CSS pixels wide (100 per
    inch of ``figsize``: 10-point text reads at about 14 px), shrinking to fit narrower notebooks.
    ``draw`` may return a string instead of drawing: that message is shown instead of a figure (an
    empty case). An error while drawing is shown as text instead of the figure.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=FIGURE_DPI, layout="constrained")
    ax = fig.add_subplot()
    try:
        message = draw(ax)
        if isinstance(message, str):
            out.outputs = ({"output_type": "display_data", "metadata": {},
                            "data": {"text/html": note(esc(message)), "text/plain": message}},)
            return
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=FIGURE_DPI, pad_inches=0.15)
    except Exception as e:  # shown to the user; a widget callback has nowhere else to report
        out.outputs = ({"output_type": "stream", "name": "stderr",
                        "text": f"could not draw: {type(e).__name__}: {e}\n"},)
        return
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    width = width_px or round(figsize[0] * 100)
    out.outputs = ({"output_type": "display_data", "metadata": {"image/png": {"width": width}},
                    "data": {"image/png": png, "text/plain": "<Figure>"}},)


def _static(widget: Any) -> str:
    """Static HTML of a widget tree's current state: texts, control values, figures."""
    if "sessionlab-live-only" in getattr(widget, "_dom_classes", ()):  # e.g. download links
        return ""
    own = getattr(widget, "static_html", None)
    if callable(own):
        return own()
    if isinstance(widget, (W.HTML, W.HTMLMath)):
        return f"<div>{widget.value}</div>"
    if isinstance(widget, W.Output):
        parts = []
        for o in widget.outputs:
            data = o.get("data", {})
            if "image/png" in data:
                width = o.get("metadata", {}).get("image/png", {}).get("width", FIGURE_WIDTH_PX)
                parts.append(f'<img style="max-width:100%" width="{int(width)}" '
                             f'src="data:image/png;base64,{data["image/png"]}">')
            elif "text/html" in data:
                parts.append(data["text/html"])
        return "".join(parts)
    if isinstance(widget, W.Tab):
        return "".join(f"<h4>{esc(widget.get_title(i))}</h4>{_static(c)}" for i, c in enumerate(widget.children))
    if isinstance(widget, W.Box):
        inner = "".join(_static(c) for c in widget.children)
        return f'<div style="display:flex;flex-wrap:wrap;gap:4px 16px">{inner}</div>' \
            if isinstance(widget, W.HBox) else f"<div>{inner}</div>"
    if isinstance(widget, W.ValueWidget) and getattr(widget, "description", None) is not None:
        value = widget.value
        if isinstance(widget, (W.Dropdown, W.SelectionSlider, W.ToggleButtons)):
            value = widget.label
        elif isinstance(value, int) and not isinstance(value, bool):
            value = f"{value:,}"
        return f"<div><b>{esc(widget.description or '')}</b> {esc(value)}</div>"
    return ""


def png_html(draw: Callable[[Any], Any], *, figsize: tuple[float, float]) -> str:
    """An ``<img>`` of what ``draw(ax)`` draws (the same figure settings as :func:`show_figure`)."""
    out = W.Output()
    show_figure(out, draw, figsize=figsize)
    return _static(out)


class StaticFallback:
    """Mixin: the widget's mime bundle also carries a static HTML picture of its current state.

    A live notebook shows the widget; a notebook opened without its kernel, a notebook viewer or
    an exported page shows the picture (text/html) instead of ``Widget(children=...)``.
    """

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(bundle, dict):
            bundle["text/html"] = (f'<div class="sessionlab-static" style="max-width:{FIGURE_WIDTH_PX + 40}px">'
                                   f"{_static(self)}</div>")
        return bundle


def session_rows(table: pa.Table) -> list[dict[str, Any]]:
    """One dict per session of an entries table, in table order: session_id, file, name.

    ``name`` is the session's name as the facts module gives it (pi 1.6's ``getSessionName``).
    """
    from ..tables import file_facts

    names = dict(zip(*(file_facts(table)[c].to_pylist() for c in ("file", "name"))))
    ids = table["session_id"].to_pylist()
    files = table["file"].to_pylist()
    order: dict[str, dict[str, Any]] = {}
    for sid, f in zip(ids, files):  # first file of every session id, in table order
        if sid is not None and sid not in order:
            order[sid] = {"session_id": sid, "file": f, "name": names.get(f)}
    return list(order.values())


def session_options(table: pa.Table, session_id: Any = None) -> list[tuple[str, str]]:
    """(label, session_id) for a Dropdown, in table order: ``name or first prompt · day · folder ·
    id prefix`` (see :func:`sessionlab.tables.labels.session_labels`); only the sessions
    ``session_id`` names when it is a list (one id, or None: every session).

    Dropdown labels are plain text in the browser (never HTML), so they are not escaped.
    """
    from ..tables.labels import session_labels

    only = set(session_id) if session_id is not None and not isinstance(session_id, str) else None
    return [(label.text, sid) for sid, label in session_labels(table).items() if only is None or sid in only]


def first_session(session_id: Any) -> str | None:
    """The session a picker starts at: ``session_id`` itself, or the first of a list."""
    if session_id is None or isinstance(session_id, str):
        return session_id
    ids = list(session_id)
    return ids[0] if ids else None


def session_table(table: pa.Table, session_id: str) -> pa.Table:
    """The rows of one session (none when it is not in the table: a picker shows an empty view)."""
    return select_sessions(table, session_id)
