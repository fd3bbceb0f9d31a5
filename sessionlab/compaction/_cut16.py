"""pi 1.6's cut point (``prepareCompaction`` on the projection) for many targets at once.

The rules (:func:`sessionlab.pi.compaction.prepare.prepare_compaction` with ``rules="pi-1.6"`` is the
plain reference) differ from 0.58's in where the segment starts and what an entry weighs:

- the projected entries are the compaction in effect, then its kept range (without system
  messages; an older compaction there gives nothing but still stops the backward extension), then
  every entry after it; the segment is everything after the compaction, *kept range included*;
- an entry weighs the estimates of all its messages (system messages after the compaction too), and
  entries without messages are skipped; a cut point is an entry with a user, assistant, bash,
  custom, branch or compaction summary message; past the budget with no cut point at or after the
  crossing, the *last* cut point is taken;
- the backward extension passes entries without messages; a turn starts at an entry with a user,
  bash, custom or summary message; the cut is a split turn when it does not start a turn and a
  turn start lies at or above it in the segment;
- the messages summarised leave out system messages; nothing to summarise gives no result.

Path sums over the forest give every target's answer at once, as in :mod:`.cut_points`; the
projected order only moves the compaction to the front, so a walk that leaves the entries after
the compaction continues in its kept range. A ``context_edit`` in a target's window changes some
of its entries: :class:`._cut16_edits.Corrections` corrects these sums for all targets at once.
"""

from __future__ import annotations

import numpy as np

from ..analysis import PreparedContexts

__all__ = ["CutArrays16", "cut_point_rows_16", "cut_point_rows_16_keeps"]

_CUT_ROLES = ("user", "assistant", "bashExecution", "custom")
_TURN_ROLES = ("user", "bashExecution", "custom")


class CutArrays16:
    """Per-row arrays of the 1.6 cut rules, on top of the contexts' arrays of the same table."""

    def __init__(self, prep: PreparedContexts) -> None:
        self.prep = p = prep
        f = self.forest = prep.forest
        msg = f.isin("type", ("message",))
        summary = f.isin("type", ("branch_summary",)) & p.gives  # non-empty: it gives a message
        custom = f.isin("type", ("custom_message",))
        self.is_cut = (msg & f.isin("role", _CUT_ROLES)) | summary | custom
        self.is_turn = (msg & f.isin("role", _TURN_ROLES)) | summary | custom
        w_all = p.est_msg  # every message an entry gives (system messages included)
        w_kept = np.where(p.is_sys, 0, w_all)  # the kept range has no system messages
        self.cum_w = f.path_sum(w_all)
        self.cum_w_excl = self.cum_w - w_all
        self.cum_k = f.path_sum(w_kept)
        self.cum_k_excl = self.cum_k - w_kept
        summarised = (p.gives & ~p.is_sys).astype(np.int64)
        self.cum_g = f.path_sum(summarised)
        self.cum_g_excl = self.cum_g - summarised
        self.cnt_cut = f.path_sum(self.is_cut.astype(np.int64))
        self.cnt_cut_excl = self.cnt_cut - self.is_cut
        self.near_cut = f.nearest(self.is_cut)
        self.near_w = f.nearest(w_all > 0)  # pi's walk skips entries that weigh nothing
        self.near_k = f.nearest(w_kept > 0)
        self.near_turn = f.nearest(self.is_turn)
        self.stop_after = f.nearest(p.gives | p.is_comp)  # what ends the extension after the compaction
        self.stop_kept = f.nearest((p.gives & ~p.is_sys) | p.is_comp)  # ... inside its kept range


def _child_toward(f, t: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The row on the path to ``t`` one level below ``rows`` (``rows`` are ancestors of ``t``)."""
    return f.deepest_at_most(f.depth, t, f.depth[np.maximum(rows, 0)] + 1)


class _Segment:
    """What pi 1.6 cuts in, for each target row: the compaction in effect, its kept range (which
    the segment includes) and the entries after it."""

    def __init__(self, a: CutArrays16, t: np.ndarray, ctx: dict[str, np.ndarray]) -> None:
        p, f = a.prep, a.forest
        self.t = t = np.asarray(t, np.int64)
        self.tt = tt = np.maximum(t, 0)
        self.ok = ok = (t >= 0) & ~f.cyclic[tt] & ~p.is_comp[tt] & ctx["ok"]
        self.c = c = np.where(ok, ctx["comp"], -1)
        self.has_c = has_c = c >= 0
        self.cc = cc = np.maximum(c, 0)
        self.fk = fk = np.where(has_c, ctx["first_kept"], -1)
        self.has_fk = has_fk = fk >= 0
        self.fkk = fkk = np.maximum(fk, 0)
        self.start_depth = np.where(has_c, np.where(has_fk, f.depth[fkk], f.depth[cc] + 1), 0)
        self.c_depth = np.where(has_c, f.depth[cc], -1)
        # segment totals: weights from the segment start down to the target (the compaction skipped)
        self.after_w = np.where(has_c, a.cum_w[tt] - a.cum_w[cc], a.cum_w[tt])
        self.kept_w = np.where(has_fk, a.cum_k[cc] - a.cum_k_excl[fkk], 0)


def cut_point_rows_16(a: CutArrays16, t: np.ndarray, keep_recent_tokens: int,
                      ctx: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The 1.6 cut point for target rows ``t``; ``ctx`` is :meth:`PreparedContexts.compute` at ``t``."""
    return cut_point_rows_16_keeps(a, t, [keep_recent_tokens], ctx)[0]


def cut_point_rows_16_keeps(a: CutArrays16, t: np.ndarray, keeps: list[int],
                            ctx: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """:func:`cut_point_rows_16` for each of several ``keep_recent_tokens`` values: what does not
    depend on the value (the segment, the edits' corrections, its first and last cut points) is
    found once."""
    from ._cut16_edits import Corrections, edited_cut_points

    s = _Segment(a, t, ctx)
    corr = Corrections(a, s.t, ctx["edited"] & s.ok, s.c, s.start_depth)
    cuts = _SegmentCuts(a, s, corr)
    outs = []
    for keep_recent_tokens in keeps:
        cut, crossed = _crossing_cut(a, s, corr, keep_recent_tokens, cuts)
        # pi's recovery-omission rule can only move a cut past the crossing when every entry after
        # it is one the edits emptied: those targets take the exact walk
        cut_r = np.maximum(cut, 0)
        deeper = a.forest.depth[cut_r] + 1
        after = a.cum_g[s.tt] - a.cum_g[cut_r] + corr.sum_depth(corr.dg, deeper)
        slow = corr.slow | (crossed & (after == 0) & (corr.sum_depth(corr.rm.astype(np.int64), deeper) > 0))
        # extend back over entries without messages (past the compaction into its kept range)
        cut = _extend_back(a, s.tt, cut, s.c, s.start_depth, s.ok, corr)
        out = _summarised(a, s, np.where(s.ok, cut, -1), corr)
        out["tokens_before"] = ctx["projected_tokens"]
        if slow.any():
            edited_cut_points(a, s.t, np.nonzero(slow)[0], keep_recent_tokens, out)
        outs.append(out)
    return outs


def _reaching(a: CutArrays16, s: _Segment, sel: np.ndarray, need: np.ndarray) -> np.ndarray:
    """For targets ``sel``, the deepest entry of the segment whose suffix weight (to the target)
    reaches ``need`` (-1: none), the kept range continuing the entries after the compaction."""
    f = a.forest
    tt, cc, has_fk = s.tt[sel], s.cc[sel], s.has_fk[sel]
    after_w = s.after_w[sel]
    r_after = f.deepest_at_most(a.cum_w_excl, tt, a.cum_w[tt] - need)
    in_after = (r_after >= 0) & (f.depth[np.maximum(r_after, 0)] > s.c_depth[sel]) & (after_w >= need)
    pc = f.parent[cc]
    r_kept = f.deepest_at_most(a.cum_k_excl, pc, a.cum_k[np.maximum(pc, 0)] - (need - after_w))
    r_kept = np.where(has_fk & (pc >= 0) & (r_kept >= 0), r_kept, -1)
    in_kept = ~in_after & has_fk & (s.kept_w[sel] + after_w >= need) & (r_kept >= 0) \
        & (f.depth[np.maximum(r_kept, 0)] >= s.start_depth[sel])
    return np.where(in_after, r_after, np.where(in_kept, r_kept, -1))


class _SegmentCuts:
    """The cut points of each target's segment, whatever the budget: whether it has any the edits
    keep (``any_cut``), the first and the last, the segment's first entry (``seg_start``)."""

    def __init__(self, a: CutArrays16, s: _Segment, corr) -> None:
        f = a.forest
        self.a, self.corr, self.tt = a, corr, s.tt
        tt = s.tt
        ok, has_c, cc, has_fk, fk, fkk = s.ok, s.has_c, s.cc, s.has_fk, s.fk, s.fkk
        # cut points in the segment: kept range, then after the compaction
        cuts_before = np.where(has_fk, a.cnt_cut_excl[fkk], np.where(has_c, a.cnt_cut[cc], 0))
        removed_cuts = corr.sum_depth((corr.rm & a.is_cut[corr.x]).astype(np.int64), np.zeros(len(tt), np.int64))
        self.any_cut = ok & (a.cnt_cut[tt] - cuts_before - removed_cuts > 0)
        self.first_cut = self.first_from(cuts_before)
        self.last_cut = corr.skip(a.near_cut[tt], a.near_cut)
        seg_start = np.where(has_fk, fk, np.where(has_c, _child_toward(f, tt, cc), f.deepest_at_most(f.depth, tt, 0)))
        self.seg_start = np.where(ok & (f.depth[tt] >= s.start_depth), seg_start, -1)

    def first_from(self, count: np.ndarray) -> np.ndarray:
        """The first cut point kept by the edits whose exclusive count is ``count`` or more."""
        a, corr, tt, f = self.a, self.corr, self.tt, self.a.forest
        x = np.where(a.cnt_cut[tt] > count, f.deepest_at_most(a.cnt_cut_excl, tt, count), -1)
        act = np.nonzero(corr.removed(x))[0]
        while act.size:  # a removed cut point: the next one
            r = x[act]
            x[act] = np.where(a.cnt_cut[tt[act]] > a.cnt_cut[r],
                              f.deepest_at_most(a.cnt_cut_excl, tt[act], a.cnt_cut[r]), -1)
            act = act[corr.removed(x[act], act)]
        return x


def _crossing_cut(a: CutArrays16, s: _Segment, corr, keep_recent_tokens: int,
                  cuts: _SegmentCuts) -> tuple[np.ndarray, np.ndarray]:
    """The cut before the backward extension: the first cut point at or after the crossing of
    ``keep_recent_tokens`` (the last cut point when none is), the first of the segment when the
    budget is never reached, the segment start when there is no cut point; and whether the budget
    was crossed. Entries the edits removed are no cut points."""
    ok, any_cut = s.ok, cuts.any_cut
    crossing = corr.crossing(lambda sel, need: _reaching(a, s, sel, need), max(keep_recent_tokens, 1), ok)
    crossed = ok & any_cut & (crossing >= 0)
    later = np.where(crossed, cuts.first_from(a.cnt_cut_excl[np.maximum(crossing, 0)]), -1)
    cut = np.where(any_cut, np.where(crossed, np.where(later >= 0, later, cuts.last_cut), cuts.first_cut),
                   cuts.seg_start)
    return cut, crossed


def _summarised(a: CutArrays16, s: _Segment, cut: np.ndarray, corr) -> dict[str, np.ndarray]:
    """The split turn and the counts of a final ``cut`` (-1: none): messages summarised, the turn
    prefix, the kept tokens (everything but ``tokens_before``), with the edits' corrections."""
    f = a.forest
    tt, ok, has_c, cc, has_fk, fkk, c_depth = s.tt, s.ok, s.has_c, s.cc, s.has_fk, s.fkk, s.c_depth
    cut_r = np.maximum(cut, 0)
    starts = a.is_turn[cut_r] & ~corr.removed(cut)
    ts = np.where(ok & (cut >= 0) & ~starts, corr.skip(a.near_turn[cut_r], a.near_turn), -1)
    ts = np.where((ts >= 0) & (f.depth[np.maximum(ts, 0)] >= s.start_depth), ts, -1)
    split = ts >= 0
    hist_end = np.where(split, ts, cut)
    g_start = np.where(has_fk, a.cum_g_excl[fkk], np.where(has_c, a.cum_g[cc], 0))

    def summarised_before(x: np.ndarray) -> np.ndarray:
        """Messages summarised from the segment start to row ``x`` (excluded), in projected order."""
        xr = np.maximum(x, 0)
        after = has_c & (f.depth[xr] > c_depth)
        kept_part = np.where(has_fk, a.cum_g[cc] - g_start, 0)  # the whole kept range (c gives none)
        removed = corr.sum_depth(corr.dg, np.zeros(len(xr), np.int64), f.depth[xr])
        return np.where(after, kept_part + a.cum_g_excl[xr] - a.cum_g[cc], a.cum_g_excl[xr] - g_start) + removed

    to_summarize = np.where(ok & (cut >= 0), summarised_before(hist_end), 0)
    prefix = np.where(split, summarised_before(cut) - summarised_before(ts), 0)
    cut_after = has_c & (f.depth[cut_r] > c_depth)
    kept_tokens = np.where(cut_after, a.cum_w[tt] - a.cum_w_excl[cut_r],
                           s.after_w + np.where(has_fk, a.cum_k[cc] - a.cum_k_excl[cut_r], 0))
    kept_tokens = np.where(has_c | (cut < 0), kept_tokens, a.cum_w[tt] - a.cum_w_excl[cut_r])
    kept_tokens = kept_tokens + corr.sum_depth(corr.dw, f.depth[cut_r])
    ok = ok & (cut >= 0) & ((to_summarize + prefix) > 0)
    return {"ok": ok, "cut": np.where(ok, cut, -1), "turn_start": np.where(ok, ts, -1), "split": split & ok,
            "to_summarize": to_summarize, "prefix": prefix, "kept": np.where(ok, kept_tokens, 0),
            "prev": np.where(ok, s.c, -1)}


def _extend_back(a: CutArrays16, tt: np.ndarray, cut: np.ndarray, c: np.ndarray, start_depth: np.ndarray,
                 ok: np.ndarray, corr) -> np.ndarray:
    """pi's backward extension: the cut moves up over entries that give no message, stopping below
    an entry with messages or a compaction; from the first entry after the compaction it goes on
    in the kept range (where system messages are not entries at all). An entry the edits removed
    gives no message."""
    p, f = a.prep, a.forest
    has_c = c >= 0
    cc = np.maximum(c, 0)
    c_depth = np.where(has_c, f.depth[cc], -1)
    cut_r = np.maximum(cut, 0)
    par = f.parent[cut_r]
    in_kept = has_c & (f.depth[cut_r] < c_depth)
    stops = np.where(in_kept, a.stop_kept[np.maximum(par, 0)], a.stop_after[np.maximum(par, 0)])

    def stop_above(act: np.ndarray, rows: np.ndarray) -> np.ndarray:  # (past a removed stop)
        return np.where(f.depth[rows] >= c_depth[act], a.stop_after[rows], a.stop_kept[rows])

    m = corr.skip(np.where(par >= 0, stops, -1), stop_above)  # nearest stop above the cut
    crosses = has_c & (m == c) & (f.depth[cut_r] > c_depth)  # only empty entries up to the compaction
    pc_ = f.parent[cc]
    m = np.where(crosses, corr.skip(np.where(pc_ >= 0, a.stop_kept[np.maximum(pc_, 0)], -1), a.stop_kept), m)
    new_depth = np.maximum(np.where(m >= 0, f.depth[np.maximum(m, 0)] + 1, 0), start_depth)
    move = ok & (cut >= 0) & (new_depth < f.depth[cut_r])
    moved = f.deepest_at_most(f.depth, tt, new_depth)
    # a kept-range system message is no entry of the projection: the cut lands below it
    for _ in range(64):
        mr = np.maximum(moved, 0)
        sys_kept = move & p.is_sys[mr] & has_c & (f.depth[mr] < c_depth)
        if not sys_kept.any():
            break
        moved = np.where(sys_kept, _child_toward(f, tt, moved), moved)
    # the compaction itself is never the cut: past it, the first entry after it
    moved = np.where(move & has_c & (moved == c), _child_toward(f, tt, moved), moved)
    return np.where(move, moved, cut)
