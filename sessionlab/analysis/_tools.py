"""What each tool costs: calls, failures, retries, the tokens its results add and carry, time.

A *tool call* here is one tool result message (``toolResult``: one per call the agent ran).
Per group of ``by`` keys:

- ``failures``: results marked as errors (``is_error``); null for agents whose files do not mark
  them (the call warns once, naming them);
- ``retries``: results whose previous tool result on the branch was a failure of the same tool;
- ``result_tokens``: pi's estimate of the results, summed;
- ``context_tokens``: the results' estimates summed over every later call whose context held
  them (a result in ten prompts counts ten times; a compaction that drops it ends that);
  ``context_share`` is that over the same calls' whole context estimate (the calls of the
  group's sessions); ``cost_usd`` is each of those calls' cost times the share of its context
  the group's results took (what carrying them cost); a pi 1.6 context edit that removes or
  replaces a result counts there;
- ``total_seconds`` / ``mean_seconds`` / ``max_seconds``: from the call that asked for the tool
  (the nearest assistant call above the result) to the result;
- ``largest_result_id`` / ``largest_result_tokens``: the result that blew the context up most.

The keys are ``tool_name``, ``agent``, ``model`` (of the call that asked for the tool),
``project`` (the session's ``cwd`` when given a Corpus, else the name of its file's folder) and
``session_id``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentValueError
from ..tables import Column, columns_doc, df_variant, returns, schema_of
from ..tables.corpus import Corpus, SessionIds, select_sessions
from ._insights_base import agent_codes, agents_lacking, edit_deltas, seconds, warn_unrecorded
from .contexts import _Window, context_arrays, target_rows
from .usage import previous_calls

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
    tool_code, tool_names = _dictionary(table["tool_name"])
    rows = np.nonzero(results)[0]
    asker_all = np.where(f.parent >= 0, f.nearest(prep.is_call)[np.maximum(f.parent, 0)], -1)  # the asking call
    asker = asker_all[rows]
    agent, names = agent_codes(table, f)
    is_err_valid = _np(pc.is_valid(table["is_error"]), False, bool)[rows]
    lacking = agents_lacking(agent, names, rows, is_err_valid)
    warn_unrecorded("tool_stats", "failed tool results", lacking)
    no_fail = np.isin(agent[rows], [names.index(a) for a in lacking])
    err = _np(table["is_error"], False, bool)
    _, prev, _ = previous_calls(f, results)
    pp = np.maximum(prev, 0)
    retry = (prev >= 0) & err[pp] & (tool_code[pp] == tool_code[rows])
    secs = seconds(table, rows) - seconds(table, asker)
    keyer = _Keys(entries, table, f, keys, agent, len(tool_names))
    group, first = keyer.groups(keyer.of(tool_code[rows], rows, keyer.model_of(asker)))
    g = len(first)

    def total(v) -> np.ndarray:
        return np.bincount(group, weights=v, minlength=g)

    est = prep.est_msg[rows].astype(np.float64)
    sums = {"calls": total(np.ones(len(rows))), "failures": total(np.where(no_fail, 0, err[rows])),
            "retries": total(retry), "result_tokens": total(est), "_nofail": total(no_fail),
            "total_seconds": total(np.nan_to_num(secs)), "_timed": total(~np.isnan(secs))}
    max_s = np.full(g, -np.inf)
    np.maximum.at(max_s, group, np.where(np.isnan(secs), -np.inf, secs))
    order = np.lexsort((-est, group))
    top = order[np.r_[True, group[order][1:] != group[order][:-1]]] if len(order) else order
    largest = np.full(g, -1, np.int64)
    largest[group[top]] = rows[top]
    carried = _carried_by_group(prep, keyer, tool_code, results, asker_all, g)
    cols = keyer.columns(table, rows[first], asker[first], tool_names, tool_code[rows[first]])
    return _table(table, prep, keys, cols, sums, max_s, largest, carried)


tool_stats_df = df_variant(tool_stats)


def _dictionary(col) -> tuple[np.ndarray, pa.Array]:
    """Codes (-1: null) and distinct values of a string column."""
    enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    return _np(enc.indices, -1, np.int64), enc.dictionary


class _Keys:
    """The ``by`` keys of rows as one integer (mixed radix over each key's codes), so groups are
    found with integer sorts; a result's model is its asking call's, a carrying call's its own."""

    def __init__(self, entries, table: pa.Table, f, keys: list[str], agent: np.ndarray, n_tools: int) -> None:
        self.keys, self.f = keys, f
        self.model, self.model_names = _dictionary(table["model"])
        self.project_values = _project(entries, table, f)
        project, _ = _dictionary(self.project_values)
        session, _ = _dictionary(f.per_file("session_id", f.first_row_of_file))
        per_file = f.file_code
        self.code = {"agent": agent, "project": project[per_file], "session_id": session[per_file]}
        self.radix = {"tool_name": n_tools + 1, "agent": int(agent.max(initial=0)) + 2,
                      "model": len(self.model_names) + 2, "project": int(project.max(initial=0)) + 2,
                      "session_id": int(session.max(initial=0)) + 2}

    def model_of(self, rows: np.ndarray) -> np.ndarray:
        """The model code of ``rows`` (-1: none)."""
        return np.where(rows >= 0, self.model[np.maximum(rows, 0)], -1)

    def of(self, tool: np.ndarray, rows: np.ndarray, model: np.ndarray) -> np.ndarray:
        """The key of ``rows`` given their tool and model codes."""
        key = np.zeros(len(rows), np.int64)
        for k in self.keys:
            if k == "tool_name":
                c = tool
            elif k == "model":
                c = model
            else:
                c = self.code[k][rows]
            key = key * self.radix[k] + (c + 1)
        return key

    def groups(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Group number of each key (groups in key order) and the first row of each group."""
        order = np.argsort(key, kind="stable")
        sk = key[order]
        start = np.r_[True, sk[1:] != sk[:-1]] if len(sk) else np.zeros(0, bool)
        group = np.empty(len(key), np.int64)
        group[order] = np.cumsum(start) - 1
        self.unique = sk[start]
        return group, order[start]

    def find(self, key: np.ndarray) -> np.ndarray:
        """The group of each key (-1: no result has it)."""
        if not len(self.unique):
            return np.full(len(key), -1, np.int64)
        pos = np.minimum(np.searchsorted(self.unique, key), len(self.unique) - 1)
        return np.where(self.unique[pos] == key, pos, -1)

    def columns(self, table: pa.Table, rows: np.ndarray, askers: np.ndarray, tool_names: pa.Array,
                tools: np.ndarray) -> dict:
        """The key columns of the groups (``rows``: one result of each)."""
        f, out = self.f, {}
        for k in self.keys:
            if k == "tool_name":
                out[k] = tool_names.take(arrow_indices(tools))
            elif k == "agent":
                out[k] = pc.fill_null(table["agent"].take(arrow_indices(rows)), scalar("pi")) \
                    if "agent" in table.column_names else strings(["pi"] * len(rows))
            elif k == "model":
                out[k] = table["model"].take(arrow_indices(np.maximum(askers, 0), askers < 0))
            elif k == "project":
                out[k] = self.project_values.take(arrow_indices(f.file_code[rows]))
            else:
                out[k] = f.per_file("session_id", rows)
        return out


def _carried_by_group(prep, keyer: _Keys, tool_code: np.ndarray, results: np.ndarray, asker: np.ndarray,
                      g: int) -> dict:
    """Per group: its results' tokens in every later context, those contexts' size, and what
    carrying them cost. A group's results are those of one tool (and, grouping by model, asked
    for by one model): one path sum per such pair, each carrying call keyed by its own session's
    keys, so the groups' figures add up to the tool's."""
    f = prep.forest
    model = keyer.model_of(asker) if "model" in keyer.keys else np.zeros(len(asker), np.int64)
    rows = np.nonzero(results)[0]
    width = int(model.max(initial=0)) + 2
    pair = np.sort(tool_code[rows] * width + model[rows] + 1)
    pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair
    pairs = zip((pair // width).tolist(), (pair % width - 1).tolist())
    tgt, base = target_rows(prep, "calls")
    ok = base >= 0
    tgt, base = tgt[ok], base[ok]
    w = _Window(prep, base)
    cost = _np(prep.table["cost_usd"], 0.0, np.float64)[tgt]
    out = {"tokens": np.zeros(g), "denom": np.zeros(g), "cost": np.zeros(g)}
    r = prep.compute(base)
    total = r["estimate_only"].astype(np.float64)
    ek, ex, edelta = edit_deltas(prep, base, r)  # pi 1.6's context edits of the results
    for k, m in pairs:  # a loop over (tool, model) pairs: one path sum each
        mine = results & (tool_code == k) & (model == m)
        v = np.where(mine, prep.est_msg, 0).astype(np.float64)
        carried = np.where(w.ok, w.window(f.path_sum(v), v), 0.0)
        hit_edit = mine[ex]
        carried += np.bincount(ek[hit_edit], weights=edelta[hit_edit], minlength=len(base))
        cg = keyer.find(keyer.of(np.full(len(tgt), k), tgt, np.full(len(tgt), m)))
        hit = cg >= 0
        share = np.where(total > 0, carried / np.maximum(total, 1.0), 0.0)
        out["tokens"] += np.bincount(cg[hit], weights=carried[hit], minlength=g)
        out["denom"] += np.bincount(cg[hit], weights=total[hit], minlength=g)
        out["cost"] += np.bincount(cg[hit], weights=(share * cost)[hit], minlength=g)
    return out


def _table(table, prep, keys, cols, sums, max_s, largest, carried) -> pa.Table:
    calls = sums["calls"].astype(np.int64)
    nofail = sums["_nofail"] == calls
    timed = sums["_timed"]
    failures = sums["failures"].astype(np.int64)
    denom = carried["denom"]
    out = {**cols,
           "calls": calls,
           "failures": from_numpy(failures, mask=nofail, type=_I64),
           "failure_rate": from_numpy(failures / np.maximum(calls, 1), mask=nofail, type=_F64),
           "retries": sums["retries"].astype(np.int64), "result_tokens": sums["result_tokens"].astype(np.int64),
           "context_tokens": np.rint(carried["tokens"]).astype(np.int64),
           "context_share": from_numpy(carried["tokens"] / np.maximum(denom, 1.0), mask=denom <= 0, type=_F64),
           "cost_usd": carried["cost"],
           "total_seconds": sums["total_seconds"],
           "mean_seconds": from_numpy(sums["total_seconds"] / np.maximum(timed, 1), mask=timed == 0, type=_F64),
           "max_seconds": from_numpy(np.where(np.isfinite(max_s), max_s, 0.0), mask=~np.isfinite(max_s), type=_F64),
           "largest_result_id": table["entry_id"].take(arrow_indices(np.maximum(largest, 0), largest < 0)),
           "largest_result_tokens": prep.est_msg[np.maximum(largest, 0)].astype(np.int64)}
    key_schema = {c.name: c for c in TOOL_KEY_COLUMNS}
    result = arrow_table(out, schema_of(tuple(key_schema[k] for k in keys) + TOOL_COLUMNS))
    return result.sort_by([(k, "ascending") for k in keys])


tool_stats.__doc__ = tool_stats.__doc__.replace("{keys}", columns_doc(TOOL_KEY_COLUMNS))  # type: ignore[union-attr]
tool_stats.key_columns = TOOL_KEY_COLUMNS  # type: ignore[attr-defined]  # the keys come first
