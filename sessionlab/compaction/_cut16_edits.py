"""pi 1.6's cut point for targets whose context holds a ``context_edit``: the exact walk.

The projected entries of one target are built from the contexts' per-row arrays (see
:func:`sessionlab.analysis._edits.context_rows`) with the edits applied, then pi's
``findProjectedCutPoint`` runs on them as written, recovery-omission suffix included. Only the
(few) targets with an edit in their window come here.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate, compress
from operator import itemgetter

import numpy as np

from ..analysis._edits import ListView, context_rows

__all__ = ["edited_cut_points"]

# a projected entry: (row, messages, tokens, cut point, turn start, visible before edits, messages
# it adds to a summary: none for a compaction, a system message left out)
Entry = tuple[int, int, int, bool, bool, bool, int]


def _row_entries(a) -> list[Entry]:
    """Every row's projected entry as :func:`_projected` lists it when no edit touches it and it is
    not the compaction in effect."""
    p = a.prep
    g = p.gives
    n = g.astype(np.int64)
    summarised = np.where(p.is_comp, 0, n - (p.is_sys & g))
    return list(zip(range(len(g)), n.tolist(), p.est_msg.tolist(), (a.is_cut & g).tolist(),
                    (a.is_turn & g).tolist(), (g & ~p.is_edit).tolist(), summarised.tolist()))


def _entry(a, r: int, c: int, e: int | None) -> Entry:
    """Row ``r``'s projected entry (``c``: the compaction in effect, ``e``: the last edit of ``r``)."""
    p = a.prep
    own = int(p.gives[r]) + (int(p.comp_sys[r]) + 1 if r == c else 0)
    n, est = own, int(p.est_msg[r]) + (int(p.est[r]) + int(p.sys_est[r]) * int(p.comp_sys[r]) if r == c else 0)
    if e is not None and p.edit_action[e] == "remove":
        n, est = 0, 0
    elif e is not None and p.edit_est_valid[e] and r != c:
        est = int(p.est[e])
    visible = own > 0 and not p.is_edit[r]
    summarised = 0 if p.is_comp[r] else n - (1 if p.is_sys[r] and n else 0)
    return (r, n, est, bool(a.is_cut[r]) and n > 0, bool(a.is_turn[r]) and n > 0, visible, summarised)


def _projected(a, t: int, row_entries: list[Entry]) -> tuple[int, list[Entry]]:
    """(compaction, entries after it) as (row, messages, tokens, cut point, turn start, visible
    before edits, messages summarised), the compaction in effect first when there is one. ``row_entries`` are
    :func:`_row_entries`: only the rows an edit touches are built again."""
    p = a.prep
    c, rows = context_rows(p, t)
    is_edit, edit_target = p.is_edit, p.edit_target
    last: dict[int, int] = {}
    order = ([c] if c >= 0 else []) + rows
    for r in compress(order, map(is_edit.__getitem__, order)):
        if edit_target[r] >= 0:
            last[int(edit_target[r])] = r
    out = list(map(row_entries.__getitem__, rows))
    for r, e in last.items():
        try:
            i = rows.index(r)  # (a scan in C; an edit's target may lie outside this context)
        except ValueError:
            continue
        out[i] = _entry(a, r, c, e)
    if c >= 0:
        out.insert(0, _entry(a, c, c, last.get(c)))
    return c, out


def _cut(entries, start: int, end: int, keep: int, p, last_edit_replaces: dict) -> tuple[int, int, bool]:
    """pi 1.6's findProjectedCutPoint: (first kept index, turn start index, split)."""
    cuts = list(compress(range(start, end), map(itemgetter(3), entries[start:end])))
    if not cuts:
        return start, -1, False
    cut, exceeded = cuts[0], False
    i = _crossing(entries, start, end, keep)
    if i >= 0:
        exceeded = True
        cut = next((c for c in cuts if c >= i), cuts[-1])
    if exceeded and _recovery_omitted(entries[cut + 1:end], p):
        cut += 1
    while cut > start and not p.is_comp[entries[cut - 1][0]] and entries[cut - 1][1] == 0:
        cut -= 1
    if cut < end and entries[cut][4]:
        return cut, -1, False
    ts = next((i for i in range(min(cut, end - 1), start - 1, -1) if entries[i][4]), -1)
    return cut, ts, ts != -1


def _recovery_omitted(suffix: list[Entry], p) -> bool:
    """Whether the entries after the cut are only a recovery the edits omitted: an assistant
    message among the visible entries the edits emptied, no replacement of anything else, and no
    compaction or other visible message."""
    omitted = [x for x in suffix if x[5] and x[1] == 0]
    if not any(p.is_assistant[x[0]] for x in omitted):
        return False
    omitted_rows = {x[0] for x in omitted}
    outside = any(p.is_edit[x[0]] and p.edit_action[x[0]] == "replace" and int(p.edit_target[x[0]]) not in omitted_rows
                  for x in suffix)
    return not outside and all(not p.is_comp[x[0]] and (not x[5] or x[1] == 0) for x in suffix)


def _crossing(entries: list[Entry], start: int, end: int, keep: int) -> int:
    """Walking back from ``end``, the first entry with tokens where their sum reaches ``keep``
    (-1: never)."""
    if keep <= 0:
        return next((i for i in range(end - 1, start - 1, -1) if entries[i][2]), -1)
    sums = list(accumulate(map(itemgetter(2), reversed(entries[start:end]))))  # estimates: never negative
    k = bisect_left(sums, keep)
    return -1 if k == len(sums) else end - 1 - k


def _summarised(p, entries: list[Entry], lo: int, hi: int) -> int:
    """Messages summarised from projected entries ``[lo, hi)``: no compaction, no system message."""
    return sum(map(itemgetter(6), entries[lo:hi]))


def edited_cut_points(a, t: np.ndarray, idx: np.ndarray, keep: int, out: dict[str, np.ndarray]) -> None:
    """Overwrite ``out``'s cut points at positions ``idx`` with the exact walk."""
    row_entries = _row_entries(a)
    a = ListView(a)
    p = a.prep
    for q in idx.tolist():
        c, entries = _projected(a, int(t[q]), row_entries)
        start, end = (1 if c >= 0 else 0), len(entries)
        cut, ts, split = _cut(entries, start, end, keep, p, {})
        hist_end = ts if split else cut

        n_sum = _summarised(p, entries, start, hist_end)
        n_pre = _summarised(p, entries, ts, cut) if split else 0
        ok = cut < end and (n_sum + n_pre) > 0
        out["ok"][q] = ok
        out["cut"][q] = entries[cut][0] if ok else -1
        out["turn_start"][q] = entries[ts][0] if ok and split else -1
        out["split"][q] = ok and split
        out["to_summarize"][q] = n_sum if ok else 0
        out["prefix"][q] = n_pre if ok else 0
        out["kept"][q] = sum(map(itemgetter(2), entries[cut:])) if ok else 0
        out["prev"][q] = c if ok else -1
