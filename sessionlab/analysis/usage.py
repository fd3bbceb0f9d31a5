"""Where the tokens went: usage and cost tables over the entries table.

Every function counts the recorded spend, over all branches unless said otherwise, as pi's footer
does: assistant ``message`` entries (the calls) and, from pi 1.6 on, spend that is no message
(``usage`` entries for titles, summaries, imports...; the summary call a compaction or branch
summary records), each once, told apart by the ``usage_kind`` column. The *current branch* of a session is the
path from the root to pi's leaf (the last entry in file order; a seed ``leaf`` record moves it);
a call off that path is on an *abandoned* branch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..tables._conventions import df_variant, returns
from ..tables._schema import TIMESTAMP, Column, columns_doc, schema_of
from ..tables.corpus import SessionIds, select_sessions
from ._forest import Forest, as_table

__all__ = ["usage_by", "usage_by_df", "branch_costs", "branch_costs_df", "cache_efficiency", "cache_efficiency_df",
           "current_branch_mask", "USAGE_GROUPS", "USAGE_KEY_COLUMNS", "USAGE_COLUMNS", "BRANCH_COST_COLUMNS",
           "CACHE_COLUMNS"]

USAGE_GROUPS = ("session_id", "file", "day", "model", "provider", "api", "branch", "stop_reason", "usage_kind",
                "month", "session", "agent")

_S, _I64, _F64 = pa.string(), pa.int64(), pa.float64()

USAGE_KEY_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("file", _S, "Session file."),
    Column("day", pa.date32(), "The call's date in ``tz``."),
    Column("model", _S, "Model of the call."),
    Column("provider", _S, "Provider of the call."),
    Column("api", _S, "API of the call."),
    Column("branch", _S, "'current' (on the path from the root to pi's leaf) or 'abandoned'."),
    Column("stop_reason", _S, "stopReason of the call."),
    Column("usage_kind", _S, "What the spend paid for: 'message' for calls; for spend that is no message "
           "(pi 1.6) the usage entry's kind ('title', 'summary'...), 'compaction' or 'branch_summary'."),
    Column("month", _S, "The call's month in ``tz``, 'YYYY-MM'."),
    Column("session", _S, "The top session (root_session_id): a Claude Code subagent's calls count in the "
           "session that spawned it, as in ccusage."),
    Column("agent", _S, "Agent of the call: 'pi', 'claude-code' or 'codex'."),
)
USAGE_COLUMNS: tuple[Column, ...] = (
    Column("calls", _I64, "Number of calls (assistant messages); the token and cost sums also hold the "
           "spend that is no message (group by usage_kind to tell it apart)."),
    Column("input_tokens", _I64, "Sum of input_tokens."),
    Column("output_tokens", _I64, "Sum of output_tokens."),
    Column("cache_read_tokens", _I64, "Sum of cache_read_tokens."),
    Column("cache_write_tokens", _I64, "Sum of cache_write_tokens."),
    Column("total_tokens", _I64, "pi's calculateContextTokens of each call, summed."),
    Column("cost_usd", _F64, "Sum of cost_usd, USD."),
    Column("reasoning_tokens", _I64, "Sum of reasoning_tokens (part of output_tokens; 0 where no call reports "
           "them)."),
)
BRANCH_COST_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("file", _S, "Session file."),
    Column("calls_current", _I64, "Calls on the current branch."),
    Column("calls_abandoned", _I64, "Calls on abandoned branches."),
    Column("tokens_current", _I64, "pi's context tokens of the calls on the current branch, summed (with the "
           "spend that is no message: a compaction's summary call is on its compaction's branch)."),
    Column("tokens_abandoned", _I64, "The same on abandoned branches."),
    Column("cost_current", _F64, "Cost of the calls on the current branch, USD."),
    Column("cost_abandoned", _F64, "Cost of the calls on abandoned branches, USD."),
    Column("abandoned_cost_share", _F64, "cost_abandoned / total cost; null when nothing was spent."),
)
CACHE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("at_id", _S, "The call (an assistant message)."),
    Column("timestamp", TIMESTAMP, "Its timestamp."),
    Column("provider", _S, "Its provider."),
    Column("model", _S, "Its model."),
    Column("prompt_tokens", _I64, "input + cache read + cache write."),
    Column("cache_read_tokens", _I64, "Tokens read from the cache."),
    Column("cache_write_tokens", _I64, "Tokens written to the cache."),
    Column("hit_ratio", _F64, "cache read / prompt tokens; null for an empty prompt."),
    Column("previous_call_id", _S, "The previous call on the same branch."),
    Column("invalidated_by", _S, "'first_call' (no earlier call on the branch), 'compaction' (a compaction since "
           "that call), 'model_change' (another provider or model than that call), 'branch_switch' (the "
           "previous call in the file is on another branch: the user moved the leaf), or null."),
)
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


def _spend_mask(table: pa.Table) -> np.ndarray:
    """Rows that record spend: the calls, and (pi 1.6) every other usage (see ``usage_kind``)."""
    calls = _calls_mask(table)
    if "usage_kind" not in table.column_names:
        return calls
    return calls | _bool(pc.is_valid(table["usage_kind"]))


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


def usage_by(entries, *, by: str | Sequence[str] = ("session_id",), tz: str = "UTC",
             session_id: SessionIds = None, since=None, until=None) -> pa.Table:
    """Token buckets, cost and call counts per group.

    ``usage_by(t, by="day")``, ``"month"`` and ``"session"`` give the token totals of ccusage's
    ``daily``, ``monthly`` and ``session`` reports on the same Claude Code and Codex files (each
    response counted once), and costs within 1% (see ``docs/ccusage-differences.md``).

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        by: one or more of ``session_id``, ``file``, ``day`` (the call's date in ``tz``), ``month``
            (``"YYYY-MM"`` in ``tz``), ``session`` (the top session: a Claude Code subagent's calls
            count in the session that spawned it, as in ccusage), ``agent``, ``model``,
            ``provider``, ``api``, ``branch`` (``"current"`` or ``"abandoned"``), ``stop_reason``,
            ``usage_kind`` (``"message"`` for calls; a title, summary, compaction... otherwise).
        tz: IANA time zone for ``day``, ``month``, ``since`` and ``until``.
        session_id: only the calls of this session (or these sessions).
        since: Keep spend on or after this date in ``tz`` (a ``date``, ``"YYYY-MM-DD"`` or
            ``"YYYYMMDD"``).
        until: Keep spend on or before this date in ``tz``.

    Returns:
        One row per group, sorted by the keys. Columns: the keys,

{keys}

        then:

{columns}

    Example:
        >>> usage_by(load("data/"), by=["day", "model"], tz="Europe/Vienna")  # doctest: +SKIP
    """
    keys = [by] if isinstance(by, str) else list(by)
    bad = [k for k in keys if k not in USAGE_GROUPS]
    if bad or not keys:
        raise ValueError(f"by must be among {USAGE_GROUPS}, not {keys!r}")
    since, until = _date(since, "since"), _date(until, "until")
    table = select_sessions(entries, session_id)
    calls = _calls_mask(table)
    spend = _spend_mask(table)
    if since is not None or until is not None:
        day = _day(table["timestamp"], tz)
        when = np.ones(table.num_rows, bool)
        if since is not None:
            when &= _bool(pc.greater_equal(day, pa.scalar(since, pa.date32())))
        if until is not None:
            when &= _bool(pc.less_equal(day, pa.scalar(until, pa.date32())))
        calls &= when
        spend &= when
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
    for s in _SUMS:
        cols[s] = pc.fill_null(table[s], 0)
    cols["_call"] = pa.array(calls.astype(np.int64))
    t = pa.table(cols).filter(pa.array(spend))
    agg = [(s, "sum") for s in _SUMS]
    grouped = t.group_by(keys, use_threads=False).aggregate(agg + [("_call", "sum")])
    out = {k: grouped[k] for k in keys}
    out["calls"] = pc.cast(grouped["_call_sum"], pa.int64())
    for s in _SUMS:
        name = "total_tokens" if s == "context_tokens" else s
        out[name] = grouped[f"{s}_sum"]
    key_cols = {c.name: c for c in USAGE_KEY_COLUMNS}
    result = pa.Table.from_pydict(out, schema=schema_of(tuple(key_cols[k] for k in keys) + USAGE_COLUMNS))
    return result.sort_by([(k, "ascending") for k in keys])


usage_by.__doc__ = usage_by.__doc__.replace("{keys}", columns_doc(USAGE_KEY_COLUMNS))  # type: ignore[union-attr]
usage_by = returns(USAGE_COLUMNS)(usage_by)
usage_by.key_columns = USAGE_KEY_COLUMNS  # type: ignore[attr-defined]  # the keys come first
usage_by_df = df_variant(usage_by)


@returns(BRANCH_COST_COLUMNS)
def branch_costs(entries, *, session_id: SessionIds = None) -> pa.Table:
    """Spend on the current branch vs on abandoned branches, per session.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        session_id: only this session (or these sessions).

    Returns:
        One row per session file, with columns:

{columns}
    """
    table = select_sessions(entries, session_id)
    cur = current_branch_mask(table)
    calls = _calls_mask(table)
    spend = _spend_mask(table)
    tok = np.asarray(pc.fill_null(table["context_tokens"], 0).to_numpy(zero_copy_only=False), np.int64)
    cost = np.asarray(pc.fill_null(table["cost_usd"], 0.0).to_numpy(zero_copy_only=False), np.float64)
    t = pa.table({
        "session_id": table["session_id"], "file": table["file"],
        "calls_current": pa.array((calls & cur).astype(np.int64)),
        "calls_abandoned": pa.array((calls & ~cur).astype(np.int64)),
        "tokens_current": pa.array(np.where(spend & cur, tok, 0)),
        "tokens_abandoned": pa.array(np.where(spend & ~cur, tok, 0)),
        "cost_current": pa.array(np.where(spend & cur, cost, 0.0)),
        "cost_abandoned": pa.array(np.where(spend & ~cur, cost, 0.0)),
    })
    value_cols = [c for c in t.column_names if c not in ("session_id", "file")]
    g = t.group_by(["session_id", "file"], use_threads=False).aggregate([(c, "sum") for c in value_cols])
    out = {"session_id": g["session_id"], "file": g["file"]}
    for c in value_cols:
        out[c] = g[f"{c}_sum"]
    total = pc.add(out["cost_current"], out["cost_abandoned"])
    out["abandoned_cost_share"] = pc.if_else(pc.greater(total, 0), pc.divide(out["cost_abandoned"], total),
                                             pa.scalar(None, pa.float64()))
    return pa.Table.from_pydict(out, schema=schema_of(BRANCH_COST_COLUMNS)).sort_by(
        [("session_id", "ascending"), ("file", "ascending")])


branch_costs_df = df_variant(branch_costs)


@returns(CACHE_COLUMNS)
def cache_efficiency(entries, *, session_id: SessionIds = None) -> pa.Table:
    """Per call: how much of the prompt came from the cache, and what broke the cache.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        session_id: only the calls of this session (or these sessions).

    Returns:
        One row per assistant call, with columns:

{columns}
    """
    table = select_sessions(entries, session_id)
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
    return pa.Table.from_pydict({
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
    }, schema=schema_of(CACHE_COLUMNS))


cache_efficiency_df = df_variant(cache_efficiency)
