"""Why the prompt cache missed: every call that wrote the cache again instead of reading it, and why.

A call *missed* when it wrote to the cache (``cache_write_tokens > 0``) and read less than the
previous call on its branch had left in the cache (that call's cache read + cache write): part of
the prefix was written again. The first call of a branch misses whenever it writes. The cause is
the first that applies of:

- ``first_call``: no earlier call on the branch;
- ``branch_switch``: the previous call in the file is on another branch (the user moved the leaf);
- ``compaction``: a compaction or a context edit between the previous call and this one;
- ``model_switch``: another provider or model than the previous call;
- ``system_change``: a system or developer message between them (the files record no tool lists:
  a change of tools alone is not seen);
- ``thinking_change``: a thinking-level change between them (Anthropic drops cached messages when
  the thinking budget changes);
- ``idle_gap``: more time between the previous call and this call's request (its parent entry)
  than the cache lives: 5 minutes, or 1 hour when the previous call wrote with a 1-hour lifetime
  (``cache_write_1h_tokens``);
- ``unexplained``: none of these (the provider evicted it, or something the file does not show).

``rewritten_tokens`` is what was written again: the previous call's cache minus this call's read,
at most this call's write (its whole write for a first call). ``cost_usd`` is what that cost over
reading it from the cache: rewritten tokens times (write price - read price) of the call's model,
the prices fitted to the recorded calls of the entries given (:func:`~sessionlab.fit_prices`:
what the sessions really paid; null for a model none of whose calls records a cost).

:func:`cache_ttl_whatif` asks what 1-hour writes would have changed: every idle-gap miss of at
most an hour becomes a read (saving its ``cost_usd``), and every write that remains pays the
1-hour surplus over the 5-minute price, from the ``genai-prices`` table (a price the sessions may
never have paid; null for a model it does not list).

Agents that record no cache writes (Codex) have no misses here; the call warns once, naming them.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar, strings, to_numpy
from ..tables import TIMESTAMP, Column, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, as_entries, select_sessions
from ..tables.forest import Forest
from ._insights_base import agent_codes, agents_lacking, seconds, warn_unrecorded
from .contexts import first_line_of_response
from .usage import _calls_mask, _codes, _np, previous_calls

__all__ = ["cache_misses", "cache_misses_df", "cache_ttl_whatif", "cache_ttl_whatif_df", "CACHE_MISS_COLUMNS",
           "CACHE_WHATIF_COLUMNS", "CAUSES"]

CAUSES = ("first_call", "branch_switch", "compaction", "model_switch", "system_change", "thinking_change",
          "idle_gap", "unexplained")
_S, _I64, _F64 = pa.string(), pa.int64(), pa.float64()
_TTL_5M, _TTL_1H = 300.0, 3600.0
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")

CACHE_MISS_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("at_id", _S, "The call that wrote the cache again."),
    Column("timestamp", TIMESTAMP, "Its timestamp."),
    Column("agent", _S, "Agent of the session."),
    Column("model", _S, "Its model."),
    Column("previous_call_id", _S, "The previous call on the branch (null for a first call)."),
    Column("cause", _S, "Why the cache missed, never null: " + ", ".join(f"'{c}'" for c in CAUSES) + "."),
    Column("gap_seconds", _F64, "Seconds from the previous call to this call's request (null for a first call)."),
    Column("ttl_seconds", _F64, "The cache lifetime the previous call's writes had: 300 or 3600."),
    Column("cache_read_tokens", _I64, "The call's cache read."),
    Column("cache_write_tokens", _I64, "The call's cache write."),
    Column("rewritten_tokens", _I64, "Tokens written again that the cache had held (see the module doc)."),
    Column("cost_usd", _F64, "rewritten_tokens x (write price - read price) of the model, the prices fitted to "
           "the recorded calls (fit_prices), USD; null for a model without a recorded cost."),
)
CACHE_WHATIF_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("agent", _S, "Agent of the session."),
    Column("calls", _I64, "Calls that wrote the cache."),
    Column("cache_write_tokens", _I64, "Tokens written with a 5-minute lifetime, as recorded."),
    Column("misses", _I64, "Misses (cache_misses rows)."),
    Column("misses_saved", _I64, "Idle-gap misses of 5-minute writes with a gap of at most an hour: reads "
           "with 1-hour writes."),
    Column("saved_tokens", _I64, "Their rewritten tokens."),
    Column("saved_usd", _F64, "What those rewrites cost over reading (cache_misses' cost_usd)."),
    Column("extra_write_usd", _F64, "The 1-hour price's surplus (genai-prices table) on the writes that remain."),
    Column("net_saving_usd", _F64, "saved_usd - extra_write_usd (negative: 1-hour writes cost more)."),
)


def _fitted(entries) -> dict:
    """(read, write) USD per token of each model, fitted to the recorded calls of all of
    ``entries`` (so a session's figures do not depend on which others are selected) as
    :func:`~sessionlab.fit_prices` fits them; None for a model without a recorded cost."""
    from ._prices import prices_from

    whole = as_entries(entries)
    rows = np.nonzero(_calls_mask(whole))[0]
    x = np.stack([_np(whole, c, 0, np.float64)[rows] for c in _USAGE], 1)
    enc = pc.dictionary_encode(pc.fill_null(whole["model"], scalar("")).combine_chunks())
    codes = np.asarray(to_numpy(enc.indices, 0), np.int64)[rows]
    fit = prices_from(enc.dictionary.to_pylist(), codes, x, _np(whole, "cost_usd", 0.0, np.float64)[rows])
    return {k: None if not any(p) else (p[2], p[3]) for k, p in fit.items()}


def _surplus_1h(models: list) -> dict:
    """The 1-hour write price's surplus over the 5-minute one, per token, from the price table."""
    from ..pricing import model_rates

    out = {}
    for m in set(models):  # a loop over distinct models
        r = model_rates(m) if m else None
        out[m] = None if r is None else r[4] - r[3]
    return out


def _misses(table: pa.Table) -> dict:
    """Every call's miss facts (arrays over the calls, in row order) and which missed."""
    f = Forest.of(table)
    calls = _calls_mask(table) & ~f.cyclic
    rows, prev, switched = previous_calls(f, calls)
    pp = np.maximum(prev, 0)
    first = prev < 0
    cr, cw = (_np(table, c, 0, np.int64)[rows] for c in ("cache_read_tokens", "cache_write_tokens"))
    cw1h = _np(table, "cache_write_1h_tokens", 0, np.int64) if "cache_write_1h_tokens" in table.column_names \
        else np.zeros(table.num_rows, np.int64)
    all_cr, all_cw = _np(table, "cache_read_tokens", 0, np.int64), _np(table, "cache_write_tokens", 0, np.int64)
    held = np.where(first, 0, all_cr[pp] + all_cw[pp])
    missed = (cw > 0) & (first | (cr < held))
    rewritten = np.where(first, cw, np.minimum(cw, np.maximum(held - cr, 0)))
    request = f.parent[first_line_of_response(SimpleNamespace(table=table, forest=f), rows)]  # type: ignore[arg-type]
    t_req = seconds(table, np.where(request >= 0, request, rows))
    gap = t_req - seconds(table, np.where(first, -1, prev))
    ttl = np.where(~first & (cw1h[pp] > 0), _TTL_1H, _TTL_5M)
    # what lies between the previous call and this one on the branch
    depth = f.depth
    base = np.maximum(request, 0)

    def since(mask: np.ndarray) -> np.ndarray:
        near = f.nearest(mask)[base]
        return (request >= 0) & (near >= 0) & (first | (depth[np.maximum(near, 0)] > depth[pp]))

    differs = np.zeros(len(rows), bool)
    for name in ("provider", "model"):
        code = _codes(table[name])[0]
        differs |= code[rows] != code[pp]
    cause = np.full(len(rows), CAUSES.index("unexplained"), np.int64)
    checks = [(first, "first_call"), (switched, "branch_switch"),
              (since(f.isin("type", ("compaction", "context_edit"))), "compaction"),
              (differs, "model_switch"),
              (since(f.isin("role", ("system", "developer")) & f.isin("type", ("message",))), "system_change"),
              (since(f.isin("type", ("thinking_level_change",))), "thinking_change"),
              (gap > ttl, "idle_gap")]
    for cond, name in reversed(checks):  # the first that applies wins
        cause[cond] = CAUSES.index(name)
    cause[first] = 0
    return {"f": f, "rows": rows, "prev": prev, "missed": missed, "cause": cause, "gap": gap, "ttl": ttl,
            "cr": cr, "cw": cw, "cw1h": cw1h[rows], "rewritten": rewritten}


def _cost(table: pa.Table, m: dict, sel: np.ndarray, prices: dict) -> tuple[np.ndarray, list]:
    """cost_usd of the calls ``sel`` (see the module doc), and their models."""
    models = table["model"].take(arrow_indices(m["rows"][sel])).to_pylist()
    known = {k or "": v for k, v in prices.items()}
    rate = np.array([(v[1] - v[0]) if (v := known.get(x or "")) else np.nan for x in models], np.float64)
    return m["rewritten"][sel] * rate, models


def _warn(table: pa.Table, m: dict, function: str) -> None:
    codes, names = agent_codes(table, m["f"])
    writes = m["cw"] > 0
    reads = m["cr"] > 0
    lacking = agents_lacking(codes, names, m["rows"][reads], writes[reads]) if reads.any() else []
    warn_unrecorded(function, "cache writes", lacking, then="their calls are left out", stacklevel=4)


@returns(CACHE_MISS_COLUMNS)
def cache_misses(entries, *, session_id: SessionIds = None) -> pa.Table:
    """Every call that wrote the prompt cache again, with its cause and what it cost.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table (Arrow or pandas).
        session_id: only the calls of this session (or these sessions).

    Returns:
        One row per miss (see :mod:`sessionlab.analysis._cache_misses`), in table order, with columns:

{columns}

    Example:
        >>> misses = cache_misses(load("data/"))  # doctest: +SKIP
        >>> misses.group_by("cause").aggregate([("cost_usd", "sum")])  # doctest: +SKIP
    """
    table = select_sessions(entries, session_id)
    m = _misses(table)
    _warn(table, m, "cache_misses")
    sel = m["missed"]
    rows, prev = m["rows"][sel], m["prev"][sel]
    cost, _ = _cost(table, m, sel, _fitted(entries))
    idx = arrow_indices(rows)
    first = prev < 0
    agent = table["agent"].take(idx) if "agent" in table.column_names else strings(["pi"] * len(rows))
    return arrow_table({
        "session_id": m["f"].per_file("session_id", rows),
        "at_id": table["entry_id"].take(idx),
        "timestamp": table["timestamp"].take(idx),
        "agent": agent,
        "model": table["model"].take(idx),
        "previous_call_id": table["entry_id"].take(arrow_indices(np.maximum(prev, 0), first)),
        "cause": strings(CAUSES).take(arrow_indices(m["cause"][sel])),
        "gap_seconds": from_numpy(m["gap"][sel], mask=np.isnan(m["gap"][sel]), type=_F64),
        "ttl_seconds": m["ttl"][sel],
        "cache_read_tokens": m["cr"][sel],
        "cache_write_tokens": m["cw"][sel],
        "rewritten_tokens": m["rewritten"][sel],
        "cost_usd": from_numpy(cost, mask=np.isnan(cost), type=_F64),
    }, schema_of(CACHE_MISS_COLUMNS))


cache_misses_df = df_variant(cache_misses)


@returns(CACHE_WHATIF_COLUMNS)
def cache_ttl_whatif(entries, *, session_id: SessionIds = None) -> pa.Table:
    """The same sessions with 1-hour instead of 5-minute cache writes: the rewrites saved against
    the 1-hour price's surplus on every write (see :mod:`sessionlab.analysis._cache_misses`).

    Returns:
        One row per session with a call that wrote the cache, with columns:

{columns}
    """
    table = select_sessions(entries, session_id)
    m = _misses(table)
    _warn(table, m, "cache_ttl_whatif")
    sel = m["cw"] > 0
    cost, models = _cost(table, m, sel, _fitted(entries))
    cost = np.nan_to_num(cost)
    w5_tokens = np.maximum(m["cw"][sel] - m["cw1h"][sel], 0)
    saved = m["missed"][sel] & (m["cause"][sel] == CAUSES.index("idle_gap")) & (m["ttl"][sel] == _TTL_5M) \
        & (m["gap"][sel] <= _TTL_1H)
    saved_tokens = np.where(saved, m["rewritten"][sel], 0)
    surplus = _surplus_1h(models)
    per_token = np.array([np.nan if surplus[x] is None else surplus[x] for x in models], np.float64)
    extra = np.nan_to_num((w5_tokens - saved_tokens) * per_token)
    rows = m["rows"][sel]
    code = m["f"].file_code[rows]
    files, inv = np.unique(code, return_inverse=True)
    first_row = m["f"].first_row_of_file[files]

    def total(v) -> np.ndarray:
        return np.bincount(inv, weights=v, minlength=len(files))

    saved_usd, extra_usd = total(np.where(saved, cost, 0.0)), total(extra)
    agent = table["agent"].take(arrow_indices(first_row)) if "agent" in table.column_names \
        else strings(["pi"] * len(files))
    return arrow_table({
        "session_id": m["f"].per_file("session_id", first_row),
        "agent": agent,
        "calls": total(np.ones(len(rows))).astype(np.int64),
        "cache_write_tokens": total(w5_tokens).astype(np.int64),
        "misses": total(m["missed"][sel].astype(np.float64)).astype(np.int64),
        "misses_saved": total(saved.astype(np.float64)).astype(np.int64),
        "saved_tokens": total(saved_tokens).astype(np.int64),
        "saved_usd": saved_usd,
        "extra_write_usd": extra_usd,
        "net_saving_usd": saved_usd - extra_usd,
    }, schema_of(CACHE_WHATIF_COLUMNS))


cache_ttl_whatif_df = df_variant(cache_ttl_whatif)
