"""Claude Code usage counted once across a load: which usage rows count, as ccusage counts them.

:func:`dedupe_usage` is the rule, written plainly (one pass over usage rows with dicts keyed on
ids, as ccusage's hash map); :func:`dedupe_arrays` gives the same answer with array passes for
every message id none of whose rows is a sidechain copy (nearly all of them: each streamed line of
a response repeats its message and request ids), and hands the others to :func:`dedupe_usage`.
``tests/properties/test_claude_dedupe_properties.py`` holds the two equal on random loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["dedupe_usage", "dedupe_arrays", "claude_dedupe"]


def dedupe_usage(files: Sequence[tuple[list, list, list, list, Any]]) -> tuple[list[list[bool]], list[dict[int, int]]]:
    """Which usage rows count, across files in load order, as ccusage counts them, and where.

    ``files`` holds, per file, the usage rows' ``message_id``, ``request_id``, ``is_sidechain``,
    token totals and row positions. A row repeats another when both have the same message id and
    request id, or the same message id and one of them is a sidechain copy (a subagent or ``/btw``
    file replaying its parent). Of a group, the non-sidechain row wins, then the largest token
    total, then the first in load order. Rows without a message id always count.

    The winner's usage is the response's, but its line need not be on the conversation: Claude
    Code writes one line per content block, chained, and with parallel tool calls the conversation
    goes on from an earlier block while the last (largest) one is a side branch. So the usage
    moves to the group's first line in the winner's file, the response's first block, which every
    later block of it descends from.

    Returns one list of booleans per file (``True``: the row counts) and one ``{to: from}`` dict of
    usage-row positions per file (the counted row ``to`` takes the usage of row ``from``).
    """
    slots: list[tuple[int, int]] = []  # a kept row per slot; a replacement takes over the slot
    first: dict[tuple[int, int], int] = {}  # (slot, file) -> the group's first row in that file
    exact: dict[tuple[str, str | None], int] = {}  # (message id, request id) -> slot
    by_msg: dict[str, list[int]] = {}  # message id -> slots
    keep = [[True] * len(f[0]) for f in files]
    for fi, (mids, rids, side, totals, _) in enumerate(files):
        for i, mid in enumerate(mids):
            if mid is None:
                continue
            rid = rids[i]
            cand_side = bool(side[i])
            slot = exact.get((mid, rid))
            if slot is None:
                for sl in by_msg.get(mid, ()):
                    hf, hi = slots[sl]
                    if cand_side or files[hf][2][hi]:
                        slot = sl
                        break
            if slot is None:
                exact[(mid, rid)] = len(slots)
                by_msg.setdefault(mid, []).append(len(slots))
                first[(len(slots), fi)] = i
                slots.append((fi, i))
                continue
            first.setdefault((slot, fi), i)
            hf, hi = slots[slot]
            ex_side = bool(files[hf][2][hi])
            if ex_side if cand_side != ex_side else totals[i] > files[hf][3][hi]:
                keep[hf][hi] = False
                slots[slot] = (fi, i)
                exact[(mid, rid)] = slot
            else:
                keep[fi][i] = False
    moves: list[dict[int, int]] = [{} for _ in files]
    for sl, (fi, i) in enumerate(slots):
        to = first[(sl, fi)]
        if to != i:  # the first line takes the winner's usage
            keep[fi][i], keep[fi][to] = False, True
            moves[fi][to] = i
    return keep, moves


def dedupe_arrays(mid: np.ndarray, rid: np.ndarray, side: np.ndarray, total: np.ndarray,
                  file: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dedupe_usage` over all usage rows of a load at once, in load order: ``mid`` and
    ``rid`` are integer codes of the message and request ids (-1: none), ``side`` the sidechain
    flags, ``total`` the token totals, ``file`` each row's file (non-decreasing).

    Returns ``keep`` (the rows that count) and ``source`` (for each row, the row whose usage it
    takes: itself, or the group's winner when the usage moves to the group's first line)."""
    n = len(mid)
    keep = np.ones(n, np.bool_)
    source = np.arange(n, dtype=np.int64)
    has = mid >= 0
    if not has.any():
        return keep, source
    # message ids with a sidechain row: the plain rule decides them (few)
    side_mids = np.unique(mid[has & side])
    slow = has & np.isin(mid, side_mids)
    fast = np.flatnonzero(has & ~slow)
    if len(fast):
        _fast_groups(fast, mid, rid, total, file, keep, source)
    if slow.any():
        _slow_groups(np.flatnonzero(slow), mid, rid, side, total, file, keep, source)
    return keep, source


def _fast_groups(rows: np.ndarray, mid: np.ndarray, rid: np.ndarray, total: np.ndarray, file: np.ndarray,
                 keep: np.ndarray, source: np.ndarray) -> None:
    """Groups of one (message id, request id) without sidechain rows: the first row of the largest
    total wins; its usage moves to the group's first row in the winner's file."""
    key = mid[rows].astype(np.int64) * (int(rid.max()) + 2) + (rid[rows] + 1)
    _, group = np.unique(key, return_inverse=True)
    # winner: per group, the largest total, then the first row (rows are in load order)
    order = np.lexsort((rows, -total[rows], group))
    starts = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1]])
    winner = np.empty(starts.size, np.int64)
    winner[group[order][starts]] = rows[order][starts]
    # the group's first row in the winner's file
    in_win = file[rows] == file[winner[group]]
    first = np.full(starts.size, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first, group[in_win], rows[in_win])
    keep[rows] = False
    keep[first] = True
    source[first] = winner


def _slow_groups(rows: np.ndarray, mid: np.ndarray, rid: np.ndarray, side: np.ndarray, total: np.ndarray,
                 file: np.ndarray, keep: np.ndarray, source: np.ndarray) -> None:
    files_of = file[rows]
    parts: list[tuple[list, list, list, list, Any]] = []
    where: list[np.ndarray] = []
    for f in np.unique(files_of):
        r = rows[files_of == f]
        where.append(r)
        parts.append((mid[r].tolist(), [None if x < 0 else x for x in rid[r].tolist()], side[r].tolist(),
                      total[r].tolist(), r))
    k, moves = dedupe_usage(parts)
    for r, kk, mv in zip(where, k, moves):
        keep[r] = kk
        for to, frm in mv.items():
            source[r[to]] = r[frm]


def claude_dedupe(results: list) -> None:
    """Null the repeated usage of a load's Claude Code files (results in load order), moving each
    response's usage to its first line (:func:`dedupe_usage`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._arrow import arrow_indices, to_numpy, valid_mask
    from ._spec import USAGE_COLUMNS, usage_nulled

    owners, tables = [], []
    for r in results:
        if r.entries is not None and (r.session or {}).get("agent") == "claude-code" and r.entries.num_rows:
            owners.append(r)
            tables.append(r.entries.select(["input_tokens", "output_tokens", "cache_read_tokens",
                                            "cache_write_tokens", "message_id", "request_id", "is_sidechain"]))
    if not owners:
        return
    sizes = np.array([t.num_rows for t in tables], np.int64)
    t = pa.concat_tables(tables)
    rows = np.flatnonzero(valid_mask(t["input_tokens"]))
    file = np.repeat(np.arange(len(tables)), sizes)[rows]
    u = t.take(arrow_indices(rows))
    total = sum(to_numpy(u[c], 0).astype(np.int64) for c in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                              "cache_write_tokens"))

    def codes(col: Any) -> np.ndarray:
        enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
        return to_numpy(enc.indices, -1).astype(np.int64)

    keep, source = dedupe_arrays(codes(u["message_id"]), codes(u["request_id"]),
                                 to_numpy(u["is_sidechain"], False).astype(np.bool_), np.asarray(total, np.int64),
                                 file)
    # every file's usage columns at once (a response's usage moves within its file), then each
    # changed file takes its slice of them
    moved = source != np.arange(len(rows))
    if keep.all() and not moved.any():
        return
    n = int(sizes.sum())
    drop = np.zeros(n, np.bool_)
    drop[rows[~keep]] = True
    src = None
    if moved.any():
        src = np.arange(n, dtype=np.int64)
        src[rows[moved]] = rows[source[moved]]
    full = pa.concat_tables([r.entries.select(list(USAGE_COLUMNS)) for r in owners])
    new = usage_nulled(full, drop, src)
    offsets = np.r_[0, np.cumsum(sizes)]
    changed = np.unique(file[~keep | moved])
    where = [(owners[0].entries.schema.get_field_index(c), new[c]) for c in USAGE_COLUMNS]
    for fi in changed.tolist():
        r, a, k = owners[fi], int(offsets[fi]), int(sizes[fi])
        cols = r.entries.columns  # (every file's table has the entries schema)
        for i, col in where:
            cols[i] = col.slice(a, k)
        r.entries = pa.Table.from_arrays(cols, schema=r.entries.schema)
