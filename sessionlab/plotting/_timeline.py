"""The context of every call along one branch: recorded usage, compactions, simulated policies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis import branch_calls, branch_mask
from ..compaction import CompactionPolicy, SimulationResult, fit_prices, simulate_compaction
from ..errors import ArgumentValueError, check_option
from ..tables.corpus import SessionIds
from ._common import new_axes, plain, session_rows, shorten, thousands

__all__ = ["plot_context_timeline", "BUCKETS"]

# (column, legend name, colour): the recorded usage of a call, bottom to top
BUCKETS = (
    ("cache_read_tokens", "cache read", "#9ecae1"),
    ("cache_write_tokens", "cache write", "#3182bd"),
    ("input_tokens", "fresh input", "#fd8d3c"),
    ("output_tokens", "output", "#74c476"),
)
_STYLES = ["-", "--", "-.", ":"]
_COLOURS = ["#000000", "#e7298a", "#7570b3", "#1b9e77", "#d95f02", "#66a61e", "#e6ab02"]


def _naive_times(col) -> np.ndarray:
    """Timestamps as naive UTC ``datetime64`` (what matplotlib's date axis takes)."""
    return pd.to_datetime(col.to_pandas()).dt.tz_localize(None).to_numpy()


def _draw_usage(ax, xs: np.ndarray, stack: list[np.ndarray], x: str) -> None:
    """The recorded usage of each call, stacked by bucket (bars for up to 3 calls)."""
    k = len(xs)
    if k > 3:
        ax.stackplot(xs, *stack, labels=[name for _, name, _ in BUCKETS], colors=[c for _, _, c in BUCKETS],
                     alpha=0.85, linewidth=0, step="mid")
    elif k:  # a stack of steps is invisible for one call: stacked bars instead
        bottom = np.zeros(k)
        width = 0.6 if x == "call" else None
        for (_, name, colour), values in zip(BUCKETS, stack):
            ax.bar(xs, values, bottom=bottom, width=width, color=colour, alpha=0.85, label=name)
            bottom = bottom + values
    else:
        ax.text(0.5, 0.5, "no assistant call on this branch", transform=ax.transAxes, ha="center", va="center",
                fontsize=11, color="0.4", gid="empty")


def _draw_compactions(ax, cx, before: np.ndarray, after: np.ndarray) -> None:
    """Each recorded compaction: a bar from tokensBefore down to the context it left, and a note."""
    ax.vlines(cx, after, before, colors="#d62728", linewidth=2.5, label="recorded compaction",
              gid="recorded_compactions")
    ax.scatter(cx, before, marker="v", color="#d62728", zorder=6, label="_nolegend_")
    for xi, b, a in zip(cx, before, after):  # one note per compaction (a handful per session)
        ax.annotate(f"{b:,} → {a:,}", (xi, b), xytext=(4, 4), textcoords="offset points", fontsize=9,
                    color="#d62728", usetex=False, zorder=7,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8))


def _draw_policies(ax, sim: pd.DataFrame, policies: list, calls: pd.DataFrame, x: str) -> None:
    """One line per policy: its simulated context before each call, dropping to what a compaction left."""
    sim = sim.merge(calls[["at_id", "call_index", "time"]], on="at_id", how="inner")
    for i, p in enumerate(policies):
        s = sim[sim["policy_index"] == i].sort_values("call_index", kind="stable")
        px = s["call_index"].to_numpy(float) if x == "call" else s["time"].to_numpy()
        before = s["context_before"].to_numpy(float)
        after = s["context_after"].to_numpy(float)
        done = s["compacted"].to_numpy(bool)
        reps = 1 + done  # a compacted call gets a second point: the drop to context_after
        lx, ly = np.repeat(px, reps), np.repeat(before, reps)
        ly[(np.cumsum(reps) - 1)[done]] = after[done]
        colour = _COLOURS[i % len(_COLOURS)]
        ax.plot(lx, ly, color=colour, linewidth=1.5, linestyle=_STYLES[i % len(_STYLES)], label=plain(p.name),
                gid=f"policy:{i}", zorder=4 + 0.01 * (len(policies) - i))
        if done.any():
            ax.scatter(px[done], before[done], marker="o", facecolors="none", edgecolors=colour, s=36,
                       zorder=6, label="_nolegend_", gid=f"policy_compactions:{i}")


def _simulated(table: pa.Table, policies: list, leaf_id: str | None) -> pd.DataFrame:
    """The simulation's calls on the branch drawn (with ``leaf_id``: that branch's own rows, whose
    last row is the entry, so its "current" branch is that branch)."""
    if leaf_id is None:
        res = simulate_compaction(table, policies, branch="current")
    else:
        on = branch_mask(table, leaf_id=leaf_id)
        res = simulate_compaction(table.filter(pa.array(on)), policies, branch="current", prices=fit_prices(table))
    return res.calls.select(["policy_index", "at_id", "context_before", "context_after", "compacted"]).to_pandas()


def _given(simulation: SimulationResult, table: pa.Table) -> pd.DataFrame:
    """The calls of a given simulation that belong to the session drawn."""
    calls = simulation.calls
    sid = table["session_id"][0].as_py() if table.num_rows else None
    calls = calls.filter(pc.equal(calls["session_id"], sid)) if "session_id" in calls.column_names else calls
    return calls.select(["policy_index", "at_id", "context_before", "context_after", "compacted"]).to_pandas()


def _finish(ax, x: str, k: int, title: str | None, sid: str | None, leaf_id: str | None) -> None:
    """Axis labels, limits, title and legend."""
    ax.set_xlabel("call on the branch" if x == "call" else "time (UTC)")
    ax.set_ylabel("tokens")
    thousands(ax.yaxis)
    ax.set_ylim(bottom=0)
    if x == "call" and k:
        ax.set_xlim(-0.5 if k > 3 else -1.0, k - 0.5 if k > 3 else k)
        if k <= 10:
            ax.set_xticks(np.arange(k))
    elif x == "call":
        ax.set_xlim(0, 1)
        ax.set_xticks([])
    where = "current branch" if leaf_id is None else f"branch to {leaf_id}"
    head = shorten(title, 72) if title else plain(f"Context per call: session {sid[:8] if sid else '?'}, {where}")
    ax.set_title(f"{head} ({k:,} {'call' if k == 1 else 'calls'})", fontsize=11, loc="left")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)


def plot_context_timeline(
    entries,
    *,
    session_id: SessionIds = None,
    leaf_id: str | None = None,
    policies: Sequence[CompactionPolicy] | None = None,
    simulation: SimulationResult | None = None,
    ax=None,
    x: Literal["call", "time"] = "call",
    title: str | None = None,
):
    """Context tokens of every call on a branch, with compactions, branch switches and what-ifs.

    Draws the table of :func:`~sessionlab.branch_calls` (its calls are the ones
    :func:`~sessionlab.usage_by` counts): per call on the branch (root to leaf), its recorded
    usage stacked by bucket (cache read, cache write, fresh input, output); a dashed line at the context window (the
    largest ``context_window`` of ``policies``; none without one); a red bar and note at every
    recorded compaction from ``tokensBefore`` down to the context it left (the prompt of the next
    call on the branch with usage: input plus cache read and write); dotted vertical lines where
    the session came back to this branch from another one (the previous call in the file is not
    the previous call of the branch); and, with ``policies``, the simulated ``context_before`` of
    :func:`~sessionlab.simulate_compaction` for each policy (one line each, dropping to
    ``context_after`` at its compactions, which are marked).

    Args:
        entries: A :class:`~sessionlab.Corpus` or an entries table (Arrow or pandas).
        session_id: The session (or a list holding just it); ``None`` when the table holds one
            session.
        leaf_id: The branch is the path from the root to this entry; ``None``: the current branch
            (root to pi's leaf).
        policies: Compaction policies to simulate on the branch and overlay.
        simulation: A :func:`~sessionlab.simulate_compaction` result of this session's current
            branch to overlay instead of simulating again (its policies are drawn; give either
            this or ``policies``).
        ax: Axes to draw on; default a new figure.
        x: ``"call"``: the call's position on the branch (the simulation's ``call_index``);
            ``"time"``: its timestamp.
        title: Title text instead of ``Context per call: session <id prefix>, <branch>`` (the call
            count is added; drawn literally).

    Returns:
        The matplotlib ``Axes``. Artists carry ``gid``s: ``"context_window"`` (the window line),
        ``"policy:<i>"`` (the line of policy ``i``), ``"recorded_compactions"``,
        ``"branch_switches"``.

    Raises:
        EntryNotFoundError: unknown session or entry id.

    Example:
        >>> from sessionlab import load, PiThresholdPolicy, NeverCompact
        >>> corpus = load("data/pi/before-compaction.jsonl")  # doctest: +SKIP
        >>> ax = plot_context_timeline(corpus, policies=[PiThresholdPolicy(200_000),
        ...                                              NeverCompact(200_000)])  # doctest: +SKIP
    """
    check_option("x", x, ("call", "time"))
    if simulation is not None and (policies is not None or leaf_id is not None):
        raise ArgumentValueError("simulation", "give a simulation of the current branch, or policies, not both "
                                 "(and no leaf_id with a simulation)")
    table = session_rows(entries, session_id)
    rows = branch_calls(table, leaf_id=leaf_id)
    rows = rows.append_column("time", pa.array(_naive_times(rows["timestamp"])))
    df = rows.drop_columns(["timestamp"]).to_pandas()
    calls, comps = df[df["kind"] == "call"], df[df["kind"] == "compaction"]
    k = len(calls)
    xs = calls["call_index"].to_numpy(float) if x == "call" else calls["time"].to_numpy()
    ax = new_axes(ax, (12, 5))
    _draw_usage(ax, xs, [calls[c].to_numpy(np.int64) for c, _, _ in BUCKETS], x)
    switch = np.nonzero(calls["branch_switch"].to_numpy(bool))[0]
    if switch.size:  # the previous call in file order is not the previous call on the branch
        sx = switch - 0.5 if x == "call" else xs[switch]
        ax.vlines(sx, 0, 1, transform=ax.get_xaxis_transform(), colors="0.35", linestyles=":", linewidth=1,
                  label="back from another branch", gid="branch_switches")
    if len(comps):  # after the call before them, tokensBefore -> the context they left
        cx = comps["call_index"].to_numpy(float) - 0.5 if x == "call" else comps["time"].to_numpy()
        _draw_compactions(ax, cx, comps["tokens_before"].to_numpy(np.int64),
                          comps["tokens_after"].fillna(0).to_numpy(np.int64))
    policies = list(simulation.policies if simulation is not None else policies or [])
    windows = [p.context_window for p in policies if p.context_window is not None]
    if windows:
        w = max(windows)
        ax.axhline(w, linestyle="--", color="black", linewidth=1, label=f"context window ({w:,})",
                   gid="context_window")
    if policies and k:
        sim = _simulated(table, policies, leaf_id) if simulation is None else _given(simulation, table)
        _draw_policies(ax, sim, policies, calls, x)
    _finish(ax, x, k, title, table["session_id"][0].as_py(), leaf_id)
    return ax
