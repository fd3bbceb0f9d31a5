"""What each compaction dropped: the context before and after every compaction, message by message.

A *recorded* compaction is an entry the agent wrote: a pi ``compaction`` or ``branch_summary``, a
Claude Code compact boundary, a Codex compaction (all ``compaction`` rows but the branch
summaries). Its context *before* is pi's context at its parent (for a branch summary, which the
agent writes after moving to the new branch, at the entry written just before it: the leaf it
left); *after* is the context at the entry itself (the summary, then what was kept). A message
of the before context is ``dropped`` when the after context does not hold it, else ``kept``.

A *simulated* compaction is one of ``simulate_compaction(...).compactions``: after call ``k``
the policy keeps the branch's messages from its cut entry on and drops those from the previous
simulated cut (or the root) up to the cut (no cut entry: it keeps them all); the replay undoes
the session's own compactions, so
neither side holds their summaries.

Contexts and their members come from :mod:`.contexts` (the same arrays ``context_members``
walks), so the diff agrees with the object model by construction of those.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentTypeError
from ..pi.rules import Rules
from ..tables import Column, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, select_sessions
from ._insights_base import take
from ._members import members
from .contexts import context_arrays, take_or_null

__all__ = ["compaction_diff", "compaction_diff_df", "COMPACTION_DIFF_COLUMNS"]

_S, _I64 = pa.string(), pa.int64()

COMPACTION_DIFF_COLUMNS: tuple[Column, ...] = (
    Column("compaction_id", _S, "The compaction: its entry id when recorded; 'sim<policy_index>@<call id>' "
           "when simulated."),
    Column("session_id", _S, "Session id."),
    Column("source", _S, "'recorded' (an entry of the file) or 'simulated' (simulate_compaction)."),
    Column("compaction_kind", _S, "'compaction', 'branch_summary' or 'simulated'."),
    Column("policy", _S, "The simulated compaction's policy name (null when recorded)."),
    Column("at_id", _S, "The entry the context before is built at: the compaction's parent (a branch "
           "summary: the entry written before it), or the call a simulated compaction follows."),
    Column("status", _S, "'dropped' (left the context) or 'kept' (in the context after too)."),
    Column("entry_id", _S, "The message's entry (a compaction or branch summary for an earlier summary)."),
    Column("position", _I64, "Its 0-based position in the context before."),
    Column("entry_type", _S, "Its entry type (message, custom_message, compaction, branch_summary...)."),
    Column("role", _S, "Its message role (user, assistant, toolResult...; null for a summary)."),
    Column("tool_name", _S, "The tool of a toolResult message."),
    Column("est_tokens", _I64, "pi's estimate of the message (est_tokens)."),
    Column("summary_tokens", _I64, "pi's estimate of the compaction's summary (a Claude Code compact boundary: of "
           "the user message under it, which carries the summary; simulated: the context after "
           "minus the kept messages' estimates, at least 0)."),
    Column("tokens_before", _I64, "The agent's recorded context before (pi tokensBefore; simulated: the replay's "
           "context_before); null when not recorded."),
    Column("tokens_after", _I64, "The agent's recorded context after (Claude Code postTokens; simulated: the "
           "replay's context_after); null when not recorded."),
    Column("est_tokens_before", _I64, "Every message of the context before estimated (pi's rule), summed."),
    Column("est_tokens_after", _I64, "The same for the context after (summary and kept messages)."),
)


@returns(COMPACTION_DIFF_COLUMNS)
def compaction_diff(entries, *, session_id: SessionIds = None, simulation=None,
                    rules: Rules | None = None) -> pa.Table:
    """What every compaction dropped from the context and what it kept.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table (Arrow or pandas).
        session_id: only the compactions of this session (or these sessions).
        simulation: a :class:`~sessionlab.SimulationResult` of the same entries: its simulated
            compactions (``simulation.compactions``) are added after the recorded ones.
        rules: ``"pi-1.6"`` or ``"pi-0.58"``, as for :func:`contexts` (default: the table's).

    Returns:
        One row per message of each compaction's context before (recorded ones session by
        session in file order, then the simulated ones), with columns:

{columns}

    Example:
        >>> d = compaction_diff(load("data/"))  # doctest: +SKIP
        >>> d.filter(pc.equal(d["status"], "dropped"))  # doctest: +SKIP
    """
    table = select_sessions(entries, session_id)
    prep = context_arrays(table, rules)
    parts = [_recorded(prep)]
    if simulation is not None:
        if not hasattr(simulation, "compactions"):
            raise ArgumentTypeError("simulation",
                                    f"simulation must be a SimulationResult, not {type(simulation).__name__}")
        parts.append(_simulated(prep, simulation))
    return pa.concat_tables(parts)


compaction_diff_df = df_variant(compaction_diff)


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(col, fill), dtype)


def _member_pairs(prep, base: np.ndarray, r: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(target, entry row, first position) of each distinct member of the contexts at ``base``
    (``r``: their aggregates, ``prep.compute(base)``)."""
    q, row, pos = members(prep, r, base)
    key = q * max(prep.table.num_rows, 1) + row
    order = np.lexsort((pos, key))
    first = np.r_[True, key[order][1:] != key[order][:-1]] if len(key) else np.zeros(0, bool)
    sel = order[first]
    sel = sel[np.lexsort((pos[sel], q[sel]))]  # target by target, in context order
    return q[sel], row[sel], pos[sel]


def _recorded(prep) -> pa.Table:
    """The diff rows of the recorded compactions and branch summaries."""
    t, f = prep.table, prep.forest
    is_bs = f.isin("type", ("branch_summary",))
    comp = np.nonzero((prep.is_comp | is_bs) & ~f.cyclic)[0]
    bs = is_bs[comp]
    prev_row = np.where((comp > 0) & (f.file_code[np.maximum(comp - 1, 0)] == f.file_code[comp]), comp - 1, -1)
    before = np.where(bs, prev_row, f.parent[comp])
    before = np.where((before >= 0) & f.cyclic[np.maximum(before, 0)], -1, before)
    r_before, r_after = prep.compute(before), prep.compute(comp)
    qb, rb, pb = _member_pairs(prep, before, r_before)
    qa, ra, _ = _member_pairs(prep, comp, r_after)
    n = max(t.num_rows, 1)
    kept = np.isin(qb * n + rb, qa * n + ra)
    est_b, est_a = r_before["estimate_only"], r_after["estimate_only"]
    summary = _summary_tokens(prep, comp)
    est_a = est_a + summary - prep.est[comp]  # (a summary under the compaction entry counts after it)
    c = comp[qb]
    m = len(qb)
    return _rows(prep, {
        "compaction_id": take_or_null(t["entry_id"], c),
        "session_id": prep.forest.per_file("session_id", c),
        "source": strings(["recorded"]).take(arrow_indices(np.zeros(m, np.int64))),
        "compaction_kind": strings(["compaction", "branch_summary"]).take(arrow_indices(bs[qb].astype(np.int64))),
        "policy": pa.nulls(m, _S),
        "at_id": take_or_null(t["entry_id"], before[qb]),
        "status": kept, "entry_row": rb, "position": pb,
        "summary_tokens": summary[qb],
        "tokens_before": t["tokens_before"].take(arrow_indices(c)),
        "tokens_after": (t["tokens_after"] if "tokens_after" in t.column_names
                         else pa.nulls(t.num_rows, _I64)).take(arrow_indices(c)),
        "est_tokens_before": est_b[qb], "est_tokens_after": est_a[qb],
    })


def _summary_tokens(prep, comp: np.ndarray) -> np.ndarray:
    """The estimate of each compaction's summary: its own, or, when it holds none (a Claude Code
    compact boundary), that of the user message right under it."""
    f = prep.forest
    own = prep.est[comp].astype(np.int64)
    child = np.full(f.n, -1, np.int64)
    kids = np.nonzero(f.parent >= 0)[0]
    child[f.parent[kids][::-1]] = kids[::-1]  # each row's first child in file order
    first = child[comp]
    ff = np.maximum(first, 0)
    claude = f.isin("agent", ("claude-code",))[comp] if "agent" in prep.table.column_names \
        else np.zeros(len(comp), bool)
    under = claude & (own == 0) & (first >= 0) & prep.is_msg[ff] & f.isin("role", ("user",))[ff]
    return np.where(under, prep.est[ff], own)


def _rows(prep, cols: dict) -> pa.Table:
    """The diff table from per-row compaction columns and each member's row and status."""
    t = prep.table
    row = cols.pop("entry_row")
    kept = cols.pop("status")
    cols["status"] = pc.if_else(from_numpy(kept), scalar("kept"), scalar("dropped"))
    for name, column in (("entry_id", "entry_id"), ("entry_type", "type"), ("role", "role"),
                         ("tool_name", "tool_name")):
        cols[name] = take(t[column], row)
    cols["est_tokens"] = from_numpy(prep.est[row], type=_I64)
    return arrow_table(cols, schema_of(COMPACTION_DIFF_COLUMNS))


def _simulated(prep, simulation) -> pa.Table:
    """The diff rows of a simulation's compactions (see the module doc)."""
    f = prep.forest
    sim = simulation.compactions
    at = _rows_of(prep, sim["session_id"], sim["at_id"])
    cut = _rows_of(prep, sim["session_id"], sim["cut_entry_id"])
    ok = at >= 0
    sim, at, cut = sim.filter(from_numpy(ok)), at[ok], cut[ok]
    pidx = _np(sim["policy_index"], 0, np.int64)
    leaf = _np(pc.dictionary_encode(sim["leaf_id"].combine_chunks()).indices, 0, np.int64) if sim.num_rows \
        else np.zeros(0, np.int64)
    group = (f.file_code[at] * (pidx.max(initial=0) + 1) + pidx) * (leaf.max(initial=0) + 1) + leaf
    order = np.lexsort((_np(sim["call_index"], 0, np.int64), group))
    sim, at, cut, group, pidx = sim.take(arrow_indices(order)), at[order], cut[order], group[order], pidx[order]
    same = np.r_[False, group[1:] == group[:-1]]
    start = np.where(same, np.r_[-1, cut[:-1]], -1)  # the previous simulated cut on this branch
    q, row, pos = _path_walk(prep, at, start)
    # no cut entry: the policy kept every message (only the previous summary went)
    kept = (cut[q] < 0) | (f.depth[row] >= f.depth[np.maximum(cut[q], 0)])
    kept_est = np.bincount(q[kept], weights=prep.est[row[kept]], minlength=len(at)).astype(np.int64)
    est_b = np.bincount(q, weights=prep.est[row], minlength=len(at)).astype(np.int64)
    after = _np(sim["context_after"], 0, np.int64)
    m = len(q)
    names = [getattr(p, "name", str(p)) for p in simulation.policies] or ["?"]
    ids = [f"sim{p}@{a}" for p, a in zip(pidx.tolist(), sim["at_id"].to_pylist())]  # one per compaction
    take = arrow_indices(q)
    return _rows(prep, {
        "compaction_id": strings(ids).take(take),
        "session_id": sim["session_id"].take(take),
        "source": strings(["simulated"]).take(arrow_indices(np.zeros(m, np.int64))),
        "compaction_kind": strings(["simulated"]).take(arrow_indices(np.zeros(m, np.int64))),
        "policy": strings(names).take(arrow_indices(np.minimum(pidx[q], len(names) - 1))),
        "at_id": sim["at_id"].take(take),
        "status": kept, "entry_row": row, "position": pos,
        "summary_tokens": np.maximum(after - kept_est, 0)[q],
        "tokens_before": sim["context_before"].take(take),
        "tokens_after": sim["context_after"].take(take),
        "est_tokens_before": est_b[q], "est_tokens_after": (kept_est + np.maximum(after - kept_est, 0))[q],
    })


def _rows_of(prep, session_ids, entry_ids) -> np.ndarray:
    """The table row of each (session id, entry id) pair (-1: none)."""
    t = prep.table
    key = pc.binary_join_element_wise(t["session_id"], t["entry_id"], scalar("\x1f"))
    want = pc.binary_join_element_wise(session_ids, entry_ids, scalar("\x1f"))
    rows = _np(pc.index_in(want, value_set=key.combine_chunks()), -1, np.int64)
    if rows.size and (rows >= 0).any():  # a repeated id: pi's index takes the later row
        last = prep.forest.lookup(entry_ids, np.maximum(rows, 0))
        rows = np.where(rows >= 0, np.where(last >= 0, last, rows), -1)
    return rows


def _path_walk(prep, at: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(target, row, position) of the rows giving a message on the path from each ``at`` up to
    its ``start`` (included; -1: the root), in path order.

    The walk steps all targets up one level at a time (as :mod:`._members` does), so the work is
    proportional to the output; the Python loop runs once per level, not per entry.
    """
    f = prep.forest
    lo = np.where(start >= 0, f.depth[np.maximum(start, 0)], 0)
    cur = at.copy()
    qs, rs, ds = [], [], []
    active = np.nonzero(cur >= 0)[0]
    while active.size:
        rows = cur[active]
        give = prep.gives[rows]
        qs.append(active[give])
        rs.append(rows[give])
        ds.append(f.depth[rows[give]])
        nxt = f.parent[rows]
        cur[active] = nxt
        active = active[(nxt >= 0) & (f.depth[np.maximum(nxt, 0)] >= lo[active])]
    if not qs:
        z = np.zeros(0, np.int64)
        return z, z, z
    q, row, depth = np.concatenate(qs), np.concatenate(rs), np.concatenate(ds)
    order = np.lexsort((depth, q))
    q, row = q[order], row[order]
    first = np.r_[True, q[1:] != q[:-1]] if len(q) else np.zeros(0, bool)
    idx = np.arange(len(q))
    pos = idx - idx[first][np.cumsum(first) - 1]
    return q, row, pos
