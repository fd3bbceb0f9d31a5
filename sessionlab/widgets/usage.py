"""UsageDashboard: usage_by over a date range, grouped by day, model, session, agent or project, in a time zone."""

from __future__ import annotations

import base64
import datetime as dt
import io
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

import ipywidgets as W
import pyarrow as pa
import pyarrow.compute as pc

from ..tables.corpus import Corpus, SessionIds, select_sessions
from ._common import StaticFallback, arrow_html, esc, note, show_figure, style_widget
from ._live import Live, live_button

__all__ = ["UsageDashboard"]

GROUPS = {"day": "day", "model": "model", "session": "session_id", "agent": "agent",
          "project": "project"}  # picker value -> usage_by key
TOP = 12  # bars of their own in the plot (the rest is one "other" bar), unless grouped by day
_ALL = ""  # the filters' "every agent" / "every project" value


def _zones(tz: str) -> list[str]:
    return list(dict.fromkeys(["UTC", tz, *sorted(z for z in available_timezones() if "/" in z)]))


class UsageDashboard(StaticFallback, W.VBox):
    """Token usage and cost of the calls in a date range, per day, model, session, agent or project.

    The table is :func:`~sessionlab.usage_by` of the calls whose timestamp falls in the picked days
    (local days in the picked time zone; calls without a timestamp count only while the range
    covers every day); the plot is :func:`sessionlab.plotting.plot_usage` of that table.

    Attributes:
        start, end: DatePickers, the first and last day (inclusive).
        group: Dropdown ``"day"``, ``"model"``, ``"session"``, ``"agent"`` or ``"project"``.
        tz: Combobox of IANA time zones: type to search (``vien`` finds ``Europe/Vienna``); only a
            listed zone is taken, other text is shown as an error in ``tz_error`` (an HTML).
        agent, project: Dropdowns that keep the sessions of one agent or one project folder
            (value ``""``: all).
        metric: ToggleButtons ``"cost_usd"`` or ``"tokens"`` (what the plot shows).
        live: ToggleButton: while on, a change to the session files reloads and redraws the
            dashboard (:meth:`sessionlab.Corpus.follow`; a corpus from ``load()`` only).
        top: the number of bars of their own when not grouped by day; the rest is one ``other``
            bar (the table keeps every row).
        sort, descending: the table's order (a column of the table) and direction.
        plot: Output with the plot (days on a time axis, days without calls as gaps); table: HTML
            of the usage table (scrolls past 20 rows, a totals row at the bottom; sessions named by
            name or first prompt, day and folder); status: HTML (the range shown, or why nothing
            is); downloads: HTML with links to the table as CSV and the figure as PNG (see
            :meth:`to_csv` and :meth:`save_figure`).
        usage: the ``usage_by`` table shown; entries: the entries table (of the sessions
            ``session_id`` names, when given: one id or a list).

    Example:
        >>> d = UsageDashboard(load("data/"), tz="Europe/Vienna")  # doctest: +SKIP
        >>> d.group.value = "model"  # doctest: +SKIP
    """

    def __init__(self, entries, *, session_id: SessionIds = None, tz: str = "UTC", group: str = "day",
                 **kwargs: Any) -> None:
        from ..tables.labels import session_labels

        self.entries: pa.Table = select_sessions(entries, session_id)
        self.labels = session_labels(self.entries)
        self._corpus = entries if isinstance(entries, Corpus) else None
        self._session_id = session_id
        self.refresh_button = W.Button(description="Refresh", icon="refresh", disabled=self._corpus is None,
                                       tooltip="load the sessions again: new sessions and new calls appear"
                                       if self._corpus is not None else "only a corpus from load() can refresh")
        self.start = W.DatePicker(description="From")
        self.end = W.DatePicker(description="To")
        self.group = W.Dropdown(options=list(GROUPS), value=group, description="Group by")
        self.tz = W.Combobox(options=_zones(tz), value=tz, description="Time zone", continuous_update=False,
                             placeholder="type to search: Europe/Vienna, America/New_York…")
        self._live = Live(self._corpus, self._show)
        self.live = live_button(self._live)
        self.metric = W.ToggleButtons(options=[("cost", "cost_usd"), ("tokens", "tokens")], value="cost_usd")
        self.plot = W.Output(layout=W.Layout(width="auto", min_width="0", overflow="hidden"))
        self.table = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.status = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self._tz = tz
        self._face_controls(group)
        self.usage: pa.Table = pa.table({})
        self._full = self._days(tz)
        self.start.value, self.end.value = self._full
        row = W.Layout(flex_flow="row wrap", width="auto", min_width="0")
        kwargs.setdefault("layout", W.Layout(width="auto", max_width="100%", min_width="0"))
        super().__init__(children=[style_widget(), W.HBox([self.start, self.end], layout=row),
                                   W.HBox([self.group, self.tz, self.tz_error], layout=row),
                                   W.HBox([self.agent, self.project], layout=row),
                                   W.HBox([self.metric, self.top, self.refresh_button, self.live], layout=row),
                                   self.status, self.plot,
                                   W.HBox([self.sort, self.descending, self.downloads], layout=row),
                                   self.table], **kwargs)
        self.add_class("sessionlab-usage-dashboard")
        self.add_class("sessionlab-root")
        self.refresh_button.on_click(self.reload)
        for name in ("start", "end", "group", "tz", "metric", "plot", "table", "status", "refresh_button",
                     "tz_error", "agent", "project", "top", "sort", "descending", "downloads"):
            getattr(self, name).add_class(f"sessionlab-{name}")  # for styling and tests
        for w in (self.start, self.end, self.metric, self.agent, self.project):
            w.observe(self._refresh, names="value")
        self.group.observe(self._on_group, names="value")
        self.top.observe(self._redraw, names="value")
        for w in (self.sort, self.descending):
            w.observe(self._show_table, names="value")
        self.tz.observe(self._on_tz, names="value")
        self._refresh()

    def reload(self, _button: Any = None) -> None:
        """Load the corpus again (:meth:`sessionlab.Corpus.refresh`: through the cache, only what
        changed is read) and show it; a range that covered every day grows with the new days."""
        if self._corpus is not None:
            self._show(self._corpus.refresh())

    def _show(self, corpus: Corpus) -> None:
        """Show a newer corpus of the same source (a reload, or a change while live)."""
        from ..tables.labels import session_labels

        self._corpus = corpus
        self.entries = select_sessions(self._corpus, self._session_id)
        self.labels = session_labels(self.entries)
        self._filter_options()
        was_full = (self.start.value, self.end.value) == self._full
        self._full = self._days(self._tz)
        if was_full:
            for w in (self.start, self.end):
                w.unobserve(self._refresh, names="value")
            try:
                self.start.value, self.end.value = self._full
            finally:
                for w in (self.start, self.end):
                    w.observe(self._refresh, names="value")
        self._refresh()
        c = self._corpus.changes
        if c is not None:
            self.status.value += note(f"Reloaded: {len(c.added)} new, {len(c.appended)} grown, "
                                      f"{len(c.rewritten)} rewritten, {len(c.removed)} removed, "
                                      f"{len(c.unchanged)} unchanged files.")

    def close(self) -> None:
        self._live.stop()  # (a closed widget follows nothing)
        super().close()

    def _days(self, tz: str) -> tuple[dt.date | None, dt.date | None]:
        """First and last day with a call, in ``tz``."""
        from .. import usage_by

        days = usage_by(self.entries, by="day", tz=tz)["day"].drop_null().to_pylist()
        return (min(days), max(days)) if days else (None, None)

    def _on_tz(self, change: Any) -> None:
        if self.tz.value not in self.tz.options:  # unknown or half-typed: say so on the field, keep the zone
            typed = self.tz.value.strip()
            self.tz_error.value = (f'<span role="alert" style="color:#b00020">Unknown time zone “{esc(typed)}”: '
                                   f"still showing {esc(self._tz)}; pick one from the list.</span>"
                                   if typed else "")
            (self.tz.add_class if typed else self.tz.remove_class)("sessionlab-invalid")
            return
        self.tz_error.value = ""
        self.tz.remove_class("sessionlab-invalid")
        self._tz = self.tz.value
        was_full = (self.start.value, self.end.value) == self._full
        self._full = self._days(self.tz.value)
        if was_full:  # the whole range stays the whole range in the new zone
            self.start.unobserve(self._refresh, names="value")
            self.end.unobserve(self._refresh, names="value")
            try:
                self.start.value, self.end.value = self._full
            finally:
                self.start.observe(self._refresh, names="value")
                self.end.observe(self._refresh, names="value")
        self._refresh()

    def _selected(self) -> pa.Table:
        """The entries of the picked agent and project in the picked days (local to the picked zone)."""
        start, end = self.start.value, self.end.value
        entries = self._filtered()
        if (start, end) == self._full or entries.num_rows == 0:
            return entries
        zone = ZoneInfo(self._tz)
        ts = entries["timestamp"]
        mask = pa.array([True] * entries.num_rows)
        if start is not None:
            lo = dt.datetime.combine(start, dt.time(), zone)
            mask = pc.and_(mask, pc.greater_equal(ts, pa.scalar(lo, ts.type)))
        if end is not None:
            hi = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), zone)
            mask = pc.and_(mask, pc.less(ts, pa.scalar(hi, ts.type)))
        return entries.filter(pc.fill_null(mask, False))

    def _refresh(self, change: Any = None) -> None:
        from .. import usage_by

        key = GROUPS[self.group.value]
        tz = self._tz
        start, end = self.start.value, self.end.value
        self.usage = usage = usage_by(self._selected(), by=key, tz=tz)
        span = f"{esc(start)} to {esc(end)} ({esc(tz)})"
        if self.entries.num_rows == 0:
            why = "No sessions: the entries table is empty."
        elif start is not None and end is not None and start > end:
            why = f"Nothing to show: the range starts ({esc(start)}) after it ends ({esc(end)})."
        elif usage.num_rows == 0 or not sum(usage["calls"].to_pylist()):
            why = f"No assistant calls from {span}{self._filter_text()}: widen the range " \
                  f"{'or the filters ' if self._filter_text() else ''}(calls span {esc(self._full[0])} to " \
                  f"{esc(self._full[1])})."
        else:
            why = ""
        self._empty = bool(why)
        if why:
            self.status.value = note(why, kind="warn")
            self.table.value = self.downloads.value = ""
            self.plot.outputs = ()
            self._png = None
            return
        calls = sum(usage["calls"].to_pylist())
        self.status.value = f"{span}{self._filter_text()} · {calls:,} calls · {usage.num_rows:,} rows by " \
                            f"{esc(self.group.value)}"
        self._show_table()
        self._redraw()

    def _draw(self, ax: Any) -> None:
        from ..plotting import plot_usage

        labels = {sid: label.text for sid, label in self.labels.items()}
        top = None if self.group.value == "day" else self.top.value
        plot_usage(self.usage, by=self.group.value, metric=self.metric.value, ax=ax, labels=labels, top=top)

    # -- filters, sorting, totals and downloads ---------------------------------------------------

    def _face_controls(self, group: str) -> None:
        """The controls beyond range, grouping and zone: filters, plot size, table order, downloads."""
        self.tz_error = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.agent = W.Dropdown(description="Agent", options=[("all agents", _ALL)], value=_ALL)
        self.project = W.Dropdown(description="Project", options=[("all projects", _ALL)], value=_ALL)
        self._filter_options()
        self.top = W.BoundedIntText(value=TOP, min=1, max=200, description="Top",
                                    tooltip="bars of their own; the rest is one 'other' bar (not by day)",
                                    layout=W.Layout(width="10em"))
        self.sort = W.Dropdown(description="Sort by", layout=W.Layout(width="16em"))
        self.descending = W.ToggleButton(description="descending", icon="sort-amount-desc",
                                         tooltip="largest first", layout=W.Layout(width="auto"))
        self._sort_options(group)
        self.downloads = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.downloads.add_class("sessionlab-live-only")  # data links: not part of the static picture
        self._png: bytes | None = None
        self._empty = True

    def _filter_options(self) -> None:
        """The agents and the project folders of the entries, as filter options (a gone one resets)."""
        agents = sorted({a for a in (self.entries["agent"].to_pylist() if "agent" in self.entries.column_names
                                     else ["pi"] * bool(self.entries.num_rows)) if a})
        self._by_agent = {a: [] for a in agents}
        if "agent" in self.entries.column_names:
            for sid, a in dict(zip(self.entries["session_id"].to_pylist(),
                                   self.entries["agent"].to_pylist())).items():
                if a:
                    self._by_agent[a].append(sid)
        else:
            self._by_agent = {a: list(self.labels) for a in agents}
        self._by_project: dict[str, list[str]] = {}
        for sid, label in self.labels.items():
            if label.cwd:
                self._by_project.setdefault(label.cwd, []).append(sid)
        for w, all_label, values in ((self.agent, "all agents", agents), (self.project, "all projects",
                                                                          sorted(self._by_project))):
            keep = w.value if w.value in values else _ALL
            w.options = [(all_label, _ALL)] + [(v, v) for v in values]
            w.value = keep

    def _filtered(self) -> pa.Table:
        """The entries of the sessions of the picked agent and project."""
        ids = None
        for value, index in ((self.agent.value, self._by_agent), (self.project.value, self._by_project)):
            if value != _ALL:
                chosen = set(index.get(value, ()))
                ids = chosen if ids is None else ids & chosen
        return self.entries if ids is None else select_sessions(self.entries, sorted(ids))

    def _filter_text(self) -> str:
        parts = [f"agent {esc(self.agent.value)}" if self.agent.value != _ALL else "",
                 f"project {esc(self.project.value)}" if self.project.value != _ALL else ""]
        return "".join(f" · {p}" for p in parts if p)

    def _sort_options(self, group: str) -> None:
        """Sort choices for a grouping: its key (sessions by their label), then the numbers; days
        start in date order, the other groupings biggest cost first."""
        from ..analysis.usage import USAGE_COLUMNS

        key = "session" if group == "session" else GROUPS[group]
        self.sort.options = [key] + [c.name for c in USAGE_COLUMNS]
        self.sort.value = key if group == "day" else "cost_usd"
        self.descending.value = group != "day"

    def _on_group(self, change: Any) -> None:
        for w in (self.sort, self.descending):
            w.unobserve(self._show_table, names="value")
        try:
            self._sort_options(self.group.value)
        finally:
            for w in (self.sort, self.descending):
                w.observe(self._show_table, names="value")
        self._refresh()

    def shown_table(self) -> pa.Table:
        """The usage table as the widget shows it: sessions labelled, in the picked order."""
        from ..tables.labels import label_column

        shown = self.usage
        if GROUPS[self.group.value] == "session_id" and shown.num_rows:  # people read names, not UUIDs
            shown = shown.add_column(0, "session", label_column(shown, self.labels))
        if self.sort.value in shown.column_names and shown.num_rows:
            shown = shown.sort_by([(self.sort.value, "descending" if self.descending.value else "ascending")])
        return shown

    def _totals(self, shown: pa.Table) -> list[Any]:
        """The totals row: the sum of each number column of the usage_by table, "total" first."""
        from ..analysis.usage import USAGE_COLUMNS

        sums = {c.name for c in USAGE_COLUMNS}
        return [pc.sum(shown[c]).as_py() if c in sums else ("total" if i == 0 else None)
                for i, c in enumerate(shown.column_names)]

    def _show_table(self, change: Any = None) -> None:
        if self._empty:
            return
        shown = self.shown_table()
        self.table.value = arrow_html(shown, footer=self._totals(shown))
        self._links()

    def _redraw(self, change: Any = None) -> None:
        if self._empty:
            return
        show_figure(self.plot, self._draw, figsize=(9.2, 4.2))
        png = next((o["data"]["image/png"] for o in self.plot.outputs if "image/png" in o.get("data", {})), None)
        self._png = base64.b64decode(png) if png else None
        self._links()

    def _name(self) -> str:
        return f"usage-by-{self.group.value}"

    def _links(self) -> None:
        """Download links (data URLs) for the table as CSV and the figure as PNG."""
        style = "margin-right:12px"
        links = []
        if self.usage.num_rows:
            csv = base64.b64encode(self.to_csv().encode("utf-8")).decode("ascii")
            links.append(f'<a class="sessionlab-csv" style="{style}" download="{self._name()}.csv" '
                         f'href="data:text/csv;charset=utf-8;base64,{csv}">⤓ table as CSV</a>')
        if self._png:
            png = base64.b64encode(self._png).decode("ascii")
            links.append(f'<a class="sessionlab-png" style="{style}" download="{self._name()}.png" '
                         f'href="data:image/png;base64,{png}">⤓ figure as PNG</a>')
        self.downloads.value = "".join(links)

    def to_csv(self, path: str | Path | None = None) -> str:
        """The shown table (:meth:`shown_table`) as CSV text; written to ``path`` too when given."""
        import pyarrow.csv as pacsv

        buf = io.BytesIO()
        pacsv.write_csv(self.shown_table(), buf)
        text = buf.getvalue().decode("utf-8")
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def save_figure(self, path: str | Path) -> Path:
        """Write the figure shown (a PNG) to ``path``; :class:`~sessionlab.errors.OptionError` when
        there is none (an empty range)."""
        from ..errors import OptionError

        if not self._png:
            raise OptionError("no figure is shown: the range has no calls", "path")
        Path(path).write_bytes(self._png)
        return Path(path)
