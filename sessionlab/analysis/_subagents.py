"""What each subagent costs: spend per subagent run and per type, rolled up to the session that spawned it.

A *subagent run* is

- a session whose ``root_session_id`` is another session's: a Claude Code subagent file
  (``<session>/subagents/agent-*.jsonl``), a Codex sub-agent thread; the run is the whole session;
- in a session that is no subagent itself, a Claude Code sidechain written into the session's own
  file (older Claude Code ``Task`` transcripts): the rows with ``is_sidechain`` under one sidechain
  root; the run's id is ``<session_id>/<root entry id>``.

Its spend is that of its calls and other usage, counted as :func:`usage_by` counts them (streaming
duplicates and replayed parent responses once). ``subagent_type`` is the entries table's
``subagent_type`` (the type the spawning Claude Code Task/Agent call asked for); where a run's agent
records none (Codex threads, Claude Code sidechains written into the session's own file) it is null,
with one warning naming the agents.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentValueError
from ..tables import TIMESTAMP, Column, columns_doc, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, select_sessions
from ..tables.forest import Forest
from ._insights_base import seconds, warn_unrecorded
from .usage import _calls_mask, _group_sums, spend_mask

__all__ = ["subagent_costs", "subagent_costs_df", "SUBAGENT_SESSION_COLUMNS", "SUBAGENT_RUN_COLUMNS",
           "SUBAGENT_TYPE_COLUMNS"]

_S, _I64, _F64 = pa.string(), pa.int64(), pa.float64()
_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")

SUBAGENT_SESSION_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "The spawning (top) session."),
    Column("agent", _S, "Its agent."),
    Column("runs", _I64, "Subagent runs it spawned (0: none)."),
    Column("calls", _I64, "Its own calls."),
    Column("subagent_calls", _I64, "Its subagents' calls."),
    Column("own_cost_usd", _F64, "Its own spend, USD."),
    Column("subagent_cost_usd", _F64, "Its subagents' spend, USD."),
    Column("cost_usd", _F64, "own_cost_usd + subagent_cost_usd."),
    Column("subagent_share", _F64, "subagent_cost_usd / cost_usd (null when nothing was spent)."),
    Column("subagent_tokens", _I64, "Its subagents' input + output + cache read + cache write tokens."),
)
SUBAGENT_RUN_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "The spawning (top) session."),
    Column("run_id", _S, "The run: the subagent's session id, or '<session_id>/<sidechain root id>'."),
    Column("run_session_id", _S, "The session whose rows the run is."),
    Column("agent", _S, "Agent of the run."),
    Column("subagent_type", _S, "Its type where the table records one (else null)."),
    Column("calls", _I64, "Its calls."),
    *(Column(c, _I64, f"Its {c.replace('_', ' ')}.") for c in _TOKENS),
    Column("cost_usd", _F64, "Its spend, USD."),
    Column("first_timestamp", TIMESTAMP, "Its first entry's timestamp."),
    Column("last_timestamp", TIMESTAMP, "Its last entry's timestamp."),
    Column("duration_seconds", _F64, "last - first, seconds."),
)
SUBAGENT_TYPE_COLUMNS: tuple[Column, ...] = (
    Column("subagent_type", _S, "The type (null: not recorded)."),
    Column("agent", _S, "Agent."),
    Column("runs", _I64, "Runs of the type."),
    Column("calls", _I64, "Their calls."),
    *(Column(c, _I64, f"Their {c.replace('_', ' ')}.") for c in _TOKENS),
    Column("cost_usd", _F64, "Their spend, USD."),
    Column("mean_cost_usd", _F64, "cost_usd / runs."),
)


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(col, fill), dtype)


def _runs(table: pa.Table, f: Forest) -> tuple[np.ndarray, np.ndarray]:
    """Each row's run (its root row: the file's first row or the sidechain root; -1: no run) and
    each row's top session row (the first row of the spawning session's file, or -1 when that
    session is not in the table: then the top id is taken from root_session_id)."""
    n = table.num_rows
    first = f.first_row_of_file[f.file_code]
    sid = table["session_id"]
    root = table["root_session_id"] if "root_session_id" in table.column_names else sid
    sub_file = ~_np(pc.equal(pc.fill_null(root, scalar("")), pc.fill_null(sid, scalar(""))), True, bool)
    run = np.where(sub_file, first, -1)
    side = _np(table["is_sidechain"], False, bool) if "is_sidechain" in table.column_names else np.zeros(n, bool)
    side &= ~sub_file
    if side.any():
        par = f.parent
        side_root = side & ((par < 0) | ~side[np.maximum(par, 0)])
        near = f.nearest(side_root)
        run = np.where(side & (near >= 0), near, run)
    return run, sub_file


def subagent_costs(entries, *, by: Literal["session", "run", "type"] = "session",
                   session_id: SessionIds = None) -> pa.Table:
    """Subagent spend: per spawning session (``by="session"``), per run, or per type.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table (Arrow or pandas).
        by: ``"session"``: one row per top session (with or without subagents), columns

{columns}

            ``"run"``: one row per subagent run, columns ``SUBAGENT_RUN_COLUMNS``:

{runs}

            ``"type"``: one row per subagent type and agent, columns ``SUBAGENT_TYPE_COLUMNS``:

{types}

        session_id: only these top sessions (their subagents included).

    Example:
        >>> subagent_costs(load("data/claude"), by="run")  # doctest: +SKIP
    """
    if by not in ("session", "run", "type"):
        raise ArgumentValueError("by", f"by must be 'session', 'run' or 'type', not {by!r}")
    table = select_sessions(entries, None)
    if session_id is not None:  # a top session's subagents come with it
        from ..tables.corpus import session_ids

        want = strings(session_ids(session_id) or [])
        root = table["root_session_id"] if "root_session_id" in table.column_names else table["session_id"]
        keep = pc.or_kleene(pc.is_in(table["session_id"], value_set=want), pc.is_in(root, value_set=want))
        table = table.filter(pc.fill_null(keep, False))
    f = Forest.of(table)
    run, _ = _runs(table, f)
    calls = _calls_mask(table)
    spend = spend_mask(table, calls)
    top = pc.fill_null(table["root_session_id"], table["session_id"]) if "root_session_id" in table.column_names \
        else table["session_id"]
    if by == "session":
        return _by_session(table, f, run, calls, spend, top)
    runs = _by_run(table, f, run, calls, spend, top)
    untyped = runs.filter(pc.is_null(runs["subagent_type"])) if runs.num_rows else runs
    if untyped.num_rows:
        warn_unrecorded("subagent_costs", "the subagent's type (no spawning call that names one)",
                        sorted(set(untyped["agent"].to_pylist())))
    return runs if by == "run" else _by_type(runs)


def _sums(table: pa.Table, rows: np.ndarray, calls: np.ndarray, spend: np.ndarray) -> dict:
    """The calls, tokens and cost of ``rows`` (spend rows only: each usage once)."""
    out = {"calls": calls[rows].astype(np.int64)}
    on = spend[rows]
    for c in _TOKENS:
        out[c] = np.where(on, _np(table[c], 0, np.int64)[rows], 0)
    out["cost_usd"] = np.where(on, _np(table["cost_usd"], 0.0, np.float64)[rows], 0.0)
    return out


def _agent(table: pa.Table, rows: np.ndarray) -> pa.Array:
    if "agent" not in table.column_names:
        return strings(["pi"] * len(rows))
    return pc.fill_null(table["agent"].take(arrow_indices(rows)), scalar("pi"))


def _by_run(table, f, run, calls, spend, top) -> pa.Table:
    in_run = np.nonzero(run >= 0)[0]
    keys, sums = _group_sums({"_run": from_numpy(run[in_run], type=_I64)}, _sums(table, in_run, calls, spend))
    root = _np(keys["_run"], 0, np.int64)
    order = np.argsort(root, kind="stable")
    root = root[order]
    sums = {k: v[order] for k, v in sums.items()}
    # first/last timestamp of each run: sort its rows by time
    ts = seconds(table, in_run)
    grp = np.searchsorted(root, run[in_run])
    lo = np.full(len(root), np.inf)
    hi = np.full(len(root), -np.inf)
    np.minimum.at(lo, grp, np.where(np.isnan(ts), np.inf, ts))
    np.maximum.at(hi, grp, np.where(np.isnan(ts), -np.inf, ts))
    has = np.isfinite(lo)
    is_side = f.first_row_of_file[f.file_code[root]] != root
    sid = f.per_file("session_id", root)
    run_id = pc.if_else(from_numpy(is_side), pc.binary_join_element_wise(sid, table["entry_id"].take(
        arrow_indices(root)), scalar("/")), sid)
    stype = table["subagent_type"].take(arrow_indices(root)) if "subagent_type" in table.column_names \
        else pa.nulls(len(root), _S)
    ms = np.where(has, lo * 1000, 0).astype(np.int64)
    ms_hi = np.where(has, hi * 1000, 0).astype(np.int64)
    return arrow_table({
        "session_id": top.take(arrow_indices(root)),
        "run_id": run_id, "run_session_id": sid, "agent": _agent(table, root), "subagent_type": stype,
        "calls": sums["calls"], **{c: sums[c] for c in _TOKENS}, "cost_usd": sums["cost_usd"],
        "first_timestamp": from_numpy(ms, mask=~has, type=pa.int64()).cast(TIMESTAMP),
        "last_timestamp": from_numpy(ms_hi, mask=~has, type=pa.int64()).cast(TIMESTAMP),
        "duration_seconds": from_numpy(np.where(has, hi - lo, 0.0), mask=~has, type=_F64),
    }, schema_of(SUBAGENT_RUN_COLUMNS))


def _by_session(table, f, run, calls, spend, top) -> pa.Table:
    rows = np.nonzero(spend | (run >= 0) | np.isin(np.arange(table.num_rows), f.first_row_of_file))[0]
    sub = run[rows] >= 0
    s = _sums(table, rows, calls, spend)
    tok = sum(s[c] for c in _TOKENS)
    run_start = sub & (rows == run[rows])
    keys, g = _group_sums({"session_id": top.take(arrow_indices(rows))}, {
        "runs": run_start.astype(np.int64),
        "calls": np.where(sub, 0, s["calls"]), "subagent_calls": np.where(sub, s["calls"], 0),
        "own_cost_usd": np.where(sub, 0.0, s["cost_usd"]), "subagent_cost_usd": np.where(sub, s["cost_usd"], 0.0),
        "subagent_tokens": np.where(sub, tok, 0), "_own_row": np.where(sub, 0, 1)})
    # the agent of the top session: of one of its own rows, else of a subagent row
    group = _np(pc.index_in(top.take(arrow_indices(rows)), value_set=keys["session_id"]), 0, np.int64)
    pick = np.full(len(g["runs"]), -1, np.int64)
    pick[group[::-1]] = rows[::-1]
    own = np.nonzero(~sub)[0]
    pick[group[own][::-1]] = rows[own][::-1]
    total = g["own_cost_usd"] + g["subagent_cost_usd"]
    out = arrow_table({
        "session_id": keys["session_id"], "agent": _agent(table, pick), "runs": g["runs"], "calls": g["calls"],
        "subagent_calls": g["subagent_calls"], "own_cost_usd": g["own_cost_usd"],
        "subagent_cost_usd": g["subagent_cost_usd"], "cost_usd": total,
        "subagent_share": from_numpy(g["subagent_cost_usd"] / np.where(total > 0, total, 1.0), mask=total <= 0,
                                     type=_F64),
        "subagent_tokens": g["subagent_tokens"],
    }, schema_of(SUBAGENT_SESSION_COLUMNS))
    return out.sort_by([("session_id", "ascending")])


def _by_type(runs: pa.Table) -> pa.Table:
    keys, g = _group_sums({"subagent_type": runs["subagent_type"], "agent": runs["agent"]}, {
        "runs": np.ones(runs.num_rows, np.int64), "calls": _np(runs["calls"], 0, np.int64),
        **{c: _np(runs[c], 0, np.int64) for c in _TOKENS}, "cost_usd": _np(runs["cost_usd"], 0.0, np.float64)})
    out = arrow_table({**keys, **g, "mean_cost_usd": g["cost_usd"] / np.maximum(g["runs"], 1)},
                      schema_of(SUBAGENT_TYPE_COLUMNS))
    return out.sort_by([("subagent_type", "ascending"), ("agent", "ascending")])


subagent_costs.__doc__ = (subagent_costs.__doc__ or "").replace(
    "{runs}", columns_doc(SUBAGENT_RUN_COLUMNS, 12)).replace("{types}", columns_doc(SUBAGENT_TYPE_COLUMNS, 12))
subagent_costs = returns(SUBAGENT_SESSION_COLUMNS, indent=12)(subagent_costs)
subagent_costs_df = df_variant(subagent_costs)
