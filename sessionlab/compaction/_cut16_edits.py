"""pi 1.6's cut point for targets whose context holds a ``context_edit``.

:class:`Corrections` gives, for every target at once, what the edits change in its projected
entries: the last edit of each edited row among the context entries removes it (no messages, no
tokens: no cut point, turn start or stop of the backward extension) or replaces its estimate. The
path sums of :mod:`._cut16` are corrected by these (target, row) pairs, sorted by depth (the
projected order, the compaction in effect aside).

The exact walk stays for what the corrections do not cover (rare): an edit of a compaction, of a
system message or of a row not above it, and pi's recovery-omission rule (only edited entries
after the cut). The projected entries of one target are built from the contexts' per-row arrays
(see :func:`sessionlab.analysis._edits.context_rows`) with the edits applied, then pi's
``findProjectedCutPoint`` runs on them as written.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate, compress
from operator import itemgetter

import numpy as np

from ..analysis import ListView, context_rows, edit_pairs, member

__all__ = ["Corrections", "edited_cut_points"]


class Corrections:
    """The edits' changes to the projected entries of targets ``t`` (``edited``: those whose window
    holds an edit), as pairs (target position ``k``, row ``x``) sorted by ``k``, then depth."""

    def __init__(self, a, t: np.ndarray, edited: np.ndarray, c: np.ndarray, start_depth: np.ndarray) -> None:
        p, f = a.prep, a.forest
        self.f, self.m = f, len(t)
        m = self.m
        k, e, x = edit_pairs(p, np.where(edited, t, -1), start_depth)
        xx = np.maximum(x, 0)
        bad = (x >= 0) & ((x == c[k]) | p.is_sys[xx] | p.is_comp[xx] | ~p.edit_above[e])
        self.slow = np.zeros(m, bool)  # targets the exact walk takes
        self.slow[k[bad]] = True
        use = (x >= 0) & ~bad & (f.depth[xx] >= start_depth[k])
        rm = use & (p.edit_action[e] == "remove")
        dw = np.where(rm, -p.est_msg[xx], np.where(use & ~rm & p.edit_est_valid[e], p.est[e] - p.est_msg[xx], 0))
        keep = rm | (dw != 0)
        k, x, dw, rm = k[keep], x[keep], dw[keep], rm[keep]
        d = f.depth[x]
        order = np.lexsort((d, k))
        self.k, self.x, self.dw, self.rm, self.d = k[order], x[order], dw[order], rm[order], d[order]
        self.dg = -(self.rm & p.gives[self.x]).astype(np.int64)  # messages summarised
        self.removed_keys = np.sort(self.k[self.rm] * f.n + self.x[self.rm])
        self.width = int(f.depth.max()) + 2 if f.n else 1
        self.keys = self.k * self.width + self.d  # ascending
        self.lo = np.searchsorted(self.k, np.arange(m))
        self.count = np.bincount(self.k, minlength=m)

    def removed(self, rows: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
        """Whether ``rows`` (one per target ``q``, all by default) are removed from its entries."""
        q = np.arange(self.m) if q is None else q
        return (rows >= 0) & member(self.removed_keys, q * self.f.n + np.maximum(rows, 0))

    def skip(self, rows: np.ndarray, near) -> np.ndarray:
        """``rows`` moved up past removed rows to the next row ``near`` gives above them: an array
        over rows, or ``near(positions, parent rows)`` when that depends on the target."""
        rows = rows.copy()
        act = np.nonzero(self.removed(rows))[0]
        while act.size:
            par = self.f.parent[rows[act]]
            pp = np.maximum(par, 0)
            nxt = near[pp] if isinstance(near, np.ndarray) else near(act, pp)
            rows[act] = np.where(par >= 0, nxt, -1)
            act = act[self.removed(rows[act], act)]
        return rows

    def sum_depth(self, vals: np.ndarray, lo_depth: np.ndarray, hi_depth: np.ndarray | None = None) -> np.ndarray:
        """Each target's sum of pair ``vals`` at depths ``lo_depth`` up to ``hi_depth`` (excluded;
        None: no bound)."""
        q = np.arange(self.m) * self.width
        cum = np.concatenate([[0], np.cumsum(vals)])
        hi = q + (self.width if hi_depth is None else np.clip(hi_depth, 0, self.width))
        lo = q + np.clip(lo_depth, 0, self.width)
        return cum[np.searchsorted(self.keys, hi)] - cum[np.searchsorted(self.keys, np.minimum(lo, hi))]

    def crossing(self, reaching, keep: int, ok: np.ndarray) -> np.ndarray:
        """The deepest projected entry of each target whose corrected suffix weight reaches
        ``keep`` (> 0; -1: none). ``reaching(sel, need)`` is the uncorrected search; between two
        corrected rows the correction is constant, so it runs once per corrected row passed."""
        out = np.full(self.m, -1, np.int64)
        need = np.full(self.m, keep, np.int64)
        act, j = np.nonzero(ok)[0], 0
        while act.size:
            r = reaching(act, need[act])
            hi = self.lo[act] + self.count[act]
            if j:  # rows below the last corrected row passed do not reach: it is the deepest candidate
                prev = self.x[hi - j]
                r = np.where((r >= 0) & (self.f.depth[np.maximum(r, 0)] > self.f.depth[prev]), prev, r)
            more = self.count[act] > j
            i = np.where(more, hi - 1 - j, 0)
            d_next = np.where(more, self.d[i] if self.d.size else -1, -1)
            found = (r >= 0) & (self.f.depth[np.maximum(r, 0)] > d_next)
            out[act[found]] = r[found]
            act, i = act[~found & more], i[~found & more]
            need[act] -= self.dw[i]
            j += 1
        return out


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
