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

from ._forest import Forest, as_table, per_table

__all__ = ["contexts", "context_members", "context_messages", "CONTEXT_COLUMNS", "MEMBER_COLUMNS", "Target"]

Target = Union[Literal["calls", "leaves", "entries"], Sequence[str], "np.ndarray", pa.Array]

CONTEXT_COLUMNS = {
    "session_id": "Session id.",
    "file": "Session file.",
    "at_id": "The target: an assistant message for at='calls', else the entry itself.",
    "context_id": "The entry the context is built at (for a call: its parent, i.e. what the model was sent).",
    "message_count": "Length of pi's buildSessionContext message list there (null on a parent cycle).",
    "context_tokens": "pi's estimateContextTokens of that context.",
    "usage_tokens": "Usage tokens of the last valid assistant message in the context (0 if none; when "
                    "it sits in a seed retained tail, plus the estimates after it within the tail).",
    "trailing_tokens": "Estimated tokens of the messages after it (all messages if none).",
    "thinking_level": "Thinking level in effect ('off' by default).",
    "provider": "Provider of the model in effect (null if none).",
    "model": "Model id in effect (null if none).",
    "compaction_id": "The compaction in effect (null if none).",
}
MEMBER_COLUMNS = {
    "session_id": "Session id.",
    "at_id": "The target, as in contexts().",
    "entry_id": "Entry that gives the message (the compaction for its summary).",
    "position": "0-based position of the message in the context.",
}


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(pc.fill_null(col, fill).to_numpy(zero_copy_only=False), dtype)


class _Prepared:
    """Per-row arrays every context computation needs, built once per table."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.forest = f = Forest.of(table)
        n = table.num_rows

        def b(expr) -> np.ndarray:
            return np.asarray(pc.fill_null(expr, False).to_numpy(zero_copy_only=False), bool)

        is_msg = f.isin("type", ("message",))
        self.is_assistant = is_msg & f.isin("role", ("assistant",))
        self.is_comp = f.isin("type", ("compaction",))
        summary_nonempty = np.asarray(pc.fill_null(table["summary_chars"], 0).to_numpy(zero_copy_only=False)) > 0
        branch_summary = f.isin("type", ("branch_summary",)) & summary_nonempty
        self.gives = is_msg | f.isin("type", ("custom_message",)) | branch_summary
        est = np.asarray(pc.fill_null(table["est_tokens"], 0).to_numpy(zero_copy_only=False), np.int64)
        self.est = est
        self.est_msg = np.where(self.gives, est, 0)
        ctx_tok = table["context_tokens"]
        has_usage = b(pc.is_valid(ctx_tok))
        bad_stop = f.isin("stop_reason", ("aborted", "error"))
        self.usage_source = self.is_assistant & has_usage & ~bad_stop
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
        zeros = np.zeros(n, np.int64)
        self.tail_est = zeros if tail_n is None else _np(table["retained_tail_est_tokens"], 0, np.int64)
        tail_ctx = None if tail_n is None else table["retained_tail_context_tokens"]
        self.tail_usage = np.zeros(n, bool) if tail_ctx is None else _np(pc.is_valid(tail_ctx), False, bool)
        self.tail_ctx = zeros if tail_ctx is None else _np(tail_ctx, 0, np.int64)
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
        cum_n = self.cum_n[bb]
        tail = has_c & self.has_tail[cc]
        count = np.where(
            has_c,
            1 + np.where(tail, self.tail_n[cc], 0) + cum_n
            - np.where(has_fk, self.cum_n[fkk] - self.gives[fkk], self.cum_n[cc]),
            cum_n,
        )
        # depth where the kept range starts; a usage source must be at or below it
        start_depth = np.where(has_c, np.where(has_fk, f.depth[fkk], f.depth[cc] + 1), 0)
        u = np.where(ok, self.usage[bb], -1)
        uu = np.maximum(u, 0)
        u_valid = (u >= 0) & (f.depth[uu] >= start_depth)
        cum_est = self.cum_est[bb]
        base_est = np.where(has_c, np.where(has_fk, self.cum_est[fkk] - self.est_msg[fkk], self.cum_est[cc]), 0)
        summary_est = np.where(has_c, self.est[cc], 0)
        tail_est = np.where(tail, self.tail_est[cc], 0)
        estimate_only = summary_est + tail_est + cum_est - base_est  # every message estimated
        # a usage inside the retained tail anchors the estimate when none follows the compaction
        tail_anchor = ~u_valid & tail & self.tail_usage[cc]
        trailing = np.where(u_valid, cum_est - self.cum_est[uu],
                            np.where(tail_anchor, cum_est - base_est, estimate_only))
        usage_tokens = np.where(u_valid, self.ctx_tok[uu], np.where(tail_anchor, self.tail_ctx[cc], 0))
        count = np.where(ok, count, 0)
        trailing = np.where(ok, trailing, 0)
        return {
            "ok": ok,
            "cyclic": cyclic,
            "message_count": count,
            "usage_tokens": usage_tokens,
            "trailing_tokens": trailing,
            "context_tokens": usage_tokens + trailing,
            "comp": c,
            "first_kept": fk,
            "think": np.where(ok, self.think[bb], -1),
            "model_src": np.where(ok, self.model_src[bb], -1),
            "usage_row": np.where(u_valid, u, -1),
            "estimate_only": np.where(ok, estimate_only, 0),
        }


def _prepare(table: pa.Table) -> _Prepared:
    """The arrays for ``table``, shared by the calls on one table (see :func:`per_table`)."""
    return per_table(_Prepared, table)


def _targets(prep: _Prepared, at: Any, session_id: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(target rows, base rows) for ``at``, within one session when ``session_id`` is given."""
    tgt, base = _all_targets(prep, at)
    if session_id is not None:
        keep = np.asarray(pc.fill_null(pc.equal(prep.table["session_id"], session_id), False)
                          .to_numpy(zero_copy_only=False), bool)[tgt]
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
            tgt = rows[prep.is_assistant[rows]]
            # a call whose own parent chain loops has no context (-2: null)
            base = np.where(f.cyclic[tgt], -2, f.parent[tgt])
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


def contexts(entries, at: Target = "calls", *, session_id: str | None = None) -> pa.Table:
    """pi's context at many targets of many sessions at once.

    Args:
        entries: the entries table (``entries_table()`` or its pandas view).
        at: ``"calls"`` (every assistant message: the context built at its parent, i.e. what the
            model was sent), ``"leaves"`` (entries that are nobody's parent), ``"entries"`` (every
            entry), or entry ids (matched in every session unless ``session_id`` is given).
        session_id: only the targets of this session.

    Returns:
        One row per target. Columns:
            session_id, file, at_id, context_id, message_count, context_tokens, usage_tokens,
            trailing_tokens, thinking_level, provider, model, compaction_id (see
            ``CONTEXT_COLUMNS``). A target on a parent cycle has null counts.

    Example:
        >>> from sessionlab import entries_table  # doctest: +SKIP
        >>> contexts(entries_table("data/"), at="calls").to_pandas().head()  # doctest: +SKIP
    """
    table = as_table(entries)
    prep = _prepare(table)
    tgt, base = _targets(prep, at, session_id)
    r = prep.compute(base)
    null_count = r["cyclic"]
    t = table

    def ints(a: np.ndarray) -> pa.Array:
        return pa.array(a, pa.int64(), mask=null_count)

    thinking = _take(t["thinking_level"], r["think"])
    thinking = pc.if_else(pa.array(null_count), pa.scalar(None, pa.string()), pc.fill_null(thinking, "off"))
    return pa.table({
        "session_id": _per_file(prep.forest, "session_id", tgt),
        "file": _per_file(prep.forest, "file", tgt),
        "at_id": _take(t["entry_id"], tgt),
        "context_id": _take(t["entry_id"], base),
        "message_count": ints(r["message_count"]),
        "context_tokens": ints(r["context_tokens"]),
        "usage_tokens": ints(r["usage_tokens"]),
        "trailing_tokens": ints(r["trailing_tokens"]),
        "thinking_level": thinking,
        "provider": _take(t["provider"], r["model_src"]),
        "model": _take(t["model"], r["model_src"]),
        "compaction_id": _take(t["entry_id"], r["comp"]),
    })


def context_members(entries, at: Target = "calls", *, session_id: str | None = None) -> pa.Table:
    """Which entries make up each context, in order: one row per context message.

    Columns: session_id, at_id, entry_id, position (see ``MEMBER_COLUMNS``). The compaction in
    effect appears at position 0 (its summary). Built by walking all targets up their paths in
    lockstep: the work is proportional to the output.
    """
    table = as_table(entries)
    prep = _prepare(table)
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
    # summary of the compaction first
    has_c = ok & (r["comp"] >= 0)
    k = np.nonzero(has_c)[0]
    out_target[offsets[k]] = k
    out_entry[offsets[k]] = r["comp"][k]
    out_pos[offsets[k]] = 0
    # then the messages a seed compaction carries (its retained tail), listed under the compaction
    tn = np.where(has_c, prep.tail_n[np.maximum(r["comp"], 0)], 0)
    t_idx = np.nonzero(tn > 0)[0]
    if t_idx.size:
        reps = tn[t_idx]
        within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        slots = np.repeat(offsets[t_idx], reps) + 1 + within
        out_target[slots] = np.repeat(t_idx, reps)
        out_entry[slots] = np.repeat(r["comp"][t_idx], reps)
        out_pos[slots] = 1 + within
    # messages, last first: fill each target's slots from the end
    cur = np.where(ok, base, -1)
    cur = np.where(cur == stop, -1, cur)  # a target that is the compaction itself
    slot = offsets[1:] - 1
    active = np.nonzero(cur >= 0)[0]
    while active.size:
        node = cur[active]
        gives = prep.gives[node] & ~prep.is_comp[node]
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
    tg = tgt[out_target]
    return pa.table({
        "session_id": _take(table["session_id"], tg),
        "at_id": _take(table["entry_id"], tg),
        "entry_id": _take(table["entry_id"], out_entry),
        "position": pa.array(out_pos, pa.int64()),
    })


def context_messages(entries, at_id: str, *, session_id: str | None = None) -> list:
    """The messages of the context at ``at_id`` (an entry of the table), as the object model
    builds them: equal to ``Session.build_context(leaf_id=at_id).messages`` on that file.

    The table holds no message content, so the member entries are read back from their file.
    """
    from ..context import session_entry_to_context_messages
    from ..io.reader import read_session

    table = as_table(entries)
    mask = pc.equal(table["entry_id"], at_id)
    if session_id is not None:
        mask = pc.and_(mask, pc.equal(table["session_id"], session_id))
    rows = table.filter(mask)
    if rows.num_rows == 0:
        from ..errors import EntryNotFoundError

        raise EntryNotFoundError(f"entry {at_id!r} is not in the table")
    files = set(rows["file"].to_pylist())
    if len(files) != 1:
        raise ValueError(f"entry id {at_id!r} is in {len(files)} files; pass session_id")
    file = files.pop()
    members = context_members(table.filter(pc.equal(table["file"], file)), at=[at_id])
    ids = members["entry_id"].to_pylist()
    sf = read_session(file, on_bad_lines="skip")
    by_id = {e.id: e for e in sf.entries}
    chosen = [by_id[i] for i in ids]
    msgs: list = []
    for i, e in enumerate(chosen):
        if i and e.type == "compaction":
            continue
        msgs.extend(session_entry_to_context_messages(e, i, chosen))
    return msgs
