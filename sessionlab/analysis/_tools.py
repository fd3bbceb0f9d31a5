"""What each tool costs: calls, failures, retries, the tokens its results add and carry, time.

A *tool call* here is one tool result message (``toolResult``: one per call the agent ran).
Per group of ``by`` keys:

- ``failures``: results marked as errors (``is_error``); null for agents whose files do not mark
  them (the call warns once, naming them);
- ``retries``: results whose previous tool result on the branch was a failure of the same tool;
- ``result_tokens``: pi's estimate of the results, summed;
- ``context_tokens``: the results' estimates summed over every later call whose context held
  them (a result in ten prompts counts ten times; a compaction that drops it ends that);
  ``context_share`` is that over the same calls' whole context estimate; ``cost_usd`` is each of
  those calls' cost times the share of its context the tool's results took (what carrying them
  cost);
- ``total_seconds`` / ``mean_seconds`` / ``max_seconds``: from the call that asked for the tool
  (the nearest assistant call above the result) to the result;
- ``largest_result_id`` / ``largest_result_tokens``: the result that blew the context up most.

The keys are ``tool_name``, ``agent``, ``model`` (of the call that asked for the tool; for the
carrying calls, their own), ``project`` (the session's ``cwd`` when given a Corpus, else the name
of its file's folder) and ``session_id``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentValueError
from ..tables._conventions import df_variant, returns
from ..tables._schema import Column, columns_doc, schema_of
from ..tables.corpus import Corpus, SessionIds, select_sessions
from ._insights_base import agent_codes, agents_lacking, seconds, take, warn_unrecorded
from .contexts import _Window, context_arrays, target_rows
from .usage import _group_sums, previous_calls

__all__ = ["tool_stats", "tool_stats_df", "TOOL_KEY_COLUMNS", "TOOL_COLUMNS", "TOOL_GROUPS"]

TOOL_GROUPS = ("tool_name", "agent", "model", "project", "session_id")
_S, _I64, _F64 = pa.string(), pa.int64(), pa.float64()

TOOL_KEY_COLUMNS: tuple[Column, ...] = (
    Column("tool_name", _S, "The tool."),
    Column("agent", _S, "Agent of the session."),
    Column("model", _S, "Model of the call that asked for the tool."),
    Column("project", _S, "The session's cwd (a Corpus), else its file's folder."),
    Column("session_id", _S, "Session id."),
)
TOOL_COLUMNS: tuple[Column, ...] = (
    Column("calls", _I64, "Tool results."),
    Column("failures", _I64, "Results marked as errors (null where the agent does not mark them)."),
    Column("failure_rate", _F64, "failures / calls."),
    Column("retries", _I64, "Results right after a failure of the same tool on the branch."),
    Column("result_tokens", _I64, "pi's estimate of the results, summed."),
    Column("context_tokens", _I64, "The results' estimates summed over every later call whose context held them."),
    Column("context_share", _F64, "context_tokens / those calls' context estimates (null: no such call)."),
    Column("cost_usd", _F64, "The carrying calls' cost in proportion to the share the results took, USD."),
    Column("total_seconds", _F64, "Seconds from the asking call to the result, summed."),
    Column("mean_seconds", _F64, "Their mean (null without timestamps)."),
    Column("max_seconds", _F64, "Their largest."),
    Column("largest_result_id", _S, "The group's largest result (by estimate)."),
    Column("largest_result_tokens", _I64, "Its estimate."),
)


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(col, fill), dtype)


def _project(entries, table: pa.Table, f) -> pa.Array:
    """Each file's project, one value per file (see the module doc)."""
    first = f.first_row_of_file
    if isinstance(entries, Corpus):
        s = entries.sessions
        cwd = pc.index_in(table["file"].take(arrow_indices(first)), value_set=s["file"])
        return s["cwd"].take(cwd)
    files = table["file"].take(arrow_indices(first)).to_pylist()
    import os

    return strings([os.path.basename(os.path.dirname(p)) if p else None for p in files])


def _carried(prep, tool_code: np.ndarray, n_tools: int, results: np.ndarray):
    """Per tool, the results' estimates in each call's context, and each call's context estimate."""
    f = prep.forest
    tgt, base = target_rows(prep, "calls")
    ok = base >= 0
    tgt, base = tgt[ok], base[ok]
    w = _Window(prep, base)
    total = prep.compute(base)["estimate_only"].astype(np.float64)
    carried = np.zeros((n_tools, len(base)), np.float64)
    for k in range(n_tools):  # a loop over tool names: one path sum each
        v = np.where(results & (tool_code == k), prep.est_msg, 0).astype(np.float64)
        if v.any():
            carried[k] = np.where(w.ok, w.window(f.path_sum(v), v), 0.0)
    return tgt, carried, total


@returns(TOOL_COLUMNS)
def tool_stats(entries, *, by: str | Sequence[str] = ("tool_name",), session_id: SessionIds = None) -> pa.Table:
    """Per tool (and ``by`` keys): calls, failures, retries, the tokens its results added and carried,
    their share of later prompts and what carrying them cost, and time to result.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table (Arrow or pandas).
        by: one key or several of ``TOOL_GROUPS`` (see the module doc); ``tool_name`` is always one.
        session_id: only these sessions.

    Returns:
        One row per group, sorted by the keys, with the keys among

{keys}

        then:

{columns}

    Example:
        >>> tool_stats(load("data/"), by=["tool_name", "agent"])  # doctest: +SKIP
    """
    keys = [by] if isinstance(by, str) else list(by)
    if "tool_name" not in keys:
        keys = ["tool_name", *keys]
    bad = [k for k in keys if k not in TOOL_GROUPS]
    if bad or len(set(keys)) != len(keys):
        raise ArgumentValueError("by", f"by must be distinct keys among {TOOL_GROUPS}, not {by!r}")
    table = select_sessions(entries, session_id)
    prep = context_arrays(table)
    f = prep.forest
    results = f.isin("role", ("toolResult",)) & f.isin("type", ("message",)) & ~f.cyclic
    results &= _np(pc.is_valid(table["tool_name"]), False, bool)
    col = table["tool_name"]
    enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    tool_code, tool_names = _np(enc.indices, -1, np.int64), enc.dictionary
    rows = np.nonzero(results)[0]
    asker = f.nearest(prep.is_call)[np.maximum(f.parent[rows], 0)]
    asker = np.where(f.parent[rows] >= 0, asker, -1)
    codes, names = agent_codes(table, f)
    is_err_valid = _np(pc.is_valid(table["is_error"]), False, bool)[rows]
    lacking = agents_lacking(codes, names, rows, is_err_valid)
    warn_unrecorded("tool_stats", "failed tool results", lacking)
    no_fail = np.isin(codes[rows], [names.index(a) for a in lacking])
    err = _np(table["is_error"], False, bool)
    _, prev, _ = previous_calls(f, results)
    pp = np.maximum(prev, 0)
    retry = (prev >= 0) & err[pp] & (tool_code[pp] == tool_code[rows])
    secs = seconds(table, rows) - seconds(table, asker)
    has_t = ~np.isnan(secs)
    project = _project(entries, table, f).take(arrow_indices(f.file_code))

    def key_cols(at: np.ndarray, model_rows: np.ndarray) -> dict:
        idx = arrow_indices(at)
        cols = {"tool_name": None, "agent": pc.fill_null(take(table["agent"], at), scalar("pi"))
                if "agent" in table.column_names else strings(["pi"] * len(at)),
                "model": take(table["model"], model_rows),
                "project": project.take(idx), "session_id": f.per_file("session_id", at)}
        return {k: cols[k] for k in keys}

    est = prep.est_msg[rows]
    kc = key_cols(rows, asker)
    kc["tool_name"] = take(table["tool_name"], rows)
    k_out, sums = _group_sums(kc, {
        "calls": np.ones(len(rows), np.int64), "failures": np.where(no_fail, 0, err[rows]).astype(np.int64),
        "retries": retry.astype(np.int64), "result_tokens": est.astype(np.int64),
        "total_seconds": np.where(has_t, secs, 0.0), "_timed": has_t.astype(np.int64),
        "_nofail": no_fail.astype(np.int64)})
    return _finish(table, prep, keys, k_out, sums, kc, rows, est, secs, tool_code, tool_names, results, key_cols)


tool_stats_df = df_variant(tool_stats)


def _finish(table, prep, keys, k_out, sums, kc, rows, est, secs, tool_code, tool_names, results, key_cols) -> pa.Table:
    """Add the carried tokens, shares, costs, max time and largest result to the group sums."""
    g = len(sums["calls"])
    # group of every result row: match its keys back to the groups' keys
    gkey = _join_keys([k_out[k] for k in keys])
    group = _np(pc.index_in(_join_keys([kc[k] for k in keys]), value_set=gkey), -1, np.int64)
    max_s = np.full(g, -np.inf)
    np.maximum.at(max_s, group, np.where(np.isnan(secs), -np.inf, secs))
    order = np.lexsort((-est, group))
    top = order[np.r_[True, group[order][1:] != group[order][:-1]]] if len(order) else order
    largest = np.full(g, -1, np.int64)
    largest[group[top]] = rows[top]
    # carried tokens: per tool, in every call's context, grouped by the call's keys
    n_tools = len(tool_names)
    tgt, carried, total = _carried(prep, tool_code, n_tools, results)
    cost = _np(table["cost_usd"], 0.0, np.float64)[tgt]
    ctx_tok, denom, cost_g = np.zeros(g), np.zeros(g), np.zeros(g)
    ck = key_cols(tgt, tgt)
    for k in range(n_tools):  # a loop over tool names
        ck["tool_name"] = strings([tool_names[k].as_py()]).take(arrow_indices(np.zeros(len(tgt), np.int64)))
        cg = _np(pc.index_in(_join_keys([ck[x] for x in keys]), value_set=gkey), -1, np.int64)
        hit = cg >= 0
        ctx_tok += np.bincount(cg[hit], weights=carried[k][hit], minlength=g)
        denom += np.bincount(cg[hit], weights=total[hit], minlength=g)
        share = np.where(total > 0, carried[k] / np.maximum(total, 1.0), 0.0)
        cost_g += np.bincount(cg[hit], weights=(share * cost)[hit], minlength=g)
    calls = sums["calls"]
    nofail = sums["_nofail"] == calls
    timed = sums["_timed"]
    out = {**{k: k_out[k] for k in keys},
           "calls": calls,
           "failures": from_numpy(sums["failures"], mask=nofail, type=_I64),
           "failure_rate": from_numpy(sums["failures"] / np.maximum(calls, 1), mask=nofail, type=_F64),
           "retries": sums["retries"], "result_tokens": sums["result_tokens"],
           "context_tokens": np.rint(ctx_tok).astype(np.int64),
           "context_share": from_numpy(ctx_tok / np.maximum(denom, 1.0), mask=denom <= 0, type=_F64),
           "cost_usd": cost_g,
           "total_seconds": sums["total_seconds"],
           "mean_seconds": from_numpy(sums["total_seconds"] / np.maximum(timed, 1), mask=timed == 0, type=_F64),
           "max_seconds": from_numpy(np.where(np.isfinite(max_s), max_s, 0.0), mask=~np.isfinite(max_s), type=_F64),
           "largest_result_id": table["entry_id"].take(arrow_indices(np.maximum(largest, 0), largest < 0)),
           "largest_result_tokens": prep.est_msg[np.maximum(largest, 0)].astype(np.int64)}
    key_schema = {c.name: c for c in TOOL_KEY_COLUMNS}
    result = arrow_table(out, schema_of(tuple(key_schema[k] for k in keys) + TOOL_COLUMNS))
    return result.sort_by([(k, "ascending") for k in keys])


def _join_keys(cols: list) -> pa.Array:
    """One string per row joining the key columns (nulls as a marker), to match groups."""
    parts = [pc.fill_null(pc.cast(c, _S), scalar("\x00null")) for c in cols]
    joined = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, scalar("\x1f"))
    return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


tool_stats.__doc__ = tool_stats.__doc__.replace("{keys}", columns_doc(TOOL_KEY_COLUMNS))  # type: ignore[union-attr]
tool_stats.key_columns = TOOL_KEY_COLUMNS  # type: ignore[attr-defined]  # the keys come first
