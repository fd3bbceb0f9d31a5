"""The entries of every context, in order (:func:`.contexts.context_members`): all targets walk up
their paths in lockstep, filling their slots from the end, so the work is proportional to the
output."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["members"]


def members(prep: Any, r: dict[str, np.ndarray], base: np.ndarray) -> tuple[np.ndarray, ...]:
    """(target, entry row, position) of every member, target by target. Targets with a context
    edit take the walk of their unedited path, less the rows their edits remove; the few whose
    edits do more (see :func:`._edits.removed_members`) take the exact projection one by one."""
    good, removed, lost = np.zeros(len(base), bool), np.zeros(0, np.int64), np.zeros(len(base), np.int64)
    if r["edited"].any():
        from ._edits import removed_members

        good, removed, lost = removed_members(prep, base, r)
    counts = np.where(r["ok"], r["message_count"], 0) + lost
    offsets = np.concatenate([[0], np.cumsum(counts)])
    total = int(offsets[-1])
    out = (np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64))  # target, entry, pos
    walk = r["ok"] & (~r["edited"] | good)
    _members_head(prep, r, walk, offsets, out)
    _members_walk(prep, r, base, walk, offsets, out)
    if (r["ok"] & r["edited"] & ~good).any():  # edits the walk does not cover: the exact projection
        from ._edits import messages

        for q in np.nonzero(r["ok"] & r["edited"] & ~good)[0].tolist():
            rows = [m[0] for m in messages(prep, int(base[q]))]
            sl = slice(offsets[q], offsets[q] + len(rows))
            out[0][sl], out[1][sl], out[2][sl] = q, rows, np.arange(len(rows))
    if not removed.size:
        return out
    from ._edits import member

    keep = ~member(removed, out[0] * prep.forest.n + out[1])
    target, entry = out[0][keep], out[1][keep]
    counts -= lost
    return target, entry, np.arange(len(target)) - np.repeat(np.cumsum(counts) - counts, counts)


def _members_head(prep: Any, r: dict[str, np.ndarray], simple: np.ndarray, offsets: np.ndarray,
                  out: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Fill the first slots of each context: the compaction (its system message under pi 1.6, its
    summary), then the messages a seed compaction carries (its retained tail), listed under it."""
    out_target, out_entry, out_pos = out
    has_c = simple & (r["comp"] >= 0)
    head = np.where(has_c, 1 + r["comp_sys"], 0)
    for j in (0, 1):
        k = np.nonzero(head > j)[0]
        out_target[offsets[k] + j] = k
        out_entry[offsets[k] + j] = r["comp"][k]
        out_pos[offsets[k] + j] = j
    tn = np.where(has_c, prep.tail_n[np.maximum(r["comp"], 0)], 0)
    t_idx = np.nonzero(tn > 0)[0]
    if t_idx.size:
        reps = tn[t_idx]
        within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        slots = np.repeat(offsets[t_idx] + head[t_idx], reps) + within
        out_target[slots] = np.repeat(t_idx, reps)
        out_entry[slots] = np.repeat(r["comp"][t_idx], reps)
        out_pos[slots] = np.repeat(head[t_idx], reps) + within


def _members_walk(prep: Any, r: dict[str, np.ndarray], base: np.ndarray, simple: np.ndarray,
                  offsets: np.ndarray, out: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Fill the messages, last first: every target walks up its path in lockstep and fills its
    slots from the end, stopping above the kept range (at the first kept entry's parent, or at the
    compaction); system messages of the kept range, above the compaction, are left out."""
    f = prep.forest
    out_target, out_entry, out_pos = out
    stop = np.where(r["comp"] >= 0, np.where(r["first_kept"] >= 0, f.parent[np.maximum(r["first_kept"], 0)],
                                             r["comp"]), -1)
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
