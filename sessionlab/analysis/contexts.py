"""What the model saw: pi's context for every call, leaf or entry of every session at once.

The object model builds one context by walking parent pointers (``Session.build_context``, pi's
``buildSessionContext``). Here the same rules run on the entries table with parent-index arrays
and pointer doubling (see :mod:`sessionlab.tables.forest`):

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

Arrays go to and from NumPy through :mod:`sessionlab._arrow` (pyarrow's own conversions import pandas).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentValueError, OptionError, option_message
from ..pi.rules import Rules, pi_rules
from ..tables import Column, call_mask, df_variant, leaf_mask, returns, schema_of, table_rules_for
from ..tables.corpus import SessionIds, session_mask
from ..tables.forest import Forest, as_table, at_load, per_table
from ._members import members

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
    """A numeric or boolean column as NumPy, nulls as ``fill`` (no pandas import: built at load)."""
    return np.asarray(to_numpy(col, fill), dtype)


class PreparedContexts:
    """Per-row arrays every context computation needs, built once per table and rules.

    Holds its table only through its :class:`~sessionlab.tables.forest.Forest` (weakly), as every value
    of the per-table cache must."""

    def __init__(self, table: pa.Table, rules: Rules = "pi-1.6") -> None:
        self.rules = pi_rules(rules)
        self.forest = Forest.of(table)
        self._kinds(table)
        self._walks()
        self._retained_tail(table)
        self._projection(table)
        self._first_kept(table)

    @property
    def table(self) -> pa.Table:
        return self.forest.table

    def _kinds(self, table: pa.Table) -> None:
        """What each row is: a call, a compaction, a message the context gives, a usage source."""
        f, n = self.forest, table.num_rows
        is_msg = self.is_msg = f.isin("type", ("message",))
        self.is_assistant = is_msg & f.isin("role", ("assistant",))
        self.is_call = call_mask(table)  # (the facts module's rule: one owner)
        # rows of an agent other than pi (a Claude Code or Codex call names the model it was sent to)
        self.is_other_agent = (~f.isin("agent", _pi_files()) & _np(pc.is_valid(table["agent"]), False, bool)
                               if "agent" in table.column_names else np.zeros(n, bool))
        self.is_comp = f.isin("type", ("compaction",))
        branch_summary = f.isin("type", ("branch_summary",)) & (_np(table["summary_chars"], 0, np.int64) > 0)
        never = _np(table["never_in_context"], False, bool) if "never_in_context" in table.column_names \
            else np.zeros(n, bool)
        self.gives = (is_msg | f.isin("type", ("custom_message",)) | branch_summary) & ~never
        self.est = est = _np(table["est_tokens"], 0, np.int64)
        self.est_msg = np.where(self.gives, est, 0)
        ctx_tok = table["context_tokens"]
        self.ctx_tok = _np(ctx_tok, 0, np.int64)
        bad_stop = f.isin("stop_reason", ("aborted", "error"))
        self.usage_source = self.is_assistant & _np(pc.is_valid(ctx_tok), False, bool) & ~bad_stop & self.gives
        if self.rules.skip_zero_usage:
            self.usage_source &= self.ctx_tok > 0
        self.is_sys = is_msg & f.isin("role", ("system",)) if self.rules.system_role else np.zeros(n, bool)

    def _walks(self) -> None:
        """Path sums and nearest ancestors every context reads."""
        f = self.forest
        self.cum_n = f.path_sum(self.gives.astype(np.int64))
        self.cum_est = f.path_sum(self.est_msg)
        self.comp = f.nearest(self.is_comp)
        self.usage = f.nearest(self.usage_source)
        self.think = f.nearest(f.isin("type", ("thinking_level_change",)))
        # the model in effect: pi's last assistant or model change; a Codex turn_context names it too
        self.model_src = f.nearest(self.is_assistant | f.isin("type", ("model_change",))
                                   | (f.isin("type", ("turn_context",)) & _np(pc.is_valid(self.table["model"]),
                                                                            False, bool)))
        self.cum_sys_n = f.path_sum(self.is_sys.astype(np.int64))
        self.cum_sys_est = f.path_sum(np.where(self.is_sys, self.est, 0))

    def _retained_tail(self, table: pa.Table) -> None:
        """The seed's retained tail: messages a compaction carries itself."""
        n = table.num_rows
        if "retained_tail_messages" not in table.column_names:
            self.has_tail, self.tail_n, self.tail_est = np.zeros(n, bool), np.zeros(n, np.int64), np.zeros(n, np.int64)
            self.tail_usage, self.tail_ctx = np.zeros(n, bool), np.zeros(n, np.int64)
            return
        tail_n = table["retained_tail_messages"]
        self.has_tail = _np(pc.is_valid(tail_n), False, bool)
        self.tail_n = _np(tail_n, 0, np.int64)
        self.tail_est = _np(table["retained_tail_est_tokens"], 0, np.int64)
        tail_ctx = table["retained_tail_context_tokens"]
        self.tail_usage = _np(pc.is_valid(tail_ctx), False, bool)
        self.tail_ctx = _np(tail_ctx, 0, np.int64)

    def _projection(self, table: pa.Table) -> None:
        """pi 1.6: the compaction's own system message, context edits (corrected afterwards, see
        :mod:`._edits`) and what invalidates a usage."""
        f, n, r = self.forest, table.num_rows, self.rules
        sys_est = table["system_est_tokens"] if "system_est_tokens" in table.column_names else None
        has_sys_est = np.zeros(n, bool) if sys_est is None else _np(pc.is_valid(sys_est), False, bool)
        self.sys_est = np.zeros(n, np.int64) if sys_est is None else _np(sys_est, 0, np.int64)
        self.comp_sys = self.is_comp & has_sys_est if r.projection else np.zeros(n, bool)
        self.is_edit = is_edit = f.isin("type", ("context_edit",)) if r.projection else np.zeros(n, bool)
        edit_rows = np.nonzero(is_edit)[0]
        self.edit_target = np.full(n, -1, np.int64)
        self.edit_above = np.zeros(n, bool)  # an edit whose target is a strict ancestor of it
        if edit_rows.size:
            target = self.edit_target[edit_rows] = f.lookup(table["target_id"].take(arrow_indices(edit_rows)),
                                                            edit_rows)
            tr = np.maximum(target, 0)
            self.edit_above[edit_rows] = (target >= 0) & (f.depth[tr] < f.depth[edit_rows]) \
                & f.is_ancestor(target, edit_rows)
        self.edit_action = np.full(n, "", object)  # ("" for null)
        if edit_rows.size:
            has = np.flatnonzero(_np(pc.is_valid(table["edit_action"]), False, bool))
            self.edit_action[has] = table["edit_action"].take(arrow_indices(has)).to_pylist()
        self.edit_est_valid = is_edit & _np(pc.is_valid(table["est_tokens"]), False, bool)
        self.cum_edits = f.path_sum(is_edit.astype(np.int64))
        self.invalidator = f.nearest(is_edit | self.is_comp)
        self.near_edit = f.nearest(is_edit)
        self.sys_marker = f.nearest(self.is_sys | self.is_comp)

    def _first_kept(self, table: pa.Table) -> None:
        """The first kept entry of every compaction, if it is an ancestor of that compaction."""
        f = self.forest
        comp_rows = np.nonzero(self.is_comp & ~self.has_tail)[0]  # a tail replaces first_kept
        self.first_kept = np.full(table.num_rows, -1, np.int64)
        if comp_rows.size:
            fk = f.lookup(table["first_kept_entry_id"].take(arrow_indices(comp_rows)), comp_rows)
            on_path = f.is_ancestor(fk, comp_rows) & (fk != comp_rows)
            self.first_kept[comp_rows] = np.where(on_path, fk, -1)

    def compute(self, base: np.ndarray) -> dict[str, np.ndarray]:
        """Context aggregates at rows ``base`` (-1: the empty context; -2: none, a cycle)."""
        w = _Window(self, base)
        out = w.counts()
        out.update(w.projected(out))
        # targets with a context edit in their window: corrected by the last edit of each edited row
        edited = w.ok & (w.window(self.cum_edits, self.is_edit.astype(np.int64)) > 0)
        out["edited"] = edited
        out["comp_sys"] = w.comp_sys
        if edited.any():
            from ._edits import edited_contexts

            edited_contexts(self, base, np.nonzero(edited)[0], out)
        return out


class _Window:
    """The context at each of ``base`` rows: the compaction in effect, its kept range and what
    follows it (the pieces :meth:`PreparedContexts.compute` sums)."""

    def __init__(self, prep: PreparedContexts, base: np.ndarray) -> None:
        self.p = p = prep
        f = self.f = prep.forest
        ok = base >= 0
        self.bb = bb = np.maximum(base, 0)
        self.cyclic = (ok & f.cyclic[bb]) | (base == -2)
        self.ok = ok = ok & ~self.cyclic
        c = self.c = np.where(ok, p.comp[bb], -1)
        self.has_c = c >= 0
        self.cc = cc = np.maximum(c, 0)
        self.fk = fk = np.where(self.has_c, p.first_kept[cc], -1)
        self.has_fk = fk >= 0
        self.fkk = np.maximum(fk, 0)
        self.tail = self.has_c & p.has_tail[cc]
        self.comp_sys = self.has_c & p.comp_sys[cc]
        self.sys_n, self.sys_e = p.is_sys.astype(np.int64), np.where(p.is_sys, p.est, 0)

    def window(self, cum: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Sum over the kept range and what follows the compaction (all of the path without one)."""
        before = np.where(self.has_c, np.where(self.has_fk, cum[self.fkk] - own[self.fkk], cum[self.cc]), 0)
        return cum[self.bb] - before

    def kept(self, cum: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Sum over the kept range before the compaction (system messages are dropped there)."""
        return np.where(self.has_fk, cum[self.cc] - (cum[self.fkk] - own[self.fkk]), 0)

    def counts(self) -> dict[str, np.ndarray]:
        """Message count, usage and trailing estimate (pi's estimateContextTokens)."""
        p, f, ok, c, cc, bb, has_c = self.p, self.f, self.ok, self.c, self.cc, self.bb, self.has_c
        tail, comp_sys = self.tail, self.comp_sys
        head_n = np.where(has_c, 1 + comp_sys + np.where(tail, p.tail_n[cc], 0), 0)
        count = head_n + self.window(p.cum_n, p.gives.astype(np.int64)) - self.kept(p.cum_sys_n, self.sys_n)
        # depth where the kept range starts; a usage source must be at or below it
        start_depth = np.where(has_c, np.where(self.has_fk, f.depth[self.fkk], f.depth[cc] + 1), 0)
        u = np.where(ok, p.usage[bb], -1)
        self.uu = uu = np.maximum(u, 0)
        self.u_valid = u_valid = (u >= 0) & (f.depth[uu] >= start_depth)
        summary_est = np.where(has_c, p.est[cc], 0) + np.where(comp_sys, p.sys_est[cc], 0)
        tail_est = np.where(tail, p.tail_est[cc], 0)
        msg_est = self.window(p.cum_est, p.est_msg) - self.kept(p.cum_sys_est, self.sys_e)
        self.estimate_only = estimate_only = summary_est + tail_est + msg_est  # every message estimated
        # a usage inside the retained tail anchors the estimate when none follows the compaction
        tail_anchor = ~u_valid & tail & p.tail_usage[cc]
        # (a usage in the kept range: the kept system messages after it are not in the context)
        kept_sys_after_u = np.where(self.has_fk & (f.depth[uu] < f.depth[cc]), p.cum_sys_est[cc] - p.cum_sys_est[uu], 0)
        trailing = np.where(u_valid, p.cum_est[bb] - p.cum_est[uu] - kept_sys_after_u,
                            np.where(tail_anchor, msg_est, estimate_only))
        self.usage_tokens = usage_tokens = np.where(u_valid, p.ctx_tok[uu], np.where(tail_anchor, p.tail_ctx[cc], 0))
        self.trailing = trailing = np.where(ok, trailing, 0)
        return {
            "ok": ok,
            "cyclic": self.cyclic,
            "message_count": np.where(ok, count, 0),
            "usage_tokens": usage_tokens,
            "trailing_tokens": trailing,
            "context_tokens": usage_tokens + trailing,
            "comp": c,
            "first_kept": self.fk,
            "think": np.where(ok, p.think[bb], -1),
            "model_src": np.where(ok, p.model_src[bb], -1),
            "usage_row": np.where(u_valid, u, -1),
            "estimate_only": np.where(ok, estimate_only, 0),
            "start_depth": start_depth,
        }

    def projected(self, counts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """pi 1.6's projected estimate: the usage counts only below the latest edit or compaction."""
        p, f, ok, bb, uu = self.p, self.f, self.ok, self.bb, self.uu
        inv = np.where(ok, p.invalidator[bb], -1)
        current = self.u_valid & ((inv < 0) | (f.depth[uu] > f.depth[np.maximum(inv, 0)]))
        marker = np.where(ok, p.sys_marker[bb], -1)
        system_now = np.where(marker >= 0, p.sys_est[np.maximum(marker, 0)], 0)
        in_context_sys = (self.window(p.cum_sys_est, self.sys_e) - self.kept(p.cum_sys_est, self.sys_e)
                          + np.where(self.comp_sys, p.sys_est[self.cc], 0))
        plain = self.estimate_only - in_context_sys + system_now
        return {
            "projected_tokens": np.where(ok, np.where(current, counts["context_tokens"], plain), 0),
            "projected_usage": current,
            "plain": np.where(ok, plain, 0),
        }


def _prepared_16(table: pa.Table) -> PreparedContexts:
    return PreparedContexts(table, "pi-1.6")


def _prepared_058(table: pa.Table) -> PreparedContexts:
    return PreparedContexts(table, "pi-0.58")


# The interface the compaction layer builds on (cut points, the what-if replay): the per-table
# arrays (``context_arrays``), the rows ``at=`` names (``target_rows``), a streamed response's first
# line (``first_line_of_response``) and a take with -1 as null (``take_or_null``). Not re-exported.
def context_arrays(table: pa.Table, rules: Rules | None = None) -> PreparedContexts:
    """The arrays for ``table`` under ``rules`` (default: the table's own, see
    :func:`sessionlab.tables.table_rules`), shared by the calls on one table (see
    :func:`~sessionlab.tables.forest.per_table`); built with the load for the table's own rules."""
    which = table_rules_for(table, rules)
    return per_table(_prepared_16 if which == "pi-1.6" else _prepared_058, table)


at_load(context_arrays)


def target_rows(prep: PreparedContexts, at: Any, session_id: SessionIds = None) -> tuple[np.ndarray, np.ndarray]:
    """(target rows, base rows) for ``at``, within the sessions ``session_id`` names (None: all)."""
    tgt, base = _all_targets(prep, at)
    mask = session_mask(prep.table, session_id)
    if mask is not None:
        keep = _np(mask, False, bool)[tgt]
        tgt, base = tgt[keep], base[keep]
    return tgt, base


def _all_targets(prep: PreparedContexts, at: Any) -> tuple[np.ndarray, np.ndarray]:
    t = prep.table
    f = prep.forest
    n = t.num_rows
    # an entry without an id (a pi --mode json event, say) is not a node: never a target
    has_id = t["entry_id"].null_count == 0 or _np(pc.is_valid(t["entry_id"]), False, bool)
    rows = np.arange(n) if has_id is True else np.flatnonzero(has_id)
    if isinstance(at, str):
        if at == "calls":
            tgt = rows[prep.is_call[rows]]
            # a call whose own parent chain loops has no context (-2: null); a Claude Code response
            # written over several lines was sent the context above its first line
            first = first_line_of_response(prep, tgt)
            base = np.where(f.cyclic[tgt], -2, f.parent[first])
            return tgt, base
        if at == "leaves":  # the facts module's leaves (side nodes are never leaves)
            tgt = rows[leaf_mask(t)[rows] & ~f.cyclic[rows]]
            return tgt, tgt
        if at == "entries":
            tgt = rows[~f.is_leaf_record[rows]]
            return tgt, tgt
        raise OptionError(option_message("at", at, ("calls", "leaves", "entries")) + " or a list of entry ids", "at")
    mask = _np(pc.is_in(t["entry_id"], value_set=_id_array(at)), False, bool)
    tgt = rows[mask[rows] & ~f.is_leaf_record[rows]]
    return tgt, tgt


def _id_array(at: Any) -> pa.Array:
    """Entry ids given as ``at=`` (a sequence, NumPy array or Arrow array) as one string array."""
    if isinstance(at, pa.ChunkedArray):
        at = at.combine_chunks()
    if isinstance(at, pa.Array):
        return at.cast(pa.string())
    ids = list(at)
    return strings(ids) if all(i is None or isinstance(i, str) for i in ids) else pa.array(ids, pa.string())


def first_line_of_response(prep: PreparedContexts, tgt: np.ndarray) -> np.ndarray:
    """For each call row, the first row of its file with the same ``message_id`` (itself when it
    has none): the line a streamed Claude Code response starts on."""
    t = prep.table
    if "message_id" not in t.column_names or t["message_id"].null_count == t.num_rows or not len(tgt):
        return tgt
    mid = t["message_id"]
    rows = np.nonzero(_np(pc.is_valid(mid), False, bool))[0]
    enc = pc.dictionary_encode(mid.take(arrow_indices(rows)).combine_chunks())
    key = prep.forest.file_code[rows] * len(enc.dictionary) + _np(enc.indices, 0, np.int64)
    uniq, gid = np.unique(key, return_inverse=True)  # one group per (file, message_id)
    first = np.full(len(uniq), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first, gid, rows)
    row_first = np.arange(t.num_rows)
    row_first[rows] = first[gid]
    return row_first[tgt]


def take_or_null(col, idx: np.ndarray) -> pa.Array:
    """``col[idx]`` with null where ``idx`` is -1 (a null index takes a null)."""
    idx = np.asarray(idx, np.int64)
    return pc.take(col, arrow_indices(idx, idx < 0))


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
        rules: ``"pi-1.6"`` or ``"pi-0.58"`` (see :mod:`sessionlab.pi.rules`); default: the rules the
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
    prep = context_arrays(table, rules)
    tgt, base = target_rows(prep, at, session_id)
    return _context_table(prep, tgt, base, prep.compute(base), calls=isinstance(at, str) and at == "calls")


contexts_df = df_variant(contexts)


def _context_table(prep: PreparedContexts, tgt: np.ndarray, base: np.ndarray, r: dict[str, np.ndarray], *,
                   calls: bool) -> pa.Table:
    """The rows of :func:`contexts` for targets ``tgt`` built at ``base`` (``r``: their aggregates)."""
    t = prep.table
    null_count = r["cyclic"]

    def ints(a: np.ndarray) -> pa.Array:
        return from_numpy(a, mask=null_count, type=_I64)

    model_src = r["model_src"]
    if calls:  # a Claude Code or Codex call names the model it was sent to (pi's follows pi's rule)
        model_src = np.where(prep.is_other_agent[tgt] & ~null_count, tgt, model_src)

    thinking = take_or_null(t["thinking_level"], r["think"])
    thinking = pc.if_else(from_numpy(null_count), scalar(None, _S), pc.fill_null(thinking, scalar("off")))
    out = {
        "session_id": prep.forest.per_file("session_id", tgt),
        "file": prep.forest.per_file("file", tgt),
        "at_id": take_or_null(t["entry_id"], tgt),
        "context_id": take_or_null(t["entry_id"], base),
        "message_count": ints(r["message_count"]),
        "context_tokens": ints(r["context_tokens"]),
        "usage_tokens": ints(r["usage_tokens"]),
        "trailing_tokens": ints(r["trailing_tokens"]),
        "projected_tokens": from_numpy(r["projected_tokens"], mask=null_count | (not prep.rules.projection),
                                       type=_I64),
        "thinking_level": thinking,
        "provider": take_or_null(t["provider"], model_src),
        "model": take_or_null(t["model"], model_src),
        "compaction_id": take_or_null(t["entry_id"], r["comp"]),
    }
    parts = [_np(t[c], 0, np.int64)[tgt] for c in ("input_tokens", "cache_read_tokens", "cache_write_tokens")]
    has_usage = _np(pc.is_valid(t["input_tokens"]), False, bool)[tgt]
    if not calls:  # the recorded prompt is a call's, sent at its parent
        has_usage = np.zeros(len(tgt), bool)
    out["prompt_tokens"] = from_numpy(parts[0] + parts[1] + parts[2], mask=~has_usage, type=_I64)
    out["estimated_tokens"] = ints(r["estimate_only"])
    return pa.Table.from_pydict(out, schema=schema_of(CONTEXT_COLUMNS))


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
    prep = context_arrays(table, rules)
    tgt, base = target_rows(prep, at, session_id)
    r = prep.compute(base)
    out_target, out_entry, out_pos = members(prep, r, base)
    tg = tgt[out_target]
    return pa.Table.from_pydict({
        "session_id": take_or_null(table["session_id"], tg),
        "at_id": take_or_null(table["entry_id"], tg),
        "entry_id": take_or_null(table["entry_id"], out_entry),
        "position": from_numpy(out_pos, type=_I64),
    }, schema=schema_of(MEMBER_COLUMNS))


context_members_df = df_variant(context_members)


def _pi_files() -> tuple[str, ...]:
    """The agents whose sessions are pi session files (pi's, OpenClaw's)."""
    from .. import agents

    return ("pi",) + tuple(a for a in agents.names() if agents.pi_format(a))


def context_messages(entries, at_id: str, *, session_id: SessionIds = None, rules: Rules | None = None) -> list:
    """The messages of the context at ``at_id`` (an entry of the table), as the object model
    builds them: equal to ``Session.build_context(leaf_id=at_id).messages`` on that file.

    ``session_id`` (one id or a list) says where to look when the id is in several sessions. The
    table holds no message content, so the member entries are read back from their file.
    """
    from ..pi.context import build_session_context
    from ..pi.io.reader import read_session

    table = as_table(entries)
    mask = pc.equal(table["entry_id"], scalar(at_id))
    in_sessions = session_mask(table, session_id)
    if in_sessions is not None:
        mask = pc.and_(mask, in_sessions)
    rows = table.filter(mask)
    if rows.num_rows == 0:
        from ..errors import EntryNotFoundError

        raise EntryNotFoundError(f"entry {at_id!r} is not in the table")
    files = set(rows["file"].to_pylist())
    if len(files) != 1:
        raise ArgumentValueError("session_id", f"entry id {at_id!r} is in {len(files)} files; pass session_id")
    which = table_rules_for(table, rules)
    agent = rows["agent"][0].as_py() if "agent" in rows.column_names else None
    if agent in ("claude-code", "codex"):
        return _agent_context_messages(table, rows, at_id, agent, files.pop(), which)
    if agent is not None and agent not in _pi_files():
        raise ArgumentValueError("at_id", f"the messages of {agent} sessions are not read back (sessionlab reads their "
                                 "usage and message shapes, not message contents); context_members() lists the entries")
    sf = read_session(files.pop(), on_bad_lines="skip")
    return build_session_context(sf.branch(at_id), rules=which).messages


def _agent_context_messages(table: pa.Table, rows: pa.Table, at_id: str, agent: str, path: str,
                            rules: Any) -> list:
    """A Claude Code or Codex context: its members (:func:`context_members`, the entries the
    tables count) read back from the file as messages."""
    from ..agents import agent_messages

    sid = rows["session_id"][0].as_py()
    mem = context_members(table, at=[at_id], session_id=sid, rules=rules)
    ids = mem.sort_by("position")["entry_id"].to_pylist()
    msgs = agent_messages(path, agent, set(ids))
    return [msgs[e] for e in ids if e in msgs]
