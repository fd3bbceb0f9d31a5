"""Where the tokens went: usage and cost tables over the entries table.

Every function counts the recorded spend, over all branches unless said otherwise, as pi's footer
does: assistant ``message`` entries (the calls) and, from pi 1.6 on, spend that is no message
(``usage`` entries for titles, summaries, imports...; the summary call a compaction or branch
summary records), each once, told apart by the ``usage_kind`` column. The *current branch* of a session is the
path from the root to pi's leaf (the last entry in file order; a seed ``leaf`` record moves it);
a call off that path is on an *abandoned* branch.

Arrays go to and from NumPy through :mod:`sessionlab._arrow` (pyarrow's own conversions import pandas).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, const_strings, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentValueError, OptionError, check_option, option_message
from ..tables import TIMESTAMP, Column, call_mask, columns_doc, current_leaf_rows, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, select_sessions
from ..tables.forest import Forest, as_table

__all__ = ["usage_by", "usage_by_df", "branch_costs", "branch_costs_df", "cache_efficiency", "cache_efficiency_df",
           "current_branch_mask", "USAGE_GROUPS", "USAGE_KEY_COLUMNS", "USAGE_COLUMNS", "BRANCH_COST_COLUMNS",
           "CACHE_COLUMNS", "WEEK_DAYS"]

USAGE_GROUPS = ("session_id", "file", "day", "model", "provider", "api", "branch", "stop_reason", "usage_kind",
                "month", "session", "agent", "week", "project")
WEEK_DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
"""The days a week may start on (``usage_by``'s ``week_start``), in ccusage's order."""

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
    Column("week", pa.date32(), "The first day (``week_start``) of the call's week in ``tz``."),
    Column("project", _S, "The folder the session ran in (the ``cwd`` of its header or first prompt, as "
           "``session_labels`` reads it); null when the session names none."),
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
    return np.asarray(to_numpy(a, False), bool)


def _np(table: pa.Table, name: str, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(table[name], fill), dtype)


def _date32(day) -> pa.Scalar:
    """A ``datetime.date`` as an Arrow date32 scalar."""
    import datetime as _dt

    return from_numpy(np.array([(day - _dt.date(1970, 1, 1)).days], np.int32), type=pa.date32())[0]


def _calls_mask(table: pa.Table) -> np.ndarray:
    """Which rows are calls: the facts module's rule (:func:`sessionlab.tables.call_mask`)."""
    return call_mask(table)


def spend_mask(table: pa.Table, calls: np.ndarray | None = None) -> np.ndarray:
    """Rows that record spend: the calls, and (pi 1.6) every other usage (see ``usage_kind``): the
    rows every usage report sums."""
    calls = _calls_mask(table) if calls is None else calls
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
    leaf = current_leaf_rows(table, codes=f.file_code)  # (the facts module's current leaf: one owner)
    return f.is_ancestor(np.arange(n), leaf) & ~f.is_leaf_record


def _local(ts, tz: str) -> pa.Array:
    """Wall-clock time in ``tz`` of UTC timestamps (as naive timestamps: one vectorised pass)."""
    ts = ts.combine_chunks() if isinstance(ts, pa.ChunkedArray) else ts
    return pc.local_timestamp(ts.cast(pa.timestamp(ts.type.unit, tz=tz)))


# the days Python's datetime.date holds: a time in year 1 or 9999 can fall outside them in ``tz``
_FIRST_DAY, _LAST_DAY = -719_162, 2_932_896  # 0001-01-01 and 9999-12-31, in days from 1970-01-01


def _day(ts, tz: str) -> pa.Array:
    """The date in ``tz`` (null where it is none a ``datetime.date`` can hold: an unknown day)."""
    day = pc.cast(_local(ts, tz), pa.date32())
    n = pc.cast(day, pa.int32())
    first, last = scalar(_FIRST_DAY, pa.int32()), scalar(_LAST_DAY, pa.int32())
    inside = pc.and_(pc.greater_equal(n, first), pc.less_equal(n, last))
    return pc.if_else(inside, day, scalar(None, pa.date32()))


def _month(ts, tz: str) -> pa.Array:
    """'YYYY-MM' in ``tz``: the few distinct months formatted once, not every row."""
    day = _day(ts, tz)
    missing = ~_bool(pc.is_valid(day))
    month = to_numpy(day, 0).astype(np.int64).astype("datetime64[D]").astype("datetime64[M]")
    names, which = np.unique(month[~missing], return_inverse=True)
    index = np.zeros(len(month), np.int64)
    index[~missing] = which.reshape(-1)
    return strings(np.datetime_as_string(names, unit="M").tolist()).take(arrow_indices(index, missing))


def _week(ts, tz: str, week_start: str) -> pa.Array:
    """The first day of the week (weeks starting on ``week_start``) of each time's date in ``tz``,
    as ccusage's weekly report keys them."""
    day = _day(ts, tz)
    n = to_numpy(pc.cast(day, pa.int32()), 0).astype(np.int64)
    # 1970-01-01 was a Thursday: (days + 4) % 7 is the weekday counted from Sunday
    shift = (n + 4 - WEEK_DAYS.index(week_start)) % 7
    first = np.maximum(n - shift, _FIRST_DAY)
    return from_numpy(first.astype(np.int32), mask=~_bool(pc.is_valid(day)), type=pa.date32())


def _date(value, name: str):
    import datetime as _dt

    if value is None or isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value if "-" in value else f"{value[:4]}-{value[4:6]}-{value[6:]}")
        except ValueError:
            pass
    raise ArgumentValueError(name, f"{name} must be a date or 'YYYY-MM-DD' / 'YYYYMMDD', not {value!r}")


def _group_sums(keys: dict[str, pa.Array], sums: dict[str, np.ndarray],
                codes: dict[str, np.ndarray] | None = None) -> tuple[dict[str, pa.Array], dict]:
    """Group rows by the key columns (nulls are a group): each group's key values and the sum of
    every ``sums`` column, groups in no particular order. ``codes`` may give a key's integer codes
    (0..k-1, equal values equal codes) where they are known, else the column is dictionary-encoded.

    Sums add the rows in row order (``np.bincount``), as a hash aggregate does; integers are
    summed exactly (they are checked to stay below 2**53).
    """
    n = len(next(iter(sums.values())))
    code = np.zeros(n, np.int64)
    for k, col in keys.items():
        if codes and k in codes:
            c = np.asarray(codes[k], np.int64)
            width = int(c.max(initial=-1)) + 1
        else:
            c, width = _codes(col)
        code = code * max(width, 1) + c
        if code.max(initial=0) > 2**40:  # keep the mixed radix small: renumber
            code = np.unique(code, return_inverse=True)[1].reshape(-1)
    group, first = _dense(code)
    take = arrow_indices(first)
    out_keys = {k: col.take(take) for k, col in keys.items()}
    out = {}
    for name, v in sums.items():
        if v.dtype.kind == "f":
            out[name] = np.bincount(group, weights=v, minlength=len(first))
        elif np.abs(v).sum() < 2**53:
            out[name] = np.bincount(group, weights=v, minlength=len(first)).astype(np.int64)
        else:
            acc = np.zeros(len(first), np.int64)
            np.add.at(acc, group, v)
            out[name] = acc
    return out_keys, out


def _codes(col) -> tuple[np.ndarray, int]:
    """Integer codes of a column (equal values, nulls included, share a code) and their count."""
    enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col,
                               null_encoding="encode")
    return np.asarray(to_numpy(enc.indices), np.int64), len(enc.dictionary)


def _dense(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group numbers 0..g-1 of non-negative ``code``s, and one row of each group."""
    n = len(code)
    if n and code.max() > 4 * n + 1024:  # sparse codes: sort
        _, first, group = np.unique(code, return_index=True, return_inverse=True)
        return group.reshape(-1), first
    present = np.flatnonzero(np.bincount(code)) if n else np.zeros(0, np.int64)
    number = np.zeros(int(code.max(initial=0)) + 1, np.int64)
    number[present] = np.arange(len(present))
    group = number[code]
    first = np.zeros(len(present), np.int64)
    first[group] = np.arange(n)  # any row of a group: its rows share their keys
    return group, first


def _key_column(table: pa.Table, key: str, tz: str, rows: pa.Array, week_start: str = "sunday") -> pa.Array:
    """The ``by`` key ``key`` of the rows ``rows`` (see :func:`usage_by`)."""
    if key == "week":
        return _week(table["timestamp"].take(rows), tz, week_start)
    if key == "day":
        return _day(table["timestamp"].take(rows), tz)
    if key == "month":
        return _month(table["timestamp"].take(rows), tz)
    if key == "session" and "root_session_id" in table.column_names:
        return pc.coalesce(table["root_session_id"].take(rows), table["session_id"].take(rows))
    if key == "session":
        return table["session_id"].take(rows)
    if key == "agent" and "agent" not in table.column_names:
        return const_strings(b"pi", np.ones(len(rows), bool))
    if key == "project":
        return _project(table, rows)
    if key == "branch":
        cur = current_branch_mask(table)[to_numpy(rows)]
        return pc.if_else(from_numpy(cur), scalar("current"), scalar("abandoned"))
    return table[key].take(rows)


def _project(table: pa.Table, rows: pa.Array) -> pa.Array:
    """The folder (cwd) of each row's session, from the session labels."""
    from ..tables.labels import session_labels

    cwd = {sid: label.cwd for sid, label in session_labels(table).items()}
    return pa.array([cwd.get(s) for s in table["session_id"].take(rows).to_pylist()], pa.string())


def _spend_rows(table: pa.Table, tz: str, since, until) -> tuple[np.ndarray, np.ndarray]:
    """The rows recording spend between ``since`` and ``until`` (days in ``tz``), and which are calls."""
    calls = _calls_mask(table)
    spend = spend_mask(table, calls)
    rows = np.nonzero(spend)[0]
    if since is not None or until is not None:
        day = _day(table["timestamp"].take(arrow_indices(rows)), tz)
        when = np.ones(len(rows), bool)
        if since is not None:
            when &= _bool(pc.greater_equal(day, _date32(since)))
        if until is not None:
            when &= _bool(pc.less_equal(day, _date32(until)))
        rows = rows[when]
    return rows, calls[rows]


def usage_by(entries, *, by: str | Sequence[str] = ("session_id",), tz: str = "UTC",
             session_id: SessionIds = None, since=None, until=None, week_start: str = "sunday") -> pa.Table:
    """Token buckets, cost and call counts per group.

    ``usage_by(t, by="day")``, ``"week"``, ``"month"`` and ``"session"`` give the token totals of
    ccusage's ``daily``, ``weekly``, ``monthly`` and ``session`` reports on the same Claude Code and Codex files (each
    response counted once), and costs within 1% (see ``docs/ccusage-differences.md``).

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        by: one or more of ``session_id``, ``file``, ``day`` (the call's date in ``tz``), ``week``
            (the first day of its week, weeks starting on ``week_start``), ``month``
            (``"YYYY-MM"`` in ``tz``), ``session`` (the top session: a Claude Code subagent's calls
            count in the session that spawned it, as in ccusage), ``agent``, ``model``,
            ``provider``, ``api``, ``branch`` (``"current"`` or ``"abandoned"``), ``stop_reason``,
            ``project`` (the session's folder),
            ``usage_kind`` (``"message"`` for calls; a title, summary, compaction... otherwise).
        tz: IANA time zone for ``day``, ``month``, ``since`` and ``until``.
        session_id: only the calls of this session (or these sessions).
        since: Keep spend on or after this date in ``tz`` (a ``date``, ``"YYYY-MM-DD"`` or
            ``"YYYYMMDD"``).
        until: Keep spend on or before this date in ``tz``.
        week_start: the day weeks start on for ``week``: ``"sunday"`` (ccusage's default),
            ``"monday"``... (``WEEK_DAYS``).

    Returns:
        One row per group, sorted by the keys. Columns: the keys,

{keys}

        then:

{columns}

    Example:
        >>> usage_by(load("data/"), by=["day", "model"], tz="Europe/Vienna")  # doctest: +SKIP
    """
    keys = [by] if isinstance(by, str) else list(by)
    if not keys:
        raise OptionError(option_message("by", keys, USAGE_GROUPS), "by")
    for k in keys:
        check_option("by", k, USAGE_GROUPS)
    check_option("week_start", week_start, WEEK_DAYS)
    since, until = _date(since, "since"), _date(until, "until")
    table = select_sessions(entries, session_id)
    rows, is_call = _spend_rows(table, tz, since, until)
    take = arrow_indices(rows)
    sums = {"_call": is_call.astype(np.int64)}
    for s in _SUMS:
        sums[s] = _np(table, s, 0, np.float64 if s == "cost_usd" else np.int64)[rows]
    key_cols, totals = _group_sums({k: _key_column(table, k, tz, take, week_start) for k in keys}, sums)
    out = dict(key_cols)
    out["calls"] = totals.pop("_call")
    for s in _SUMS:
        out["total_tokens" if s == "context_tokens" else s] = totals[s]
    key_schema = {c.name: c for c in USAGE_KEY_COLUMNS}
    result = arrow_table(out, schema_of(tuple(key_schema[k] for k in keys) + USAGE_COLUMNS))
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
    f = Forest.of(table)
    cur = current_branch_mask(table, f)
    calls = _calls_mask(table)
    spend = spend_mask(table, calls)
    tok = _np(table, "context_tokens", 0, np.int64)
    cost = _np(table, "cost_usd", 0.0, np.float64)
    keys, out = _group_sums({"session_id": table["session_id"], "file": table["file"]}, codes={"file": f.file_code},
                            sums={
        "calls_current": (calls & cur).astype(np.int64),
        "calls_abandoned": (calls & ~cur).astype(np.int64),
        "tokens_current": np.where(spend & cur, tok, 0),
        "tokens_abandoned": np.where(spend & ~cur, tok, 0),
        "cost_current": np.where(spend & cur, cost, 0.0),
        "cost_abandoned": np.where(spend & ~cur, cost, 0.0),
    })
    total = out["cost_current"] + out["cost_abandoned"]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, out["cost_abandoned"] / np.where(total > 0, total, 1.0), np.nan)
    out["abandoned_cost_share"] = from_numpy(share, mask=np.isnan(share), type=pa.float64())
    return arrow_table({**keys, **out}, schema_of(BRANCH_COST_COLUMNS)).sort_by(
        [("session_id", "ascending"), ("file", "ascending")])


branch_costs_df = df_variant(branch_costs)


def previous_calls(forest: Forest, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The calls (rows where ``calls`` is true, in row order), the previous call on each one's
    branch (the nearest call above it; -1 for the first), and whether each came back from another
    branch: the previous call in its file is another row than the previous call on its branch
    (the user moved the leaf). :func:`cache_efficiency` and :func:`branch_calls` share it.
    """
    rows = np.nonzero(calls)[0]
    parent = forest.parent[rows]
    prev = np.where(parent >= 0, forest.nearest(calls)[np.maximum(parent, 0)], -1)
    codes = forest.file_code[rows]
    prev_in_file = np.where(np.r_[False, codes[1:] == codes[:-1]], np.r_[-1, rows[:-1]], -1)
    return rows, prev, (prev >= 0) & (prev_in_file != prev)


_CAUSES = ("branch_switch", "model_change", "compaction", "first_call")


def _cache_causes(table: pa.Table, f: Forest, rows: np.ndarray, prev: np.ndarray,
                  switched: np.ndarray) -> pa.Array:
    """``invalidated_by`` of each call (see ``CACHE_COLUMNS``); the first cause that applies of
    first call, compaction, model change, branch switch."""
    comp = f.nearest(f.isin("type", ("compaction",)))
    parent = f.parent[rows]
    c_above = np.where(parent >= 0, comp[np.maximum(parent, 0)], -1)
    depth = f.depth
    pp = np.maximum(prev, 0)
    compaction_since = (c_above >= 0) & ((prev < 0) | (depth[np.maximum(c_above, 0)] > depth[pp]))
    differs = np.zeros(len(rows), bool)
    for name in ("provider", "model"):  # compared as dictionary codes (a null equals a null)
        code = _codes(table[name])[0]
        differs |= code[rows] != code[pp]
    cause = np.full(len(rows), -1, np.int64)  # an index into _CAUSES
    cause[switched] = 0
    cause[(prev >= 0) & differs] = 1
    cause[compaction_since] = 2
    cause[prev < 0] = 3
    return strings(_CAUSES).take(arrow_indices(cause, cause < 0))


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
    rows, prev, switched = previous_calls(f, _calls_mask(table))
    cause = _cache_causes(table, f, rows, prev, switched)
    inp, cr, cw = (_np(table, c, 0, np.int64)[rows] for c in ("input_tokens", "cache_read_tokens",
                                                                "cache_write_tokens"))
    prompt = inp + cr + cw
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(prompt > 0, cr / np.maximum(prompt, 1), np.nan)
    idx = arrow_indices(rows)
    prev_ids = table["entry_id"].take(arrow_indices(np.maximum(prev, 0), prev < 0))
    return arrow_table({
        "session_id": table["session_id"].take(idx),
        "at_id": table["entry_id"].take(idx),
        "timestamp": table["timestamp"].take(idx),
        "provider": table["provider"].take(idx),
        "model": table["model"].take(idx),
        "prompt_tokens": prompt,
        "cache_read_tokens": cr,
        "cache_write_tokens": cw,
        "hit_ratio": from_numpy(ratio, mask=np.isnan(ratio), type=pa.float64()),
        "previous_call_id": prev_ids,
        "invalidated_by": cause,
    }, schema_of(CACHE_COLUMNS))


cache_efficiency_df = df_variant(cache_efficiency)
