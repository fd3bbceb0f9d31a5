"""Plots of the insight tables: compaction diff, estimate accuracy, cache misses, tools, subagents.

Each takes the table its analysis returns (Arrow or pandas), draws on ``ax`` (or a new figure) and
returns the ``Axes``. Session text (tool names, ids, models) is drawn literally (``plain``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import check_option
from ._common import new_axes, plain, shorten, thousands

__all__ = ["plot_compaction_diff", "plot_estimate_accuracy", "plot_cache_misses", "plot_tool_stats",
           "plot_subagent_costs"]

_ROLES = (("toolResult", "tool results", "#fd8d3c"), ("assistant", "assistant", "#3182bd"),
          ("user", "user", "#74c476"), (None, "other", "#bdbdbd"))


def _df(table) -> pd.DataFrame:
    return table.to_pandas() if isinstance(table, pa.Table) else table


def plot_compaction_diff(diff, *, ax=None, max_compactions: int = 30):
    """One bar per compaction: the tokens it dropped (by role), kept, and its summary.

    Args:
        diff: a :func:`~sessionlab.compaction_diff` table.
        ax: Axes to draw on; default a new figure.
        max_compactions: draw at most this many (the first ones of the table).
    """
    d = _df(diff)
    ids = list(dict.fromkeys(d["compaction_id"]))[:max_compactions]
    ax = new_axes(ax, (8, 0.35 * max(len(ids), 3) + 1.2))
    if not ids:
        ax.set_title("no compaction")
        return ax
    d = d[d["compaction_id"].isin(ids)]
    y = np.arange(len(ids))
    left = np.zeros(len(ids))
    known = [r for r, _, _ in _ROLES if r]
    dropped = d[d["status"] == "dropped"]
    for role, name, colour in _ROLES:
        part = dropped[dropped["role"].isin(known) == (role is not None)]
        if role is not None:
            part = part[part["role"] == role]
        v = part.groupby("compaction_id")["est_tokens"].sum().reindex(ids, fill_value=0).to_numpy(float)
        ax.barh(y, v, left=left, color=colour, label=f"dropped: {name}")
        left += v
    kept = d[d["status"] == "kept"].groupby("compaction_id")["est_tokens"].sum().reindex(ids, fill_value=0)
    ax.barh(y, kept.to_numpy(float), left=left, color="#d9d9d9", hatch="//", label="kept")
    left += kept.to_numpy(float)
    summary = d.groupby("compaction_id")["summary_tokens"].first().reindex(ids).fillna(0).to_numpy(float)
    ax.barh(y, summary, left=left, color="#756bb1", label="summary")
    ax.set_yticks(y, [shorten(i, 24) for i in ids])
    ax.invert_yaxis()
    ax.set_xlabel("estimated tokens")
    thousands(ax.xaxis)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("What each compaction dropped and kept")
    return ax


def plot_estimate_accuracy(accuracy, *, ax=None):
    """Recorded prompt against pi's estimate and the calibrated one, per call (held-out calls ringed).

    Args:
        accuracy: an :func:`~sessionlab.estimate_accuracy` table.
        ax: Axes to draw on; default a new figure.
    """
    a = _df(accuracy)
    ax = new_axes(ax, (6, 5))
    rec = a["recorded_tokens"].to_numpy(float)
    ax.scatter(rec, a["estimated_tokens"].to_numpy(float), s=8, alpha=0.5, color="#fd8d3c", label="pi's estimate")
    ax.scatter(rec, a["calibrated_tokens"].to_numpy(float), s=8, alpha=0.5, color="#3182bd", label="calibrated")
    held = a["held_out"].fillna(False).to_numpy(bool)
    if held.any():
        ax.scatter(rec[held], a["calibrated_tokens"].to_numpy(float)[held], s=30, facecolors="none",
                   edgecolors="#08519c", linewidths=0.6, label="calibrated, held out")
    top = float(np.nanmax(rec)) if len(rec) else 1.0
    ax.plot([0, top], [0, top], color="black", linewidth=0.8, label="exact")
    ax.set_xlabel("recorded prompt tokens")
    ax.set_ylabel("estimated tokens")
    thousands(ax.xaxis)
    thousands(ax.yaxis)
    ax.legend(fontsize="small")
    ax.set_title("Token estimate vs recorded prompt")
    return ax


def plot_cache_misses(misses, *, ax=None):
    """Cost of the cache misses by cause (with the number of misses on each bar).

    Args:
        misses: a :func:`~sessionlab.cache_misses` table.
        ax: Axes to draw on; default a new figure.
    """
    m = _df(misses)
    ax = new_axes(ax, (7, 3.5))
    g = m.groupby("cause").agg(cost=("cost_usd", "sum"), n=("at_id", "size")).sort_values("cost")
    y = np.arange(len(g))
    ax.barh(y, g["cost"].to_numpy(float), color="#e6550d")
    for i, (cost, n) in enumerate(zip(g["cost"], g["n"])):
        ax.text(float(cost), i, f" {n} misses", va="center", fontsize="small")
    ax.set_yticks(y, [plain(c) for c in g.index])
    ax.set_xlabel("cost of rewriting the cache, USD")
    ax.set_title("Why the cache missed" if len(g) else "no cache miss")
    return ax


def plot_tool_stats(stats, *, metric: str = "cost_usd", top: int = 15, ax=None):
    """Bars of one :func:`~sessionlab.tool_stats` column per tool (the ``top`` largest).

    Args:
        stats: a :func:`~sessionlab.tool_stats` table (rows with the same tool are summed).
        metric: the column to draw (``cost_usd``, ``context_tokens``, ``calls``, ``failures``...).
        top: how many tools.
        ax: Axes to draw on; default a new figure.
    """
    s = _df(stats)
    check_option("metric", metric, [c for c in s.columns if c != "tool_name"])
    g = s.groupby("tool_name")[metric].sum().sort_values(ascending=False).head(top)[::-1]
    ax = new_axes(ax, (7, 0.3 * max(len(g), 3) + 1.2))
    y = np.arange(len(g))
    ax.barh(y, g.to_numpy(float), color="#31a354")
    ax.set_yticks(y, [shorten(t, 30) for t in g.index])
    ax.set_xlabel(plain(metric))
    thousands(ax.xaxis, decimals=2 if metric.endswith("usd") or metric.endswith("share") else 0)
    ax.set_title(f"Tools by {plain(metric)}")
    return ax


def plot_subagent_costs(costs, *, top: int = 15, ax=None):
    """Own and subagent spend of the sessions that spawned subagents (the ``top`` costliest).

    Args:
        costs: a :func:`~sessionlab.subagent_costs` table (``by="session"``).
        top: how many sessions.
        ax: Axes to draw on; default a new figure.
    """
    c = _df(costs)
    c = c[c["runs"] > 0].sort_values("cost_usd", ascending=False).head(top)[::-1]
    ax = new_axes(ax, (7, 0.35 * max(len(c), 3) + 1.2))
    y = np.arange(len(c))
    own = c["own_cost_usd"].to_numpy(float)
    ax.barh(y, own, color="#9ecae1", label="own calls")
    ax.barh(y, c["subagent_cost_usd"].to_numpy(float), left=own, color="#756bb1", label="subagents")
    ax.set_yticks(y, [plain(str(s)[:8]) for s in c["session_id"]])
    ax.set_xlabel("USD")
    ax.legend(fontsize="small")
    ax.set_title("Subagent spend per spawning session" if len(c) else "no subagent")
    return ax
