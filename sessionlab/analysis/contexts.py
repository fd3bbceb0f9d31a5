"""What the model saw: pi's context for every call, leaf or entry of every session at once.

The object model builds one context by walking parent pointers (``Session.build_context``, pi's
``buildSessionContext``). Here the same rules run on the entries table with parent-index arrays
and pointer doubling (see :mod:`._forest`):

- an entry *gives a message* when it is a ``message``, a ``custom_message`` or a
  ``branch_summary`` with a non-empty summary; path sums of that flag and of ``est_tokens`` give
  every context's size in one pass;
- the compaction in effect is the nearest compaction at or above the target; its kept range
  starts at ``first_kept_entry_id`` when that entry is an ancestor of the compaction, else right
  after the compaction; the context is its summary plus the messages of the kept range;
- thinking level and model are the nearest ``thinking_level_change`` and the nearest
  ``model_change``-or-assistant message at or above the target, over the whole path;
- ``context_tokens`` is pi's ``estimateContextTokens``: the usage of the last assistant message in
  the context that is neither aborted nor an error, plus the estimates of the messages after it;
  without one, the estimates of all messages.

A compaction with the seed's ``retained_tail`` carries its kept messages itself: the entries table
holds their count and estimates (``retained_tail_*`` columns), and the context is the summary, the
tail, then the entries after the compaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._rules import Rules, pi_rules
from ..tables._conventions import df_variant, returns
from ..tables._pi16 import table_rules_for
from ..tables._schema import Column, schema_of
from ..tables.corpus import SessionIds, session_mask
from ._forest import Forest, as_table, per_table

__all__ = ["contexts", "contexts_df", "context_members", "context_members_df", "context_messages", "CONTEXT_COLUMNS",
           "MEMBER_COLUMNS", "Target"]

Target = Union[Literal["calls", "leaves", "entries"], Sequence[str], "np.ndarray", pa.Array]

_S, _I64 = pa.string(), pa.int64()

CONTEXT_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("file", _S, "Session file."),
    Column("at_id", _S, "The target: an assistant message for at='calls', else the entry itself."),
    Column("context_id", _S, "The entry the context is built at (for a call: its parent, i.e. what the model "
           "was sent)."),
    Column("message_count", _I64, "Length of pi's buildSessionContext message list there (null on a parent "
           "cycle)."),
    Column("context_tokens", _I64, "pi's estimateContextTokens of that context."),
    Column("usage_tokens", _I64, "Usage tokens of the last valid assistant message in the context (0 if none; "
           "when it sits in a seed retained tail, plus the estimates after it within the tail)."),
    Column("trailing_tokens", _I64, "Estimated tokens of the messages after it (all messages if none)."),
    Column("projected_tokens", _I64, "pi 1.6's estimateProjectedContextTokens (what it compares with the window "
           "and records as tokensBefore): context_tokens while the usage is newer than every context_edit and "
           "compaction on the path, else every message estimated (the current system message once). Null "
           "under rules='pi-0.58'."),
    Column("thinking_level", _S, "Thinking level in effect ('off' by default)."),
    Column("provider", _S, "Provider of the model in effect (null if none)."),
    Column("model", _S, "Model id in effect (null if none)."),
    Column("compaction_id", _S, "The compaction in effect (null if none)."),
    Column("prompt_tokens", _I64, "The prompt the call's usage records (input + cache read + cache write; Codex "
           "input_tokens): the real count, to set beside the estimates. at='calls' only (null for other "
           "targets and for a call without usage)."),
    Column("estimated_tokens", _I64, "sessionlab's own estimate of the context: every message estimated (pi's "
           "ceil(chars / 4)), no recorded usage used; it leaves out the system prompt and tool definitions, "
           "which the files do not hold."),
)
MEMBER_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("at_id", _S, "The target, as in contexts()."),
    Column("entry_id", _S, "Entry that gives the message (the compaction for its summary)."),
    Column("position", _I64, "0-based position of the message in the context."),
)


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(pc.fill_null(col, fill).to_numpy(zero_copy_only=False), dtype)


class _Prepared:
    """Per-row arrays every context computation needs, built once per table and rules."""

    def __init__(self, table: pa.Table, rules: Rules = "pi-1.6") -> None:
        self.table = table
        self.rules = r = pi_rules(rules)
        self.forest = f = Forest.of(table)
        n = table.num_rows

        def b(expr) -> np.ndarray:
            return np.asarray(pc.fill_null(expr, False).to_numpy(zero_copy_only=False), bool)

        is_msg = f.isin("type", ("message",))
        self.is_assistant = is_msg & f.isin("role", ("assistant",))
        # calls: every assistant message of a pi file; of Claude Code and Codex files, the rows that
        # carry a response's usage (its other streaming lines and replayed copies carry none)
        if "agent" in table.column_names:
            other = b(pc.not_equal(table["agent"], "pi"))
            self.is_call = self.is_assistant & ~(other & ~b(pc.is_valid(table["input_tokens"])))
        else:
            self.is_call = self.is_assistant
        self.is_comp = f.isin("type", ("compaction",))
        summary_nonempty = np.asarray(pc.fill_null(table["summary_chars"], 0).to_numpy(zero_copy_only=False)) > 0
        branch_summary = f.isin("type", ("branch_summary",)) & summary_nonempty
        never = b(table["never_in_context"]) if "never_in_context" in table.column_names else np.zeros(n, bool)
        self.gives = (is_msg | f.isin("type", ("custom_message",)) | branch_summary) & ~never
        est = np.asarray(pc.fill_null(table["est_tokens"], 0).to_numpy(zero_copy_only=False), np.int64)
        self.est = est
        self.est_msg = np.where(self.gives, est, 0)
        ctx_tok = table["context_tokens"]
        has_usage = b(pc.is_valid(ctx_tok))
        bad_stop = f.isin("stop_reason", ("aborted", "error"))
        self.usage_source = self.is_assistant & has_usage & ~bad_stop & self.gives
        if r.skip_zero_usage:
            self.usage_source &= _np(ctx_tok, 0, np.int64) > 0
        self.ctx_tok = np.asarray(pc.fill_null(ctx_tok, 0).to_numpy(zero_copy_only=False), np.int64)
        self.cum_n = f.path_sum(self.gives.astype(np.int64))
        self.cum_est = f.path_sum(self.est_msg)
        self.comp = f.nearest(self.is_comp)
        self.usage = f.nearest(self.usage_source)
        self.think = f.nearest(f.isin("type", ("thinking_level_change",)))
        self.model_src = f.nearest(self.is_assistant | f.isin("type", ("model_change",)))
        # the first kept entry of every compaction, if it is an ancestor of that compaction
        # the seed's retained tail: messages the compaction carries itself
        tail_n = table["retained_tail_messages"] if "retained_tail_messages" in table.column_names else None
        self.has_tail = np.zeros(n, bool) if tail_n is None else _np(pc.is_valid(tail_n), False, bool)
        self.tail_n = np.zeros(n, np.int64) if tail_n is None else _np(tail_n, 0, np.int64)
        self.tail_est = np.zeros(n, np.int64) if tail_n is None else _np(table["retained_tail_est_tokens"], 0, np.int64)
        tail_ctx = None if tail_n is None else table["retained_tail_context_tokens"]
        self.tail_usage = np.zeros(n, bool) if tail_ctx is None else _np(pc.is_valid(tail_ctx), False, bool)
        self.tail_ctx = np.zeros(n, np.int64) if tail_ctx is None else _np(tail_ctx, 0, np.int64)
        # pi 1.6: system messages (dropped from a kept range), the compaction's own system message,
        # context edits (handled row by row, see _edited), what invalidates a usage
        self.is_sys = is_msg & f.isin("role", ("system",)) if r.system_role else np.zeros(n, bool)
        self.cum_sys_n = f.path_sum(self.is_sys.astype(np.int64))
        self.cum_sys_est = f.path_sum(np.where(self.is_sys, est, 0))
        sys_est = table["system_est_tokens"] if "system_est_tokens" in table.column_names else None
        has_sys_est = np.zeros(n, bool) if sys_est is None else _np(pc.is_valid(sys_est), False, bool)
        self.sys_est = np.zeros(n, np.int64) if sys_est is None else _np(sys_est, 0, np.int64)
        self.comp_sys = self.is_comp & has_sys_est if r.projection else np.zeros(n, bool)
        is_edit = f.isin("type", ("context_edit",)) if r.projection else np.zeros(n, bool)
        self.is_edit = is_edit
        edit_rows = np.nonzero(is_edit)[0]
        self.edit_target = np.full(n, -1, np.int64)
        if edit_rows.size:
            self.edit_target[edit_rows] = f.lookup(table["target_id"].take(pa.array(edit_rows)), edit_rows)
        self.edit_action = np.asarray(pc.fill_null(table["edit_action"], "").to_numpy(zero_copy_only=False)) \
            if edit_rows.size else np.full(n, "", object)
        self.edit_est_valid = is_edit & b(pc.is_valid(table["est_tokens"]))
        self.cum_edits = f.path_sum(is_edit.astype(np.int64))
        self.invalidator = f.nearest(is_edit | self.is_comp)
        self.near_edit = f.nearest(is_edit)
        self.sys_marker = f.nearest(self.is_sys | self.is_comp)
        comp_rows = np.nonzero(self.is_comp & ~self.has_tail)[0]  # a tail replaces first_kept
        self.first_kept = np.full(n, -1, np.int64)
        if comp_rows.size:
            fk = f.lookup(table["first_kept_entry_id"].take(pa.array(comp_rows)), comp_rows)
            on_path = f.is_ancestor(fk, comp_rows) & (fk != comp_rows)
            self.first_kept[comp_rows] = np.where(on_path, fk, -1)

    def compute(self, base: np.ndarray) -> dict[str, np.ndarray]:
        """Context aggregates at rows ``base`` (-1: the empty context; -2: none, a cycle)."""
        f = self.forest
        ok = base >= 0
        bb = np.maximum(base, 0)
        cyclic = (ok & f.cyclic[bb]) | (base == -2)
        ok &= ~cyclic
        c = np.where(ok, self.comp[bb], -1)
        has_c = c >= 0
        cc = np.maximum(c, 0)
        fk = np.where(has_c, self.first_kept[cc], -1)
        has_fk = fk >= 0
        fkk = np.maximum(fk, 0)
        tail = has_c & self.has_tail[cc]
        comp_sys = has_c & self.comp_sys[cc]

        def window(cum: np.ndarray, own: np.ndarray) -> np.ndarray:
            """Sum over the kept range and what follows the compaction (all of the path without one)."""
            before = np.where(has_c, np.where(has_fk, cum[fkk] - own[fkk], cum[cc]), 0)
            return cum[bb] - before

        def kept(cum: np.ndarray, own: np.ndarray) -> np.ndarray:
            """Sum over the kept range before the compaction (system messages are dropped there)."""
            return np.where(has_fk, cum[cc] - (cum[fkk] - own[fkk]), 0)

        sys_n, sys_e = self.is_sys.astype(np.int64), np.where(self.is_sys, self.est, 0)
        head_n = np.where(has_c, 1 + comp_sys + np.where(tail, self.tail_n[cc], 0), 0)
        count = head_n + window(self.cum_n, self.gives.astype(np.int64)) - kept(self.cum_sys_n, sys_n)
        # depth where the kept range starts; a usage source must be at or below it
        start_depth = np.where(has_c, np.where(has_fk, f.depth[fkk], f.depth[cc] + 1), 0)
        u = np.where(ok, self.usage[bb], -1)
        uu = np.maximum(u, 0)
        u_valid = (u >= 0) & (f.depth[uu] >= start_depth)
        summary_est = np.where(has_c, self.est[cc], 0) + np.where(comp_sys, self.sys_est[cc], 0)
        tail_est = np.where(tail, self.tail_est[cc], 0)
        msg_est = window(self.cum_est, self.est_msg) - kept(self.cum_sys_est, sys_e)
        estimate_only = summary_est + tail_est + msg_est  # every message estimated
        # a usage inside the retained tail anchors the estimate when none follows the compaction
        tail_anchor = ~u_valid & tail & self.tail_usage[cc]
        # (a usage in the kept range: the kept system messages after it are not in the context)
        kept_sys_after_u = np.where(has_fk & (f.depth[uu] < f.depth[cc]),
                                    self.cum_sys_est[cc] - self.cum_sys_est[uu], 0)
        trailing = np.where(u_valid, self.cum_est[bb] - self.cum_est[uu] - kept_sys_after_u,
                            np.where(tail_anchor, msg_est, estimate_only))
        usage_tokens = np.where(u_valid, self.ctx_tok[uu], np.where(tail_anchor, self.tail_ctx[cc], 0))
        count = np.where(ok, count, 0)
        trailing = np.where(ok, trailing, 0)
        # pi 1.6's projected estimate: the usage counts only below the latest edit or compaction
        inv = np.where(ok, self.invalidator[bb], -1)
        current = u_valid & ((inv < 0) | (f.depth[uu] > f.depth[np.maximum(inv, 0)]))
        marker = np.where(ok, self.sys_marker[bb], -1)
        system_now = np.where(marker >= 0, self.sys_est[np.maximum(marker, 0)], 0)
        in_context_sys = (window(self.cum_sys_est, sys_e) - kept(self.cum_sys_est, sys_e)
                          + np.where(comp_sys, self.sys_est[cc], 0))
        plain = estimate_only - in_context_sys + system_now
        out = {
            "ok": ok,
            "cyclic": cyclic,
            "message_count": count,
            "usage_tokens": usage_tokens,
            "trailing_tokens": trailing,
            "context_tokens": usage_tokens + trailing,
            "projected_tokens": np.where(ok, np.where(current, usage_tokens + trailing, plain), 0),
            "projected_usage": current,
            "comp": c,
            "first_kept": fk,
            "think": np.where(ok, self.think[bb], -1),
            "model_src": np.where(ok, self.model_src[bb], -1),
            "usage_row": np.where(u_valid, u, -1),
            "estimate_only": np.where(ok, estimate_only, 0),
            "plain": np.where(ok, plain, 0),
            "start_depth": start_depth,
        }
        # targets with a context edit in their window: pi's projection, row by row (edits are rare)
        edited = ok & (window(self.cum_edits, self.is_edit.astype(np.int64)) > 0)
        out["edited"] = edited
        out["comp_sys"] = comp_sys
        if edited.any():
            from ._edits import edited_contexts

            edited_contexts(self, base, np.nonzero(edited)[0], out)
        return out


def _prepared_16(table: pa.Table) -> _Prepared:
    return _Prepared(table, "pi-1.6")


def _prepared_058(table: pa.Table) -> _Prepared:
    return _Prepared(table, "pi-0.58")


def _prepare(table: pa.Table, rules: Rules | None = None) -> _Prepared:
    """The arrays for ``table`` under ``rules`` (default: the table's own, see
    :func:`sessionlab.tables.table_rules`), shared by the calls on one table (see :func:`per_table`)."""
    which = table_rules_for(table, rules)
    return per_table(_prepared_16 if which == "pi-1.6" else _prepared_058, table)


def _targets(prep: _Prepared, at: Any, session_id: SessionIds = None) -> tuple[np.ndarray, np.ndarray]:
    """(target rows, base rows) for ``at``, within the sessions ``session_id`` names (None: all)."""
    tgt, base = _all_targets(prep, at)
    mask = session_mask(prep.table, session_id)
    if mask is not None:
        keep = np.asarray(mask.to_numpy(zero_copy_only=False), bool)[tgt]
        tgt, base = tgt[keep], base[keep]
    return tgt, base


def _all_targets(prep: _Prepared, at: Any) -> tuple[np.ndarray, np.ndarray]:
    t = prep.table
    f = prep.forest
    n = t.num_rows
    # an entry without an id (a pi --mode json event, say) is not a node: never a target
    has_id = t["entry_id"].null_count == 0 or np.asarray(pc.is_valid(t["entry_id"]).to_numpy(zero_copy_only=False))
    rows = np.arange(n) if has_id is True else np.flatnonzero(has_id)
    if isinstance(at, str):
        if at == "calls":
            tgt = rows[prep.is_call[rows]]
            # a call whose own parent chain loops has no context (-2: null); a Claude Code response
            # written over several lines was sent the context above its first line
            first = _first_line_of_response(prep, tgt)
            base = np.where(f.cyclic[tgt], -2, f.parent[first])
            return tgt, base
        if at == "leaves":
            has_child = np.zeros(n, bool)
            par = f.parent[rows]  # (an entry without an id is no node: it makes no parent)
            p = par[(par >= 0) & ~f.is_leaf_record[rows]]
            has_child[p] = True
            tgt = rows[~has_child[rows] & ~f.is_leaf_record[rows] & ~f.cyclic[rows]]
            return tgt, tgt
        if at == "entries":
            tgt = rows[~f.is_leaf_record[rows]]
            return tgt, tgt
        raise ValueError(f"at must be 'calls', 'leaves', 'entries' or entry ids, not {at!r}")
    ids = pa.array(list(at) if not isinstance(at, (pa.Array, pa.ChunkedArray)) else at, pa.string())
    mask = np.asarray(pc.fill_null(pc.is_in(t["entry_id"], value_set=ids), False).to_numpy(zero_copy_only=False), bool)
    tgt = rows[mask[rows] & ~f.is_leaf_record[rows]]
    return tgt, tgt


def _first_line_of_response(prep: _Prepared, tgt: np.ndarray) -> np.ndarray:
    """For each call row, the first row of its file with the same ``message_id`` (itself when it
    has none): the line a streamed Claude Code response starts on."""
    t = prep.table
    if "message_id" not in t.column_names or t["message_id"].null_count == t.num_rows or not len(tgt):
        return tgt
    mid = t["message_id"]
    has = np.asarray(pc.is_valid(mid).to_numpy(zero_copy_only=False), bool)
    rows = np.nonzero(has)[0]
    codes = pa.array(prep.forest.file_code[rows].astype(str))
    key = pc.binary_join_element_wise(codes, mid.take(pa.array(rows)), "\x00")
    uniq = pc.unique(key)
    gid = np.asarray(pc.index_in(key, value_set=uniq).to_numpy(zero_copy_only=False), np.int64)
    first = np.full(len(uniq), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first, gid, rows)
    row_first = np.arange(t.num_rows)
    row_first[rows] = first[gid]
    return row_first[tgt]


def _take(col, idx: np.ndarray) -> pa.Array:
    """``col[idx]`` with null where ``idx`` is -1 (a null index takes a null)."""
    idx = np.asarray(idx, np.int64)
    return pc.take(col, pa.array(idx, pa.int64(), mask=idx < 0))


def _per_file(forest: Forest, column: str, rows: np.ndarray) -> pa.Array:
    """A column that is constant within a file (session id, file), for ``rows``: taken from one
    row per file rather than from the whole column."""
    first = forest.first_row_of_file
    values = pc.take(forest.table[column], pa.array(first, pa.int64()))
    return pc.take(values, pa.array(forest.file_code[np.asarray(rows, np.int64)], pa.int64()))


@returns(CONTEXT_COLUMNS)
def contexts(entries, *, at: Target = "calls", session_id: SessionIds = None, rules: Rules | None = None) -> pa.Table:
    """pi's context at many targets of many sessions at once.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table (Arrow or pandas).
        at: the targets, as everywhere ``at=`` appears (``contexts``, ``context_members``,
            ``find_cut_points``), with the same default: ``"calls"`` (every assistant message: the
            context built at its parent, i.e. what the model was sent), ``"leaves"`` (entries that
            are nobody's parent), ``"entries"`` (every entry), or entry ids (matched in every
            session unless ``session_id`` is given).
        session_id: only the targets of this session (or these sessions).
        rules: ``"pi-1.6"`` or ``"pi-0.58"`` (see :mod:`sessionlab._rules`); default: the rules the
            table was loaded with (a different value raises :class:`~sessionlab.RulesMismatchError`).

    Returns:
        One row per target (a target on a parent cycle has null counts), with columns:

{columns}

        ``prompt_tokens`` (what the provider counted) sits beside ``estimated_tokens`` (sessionlab's
        estimate), so the gap is one subtraction.

    Example:
        >>> from sessionlab import load  # doctest: +SKIP
        >>> contexts(load("data/"), at="calls").to_pandas().head()  # doctest: +SKIP
    """
    table = as_table(entries)
    prep = _prepare(table, rules)
    tgt, base = _targets(prep, at, session_id)
    r = prep.compute(base)
    null_count = r["cyclic"]
    t = table

    def ints(a: np.ndarray) -> pa.Array:
        return pa.array(a, pa.int64(), mask=null_count)

    thinking = _take(t["thinking_level"], r["think"])
    thinking = pc.if_else(pa.array(null_count), pa.scalar(None, pa.string()), pc.fill_null(thinking, "off"))
    out = {
        "session_id": _per_file(prep.forest, "session_id", tgt),
        "file": _per_file(prep.forest, "file", tgt),
        "at_id": _take(t["entry_id"], tgt),
        "context_id": _take(t["entry_id"], base),
        "message_count": ints(r["message_count"]),
        "context_tokens": ints(r["context_tokens"]),
        "usage_tokens": ints(r["usage_tokens"]),
        "trailing_tokens": ints(r["trailing_tokens"]),
        "projected_tokens": pa.array(r["projected_tokens"], pa.int64(),
                                     mask=null_count | (not prep.rules.projection)),
        "thinking_level": thinking,
        "provider": _take(t["provider"], r["model_src"]),
        "model": _take(t["model"], r["model_src"]),
        "compaction_id": _take(t["entry_id"], r["comp"]),
    }
    parts = [_np(t[c], 0, np.int64)[tgt] for c in ("input_tokens", "cache_read_tokens", "cache_write_tokens")]
    has_usage = np.asarray(pc.is_valid(t["input_tokens"]).to_numpy(zero_copy_only=False), bool)[tgt]
    if not (isinstance(at, str) and at == "calls"):  # the recorded prompt is a call's, sent at its parent
        has_usage = np.zeros(len(tgt), bool)
    out["prompt_tokens"] = pa.array(parts[0] + parts[1] + parts[2], pa.int64(), mask=~has_usage)
    out["estimated_tokens"] = ints(r["estimate_only"])
    return pa.Table.from_pydict(out, schema=schema_of(CONTEXT_COLUMNS))


contexts_df = df_variant(contexts)


@returns(MEMBER_COLUMNS)
def context_members(entries, *, at: Target = "calls", session_id: SessionIds = None,
                    rules: Rules | None = None) -> pa.Table:
    """Which entries make up each context, in order: one row per context message.

    ``at``, ``session_id`` and ``rules`` are those of :func:`contexts`. The compaction in effect
    appears at position 0 (its summary; under ``pi-1.6`` at positions 0 and 1 when it replays a
    system message). Built by walking all targets up their paths in lockstep: the work is
    proportional to the output.

    Returns:
        One row per message of each context, with columns:

{columns}
    """
    table = as_table(entries)
    prep = _prepare(table, rules)
    f = prep.forest
    tgt, base = _targets(prep, at, session_id)
    r = prep.compute(base)
    ok = r["ok"]
    counts = np.where(ok, r["message_count"], 0)
    # the walk stops above the kept range: at the first kept entry's parent, or at the compaction
    stop = np.where(r["comp"] >= 0, np.where(r["first_kept"] >= 0, f.parent[np.maximum(r["first_kept"], 0)],
                                             r["comp"]), -1)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    total = int(offsets[-1])
    out_target = np.empty(total, np.int64)
    out_entry = np.empty(total, np.int64)
    out_pos = np.empty(total, np.int64)
    edited = r["edited"]
    simple = ok & ~edited
    # the compaction first: its system message (pi 1.6) and its summary
    has_c = simple & (r["comp"] >= 0)
    head = np.where(has_c, 1 + r["comp_sys"], 0)
    for j in (0, 1):
        k = np.nonzero(head > j)[0]
        out_target[offsets[k] + j] = k
        out_entry[offsets[k] + j] = r["comp"][k]
        out_pos[offsets[k] + j] = j
    # then the messages a seed compaction carries (its retained tail), listed under the compaction
    tn = np.where(has_c, prep.tail_n[np.maximum(r["comp"], 0)], 0)
    t_idx = np.nonzero(tn > 0)[0]
    if t_idx.size:
        reps = tn[t_idx]
        within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        slots = np.repeat(offsets[t_idx] + head[t_idx], reps) + within
        out_target[slots] = np.repeat(t_idx, reps)
        out_entry[slots] = np.repeat(r["comp"][t_idx], reps)
        out_pos[slots] = np.repeat(head[t_idx], reps) + within
    # messages, last first: fill each target's slots from the end (system messages of the kept
    # range, above the compaction, are left out)
    comp_depth = np.where(r["comp"] >= 0, f.depth[np.maximum(r["comp"], 0)], -1)
    cur = np.where(simple, base, -1)
    cur = np.where(cur == stop, -1, cur)  # a target that is the compaction itself
    slot = offsets[1:] - 1
    active = np.nonzero(cur >= 0)[0]
    while active.size:
        node = cur[active]
        gives = prep.gives[node] & ~prep.is_comp[node] & ~(prep.is_sys[node] & (f.depth[node] < comp_depth[active]))
        w = active[gives]
        s = slot[w]
        out_target[s] = w
        out_entry[s] = node[gives]
        out_pos[s] = s - offsets[w]
        slot[w] -= 1
        nxt = f.parent[node]
        nxt = np.where(nxt == stop[active], -1, nxt)
        cur[active] = nxt
        active = active[nxt >= 0]
    if edited.any():  # targets with a context edit: the exact projection's entries
        from ._edits import messages

        for q in np.nonzero(edited)[0].tolist():
            rows = [m[0] for m in messages(prep, int(base[q]))]
            sl = slice(offsets[q], offsets[q] + len(rows))
            out_target[sl], out_entry[sl], out_pos[sl] = q, rows, np.arange(len(rows))
    tg = tgt[out_target]
    return pa.Table.from_pydict({
        "session_id": _take(table["session_id"], tg),
        "at_id": _take(table["entry_id"], tg),
        "entry_id": _take(table["entry_id"], out_entry),
        "position": pa.array(out_pos, pa.int64()),
    }, schema=schema_of(MEMBER_COLUMNS))


context_members_df = df_variant(context_members)


def context_messages(entries, at_id: str, *, session_id: SessionIds = None, rules: Rules | None = None) -> list:
    """The messages of the context at ``at_id`` (an entry of the table), as the object model
    builds them: equal to ``Session.build_context(leaf_id=at_id).messages`` on that file.

    ``session_id`` (one id or a list) says where to look when the id is in several sessions. The
    table holds no message content, so the member entries are read back from their file.
    """
    from ..context import build_session_context
    from ..io.reader import read_session

    table = as_table(entries)
    mask = pc.equal(table["entry_id"], at_id)
    in_sessions = session_mask(table, session_id)
    if in_sessions is not None:
        mask = pc.and_(mask, in_sessions)
    rows = table.filter(mask)
    if rows.num_rows == 0:
        from ..errors import EntryNotFoundError

        raise EntryNotFoundError(f"entry {at_id!r} is not in the table")
    files = set(rows["file"].to_pylist())
    if len(files) != 1:
        raise ValueError(f"entry id {at_id!r} is in {len(files)} files; pass session_id")
    which = table_rules_for(table, rules)
    sf = read_session(files.pop(), on_bad_lines="skip")
    return build_session_context(sf.branch(at_id), rules=which).messages
