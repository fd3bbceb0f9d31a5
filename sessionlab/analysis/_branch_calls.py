"""The calls along one branch, in order, with the compactions between them: what a context timeline draws.

A *branch* is the path from the root to a leaf: each session's current branch (root to pi's
leaf), or the path to an entry asked for by id. Its calls are ordered root to leaf (by depth) and
numbered from 0 per session, as :func:`~sessionlab.simulate_compaction` numbers a branch's calls
(``call_index``); a compaction sits between the calls before and after it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ArgumentValueError, EntryNotFoundError
from ..tables._conventions import df_variant, returns
from ..tables._schema import TIMESTAMP, Column, schema_of
from ..tables.corpus import SessionIds, as_entries, select_sessions
from ._forest import Forest
from .usage import _calls_mask, _np, current_branch_mask, previous_calls

__all__ = ["branch_calls", "branch_calls_df", "branch_mask", "BRANCH_CALL_COLUMNS"]

_S, _I64 = pa.string(), pa.int64()

BRANCH_CALL_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("at_id", _S, "The call (an assistant message) or the compaction entry."),
    Column("kind", _S, "'call' or 'compaction'."),
    Column("call_index", _I64, "A call's position among the calls of its branch (0 for the first, as "
           "simulate_compaction's call_index); for a compaction, the number of calls before it on the branch."),
    Column("timestamp", TIMESTAMP, "Its timestamp."),
    Column("cache_read_tokens", _I64, "A call's recorded cache read (0 when it records none); null for a "
           "compaction."),
    Column("cache_write_tokens", _I64, "Its cache write, likewise."),
    Column("input_tokens", _I64, "Its fresh input, likewise."),
    Column("output_tokens", _I64, "Its output, likewise."),
    Column("prompt_tokens", _I64, "A call's input + cache read + cache write; null for a compaction."),
    Column("branch_switch", pa.bool_(), "A call the session made after coming back from another branch: the "
           "previous call in the file is not the previous call on this branch (cache_efficiency's "
           "'branch_switch'); false for the first call and for compactions."),
    Column("tokens_before", _I64, "A compaction's recorded tokensBefore; null for a call."),
    Column("tokens_after", _I64, "The context a compaction left: the prompt_tokens of the next call on the "
           "branch with a non-zero prompt; null for a call or when no such call follows."),
)
_BUCKETS = ("cache_read_tokens", "cache_write_tokens", "input_tokens", "output_tokens")


def branch_mask(entries, *, leaf_id: str | None = None, forest: Forest | None = None) -> np.ndarray:
    """For each row, whether it is on the branch: the path from the root to the entry ``leaf_id``
    (which names one entry of the table), or, with ``None``, each session's current branch.

    Raises:
        EntryNotFoundError: ``leaf_id`` is no entry of the table.
        ArgumentValueError: ``leaf_id`` is an entry of several sessions (select one with ``session_id``).
    """
    table = as_entries(entries)
    f = forest or Forest.of(table)
    if leaf_id is None:
        return current_branch_mask(table, f)
    hits = np.nonzero(np.asarray(pc.fill_null(pc.equal(table["entry_id"], leaf_id), False)) & ~f.is_leaf_record)[0]
    if hits.size == 0:
        raise EntryNotFoundError(f"entry {leaf_id!r} is not in the session")
    if np.unique(f.file_code[hits]).size > 1:
        raise ArgumentValueError("leaf_id", f"entry {leaf_id!r} is in several sessions; select one with session_id=")
    n = table.num_rows
    return f.is_ancestor(np.arange(n), np.full(n, hits[-1])) & ~f.is_leaf_record  # pi's index: the later row


def _branch_order(f: Forest, rows: np.ndarray) -> np.ndarray:
    """``rows`` (on branches) ordered root to leaf, session after session."""
    return rows[np.lexsort((rows, f.depth[rows], f.file_code[rows]))]


def _compactions_on(f: Forest, comp: np.ndarray, calls: np.ndarray,
                    prompt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each compaction row on a branch: the number of calls before it on its branch, and the
    prompt of the next call after it with a non-zero prompt (-1: none). ``calls`` in branch order."""
    k = len(calls)
    key_calls = f.file_code[calls] * (f.n + 1) + f.depth[calls]
    before = np.searchsorted(key_calls, f.file_code[comp] * (f.n + 1) + f.depth[comp], side="left")
    first = np.searchsorted(f.file_code[calls], f.file_code[comp], side="left")
    # the first call with a prompt at or after each position, within its session (k: none)
    ok = np.where(prompt > 0, np.arange(k), k)
    next_ok = np.minimum.accumulate(ok[::-1])[::-1] if k else ok
    nxt = np.append(next_ok, k)[before]
    same = nxt < k
    same[same] = f.file_code[calls[nxt[same]]] == f.file_code[comp[same]]
    after = np.where(same, np.append(prompt, 0)[nxt], -1)
    return before - first, after


@returns(BRANCH_CALL_COLUMNS)
def branch_calls(entries, *, session_id: SessionIds = None, leaf_id: str | None = None) -> pa.Table:
    """The calls of a branch in order, with their recorded usage, and the compactions between them.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        session_id: only this session (or these sessions).
        leaf_id: the branch is the path from the root to this entry (of the sessions selected);
            ``None``: each session's current branch (root to pi's leaf).

    Returns:
        One row per call and per compaction on the branch, root to leaf, session after session
        (in the order of the table), with columns:

{columns}

    Raises:
        EntryNotFoundError: ``leaf_id`` is no entry of the sessions selected.
        ArgumentValueError: ``leaf_id`` is an entry of several of them.

    Example:
        >>> branch_calls(load("data/"), session_id="b627ef1d")  # doctest: +SKIP
    """
    table = select_sessions(entries, session_id)
    f = Forest.of(table)
    on = branch_mask(table, leaf_id=leaf_id, forest=f) & ~f.cyclic
    is_call = _calls_mask(table) & ~f.cyclic
    rows, _, switched = previous_calls(f, is_call)
    calls = _branch_order(f, np.nonzero(on & is_call)[0])
    switch = np.zeros(table.num_rows, bool)
    switch[rows] = switched
    usage = {c: _np(table, c, 0, np.int64)[calls] for c in _BUCKETS}
    prompt = usage["cache_read_tokens"] + usage["cache_write_tokens"] + usage["input_tokens"]
    comp = _branch_order(f, np.nonzero(on & f.isin("type", ("compaction",)))[0])
    comp_index, after = _compactions_on(f, comp, calls, prompt)
    k, m = len(calls), len(comp)
    both_rows = np.r_[calls, comp]
    order = np.lexsort((np.r_[np.zeros(k), np.ones(m)], f.depth[both_rows], f.file_code[both_rows]))
    take = pa.array(order, pa.int64())

    def both(call_values, comp_values, type_, call_null=False, comp_null=None):
        """A column: the calls' values then the compactions', in branch order."""
        nulls = np.r_[np.full(k, call_null), np.zeros(m, bool) if comp_null is None else comp_null]
        return pa.array(np.r_[call_values, comp_values], type_, mask=nulls).take(take)

    idx = pa.array(both_rows[order], pa.int64())
    first = np.searchsorted(f.file_code[calls], f.file_code[calls], side="left")
    zeros, none = np.zeros(m, np.int64), np.ones(m, bool)
    return pa.Table.from_pydict({
        "session_id": table["session_id"].take(idx),
        "at_id": table["entry_id"].take(idx),
        "kind": both(np.full(k, "call", object), np.full(m, "compaction", object), _S),
        "call_index": both(np.arange(k) - first, comp_index, _I64),
        "timestamp": table["timestamp"].take(idx),
        **{c: both(usage[c], zeros, _I64, comp_null=none) for c in _BUCKETS},
        "prompt_tokens": both(prompt, zeros, _I64, comp_null=none),
        "branch_switch": both(switch[calls], np.zeros(m, bool), pa.bool_()),
        "tokens_before": both(np.zeros(k, np.int64), _np(table, "tokens_before", 0, np.int64)[comp], _I64,
                              call_null=True),
        "tokens_after": both(np.zeros(k, np.int64), np.maximum(after, 0), _I64, call_null=True, comp_null=after < 0),
    }, schema=schema_of(BRANCH_CALL_COLUMNS))


branch_calls_df = df_variant(branch_calls)
