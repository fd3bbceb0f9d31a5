"""pi's cut point (``prepareCompaction``) for many targets of many sessions at once.

The same rules as :func:`~sessionlab.pi.compaction.prepare.prepare_compaction` (the plain
reference, tested equal on random trees), computed on the entries table:

- the boundary starts after the nearest compaction at or above the target;
- the backwards token walk over ``message`` entries is a path sum of their estimates: the
  crossing entry is the deepest message whose suffix sum reaches ``keep_recent_tokens``; the cut
  is the first valid cut point at or below it (path counts of cut points), else the first one in
  the boundary;
- the extension over non-message entries goes up to just below the nearest message or compaction;
- a split turn is a cut that is not a user message with a turn start at or above it.

Every "find the row on this path" step is :meth:`Forest.deepest_at_most` on a value that only
grows going down a path, so no Python loop runs per entry or per target.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import from_numpy, to_numpy
from ..analysis.contexts import Target, context_arrays, take_or_null, target_rows
from ..pi.compaction.rules import CUT_POINT_ENTRY_TYPES, CUT_POINT_ROLES, TURN_START_ENTRY_TYPES, TURN_START_ROLES
from ..pi.rules import Rules
from ..tables import Column, df_variant, returns, schema_of, table_rules_for
from ..tables.corpus import SessionIds
from ..tables.forest import Forest, as_table, at_load, per_table

__all__ = ["find_cut_points", "find_cut_points_df", "CUT_POINT_COLUMNS"]

_S, _I64 = pa.string(), pa.int64()

CUT_POINT_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("file", _S, "Session file."),
    Column("at_id", _S, "The target (the branch is root to it; for at='calls' the branch through the call, "
           "since pi checks for compaction after the call's response)."),
    Column("first_kept_entry_id", _S, "First entry kept (pi's firstKeptEntryId); null when pi returns nothing "
           "(the target is a compaction)."),
    Column("is_split_turn", pa.bool_(), "Whether the cut falls inside a turn."),
    Column("turn_start_id", _S, "The turn start at or above the cut (null when the cut is a user message or "
           "there is none)."),
    Column("tokens_before", _I64, "pi's tokensBefore: under pi-1.6 the projected estimate of the branch "
           "(estimateProjectedContextTokens); under pi-0.58 estimateContextTokens of the messages from the "
           "previous compaction on."),
    Column("messages_to_summarize", _I64, "Number of messages pi would summarize."),
    Column("turn_prefix_messages", _I64, "Number of messages of the split turn's prefix (0 when not split)."),
    Column("kept_message_tokens", _I64, "Estimated tokens of the message entries from the cut to the target."),
    Column("previous_compaction_id", _S, "The compaction the boundary starts after (null if none)."),
)


class _CutArrays:
    """Per-row arrays for cut points, built once per table."""

    def __init__(self, table: pa.Table) -> None:
        self.forest = f = Forest.of(table)  # (the table itself only through it: weakly)

        def num(col: str) -> np.ndarray:
            return np.asarray(to_numpy(table[col], 0), np.int64)

        is_msg = f.isin("type", ("message",))
        self.is_comp = f.isin("type", ("compaction",))
        self.is_user = is_msg & f.isin("role", ("user",))
        est = num("est_tokens")
        self.est = est
        msg_est = np.where(is_msg, est, 0)
        is_cut = (is_msg & f.isin("role", CUT_POINT_ROLES)) | f.isin("type", CUT_POINT_ENTRY_TYPES)
        turn = (is_msg & f.isin("role", TURN_START_ROLES)) | f.isin("type", TURN_START_ENTRY_TYPES)
        gives = is_msg | f.isin("type", ("custom_message", "branch_summary", "compaction"))
        usage_src = is_msg & f.isin("role", ("assistant",)) & ~f.isin("stop_reason", ("aborted", "error")) \
            & to_numpy(pc.is_valid(table["context_tokens"]), False)
        self.ctx_tok = num("context_tokens")
        self.cum_msg = f.path_sum(msg_est)
        self.cum_msg_excl = self.cum_msg - msg_est
        self.cnt_cut = f.path_sum(is_cut.astype(np.int64))
        self.cnt_cut_excl = self.cnt_cut - is_cut
        self.cnt_gives = f.path_sum(gives.astype(np.int64))
        self.cnt_gives_excl = self.cnt_gives - gives
        self.cum_est = f.path_sum(np.where(gives, est, 0))
        self.near_comp = f.nearest(self.is_comp)
        self.near_usage = f.nearest(usage_src)
        self.near_msg = f.nearest(is_msg)
        self.near_stop = f.nearest(is_msg | self.is_comp)
        self.near_turn = f.nearest(turn)


def _arrays(table: pa.Table) -> _CutArrays:
    return per_table(_CutArrays, table)


def cut_point_rows(a: _CutArrays, t: np.ndarray, keep_recent_tokens: int) -> dict[str, np.ndarray]:
    """The cut point for target rows ``t`` (row indices; -1 for none), as row indices and counts."""
    f = a.forest
    t = np.asarray(t, np.int64)
    tt = np.maximum(t, 0)
    ok = (t >= 0) & ~f.cyclic[tt] & ~a.is_comp[tt]
    prev = np.where(ok, a.near_comp[tt], -1)
    has_prev = prev >= 0
    pp = np.maximum(prev, 0)
    start_depth = np.where(has_prev, f.depth[pp] + 1, 0)
    # tokens before: pi's estimate over the messages from the previous compaction on
    u = a.near_usage[tt]
    uu = np.maximum(u, 0)
    u_ok = (u >= 0) & (~has_prev | (f.depth[uu] > f.depth[pp]))
    base_est = np.where(has_prev, a.cum_est[pp] - a.est[pp], 0)
    tokens_before = np.where(u_ok, a.ctx_tok[uu] + a.cum_est[tt] - a.cum_est[uu], a.cum_est[tt] - base_est)
    # valid cut points inside the boundary
    before_cuts = np.where(has_prev, a.cnt_cut[pp], 0)
    any_cut = a.cnt_cut[tt] > before_cuts
    boundary_start = f.deepest_at_most(f.depth, tt, start_depth)
    first_cut = f.deepest_at_most(a.cnt_cut_excl, tt, before_cuts)
    cut = np.where(any_cut, first_cut, boundary_start)
    # the crossing of keep_recent_tokens, walking back over message entries
    limit = a.cum_msg[tt] - keep_recent_tokens
    r = np.where(ok & any_cut & (limit >= 0), f.deepest_at_most(a.cum_msg_excl, tt, limit), -1)
    i = np.where(r >= 0, a.near_msg[np.maximum(r, 0)], -1)
    ii = np.maximum(i, 0)
    crossing = (i >= 0) & (f.depth[ii] >= start_depth)
    k = a.cnt_cut_excl[ii]
    later = crossing & (a.cnt_cut[tt] > k)
    cut = np.where(later, f.deepest_at_most(a.cnt_cut_excl, tt, k), cut)
    # extend back over non-message entries
    cc = np.maximum(cut, 0)
    par = f.parent[cc]
    m = np.where(par >= 0, a.near_stop[np.maximum(par, 0)], -1)
    new_depth = np.maximum(np.where(m >= 0, f.depth[np.maximum(m, 0)] + 1, 0), start_depth)
    move = ok & (cut >= 0) & (new_depth < f.depth[cc])
    cut = np.where(move, f.deepest_at_most(f.depth, cc, new_depth), cut)
    cut = np.where(ok, cut, -1)
    cc = np.maximum(cut, 0)
    # split turn
    ts = np.where(ok & ~a.is_user[cc], a.near_turn[cc], -1)
    ts = np.where((ts >= 0) & (f.depth[np.maximum(ts, 0)] >= start_depth), ts, -1)
    split = ts >= 0
    hist_end = np.where(split, ts, cut)
    base_gives = np.where(has_prev, a.cnt_gives[pp], 0)
    to_summarize = np.where(ok, a.cnt_gives_excl[np.maximum(hist_end, 0)] - base_gives, 0)
    prefix = np.where(split, a.cnt_gives_excl[cc] - a.cnt_gives_excl[np.maximum(ts, 0)], 0)
    kept = np.where(ok, a.cum_msg[tt] - a.cum_msg_excl[cc], 0)
    return {"ok": ok, "cut": cut, "turn_start": ts, "split": split, "tokens_before": tokens_before,
            "to_summarize": to_summarize, "prefix": prefix, "kept": kept, "prev": prev}


def _arrays16(table: pa.Table):
    from ._cut16 import CutArrays16

    return CutArrays16(context_arrays(table, "pi-1.6"))


@at_load
def _cut_arrays(table: pa.Table):
    """The cut-point arrays of ``table`` under its own rules (built with the load: cut points,
    simulations and the context timeline share them)."""
    if table_rules_for(table, None) == "pi-1.6":
        return per_table(_arrays16, table)
    return _arrays(table)


@returns(CUT_POINT_COLUMNS)
def find_cut_points(
    entries, *, at: Target = "calls", keep_recent_tokens: int = 20000, session_id: SessionIds = None,
    rules: Rules | None = None,
) -> pa.Table:
    """Where pi's ``prepareCompaction`` would cut, for many targets at once.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        at: ``"calls"`` (the default, as in :func:`~sessionlab.contexts`), ``"leaves"``,
            ``"entries"`` or entry ids (for calls the branch runs through the call).
        keep_recent_tokens: pi's ``keepRecentTokens`` (default 20000).
        session_id: only the targets of this session (or these sessions).
        rules: ``"pi-1.6"`` (pi's projection: the previous compaction's kept range is summarised
            again, nothing to summarise gives nulls) or ``"pi-0.58"``; default: the table's rules.

    Returns:
        One row per target (where pi returns nothing, the target is a compaction, or the branch
        loops, the values are null), with columns:

{columns}

    Example:
        >>> find_cut_points(load("data/"), at="leaves").to_pandas()  # doctest: +SKIP
    """
    table = as_table(entries)
    which = table_rules_for(table, rules)
    prep = context_arrays(table, which)
    # for calls the branch runs through the call itself: the targets are the calls, not their parents
    tgt, _ = target_rows(prep, at, session_id)
    if which == "pi-1.6":
        from ._cut16 import cut_point_rows_16

        r = cut_point_rows_16(per_table(_arrays16, table), tgt, keep_recent_tokens, prep.compute(tgt))
    else:
        r = cut_point_rows(_arrays(table), tgt, keep_recent_tokens)
    bad = ~r["ok"]

    def ints(x: np.ndarray) -> pa.Array:
        return from_numpy(x, mask=bad, type=pa.int64())

    return pa.Table.from_pydict({
        "session_id": prep.forest.per_file("session_id", tgt),
        "file": prep.forest.per_file("file", tgt),
        "at_id": take_or_null(table["entry_id"], tgt),
        "first_kept_entry_id": take_or_null(table["entry_id"], r["cut"]),
        "is_split_turn": from_numpy(r["split"], mask=bad, type=pa.bool_()),
        "turn_start_id": take_or_null(table["entry_id"], r["turn_start"]),
        "tokens_before": ints(r["tokens_before"]),
        "messages_to_summarize": ints(r["to_summarize"]),
        "turn_prefix_messages": ints(r["prefix"]),
        "kept_message_tokens": ints(r["kept"]),
        "previous_compaction_id": take_or_null(table["entry_id"], r["prev"]),
    }, schema=schema_of(CUT_POINT_COLUMNS))


find_cut_points_df = df_variant(find_cut_points)
