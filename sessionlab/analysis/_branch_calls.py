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

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar
from ..errors import ArgumentValueError, EntryNotFoundError
from ..tables import TIMESTAMP, Column, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, as_entries, select_sessions
from ..tables.forest import Forest
from .usage import _bool, _calls_mask, _np, current_branch_mask, previous_calls

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
    hits = np.nonzero(_bool(pc.equal(table["entry_id"], scalar(leaf_id))) & ~f.is_leaf_record)[0]
    if hits.size == 0:
        raise EntryNotFoundError(f"entry {leaf_id!r} is not in the session")
    if np.unique(f.file_code[hits]).size > 1:
        raise ArgumentValueError("leaf_id", f"entry {leaf_id!r} is in several sessions; select one with session_id=")
    n = table.num_rows
    return f.is_ancestor(np.arange(n), np.full(n, hits[-1])) & ~f.is_leaf_record  # pi's index: the later row


def _branch_order(f: Forest, rows: np.ndarray) -> np.ndarray:
    """``rows`` (on branches, in row order) ordered root to leaf, session after session: as they
    are when every entry comes after its parent in its file (a sort only otherwise)."""
    code, depth = f.file_code[rows], f.depth[rows]
    same = code[1:] == code[:-1]
    if (code[1:] >= code[:-1]).all() and (depth[1:][same] > depth[:-1][same]).all():
        return rows
    return rows[np.lexsort((rows, depth, code))]


def _positions(f: Forest, seq: np.ndarray, is_comp: np.ndarray) -> np.ndarray:
    """For each row of ``seq`` (calls and compactions in branch order): the number of calls before
    it on its branch."""
    before = np.cumsum(~is_comp) - ~is_comp
    code = f.file_code[seq]
    start = np.r_[True, code[1:] != code[:-1]] if len(seq) else np.zeros(0, bool)
    return before - before[np.nonzero(start)[0]][np.cumsum(start) - 1]


def _left_by(f: Forest, seq: np.ndarray, is_comp: np.ndarray, prompt: np.ndarray) -> np.ndarray:
    """For each row of ``seq``: the prompt of the next call after it on its branch with a
    non-zero prompt (-1: none), what a compaction there left."""
    n = len(seq)
    ok = np.where(~is_comp & (prompt > 0), np.arange(n), n)
    nxt = np.r_[np.minimum.accumulate(ok[::-1])[::-1], n][1:] if n else ok  # the first at or after i + 1
    code = np.r_[f.file_code[seq], -1]
    return np.where((nxt < n) & (code[np.minimum(nxt, n)] == code[:n]), np.r_[prompt, -1][nxt], -1)


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
    switch = np.zeros(table.num_rows, bool)
    switch[rows] = switched
    is_comp_row = f.isin("type", ("compaction",))
    seq = _branch_order(f, np.nonzero(on & (is_call | is_comp_row))[0])
    is_comp = is_comp_row[seq]
    usage = {c: _np(table, c, 0, np.int64)[seq] for c in _BUCKETS}
    prompt = usage["cache_read_tokens"] + usage["cache_write_tokens"] + usage["input_tokens"]
    after = np.where(is_comp, _left_by(f, seq, is_comp, prompt), -1)
    idx = arrow_indices(seq)
    return arrow_table({
        "session_id": table["session_id"].take(idx),
        "at_id": table["entry_id"].take(idx),
        "kind": pc.if_else(from_numpy(is_comp), scalar("compaction"), scalar("call")),
        "call_index": _positions(f, seq, is_comp),
        "timestamp": table["timestamp"].take(idx),
        **{c: from_numpy(usage[c], mask=is_comp, type=_I64) for c in _BUCKETS},
        "prompt_tokens": from_numpy(prompt, mask=is_comp, type=_I64),
        "branch_switch": switch[seq] & ~is_comp,
        "tokens_before": from_numpy(_np(table, "tokens_before", 0, np.int64)[seq], mask=~is_comp, type=_I64),
        "tokens_after": from_numpy(np.maximum(after, 0), mask=after < 0, type=_I64),
    }, schema_of(BRANCH_CALL_COLUMNS))


branch_calls_df = df_variant(branch_calls)
