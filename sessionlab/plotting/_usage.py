"""Bars of a :func:`~sessionlab.usage_by` table: cost or token buckets per day, model or session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import ArgumentValueError, check_option
from ._common import new_axes, plain, shorten, thousands

__all__ = ["plot_usage", "TOKEN_BUCKETS"]

# (column, legend name, colour), bottom to top
TOKEN_BUCKETS = (
    ("cache_read_tokens", "cache read", "#9ecae1"),
    ("cache_write_tokens", "cache write", "#3182bd"),
    ("input_tokens", "fresh input", "#fd8d3c"),
    ("output_tokens", "output", "#74c476"),
)
_KEYS = {"day": "day", "model": "model", "session": "session_id", "agent": "agent", "project": "project"}
_NONE = "(none)"
OTHER = "other"


def _tick_labels(values: pd.Index, by: str, labels: Mapping[str, str] | None = None) -> list[str]:
    out = _key_labels(values, by, labels)
    if len(values) and str(values[-1]).startswith(f"{OTHER} ("):  # the bar of the rest (see _top)
        out[-1] = plain(values[-1])
    return out


def _key_labels(values: pd.Index, by: str, labels: Mapping[str, str] | None = None) -> list[str]:
    if by == "day":
        return [_NONE if pd.isna(v) else pd.Timestamp(v).strftime("%Y-%m-%d") for v in values]
    if by == "session":
        if labels:
            return [shorten(labels.get(v, v), 40) for v in values]
        return [plain(v if v == _NONE else str(v)[:8]) for v in values]
    return [shorten(v, 40) for v in values]


def plot_usage(
    usage_table,
    *,
    by: Literal["day", "model", "session", "agent", "project"] = "day",
    metric: Literal["cost_usd", "tokens"] = "cost_usd",
    ax=None,
    labels: Mapping[str, str] | None = None,
    top: int | None = None,
):
    """Bars of spend per day, model or session from a :func:`~sessionlab.usage_by` table.

    With ``metric="tokens"`` each bar stacks the token buckets (cache read, cache write, fresh
    input, output); with ``metric="cost_usd"`` it stacks the cost per model when the table has a
    ``model`` column besides ``by`` (``usage_by(t, by=["day", "model"])``), else one plain bar.
    Rows of the table with the same ``by`` value are summed.

    ``by="day"`` draws on a time axis: a bar stands at its date and days without calls are gaps
    (rows without a day are left out and counted in a note). Other groupings draw one bar per value;
    with ``top=N`` only the N biggest (by ``metric``) get their own bar, biggest first, and the
    rest are summed into one bar ``"other (k)"``.

    Args:
        usage_table: A table from :func:`~sessionlab.usage_by` (Arrow or pandas) with a column for
            ``by`` (``session`` reads ``session_id``).
        by: ``"day"``, ``"model"``, ``"session"`` (labelled by the first 8 characters of the id),
            ``"agent"`` or ``"project"``.
        metric: ``"cost_usd"`` or ``"tokens"``.
        ax: Axes to draw on; default a new figure.
        labels: With ``by="session"``, the text shown for each session id (e.g. the
            ``session_labels`` of the widgets: name or first prompt, day, folder); ids missing
            from it keep their first 8 characters. Labels are cut at 40 characters.
        top: With a grouping other than ``"day"``, the number of bars of their own (at least 1);
            default every value.

    Returns:
        The matplotlib ``Axes``; one ``BarContainer`` per stacked layer in ``ax.containers``
        (labelled with the bucket or model).

    Example:
        >>> from sessionlab import entries_table, usage_by
        >>> u = usage_by(entries_table("data/"), by=["day", "model"])  # doctest: +SKIP
        >>> ax = plot_usage(u, by="day", metric="cost_usd")  # doctest: +SKIP
    """
    check_option("by", by, _KEYS)
    check_option("metric", metric, ("cost_usd", "tokens"))
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise ArgumentValueError("top", f"top must be a whole number of bars, at least 1, not {top!r}")
    df = usage_table.to_pandas() if isinstance(usage_table, pa.Table) else pd.DataFrame(usage_table).copy()
    key = _KEYS[by]
    if key not in df.columns:
        raise ArgumentValueError("usage_table",
                                 f"the usage table has no {key!r} column; make it with usage_by(..., by={key!r})")
    index, layers = _layers(df, key, metric)
    if by == "day":
        return _draw_days(new_axes(ax, (9.0, 4.5)), index, layers, metric)
    index, layers = _top(index, layers, top)
    n = len(index)
    ax = new_axes(ax, (max(6.0, min(16.0, 2.5 + 0.45 * n)), 4.5))
    pos = np.arange(n)
    top_of_bars = _stack(ax, pos, layers, 0.8)
    ticks = _tick_labels(index, by, labels if by == "session" else None)
    step = max(1, int(np.ceil(n / 40)))  # at most ~40 labels
    ax.set_xticks(pos[::step], ticks[::step], rotation=30 if by == "session" else 40, ha="right",
                  rotation_mode="anchor", fontsize=9)
    ax.set_xlim(-0.6, n - 0.4)
    _finish(ax, by, metric, top_of_bars, len(layers))
    return ax


def _stack(ax, pos, layers, width) -> float:
    """Draw the stacked layers at ``pos``; the height of the highest stack."""
    bottom = np.zeros(len(pos))
    for values, name, colour in layers:  # one container per layer
        values = np.nan_to_num(values)
        ax.bar(pos, values, bottom=bottom, label=name, color=colour, width=width)
        bottom += values
    return float(bottom.max(initial=0))


def _top(index: pd.Index, layers, top: int | None):
    """The ``top`` biggest bars, biggest first, and the rest summed into ``other (k)``."""
    if top is None or len(index) <= top:
        return index, layers
    total = np.sum([np.nan_to_num(v) for v, _, _ in layers], axis=0)
    order = np.argsort(-total, kind="stable")
    keep, rest = order[:top], order[top:]
    new_index = pd.Index([*index[keep], f"{OTHER} ({len(rest):,})"], dtype=object)
    new_layers = [(np.append(np.nan_to_num(v)[keep], np.nan_to_num(v)[rest].sum()), name, colour)
                  for v, name, colour in layers]
    return new_index, new_layers


def _draw_days(ax, index: pd.Index, layers, metric: str):
    """Bars at their dates on a time axis: a day without calls is a gap, not a neighbour."""
    import matplotlib.dates as mdates

    days = pd.to_datetime(pd.Series(index, dtype=object), errors="coerce")
    known = days.notna().to_numpy()
    pos = mdates.date2num(days[known].dt.to_pydatetime()) if known.any() else np.array([])
    layers = [(np.asarray(v)[known], name, colour) for v, name, colour in layers]
    top = _stack(ax, pos, layers, 0.8)
    if len(pos):
        span = max(pos.max() - pos.min(), 1.0)
        ax.set_xlim(pos.min() - max(1.0, 0.02 * span), pos.max() + max(1.0, 0.02 * span))
    if len(pos):  # fixed ticks (whole days, at most ~10) so their labels keep their style
        lo, hi = ax.get_xlim()
        found = mdates.AutoDateLocator(minticks=3, maxticks=10).tick_values(mdates.num2date(lo), mdates.num2date(hi))
        ticks = [t for t in found if lo <= t <= hi]
        ax.set_xticks(ticks, [mdates.num2date(t).strftime("%Y-%m-%d") for t in ticks], rotation=40, ha="right",
                      rotation_mode="anchor", fontsize=9)
    if not known.all():
        ax.annotate(f"{int((~known).sum()):,} bar(s) without a day not shown", (0.99, 0.98),
                    xycoords="axes fraction", ha="right", va="top", fontsize=9)
    _finish(ax, "day", metric, top, len(layers))
    return ax


def _layers(df: pd.DataFrame, key: str, metric: str) -> tuple[pd.Index, list[tuple[np.ndarray, str, str]]]:
    """The bars' positions (the ``key`` values, sorted) and their stacked layers, bottom first:
    ``(values, legend name, colour)`` per token bucket, per model (the biggest spender at the
    bottom) or one for the cost."""
    if key != "day":
        df[key] = df[key].astype(object).where(df[key].notna(), _NONE)
    if metric == "tokens":
        cols = [c for c, _, _ in TOKEN_BUCKETS]
        wide = df.groupby(key, sort=True, dropna=False)[cols].sum()
        return wide.index, [(wide[c].to_numpy(float), name, colour) for c, name, colour in TOKEN_BUCKETS]
    if "model" in df.columns and key != "model":
        model = df["model"].astype(object).where(df["model"].notna(), _NONE)
        wide = df.assign(model=model).pivot_table(index=key, columns="model", values="cost_usd", aggfunc="sum",
                                                  fill_value=0.0, sort=True, dropna=False)
        wide = wide[wide.sum().sort_values(ascending=False).index]
        cmap = [f"C{i % 10}" for i in range(len(wide.columns))]
        return wide.index, [(wide[m].to_numpy(float), plain(m), cmap[i]) for i, m in enumerate(wide.columns)]
    wide = df.groupby(key, sort=True, dropna=False)[["cost_usd"]].sum()
    return wide.index, [(wide["cost_usd"].to_numpy(float), "cost", "C0")]


def _finish(ax, by: str, metric: str, top: float, n_layers: int) -> None:
    """Limits, labels, title, grid and legend."""
    # stacked bars make their bottoms sticky: set the top margin explicitly
    ax.set_ylim(0, max(top, 1e-9) * 1.06)
    thousands(ax.yaxis, decimals=2 if metric == "cost_usd" and top < 100 else 0)
    ax.set_ylabel("cost (USD)" if metric == "cost_usd" else "tokens")
    ax.set_xlabel(by)
    what = "Cost" if metric == "cost_usd" else "Tokens"
    ax.set_title(f"{what} per {by}")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    if n_layers > 1:
        ax.legend(fontsize=9, title="model" if metric == "cost_usd" else None, title_fontsize=9)
