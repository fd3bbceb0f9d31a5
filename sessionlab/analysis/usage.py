"""Where the tokens went: usage and cost tables over the entries table.

Every function counts assistant ``message`` entries (the calls) with their recorded usage, over
all branches unless said otherwise, as pi's footer does. The *current branch* of a session is the
path from the root to pi's leaf (the last entry in file order; a seed ``leaf`` record moves it);
a call off that path is on an *abandoned* branch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._forest import Forest, as_table

__all__ = ["usage_by", "branch_costs", "cache_efficiency", "current_branch_mask", "USAGE_GROUPS"]

USAGE_GROUPS = ("session_id", "file", "day", "model", "provider", "api", "branch", "stop_reason", "month", "session",
                "agent")
_SUMS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "context_tokens", "cost_usd",
         "reasoning_tokens")


def _bool(a) -> np.ndarray:
    return np.asarray(pc.fill_null(a, False).to_numpy(zero_copy_only=False), bool)


def _calls_mask(table: pa.Table) -> np.ndarray:
    """Assistant messages that are calls: every one in a pi file; in Claude Code and Codex files the
    ones carrying usage (a response's other streaming lines and replayed copies carry none)."""
    asst = pc.and_(pc.equal(table["type"], "message"), pc.equal(table["role"], "assistant"))
    if "agent" not in table.column_names:
        return _bool(asst)
    counted = pc.or_kleene(pc.is_valid(table["input_tokens"]), pc.fill_null(pc.equal(table["agent"], "pi"), True))
    return _bool(pc.and_(asst, counted))


def current_branch_mask(entries, forest: Forest | None = None) -> np.ndarray:
    """For each row, whether it is on its session's current branch (root to pi's leaf)."""
    table = as_table(entries)
    f = forest or Forest.of(table)
    n = table.num_rows
    if n == 0:
        return np.zeros(0, bool)
    codes = f.file_code
    line = np.asarray(pc.fill_null(table["line_no"], 0).to_numpy(zero_copy_only=False), np.int64)
    order = np.lexsort((np.arange(n), line, codes))
    last = order[np.r_[codes[order][1:] != codes[order][:-1], True]]  # last row of each file
    leaf = last.copy()
    is_rec = f.is_leaf_record[last]
    if is_rec.any():
        target = f.lookup(table["target_id"].take(pa.array(last[is_rec])), last[is_rec])
        leaf[is_rec] = target
    leaf_of_file = np.full(codes.max() + 1, -1, np.int64)
    leaf_of_file[codes[last]] = leaf
    return f.is_ancestor(np.arange(n), leaf_of_file[codes]) & ~f.is_leaf_record


def _day(ts, tz: str) -> pa.ChunkedArray:
    local = pc.cast(ts, pa.timestamp("ms", tz=tz))
    return pc.cast(pc.strftime(local, format="%Y-%m-%d"), pa.date32())


def _month(ts, tz: str) -> pa.ChunkedArray:
    return pc.strftime(pc.cast(ts, pa.timestamp("ms", tz=tz)), format="%Y-%m")


def _date(value, name: str):
    import datetime as _dt

    if value is None or isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value if "-" in value else f"{value[:4]}-{value[4:6]}-{value[6:]}")
        except ValueError:
            pass
    raise ValueError(f"{name} must be a date or 'YYYY-MM-DD' / 'YYYYMMDD', not {value!r}")



def usage_by(entries, by: str | Sequence[str] = ("session_id",), *, tz: str = "UTC", since=None,
             until=None) -> pa.Table:
    """Token buckets, cost and call counts per group.

    ``usage_by(t, by="day")``, ``"month"`` and ``"session"`` give the token totals of ccusage's
    ``daily``, ``monthly`` and ``session`` reports on the same Claude Code and Codex files (each
    response counted once), and costs within 1% (see ``docs/ccusage-differences.md``).

    Args:
        entries: the entries table.
        by: one or more of ``session_id``, ``file``, ``day`` (the call's date in ``tz``), ``month``
            (``"YYYY-MM"`` in ``tz``), ``session`` (the top session: a Claude Code subagent's calls
            count in the session that spawned it, as in ccusage), ``agent``, ``model``,
            ``provider``, ``api``, ``branch`` (``"current"`` or ``"abandoned"``), ``stop_reason``.
        tz: IANA time zone for ``day``, ``month``, ``since`` and ``until``.
        since: Keep calls on or after this date in ``tz`` (a ``date``, ``"YYYY-MM-DD"`` or
            ``"YYYYMMDD"``).
        until: Keep calls on or before this date in ``tz``.

    Returns:
        One row per group, sorted by the keys. Columns: the keys, then calls, input_tokens,
        output_tokens, cache_read_tokens, cache_write_tokens, total_tokens (pi's
        calculateContextTokens summed: the prompt plus the output), cost_usd, and
        reasoning_tokens (part of output_tokens) when some entry reports them.

    Example:
        >>> usage_by(entries_table("data/"), by=["day", "model"], tz="Europe/Vienna")  # doctest: +SKIP
    """
    keys = [by] if isinstance(by, str) else list(by)
    bad = [k for k in keys if k not in USAGE_GROUPS]
    if bad or not keys:
        raise ValueError(f"by must be among {USAGE_GROUPS}, not {keys!r}")
    since, until = _date(since, "since"), _date(until, "until")
    table = as_table(entries)
    calls = _calls_mask(table)
    if since is not None or until is not None:
        day = _day(table["timestamp"], tz)
        if since is not None:
            calls &= _bool(pc.greater_equal(day, pa.scalar(since, pa.date32())))
        if until is not None:
            calls &= _bool(pc.less_equal(day, pa.scalar(until, pa.date32())))
    cols: dict[str, pa.ChunkedArray | pa.Array] = {}
    for k in keys:
        if k == "day":
            cols[k] = _day(table["timestamp"], tz)
        elif k == "month":
            cols[k] = _month(table["timestamp"], tz)
        elif k == "session":
            cols[k] = (pc.coalesce(table["root_session_id"], table["session_id"])
                       if "root_session_id" in table.column_names else table["session_id"])
        elif k == "agent" and "agent" not in table.column_names:
            cols[k] = pa.array(["pi"] * table.num_rows, pa.string())
        elif k == "branch":
            cur = current_branch_mask(table)
            cols[k] = pa.array(np.where(cur, "current", "abandoned"))
        else:
            cols[k] = table[k]
    # (reasoning tokens only when some call reports them: pi files before 1.6 have none)
    sums = [s for s in _SUMS if s in table.column_names
            and (s != "reasoning_tokens" or table[s].null_count < table.num_rows)]
    for s in sums:
        cols[s] = pc.fill_null(table[s], 0)
    t = pa.table(cols).filter(pa.array(calls))
    agg = [(s, "sum") for s in sums]
    grouped = t.group_by(keys, use_threads=False).aggregate(agg + [([], "count_all")])
    out = {k: grouped[k] for k in keys}
    out["calls"] = pc.cast(grouped["count_all"], pa.int64())
    for s in sums:
        name = "total_tokens" if s == "context_tokens" else s
        out[name] = grouped[f"{s}_sum"]
    result = pa.table(out)
    return result.sort_by([(k, "ascending") for k in keys])


def branch_costs(entries) -> pa.Table:
    """Spend on the current branch vs on abandoned branches, per session.

    Returns:
        Columns: session_id, file, calls_current, calls_abandoned, tokens_current,
        tokens_abandoned (pi's context tokens summed), cost_current, cost_abandoned,
        abandoned_cost_share (cost_abandoned / total cost; null when nothing was spent).
    """
    table = as_table(entries)
    cur = current_branch_mask(table)
    calls = _calls_mask(table)
    tok = np.asarray(pc.fill_null(table["context_tokens"], 0).to_numpy(zero_copy_only=False), np.int64)
    cost = np.asarray(pc.fill_null(table["cost_usd"], 0.0).to_numpy(zero_copy_only=False), np.float64)
    t = pa.table({
        "session_id": table["session_id"], "file": table["file"],
        "calls_current": pa.array((calls & cur).astype(np.int64)),
        "calls_abandoned": pa.array((calls & ~cur).astype(np.int64)),
        "tokens_current": pa.array(np.where(calls & cur, tok, 0)),
        "tokens_abandoned": pa.array(np.where(calls & ~cur, tok, 0)),
        "cost_current": pa.array(np.where(calls & cur, cost, 0.0)),
        "cost_abandoned": pa.array(np.where(calls & ~cur, cost, 0.0)),
    })
    value_cols = [c for c in t.column_names if c not in ("session_id", "file")]
    g = t.group_by(["session_id", "file"], use_threads=False).aggregate([(c, "sum") for c in value_cols])
    out = {"session_id": g["session_id"], "file": g["file"]}
    for c in value_cols:
        out[c] = g[f"{c}_sum"]
    total = pc.add(out["cost_current"], out["cost_abandoned"])
    out["abandoned_cost_share"] = pc.if_else(pc.greater(total, 0), pc.divide(out["cost_abandoned"], total),
                                             pa.scalar(None, pa.float64()))
    return pa.table(out).sort_by([("session_id", "ascending"), ("file", "ascending")])


def cache_efficiency(entries) -> pa.Table:
    """Per call: how much of the prompt came from the cache, and what broke the cache.

    Returns:
        One row per assistant call. Columns: session_id, at_id, timestamp, provider, model,
        prompt_tokens (input + cache read + cache write), cache_read_tokens, cache_write_tokens,
        hit_ratio (cache read / prompt tokens; null for an empty prompt), previous_call_id (the
        previous call on the same branch), invalidated_by: ``"first_call"`` (no earlier call on
        the branch), ``"compaction"`` (a compaction since that call), ``"model_change"`` (another
        provider or model than that call), ``"branch_switch"`` (the previous call in the file is on
        another branch: the user moved the leaf), or null.
    """
    table = as_table(entries)
    f = Forest.of(table)
    n = table.num_rows
    calls = _calls_mask(table)
    rows = np.nonzero(calls)[0]
    parent = f.parent[rows]
    near_call = f.nearest(calls)
    prev = np.where(parent >= 0, near_call[np.maximum(parent, 0)], -1)
    comp = f.nearest(_bool(pc.equal(table["type"], "compaction")))
    c_above = np.where(parent >= 0, comp[np.maximum(parent, 0)], -1)
    depth = f.depth
    compaction_since = (c_above >= 0) & ((prev < 0) | (depth[np.maximum(c_above, 0)] > depth[np.maximum(prev, 0)]))
    prov = table["provider"].to_numpy(zero_copy_only=False)
    model = table["model"].to_numpy(zero_copy_only=False)
    pp = np.maximum(prev, 0)
    model_changed = (prev >= 0) & ((prov[rows] != prov[pp]) | (model[rows] != model[pp]))
    # the previous call in file order, within the same file
    codes = f.file_code
    same_file_prev = np.r_[-1, rows[:-1]]
    same_file_prev = np.where(np.r_[False, codes[rows][1:] == codes[rows][:-1]], same_file_prev, -1)
    switched = (prev >= 0) & (same_file_prev != prev)
    cause = np.full(len(rows), None, dtype=object)
    cause[switched] = "branch_switch"
    cause[model_changed] = "model_change"
    cause[compaction_since] = "compaction"
    cause[prev < 0] = "first_call"

    def col(name, fill):
        return np.asarray(pc.fill_null(table[name], fill).to_numpy(zero_copy_only=False))[rows]

    inp, cr, cw = col("input_tokens", 0), col("cache_read_tokens", 0), col("cache_write_tokens", 0)
    prompt = (inp + cr + cw).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(prompt > 0, cr / np.maximum(prompt, 1), np.nan)
    idx = pa.array(rows, pa.int64())
    prev_ids = pc.take(table["entry_id"], pa.array(pp, pa.int64())) if n else pa.array([], pa.string())
    prev_ids = pc.if_else(pa.array(prev < 0), pa.scalar(None, pa.string()), prev_ids) if len(rows) else prev_ids
    return pa.table({
        "session_id": pc.take(table["session_id"], idx),
        "at_id": pc.take(table["entry_id"], idx),
        "timestamp": pc.take(table["timestamp"], idx),
        "provider": pc.take(table["provider"], idx),
        "model": pc.take(table["model"], idx),
        "prompt_tokens": pa.array(prompt, pa.int64()),
        "cache_read_tokens": pa.array(cr.astype(np.int64)),
        "cache_write_tokens": pa.array(cw.astype(np.int64)),
        "hit_ratio": pa.array(ratio, pa.float64(), from_pandas=True),
        "previous_call_id": prev_ids,
        "invalidated_by": pa.array(cause, pa.string()),
    })
