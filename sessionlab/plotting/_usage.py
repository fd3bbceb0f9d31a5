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
_KEYS = {"day": "day", "model": "model", "session": "session_id"}
_NONE = "(none)"


def _tick_labels(values: pd.Index, by: str, labels: Mapping[str, str] | None = None) -> list[str]:
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
    by: Literal["day", "model", "session"] = "day",
    metric: Literal["cost_usd", "tokens"] = "cost_usd",
    ax=None,
    labels: Mapping[str, str] | None = None,
):
    """Bars of spend per day, model or session from a :func:`~sessionlab.usage_by` table.

    With ``metric="tokens"`` each bar stacks the token buckets (cache read, cache write, fresh
    input, output); with ``metric="cost_usd"`` it stacks the cost per model when the table has a
    ``model`` column besides ``by`` (``usage_by(t, by=["day", "model"])``), else one plain bar.
    Rows of the table with the same ``by`` value are summed.

    Args:
        usage_table: A table from :func:`~sessionlab.usage_by` (Arrow or pandas) with a column for
            ``by`` (``session`` reads ``session_id``).
        by: ``"day"``, ``"model"`` or ``"session"`` (labelled by the first 8 characters of the id).
        metric: ``"cost_usd"`` or ``"tokens"``.
        ax: Axes to draw on; default a new figure.
        labels: With ``by="session"``, the text shown for each session id (e.g. the
            ``session_labels`` of the widgets: name or first prompt, day, folder); ids missing
            from it keep their first 8 characters. Labels are cut at 40 characters.

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
    df = usage_table.to_pandas() if isinstance(usage_table, pa.Table) else pd.DataFrame(usage_table).copy()
    key = _KEYS[by]
    if key not in df.columns:
        raise ArgumentValueError("usage_table",
                                 f"the usage table has no {key!r} column; make it with usage_by(..., by={key!r})")
    index, layers = _layers(df, key, metric)
    n = len(index)
    ax = new_axes(ax, (max(6.0, min(16.0, 2.5 + 0.45 * n)), 4.5))
    pos = np.arange(n)
    bottom = np.zeros(n)
    for values, name, colour in layers:  # one container per layer
        values = np.nan_to_num(values)
        ax.bar(pos, values, bottom=bottom, label=name, color=colour, width=0.8)
        bottom += values
    ticks = _tick_labels(index, by, labels if by == "session" else None)
    step = max(1, int(np.ceil(n / 40)))  # at most ~40 labels
    ax.set_xticks(pos[::step], ticks[::step], rotation=30 if by == "session" else 40, ha="right",
                  rotation_mode="anchor", fontsize=9)
    ax.set_xlim(-0.6, n - 0.4)
    _finish(ax, by, metric, float(bottom.max(initial=0)), len(layers))
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
    ax.set_xlabel({"day": "day", "model": "model", "session": "session"}[by])
    what = "Cost" if metric == "cost_usd" else "Tokens"
    ax.set_title(f"{what} per {by}")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    if n_layers > 1:
        ax.legend(fontsize=9, title="model" if metric == "cost_usd" else None, title_fontsize=9)
