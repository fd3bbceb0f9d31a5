"""The context of every call along one branch: recorded usage, compactions, simulated policies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from ..analysis._forest import Forest
from ..analysis.usage import current_branch_mask
from ..compaction.policies import CompactionPolicy
from ..compaction.simulate import fit_prices, simulate_compaction
from ..errors import EntryNotFoundError
from ..tables.corpus import SessionIds
from ._common import new_axes, plain, session_rows, shorten, thousands, to_np

__all__ = ["plot_context_timeline", "BUCKETS"]

# (column, legend name, colour): the recorded usage of a call, bottom to top
BUCKETS = (
    ("cache_read_tokens", "cache read", "#9ecae1"),
    ("cache_write_tokens", "cache write", "#3182bd"),
    ("input_tokens", "fresh input", "#fd8d3c"),
    ("output_tokens", "output", "#74c476"),
)


def _branch_rows(table: pa.Table, f: Forest, leaf_id: str | None) -> np.ndarray:
    """Mask of the rows on the branch: the current one (``None``) or the path from the root to an entry id."""
    n = table.num_rows
    if leaf_id is None:
        return current_branch_mask(table, f)
    leaf = f.lookup(pa.array([leaf_id], pa.string()), np.zeros(1, np.int64))[0]
    if leaf < 0:
        raise EntryNotFoundError(f"entry {leaf_id!r} is not in the session")
    return f.is_ancestor(np.arange(n), np.full(n, leaf)) & ~f.is_leaf_record


def plot_context_timeline(
    entries,
    *,
    session_id: SessionIds = None,
    leaf_id: str | None = None,
    policies: Sequence[CompactionPolicy] | None = None,
    ax=None,
    x: Literal["call", "time"] = "call",
    title: str | None = None,
):
    """Context tokens of every call on a branch, with compactions, branch switches and what-ifs.

    Draws, per assistant call on the branch (root to leaf): its recorded usage stacked by bucket
    (cache read, cache write, fresh input, output); a dashed line at the context window (the
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
    if x not in ("call", "time"):
        raise ValueError(f"x must be 'call' or 'time', not {x!r}")
    table = session_rows(entries, session_id)
    sid = table["session_id"][0].as_py()
    f = Forest.of(table)
    n = table.num_rows
    on = _branch_rows(table, f, leaf_id)
    types = to_np(table["type"], "")
    is_call = (types == "message") & (to_np(table["role"], "") == "assistant") & ~f.cyclic
    calls = np.nonzero(on & is_call)[0]
    calls = calls[np.argsort(f.depth[calls], kind="stable")]
    k = len(calls)
    ts = pd.to_datetime(table["timestamp"].to_pandas()).dt.tz_localize(None).to_numpy()
    pos = np.full(n, -1, np.int64)  # position on the branch of each call row
    pos[calls] = np.arange(k)
    xs = np.arange(k, dtype=float) if x == "call" else ts[calls]

    ax = new_axes(ax, (12, 5))
    stack = [to_np(table[c], 0).astype(np.int64)[calls] for c, _, _ in BUCKETS]
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

    # branch switches: the previous call in file order is not the previous call on the branch
    all_calls = np.nonzero(is_call)[0]
    file_rank = np.full(n, -1, np.int64)
    file_rank[all_calls] = np.arange(len(all_calls))
    switch = np.nonzero(file_rank[calls[1:]] != file_rank[calls[:-1]] + 1)[0] + 1 if k > 1 else np.zeros(0, int)
    if switch.size:
        sx = switch - 0.5 if x == "call" else ts[calls[switch]]
        ax.vlines(sx, 0, 1, transform=ax.get_xaxis_transform(), colors="0.35", linestyles=":", linewidth=1,
                  label="back from another branch", gid="branch_switches")

    # recorded compactions on the branch: after the call before them, tokensBefore -> context left
    comp = np.nonzero(on & (types == "compaction") & ~f.cyclic)[0]
    if comp.size:
        near = f.nearest(is_call & on)
        par = f.parent[comp]
        before_call = np.where(par >= 0, near[np.maximum(par, 0)], -1)
        cx = np.where(before_call >= 0, pos[np.maximum(before_call, 0)], -1) + 0.5
        cx = cx if x == "call" else ts[comp]
        tb = to_np(table["tokens_before"], 0).astype(np.int64)[comp]
        # what it left: the prompt of the next call on the branch with usage (input + cache)
        prompt = stack[0] + stack[1] + stack[2]
        after = np.zeros(len(comp), np.int64)
        if k:
            # the first call with usage at or after each position (k: none)
            next_ok = np.minimum.accumulate(np.where(prompt > 0, np.arange(k), k)[::-1])[::-1]
            j = np.searchsorted(f.depth[calls], f.depth[comp], side="right")
            j = np.where(j < k, next_ok[np.minimum(j, k - 1)], k)
            after = np.where(j < k, prompt[np.minimum(j, k - 1)], 0)
        ax.vlines(cx, after, tb, colors="#d62728", linewidth=2.5, label="recorded compaction",
                  gid="recorded_compactions")
        ax.scatter(cx, tb, marker="v", color="#d62728", zorder=6, label="_nolegend_")
        for xi, b, a in zip(cx, tb, after):  # one note per compaction (a handful per session)
            ax.annotate(f"{b:,} → {a:,}", (xi, b), xytext=(4, 4), textcoords="offset points", fontsize=9,
                        color="#d62728", usetex=False, zorder=7,
                        bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8))

    # the context window and the simulated policies
    policies = list(policies or [])
    windows = [p.context_window for p in policies if p.context_window is not None]
    if windows:
        w = max(windows)
        ax.axhline(w, linestyle="--", color="black", linewidth=1, label=f"context window ({w:,})",
                   gid="context_window")
    if policies and k:
        if leaf_id is None:
            res = simulate_compaction(table, policies, branch="current")
        else:  # the branch's own rows: their last row is the entry, so "current" is that branch
            res = simulate_compaction(table.filter(pa.array(on)), policies, branch="current",
                                      prices=fit_prices(table))
        sim = res.calls.select(["policy_index", "at_id", "context_before", "context_after", "compacted"]).to_pandas()
        ids = pd.Index(table["entry_id"].to_numpy(zero_copy_only=False))
        sim["row"] = ids.get_indexer(sim["at_id"])
        styles = ["-", "--", "-.", ":"]
        colours = ["#000000", "#e7298a", "#7570b3", "#1b9e77", "#d95f02", "#66a61e", "#e6ab02"]
        for i, p in enumerate(policies):  # one line per policy
            s = sim[sim["policy_index"] == i]
            s = s[s["row"] >= 0]
            s = s.assign(p=pos[s["row"].to_numpy()]).sort_values("p")
            s = s[s["p"] >= 0]
            px = s["p"].to_numpy(float) if x == "call" else ts[s["row"].to_numpy()]
            before = s["context_before"].to_numpy(float)
            after = s["context_after"].to_numpy(float)
            done = s["compacted"].to_numpy(bool)
            reps = 1 + done  # a compacted call gets a second point: the drop to context_after
            lx, ly = np.repeat(px, reps), np.repeat(before, reps)
            ly[(np.cumsum(reps) - 1)[done]] = after[done]
            colour = colours[i % len(colours)]
            ax.plot(lx, ly, color=colour, linewidth=1.5, linestyle=styles[i % len(styles)], label=plain(p.name),
                    gid=f"policy:{i}", zorder=4 + 0.01 * (len(policies) - i))
            if done.any():
                ax.scatter(px[done], before[done], marker="o", facecolors="none", edgecolors=colour, s=36,
                           zorder=6, label="_nolegend_", gid=f"policy_compactions:{i}")

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
    return ax
