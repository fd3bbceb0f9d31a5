"""UsageDashboard: usage_by over a date range, grouped by day, model or session, in a time zone."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

import ipywidgets as W
import pyarrow as pa
import pyarrow.compute as pc

from ..tables.corpus import SessionIds, select_sessions
from ._common import arrow_html, esc, show_figure

__all__ = ["UsageDashboard"]

GROUPS = {"day": "day", "model": "model", "session": "session_id"}  # picker value -> usage_by key


def _zones(tz: str) -> list[str]:
    return list(dict.fromkeys(["UTC", tz, *sorted(available_timezones())]))


class UsageDashboard(W.VBox):
    """Token usage and cost of the calls in a date range, per day, model or session.

    The table is :func:`~sessionlab.usage_by` of the calls whose timestamp falls in the picked days
    (local days in the picked time zone; calls without a timestamp count only while the range
    covers every day); the plot is :func:`sessionlab.plotting.plot_usage` of that table.

    Attributes:
        start, end: DatePickers, the first and last day (inclusive).
        group: Dropdown ``"day"``, ``"model"`` or ``"session"``.
        tz: Dropdown of IANA time zones.
        metric: ToggleButtons ``"cost_usd"`` or ``"tokens"`` (what the plot shows).
        plot: Output with the plot; table: HTML of the usage table; status: HTML (the range shown).
        usage: the ``usage_by`` table shown; entries: the entries table (of the sessions
            ``session_id`` names, when given: one id or a list).

    Example:
        >>> d = UsageDashboard(load("data/"), tz="Europe/Vienna")  # doctest: +SKIP
        >>> d.group.value = "model"  # doctest: +SKIP
    """

    def __init__(self, entries, *, session_id: SessionIds = None, tz: str = "UTC", group: str = "day",
                 **kwargs: Any) -> None:
        self.entries: pa.Table = select_sessions(entries, session_id)
        self.start = W.DatePicker(description="From")
        self.end = W.DatePicker(description="To")
        self.group = W.Dropdown(options=list(GROUPS), value=group, description="Group by")
        self.tz = W.Dropdown(options=_zones(tz), value=tz, description="Time zone")
        self.metric = W.ToggleButtons(options=[("cost", "cost_usd"), ("tokens", "tokens")], value="cost_usd")
        self.plot = W.Output()
        self.table = W.HTML()
        self.status = W.HTML()
        self.usage: pa.Table = pa.table({})
        self._full = self._days(tz)
        self.start.value, self.end.value = self._full
        super().__init__(children=[W.HBox([self.start, self.end]), W.HBox([self.group, self.tz]), self.metric,
                                   self.status, self.plot, self.table], **kwargs)
        for w in (self.start, self.end, self.group, self.metric):
            w.observe(self._refresh, names="value")
        self.tz.observe(self._on_tz, names="value")
        self._refresh()

    def _days(self, tz: str) -> tuple[dt.date | None, dt.date | None]:
        """First and last day with a call, in ``tz``."""
        from .. import usage_by

        days = usage_by(self.entries, by="day", tz=tz)["day"].drop_null().to_pylist()
        return (min(days), max(days)) if days else (None, None)

    def _on_tz(self, change: Any) -> None:
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
        zone = ZoneInfo(self.tz.value)
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

        key = GROUPS[self.group.value]
        tz = self.tz.value
        self.usage = usage = usage_by(self._selected(), by=key, tz=tz)
        self.status.value = (f"{esc(self.start.value)} to {esc(self.end.value)} ({esc(tz)}) · "
                             f"{usage.num_rows} rows by {esc(key)}")
        self.table.value = arrow_html(usage)
        show_figure(self.plot, self._draw)

    def _draw(self, ax: Any) -> None:
        from ..plotting import plot_usage

        plot_usage(self.usage, by=self.group.value, metric=self.metric.value, ax=ax)
