"""Billing blocks: the spend in 5-hour windows, as ccusage's ``blocks`` report has it.

A block starts at the first call after the previous block, floored to the hour (UTC), and lasts
``hours`` (5): a call more than ``hours`` after its block's start, or more than ``hours`` after
the call before it, starts the next block. Where calls pause for longer than ``hours`` a *gap*
block stands between two blocks, from the last call plus ``hours`` to the next call. The block
whose window holds ``now`` and whose last call is less than ``hours`` before ``now`` is *active*:
it gets a burn rate (tokens per minute from its first to its last call) and a projection (its
totals if that rate goes on to the block's end), and, with a token limit, the share of the limit
the projection takes.

The spend rows are :func:`~sessionlab.analysis.usage_by`'s (each response once; pi 1.6's spend
that is no message too), of every agent in the table: ccusage's blocks count Claude Code's calls
only (``docs/ccusage-differences.md``).
"""

from __future__ import annotations

import datetime as _dt
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, strings, to_numpy
from ..errors import ArgumentTypeError, ArgumentValueError, check_option
from ..tables import TIMESTAMP, Column, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, select_sessions
from .usage import _bool, _date, _date32, _day, _np, _spend_rows

__all__ = ["BILLING_BLOCK_COLUMNS", "BLOCK_WARNING_SHARE", "billing_blocks", "billing_blocks_df", "block_starts"]

_S, _I64, _F64, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()
_MS_HOUR, _MS_MINUTE = 3_600_000, 60_000
BLOCK_WARNING_SHARE = 0.8
"""A projection above this share of the token limit is a ``warning`` (ccusage's threshold)."""

BILLING_BLOCK_COLUMNS: tuple[Column, ...] = (
    Column("block_id", _S, "ccusage's id: the start time ('2026-01-30T22:00:00.000Z'); a gap's is 'gap-' "
           "and its start."),
    Column("start_time", TIMESTAMP, "The block's first call floored to the hour (UTC); a gap's: the last call "
           "before it plus the block length."),
    Column("end_time", TIMESTAMP, "start_time plus the block length; a gap's: the next call."),
    Column("actual_end_time", TIMESTAMP, "The block's last call; null for a gap."),
    Column("is_active", _B, "The window holds ``now`` and the last call is less than the block length before "
           "``now``."),
    Column("is_gap", _B, "A pause longer than the block length between two blocks (no calls)."),
    Column("calls", _I64, "Rows with spend in the block (ccusage's entries): the calls, and pi 1.6's spend "
           "that is no message."),
    Column("input_tokens", _I64, "Sum of input_tokens."),
    Column("output_tokens", _I64, "Sum of output_tokens."),
    Column("cache_read_tokens", _I64, "Sum of cache_read_tokens."),
    Column("cache_write_tokens", _I64, "Sum of cache_write_tokens."),
    Column("total_tokens", _I64, "input + output + cache read + cache write (ccusage's totalTokens: what a "
           "token limit counts)."),
    Column("reasoning_tokens", _I64, "Sum of reasoning_tokens (part of output_tokens)."),
    Column("cost_usd", _F64, "Sum of cost_usd, USD (an unpriced call adds nothing)."),
    Column("models", pa.list_(_S), "Models of the block's calls, in the order they were first used."),
    Column("tokens_per_minute", _F64, "Active block: total_tokens over the minutes from its first to its last "
           "call (null when those are the same time); null for other blocks."),
    Column("tokens_per_minute_for_indicator", _F64, "The same of input + output tokens (no cache)."),
    Column("cost_per_hour", _F64, "Active block: cost_usd over the same time, per hour."),
    Column("remaining_minutes", _I64, "Active block: minutes from ``now`` to end_time, rounded."),
    Column("projected_total_tokens", _I64, "Active block: total_tokens plus tokens_per_minute times "
           "remaining_minutes, rounded."),
    Column("projected_cost_usd", _F64, "Active block: the same of the cost, rounded to cents."),
    Column("token_limit", _I64, "The token limit (``token_limit``; with 'max' the largest total_tokens of "
           "a finished block); null without one and for gaps."),
    Column("limit_percent", _F64, "total_tokens / token_limit * 100."),
    Column("projected_percent", _F64, "Active block: projected_total_tokens / token_limit * 100."),
    Column("limit_status", _S, "Active block with a limit: 'exceeds' (projection above the limit), 'warning' "
           "(above BLOCK_WARNING_SHARE of it) or 'ok'."),
)
_SUMS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
_KEEP = ("all", "recent", "active")
_RECENT_MS = 3 * 24 * _MS_HOUR  # ccusage's --recent: blocks that started in the last 3 days


def block_starts(t: np.ndarray, length: int) -> np.ndarray:
    """The first index of each block of the sorted times ``t`` (ms), blocks ``length`` ms long.

    Vectorised over the stretches between pauses longer than ``length``: each pass finds the next
    block of every stretch at once (as many passes as the most blocks in one stretch).
    """
    n = len(t)
    if n == 0:
        return np.zeros(0, np.int64)
    pause = np.flatnonzero(np.diff(t) > length) + 1
    cur, end = np.r_[0, pause].astype(np.int64), np.r_[pause, n].astype(np.int64)
    firsts = []
    while len(cur):
        start = t[cur] // _MS_HOUR * _MS_HOUR
        nxt = np.minimum(np.searchsorted(t, start + length, side="right"), end)
        nxt = np.maximum(nxt, cur + 1)  # a block holds its first call even when shorter than an hour
        firsts.append(cur)
        more = nxt < end
        cur, end = nxt[more], end[more]
    return np.sort(np.concatenate(firsts))


def _ms(value, name: str) -> int:
    """A time (aware, or naive meaning UTC) as ms since the epoch."""
    if not isinstance(value, _dt.datetime):
        raise ArgumentTypeError(name, f"{name} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.UTC)
    return (value - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)) // _dt.timedelta(milliseconds=1)


def _models(model, block: np.ndarray, nblocks: int) -> pa.Array:
    """Each block's models, in the order first used (``model`` in time order, nulls skipped)."""
    model = model.combine_chunks() if isinstance(model, pa.ChunkedArray) else model
    enc = pc.dictionary_encode(model)
    code, names = np.asarray(to_numpy(enc.indices, 0), np.int64), enc.dictionary
    width = len(names)
    valid = _bool(pc.is_valid(model))
    key = block * max(width, 1) + code
    _, first = np.unique(np.where(valid, key, -1), return_index=True)
    first = np.sort(first[valid[first]])  # time order, hence block order, then first use
    offsets = np.searchsorted(block[first], np.arange(nblocks + 1), side="left")
    values = names.take(arrow_indices(code[first]))
    return pa.ListArray.from_arrays(from_numpy(offsets.astype(np.int32), type=pa.int32()), values)


def _round(x: np.ndarray) -> np.ndarray:
    """Round half away from zero (as Rust's f64::round), for x >= 0."""
    return np.floor(x + 0.5)


def _blocks(table: pa.Table, length: int) -> dict[str, np.ndarray | pa.Array]:
    """The non-gap blocks' columns (time order) and each block's first and last call times."""
    rows, _ = _spend_rows(table, "UTC", None, None)
    ts = table["timestamp"].take(arrow_indices(rows))
    has = _bool(pc.is_valid(ts))
    rows = rows[has]
    t = np.asarray(to_numpy(pc.cast(ts, pa.int64()), 0), np.int64)[has]
    order = np.argsort(t, kind="stable")
    t, rows = t[order], rows[order]
    first = block_starts(t, length)
    block = np.cumsum(np.isin(np.arange(len(t)), first)) - 1
    last = np.r_[first[1:], len(t)][:len(first)] - 1
    out: dict = {"first": t[first], "last": t[last], "start": t[first] // _MS_HOUR * _MS_HOUR,
                 "calls": np.diff(np.r_[first, len(t)])}
    out["pause_before"] = np.r_[False, t[first[1:]] - t[first[1:] - 1] > length] if len(first) else np.zeros(0, bool)
    for s in _SUMS:
        v = _np(table, s, 0, np.int64)[rows]
        out[s] = np.add.reduceat(v, first) if len(first) else np.zeros(0, np.int64)
    cost = _np(table, "cost_usd", 0.0, np.float64)[rows]
    out["cost_usd"] = np.add.reduceat(cost, first) if len(first) else np.zeros(0)
    out["models"] = _models(table["model"].take(arrow_indices(rows)), block, len(first))
    return out


def _limit(token_limit, total: np.ndarray, finished: np.ndarray) -> int | None:
    """The token limit in effect: a number, or with 'max' the largest total of a finished block."""
    if token_limit is None:
        return None
    if token_limit == "max":
        best = int(total[finished].max(initial=0))
        return best if best > 0 else None
    if isinstance(token_limit, bool) or not isinstance(token_limit, (int, np.integer)) or token_limit <= 0:
        raise ArgumentValueError("token_limit", f"token_limit must be a number of tokens above 0 or 'max', "
                                                f"not {token_limit!r}")
    return int(token_limit)


def _with_gaps(b: dict, length: int) -> tuple[dict, np.ndarray]:
    """The blocks and the gap blocks between them, in ccusage's order (by start; a gap after the
    block before it when they start at the same time), and which rows are gaps."""
    nb = len(b["start"])
    gap_of = np.flatnonzero(b["pause_before"])  # the block each gap comes before
    gap_start = b["last"][gap_of - 1] + length
    seq = np.r_[2 * np.arange(nb), 2 * gap_of - 1]  # ccusage makes them in this order, then sorts by start
    start = np.r_[b["start"], gap_start]
    order = np.lexsort((seq, start))
    is_gap = order >= nb
    pick = np.where(is_gap, 0, order)  # rows of the block columns (gaps masked below)
    out = {"start": start[order], "end": np.r_[b["start"] + length, b["first"][gap_of]][order],
           "last": np.where(is_gap, 0, b["last"][pick]), "first": np.where(is_gap, 0, b["first"][pick])}
    for s in (*_SUMS, "calls", "cost_usd"):
        out[s] = np.where(is_gap, 0, b[s][pick]) if nb else np.zeros(0, b[s].dtype)
    empty = pa.array([[]], pa.list_(_S))
    models = pa.concat_arrays([b["models"].cast(pa.list_(_S)), empty]) if nb else empty
    out["models"] = models.take(arrow_indices(np.where(is_gap, nb, order)))
    return out, is_gap


def _keep(b: dict, is_gap: np.ndarray, active: np.ndarray, *, tz: str, since, until, keep: str,
          now: int) -> np.ndarray:
    """Which blocks ``since``, ``until`` (the start's date in ``tz``) and ``keep`` leave."""
    ok = np.ones(len(is_gap), bool)
    if since is not None or until is not None:
        day = _day(from_numpy(b["start"], type=TIMESTAMP), tz)
        if since is not None:
            ok &= _bool(pc.greater_equal(day, _date32(since)))
        if until is not None:
            ok &= _bool(pc.less_equal(day, _date32(until)))
    if keep == "recent":
        ok &= (b["start"] >= now - _RECENT_MS) | active
    elif keep == "active":
        ok &= active
    return ok


def _iso(ms: np.ndarray) -> list[str]:
    return [f"{s}Z" for s in np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms")]


def _nulls(values: np.ndarray, valid: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``values`` where ``valid``, else null (integer and time types get the values as int64)."""
    v = np.where(valid, values, 0)
    return from_numpy(v if pa.types.is_floating(type_) else v.astype(np.int64), mask=~valid, type=type_)


@returns(BILLING_BLOCK_COLUMNS)
def billing_blocks(entries, *, token_limit: int | Literal["max"] | None = None, now: _dt.datetime | None = None,
                   tz: str = "UTC", hours: float = 5, since=None, until=None,
                   keep: Literal["all", "recent", "active"] = "all", session_id: SessionIds = None) -> pa.Table:
    """The spend in billing blocks (``hours``-long windows from a block's first call), as ccusage's
    ``blocks`` report, with the gaps between them and the active block's burn rate and projection.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        token_limit: tokens a block may use, or ``"max"`` for the largest total of a finished block
            (of the blocks kept); fills ``token_limit``, ``limit_percent`` and, for the active
            block, ``projected_percent`` and ``limit_status``.
        now: the time the active block is judged at (aware, or naive meaning UTC); default: now.
        tz: IANA time zone of ``since`` and ``until``.
        hours: the block length (ccusage's ``--session-length``).
        since: keep blocks that start on or after this date in ``tz``.
        until: keep blocks that start on or before this date in ``tz``.
        keep: ``"all"``, ``"recent"`` (blocks that started in the last 3 days, and the active
            one) or ``"active"``.
        session_id: only the calls of this session (or these sessions).

    Returns:
        One row per block and gap, in time order, with columns:

{columns}

    Example:
        >>> billing_blocks(load("~/.claude"), token_limit="max")  # doctest: +SKIP
    """
    check_option("keep", keep, _KEEP)
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not hours > 0:
        raise ArgumentValueError("hours", f"hours must be a number above 0, not {hours!r}")
    since, until = _date(since, "since"), _date(until, "until")
    length = int(hours * _MS_HOUR)
    at = _ms(_dt.datetime.now(_dt.UTC) if now is None else now, "now")
    b, is_gap = _with_gaps(_blocks(select_sessions(entries, session_id), length), length)
    active = ~is_gap & (at - b["last"] < length) & (at < b["end"])
    ok = _keep(b, is_gap, active, tz=tz, since=since, until=until, keep=keep, now=at)
    b = {k: (v.filter(from_numpy(ok)) if isinstance(v, pa.Array) else v[ok]) for k, v in b.items()}
    is_gap, active = is_gap[ok], active[ok]
    total = b["input_tokens"] + b["output_tokens"] + b["cache_read_tokens"] + b["cache_write_tokens"]
    limit = _limit(token_limit, total, ~is_gap & ~active)
    return arrow_table({
        "block_id": strings([("gap-" if g else "") + s for g, s in zip(is_gap.tolist(), _iso(b["start"]))]),
        "start_time": from_numpy(b["start"], type=TIMESTAMP),
        "end_time": from_numpy(b["end"], type=TIMESTAMP),
        "actual_end_time": _nulls(b["last"], ~is_gap, TIMESTAMP),
        "is_active": active, "is_gap": is_gap, "calls": b["calls"],
        **{s: b[s] for s in _SUMS[:4]}, "total_tokens": total, "reasoning_tokens": b["reasoning_tokens"],
        "cost_usd": b["cost_usd"], "models": b["models"],
        **_active_columns(b, total, active, limit, at, is_gap),
    }, schema_of(BILLING_BLOCK_COLUMNS))


def _active_columns(b: dict, total: np.ndarray, active: np.ndarray, limit: int | None, at: int,
                    is_gap: np.ndarray) -> dict[str, pa.Array]:
    """The burn rate, projection and limit columns (see ``BILLING_BLOCK_COLUMNS``)."""
    minutes = (b["last"] - b["first"]) / _MS_MINUTE
    rated = active & (minutes > 0)
    per = np.where(rated, minutes, 1.0)
    rate, cost = total / per, b["cost_usd"] / per * 60
    remaining = _round((b["end"] - at) / _MS_MINUTE)
    projected = _round(total + rate * remaining)
    out = {
        "tokens_per_minute": _nulls(rate, rated, pa.float64()),
        "tokens_per_minute_for_indicator": _nulls((b["input_tokens"] + b["output_tokens"]) / per, rated,
                                                  pa.float64()),
        "cost_per_hour": _nulls(cost, rated, pa.float64()),
        "remaining_minutes": _nulls(remaining, rated, pa.int64()),
        "projected_total_tokens": _nulls(projected, rated, pa.int64()),
        "projected_cost_usd": _nulls(_round((b["cost_usd"] + cost / 60 * remaining) * 100) / 100, rated,
                                     pa.float64()),
    }
    has = ~is_gap & (limit is not None)
    cap = float(limit or 1)  # (a limit is above 0)
    out["token_limit"] = _nulls(np.full(len(total), limit or 0), has, pa.int64())
    out["limit_percent"] = _nulls(total / cap * 100, has, pa.float64())
    judged = rated & has
    out["projected_percent"] = _nulls(projected / cap * 100, judged, pa.float64())
    status = np.where(projected > cap, 2, np.where(projected > cap * BLOCK_WARNING_SHARE, 1, 0))
    out["limit_status"] = strings(("ok", "warning", "exceeds")).take(arrow_indices(status, ~judged))
    return out


billing_blocks_df = df_variant(billing_blocks)
