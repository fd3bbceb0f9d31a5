"""UsageDashboard: usage_by over a date range, grouped by day, model or session, in a time zone."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

import ipywidgets as W
import pyarrow as pa
import pyarrow.compute as pc

from ..tables.corpus import Corpus, SessionIds, select_sessions
from ._common import StaticFallback, arrow_html, esc, note, show_figure, style_widget
from ._live import Live, live_button

__all__ = ["UsageDashboard"]

GROUPS = {"day": "day", "model": "model", "session": "session_id"}  # picker value -> usage_by key


def _zones(tz: str) -> list[str]:
    return list(dict.fromkeys(["UTC", tz, *sorted(z for z in available_timezones() if "/" in z)]))


class UsageDashboard(StaticFallback, W.VBox):
    """Token usage and cost of the calls in a date range, per day, model or session.

    The table is :func:`~sessionlab.usage_by` of the calls whose timestamp falls in the picked days
    (local days in the picked time zone; calls without a timestamp count only while the range
    covers every day); the plot is :func:`sessionlab.plotting.plot_usage` of that table.

    Attributes:
        start, end: DatePickers, the first and last day (inclusive).
        group: Dropdown ``"day"``, ``"model"`` or ``"session"``.
        tz: Combobox of IANA time zones: type to search (``vien`` finds ``Europe/Vienna``); only a
            listed zone is taken.
        metric: ToggleButtons ``"cost_usd"`` or ``"tokens"`` (what the plot shows).
        live: ToggleButton: while on, a change to the session files reloads and redraws the
            dashboard (:meth:`sessionlab.Corpus.follow`; a corpus from ``load()`` only).
        plot: Output with the plot; table: HTML of the usage table (scrolls past 20 rows; sessions
            named by name or first prompt, day and folder); status: HTML (the range shown, or why
            nothing is).
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
        self.tz = W.Combobox(options=_zones(tz), value=tz, description="Time zone", ensure_option=True,
                             placeholder="type to search: Europe/Vienna, America/New_York…")
        self._live = Live(self._corpus, self._show)
        self.live = live_button(self._live)
        self.metric = W.ToggleButtons(options=[("cost", "cost_usd"), ("tokens", "tokens")], value="cost_usd")
        self.plot = W.Output(layout=W.Layout(width="auto", min_width="0", overflow="hidden"))
        self.table = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.status = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self._tz = tz
        self.usage: pa.Table = pa.table({})
        self._full = self._days(tz)
        self.start.value, self.end.value = self._full
        row = W.Layout(flex_flow="row wrap", width="auto", min_width="0")
        kwargs.setdefault("layout", W.Layout(width="auto", max_width="100%", min_width="0"))
        super().__init__(children=[style_widget(), W.HBox([self.start, self.end], layout=row),
                                   W.HBox([self.group, self.tz], layout=row),
                                   W.HBox([self.metric, self.refresh_button, self.live], layout=row),
                                   self.status, self.plot, self.table], **kwargs)
        self.add_class("sessionlab-usage-dashboard")
        self.add_class("sessionlab-root")
        self.refresh_button.on_click(self.reload)
        for name in ("start", "end", "group", "tz", "metric", "plot", "table", "status", "refresh_button"):
            getattr(self, name).add_class(f"sessionlab-{name}")  # for styling and tests
        for w in (self.start, self.end, self.group, self.metric):
            w.observe(self._refresh, names="value")
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
        if self.tz.value not in self.tz.options:  # half-typed text: keep the last zone
            return
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
        """The entries in the picked days (local to the picked zone)."""
        start, end = self.start.value, self.end.value
        if (start, end) == self._full or self.entries.num_rows == 0:
            return self.entries
        zone = ZoneInfo(self._tz)
        ts = self.entries["timestamp"]
        mask = pa.array([True] * self.entries.num_rows)
        if start is not None:
            lo = dt.datetime.combine(start, dt.time(), zone)
            mask = pc.and_(mask, pc.greater_equal(ts, pa.scalar(lo, ts.type)))
        if end is not None:
            hi = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), zone)
            mask = pc.and_(mask, pc.less(ts, pa.scalar(hi, ts.type)))
        return self.entries.filter(pc.fill_null(mask, False))

    def _refresh(self, change: Any = None) -> None:
        from .. import usage_by
        from ..tables.labels import label_column

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
            why = f"No assistant calls from {span}: widen the range (calls span {esc(self._full[0])} to " \
                  f"{esc(self._full[1])})."
        else:
            why = ""
        if why:
            self.status.value = note(why, kind="warn")
            self.table.value = ""
            self.plot.outputs = ()
            return
        calls = sum(usage["calls"].to_pylist())
        self.status.value = f"{span} · {calls:,} calls · {usage.num_rows:,} rows by {esc(self.group.value)}"
        shown = usage
        if key == "session_id":  # people read names, not UUIDs
            shown = usage.add_column(0, "session", label_column(usage, self.labels))
        self.table.value = arrow_html(shown)
        show_figure(self.plot, self._draw, figsize=(9.2, 4.2))

    def _draw(self, ax: Any) -> None:
        from ..plotting import plot_usage

        labels = {sid: label.text for sid, label in self.labels.items()}
        plot_usage(self.usage, by=self.group.value, metric=self.metric.value, ax=ax, labels=labels)
