"""pi 1.6's context edits: the exact projection for contexts that hold an edit.

The path sums of :mod:`.contexts` cannot say which edit of a target is the last one *inside* a
given context, nor whether an edit's target was compacted away. :func:`edit_pairs` finds, for all
targets at once, the last edit of each edited row among their context entries (pi's rules,
``buildSessionProjection``: it replaces the row's estimate with ``est_tokens`` of the edit row, the
replacement measured as the target's message, or removes its messages), and :func:`_by_edits`
corrects the sums from these pairs. Edits of a compaction, a system message or a row not above
the edit, and contexts with a retained tail, are built by walking the target's path once with the
same per-row arrays (rare: no target of the 1.6 benchmark corpus). Like every analysis they read
the table only, never the session files: an edit that removes a system message replays the others
from the ``system_json`` column, and an edit of a retained tail carries the edited tail's columns.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ListView", "context_rows", "edit_pairs", "edited_contexts", "member", "removed_members"]


class ListView:
    """``obj`` (the contexts' or cut points' per-row arrays) with its one-dimensional arrays read as
    Python lists, converted on first use: the walks here index single rows, and a list index costs
    a fraction of a NumPy scalar one. Its ``forest`` and ``prep`` are viewed the same way; every
    other attribute is ``obj``'s own."""

    def __init__(self, obj) -> None:
        self._obj = obj

    def __getattr__(self, name: str):
        value = getattr(self._obj, name)
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        elif name in ("forest", "prep"):
            value = ListView(value)
        else:
            return value
        setattr(self, name, value)
        return value


def context_rows(prep, base: int) -> tuple[int, list[int]]:
    """(compaction in effect or -1, the context entries after it in path order: the kept range
    without system messages, then every row after the compaction) for a target built at ``base``."""
    f = prep.forest
    c = int(prep.comp[base])
    fk = int(prep.first_kept[c]) if c >= 0 else -1
    rows = _up(f, base, c)[::-1]
    if c >= 0 and fk >= 0:
        is_sys = prep.is_sys
        kept = [y for y in _up(f, int(f.parent[c]), int(f.parent[fk])) if not is_sys[y]]
        rows = kept[::-1] + rows
    return c, rows


def _up(f, x: int, stop: int) -> list[int]:
    """The rows from ``x`` up its path (``x`` first) to just below ``stop``, an ancestor of ``x``
    (-1: up to the root). A chain of the forest is a run of consecutive rows, so it is taken whole."""
    out: list[int] = []
    chain_of, chain_start, hang = f.chain_of, f.chain_start, f.chain_parent_row
    stop_chain = chain_of[stop] if stop >= 0 else -1
    while x >= 0 and x != stop:
        ch = chain_of[x]
        if ch == stop_chain:  # (then stop <= x: an ancestor in the same chain)
            out.extend(range(x, stop, -1))
            break
        out.extend(range(x, int(chain_start[ch]) - 1, -1))
        x = int(hang[ch])
    return out


def _edits_of(prep, entries: list[int]) -> dict[int, int]:
    """target row -> the last edit row of it among ``entries`` (pi's edit map)."""
    last: dict[int, int] = {}
    for r in entries:
        if prep.is_edit[r]:
            t = int(prep.edit_target[r])
            if t >= 0:
                last[t] = r
    return last


def removes_system(prep, base: int) -> bool:
    """Whether an edit in the context at ``base`` removes a system message (or the compaction that
    replays one): the current system message is then replayed again from the others
    (:func:`_replayed_system`)."""
    c, rows = context_rows(prep, base)
    entries = ([c] if c >= 0 else []) + rows
    last = _edits_of(prep, entries)
    return any(prep.edit_action[e] == "remove" and (prep.is_sys[t] or (t == c and prep.comp_sys[t]))
               for t, e in last.items())


def messages(prep, base: int) -> list[tuple[int, int, int | None, bool]]:
    """The context at ``base`` as (entry row, estimate, usage tokens if a usage source, system) per
    message. A seed retained tail is its compaction's messages: their estimates sit on the first,
    and a usage inside it anchors at the last (as the tail columns of the table give them; those of
    the last edit of the compaction when it replaces their content)."""
    c, rows = context_rows(prep, base)
    last = _edits_of(prep, ([c] if c >= 0 else []) + rows)
    out: list[tuple[int, int, int | None, bool]] = []

    def removed(r: int) -> bool:
        e = last.get(r)
        return e is not None and prep.edit_action[e] == "remove"

    if c >= 0 and not removed(c):
        if prep.comp_sys[c]:
            out.append((c, int(prep.sys_est[c]), None, True))
        out.append((c, int(prep.est[c]), None, False))
        t = last.get(c, c) if prep.has_tail[c] else c
        t = t if prep.has_tail[t] else c  # (an edit that leaves the tail as it is has no tail columns)
        n_tail = int(prep.tail_n[t]) if prep.has_tail[t] else 0
        for k in range(n_tail):
            usage = int(prep.tail_ctx[t]) if k == n_tail - 1 and prep.tail_usage[t] else None
            out.append((c, int(prep.tail_est[t]) if k == 0 else 0, usage, False))
    for r in rows:
        if not prep.gives[r] or removed(r):
            continue
        e = last.get(r)
        est = int(prep.est_msg[r])
        if e is not None and prep.edit_est_valid[e]:
            est = int(prep.est[e])
        out.append((r, est, int(prep.ctx_tok[r]) if prep.usage_source[r] else None, bool(prep.is_sys[r])))
    return out


def edit_pairs(prep, base: np.ndarray, start_depth: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The last edit of each edited row among the context entries of every ``base`` row: ``(k, e,
    x)`` with ``k`` the position in ``base``, ``e`` the edit row and ``x`` its target (-1: not in
    the file), deepest edit first for each ``k``. One array pass per edit a window holds (a few)."""
    f = prep.forest
    cur = np.where(base >= 0, prep.near_edit[np.maximum(base, 0)], -1)
    act = np.arange(len(base))
    ks, es = [], []
    while act.size:  # the j-th deepest edit of every window at step j
        e = cur[act]
        inside = (e >= 0) & (f.depth[np.maximum(e, 0)] >= start_depth[act])
        act, e = act[inside], e[inside]
        ks.append(act)
        es.append(e)
        par = f.parent[e]
        cur[act] = np.where(par >= 0, prep.near_edit[np.maximum(par, 0)], -1)
    k = np.concatenate(ks) if ks else np.zeros(0, np.int64)
    e = np.concatenate(es) if es else np.zeros(0, np.int64)
    order = np.argsort(k, kind="stable")  # (each k's edits stay deepest first)
    k, e = k[order], e[order]
    x = prep.edit_target[e]
    _, first = np.unique(k * (f.n + 1) + (x + 1), return_index=True)  # the last edit of a target wins
    first.sort()
    return k[first], e[first], x[first]


def member(keys_sorted: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in the sorted array ``keys_sorted``."""
    if not keys_sorted.size:
        return np.zeros(len(keys), bool)
    i = np.minimum(np.searchsorted(keys_sorted, keys), keys_sorted.size - 1)
    return keys_sorted[i] == keys


def edited_contexts(prep, base: np.ndarray, idx: np.ndarray, out: dict[str, np.ndarray]) -> None:
    """Overwrite ``out``'s aggregates at positions ``idx`` with the exact projection: corrected from
    the last edit of each edited row when the edits only touch ordinary messages above them (all
    targets at once, in array passes), else by walking the whole context (rare)."""
    ok = _by_edits(prep, base[idx], idx, out)
    full = idx[~ok]
    if full.size:
        _walked(ListView(prep), base, full.tolist(), out, {})


def _by_edits(prep, b: np.ndarray, idx: np.ndarray, out: dict[str, np.ndarray]) -> np.ndarray:
    """Correct targets ``idx`` (built at rows ``b``) by the last edit of each row among their context
    entries; ``False`` (nothing changed) where an edit is one this correction does not cover: of a
    compaction, a system message or a row not above it, or a retained tail in the context."""
    f, n = prep.forest, prep.forest.n
    c, sd, u0 = out["comp"][idx], out["start_depth"][idx], out["usage_row"][idx]
    k, e, x = edit_pairs(prep, b, sd)
    xx = np.maximum(x, 0)
    bad_pair = (x >= 0) & ((x == c[k]) | prep.is_sys[xx] | prep.is_comp[xx] | ~prep.edit_above[e])
    good = ~((c >= 0) & prep.has_tail[np.maximum(c, 0)])
    good[k[bad_pair]] = False
    applies = (x >= 0) & ~bad_pair & (f.depth[xx] >= sd[k]) & prep.gives[xx]
    rm = applies & (prep.edit_action[e] == "remove")
    de = np.where(rm, -prep.est_msg[xx], np.where(applies & prep.edit_est_valid[e], prep.est[e] - prep.est_msg[xx], 0))
    u = _usage_after_removals(prep, np.sort(k[rm] * n + x[rm]), u0, sd, good)
    good &= ~((u < 0) & (u0 < 0) & (out["usage_tokens"][idx] != 0))  # (a retained tail's usage: walked)
    m = len(idx)
    uu = np.maximum(u, 0)
    total = out["estimate_only"][idx] + np.bincount(k, de, m).astype(np.int64)
    cc = np.maximum(c, 0)
    kept_sys = np.where((c >= 0) & (out["first_kept"][idx] >= 0) & (f.depth[uu] < f.depth[cc]),
                        prep.cum_sys_est[cc] - prep.cum_sys_est[uu], 0)
    later = np.bincount(k, np.where(f.depth[xx] > f.depth[uu[k]], de, 0), m).astype(np.int64)
    has_u = u >= 0
    usage = np.where(has_u, prep.ctx_tok[uu], 0)
    trailing = np.where(has_u, prep.cum_est[b] - prep.cum_est[uu] - kept_sys + later, total)
    inv = prep.invalidator[b]
    current = has_u & ((inv < 0) | (f.depth[uu] > f.depth[np.maximum(inv, 0)]))
    q = idx[good]
    out["message_count"][q] -= np.bincount(k, rm, m).astype(np.int64)[good]
    out["usage_tokens"][q] = usage[good]
    out["trailing_tokens"][q] = trailing[good]
    out["context_tokens"][q] = (usage + trailing)[good]
    out["projected_tokens"][q] = np.where(current, usage + trailing, out["plain"][idx] + total
                                          - out["estimate_only"][idx])[good]
    out["usage_row"][q] = u[good]
    out["estimate_only"][q] = total[good]
    return good


def removed_members(prep, base: np.ndarray, r: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For :func:`~.contexts.context_members`: which edited targets keep the members of their
    unedited path but for removed rows (an edit touches their membership only by removing a
    message: edits of a compaction, a system message or a row not above them, and contexts with a
    retained tail, are walked instead), the ``target * n + row`` keys of those removed rows
    (sorted), and how many each target loses."""
    f = prep.forest
    idx = np.nonzero(r["ok"] & r["edited"])[0]
    good = np.zeros(len(base), bool)
    lost = np.zeros(len(base), np.int64)
    if not idx.size:
        return good, np.zeros(0, np.int64), lost
    c, sd = r["comp"][idx], r["start_depth"][idx]
    k, e, x = edit_pairs(prep, base[idx], sd)
    xx = np.maximum(x, 0)
    bad_pair = (x >= 0) & ((x == c[k]) | prep.is_sys[xx] | prep.is_comp[xx] | ~prep.edit_above[e])
    ok = ~((c >= 0) & prep.has_tail[np.maximum(c, 0)])
    ok[k[bad_pair]] = False
    rm = (x >= 0) & ~bad_pair & (f.depth[xx] >= sd[k]) & prep.gives[xx] & (prep.edit_action[e] == "remove") & ok[k]
    good[idx[ok]] = True
    lost[idx] = np.bincount(k[rm], minlength=len(idx))
    return good, np.sort(idx[k[rm]] * f.n + x[rm]), lost


def _usage_after_removals(prep, removed: np.ndarray, u: np.ndarray, sd: np.ndarray, good: np.ndarray) -> np.ndarray:
    """The usage row of each target once removed calls are no usage source: the one before (inside
    the context), -1 if none. ``removed`` holds ``k * n + row`` for each removed row of target ``k``."""
    f, n = prep.forest, prep.forest.n
    u = u.copy()
    act = np.nonzero((u >= 0) & good)[0]
    while act.size:
        act = act[member(removed, act * n + u[act])]
        p = f.parent[u[act]]
        nu = np.where(p >= 0, prep.usage[np.maximum(p, 0)], -1)
        nu = np.where((nu >= 0) & (f.depth[np.maximum(nu, 0)] < sd[act]), -1, nu)
        u[act] = nu
        act = act[nu >= 0]
    return u


def _walked(prep, base: np.ndarray, idx: list[int], out: dict[str, np.ndarray], systems: dict) -> None:
    """The exact projection by walking each target's context (edits the shortcut does not cover)."""
    f = prep.forest
    for q in idx:
        b = int(base[q])
        msgs = messages(prep, b)
        u = next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i][2] is not None), None)
        total = sum(m[1] for m in msgs)
        if u is None:
            usage, trailing, row = 0, total, -1
        else:
            row = msgs[u][0]
            usage, trailing = int(msgs[u][2]), sum(m[1] for m in msgs[u + 1:])
        inv = int(prep.invalidator[b])
        current = row >= 0 and (inv < 0 or f.depth[row] > f.depth[inv])
        plain = sum(m[1] for m in msgs if not m[3])
        if not current and removes_system(prep, b):  # rare: the others replayed without the removed one
            plain += _replayed_system(prep, [m[0] for m in msgs if m[3]], systems)
        else:
            marker = int(prep.sys_marker[b])
            plain += int(prep.sys_est[marker]) if marker >= 0 else 0
        out["message_count"][q] = len(msgs)
        out["usage_tokens"][q] = usage
        out["trailing_tokens"][q] = trailing
        out["context_tokens"][q] = usage + trailing
        out["projected_tokens"][q] = usage + trailing if current else plain
        out["usage_row"][q] = row
        out["estimate_only"][q] = total


def _replayed_system(prep, rows: list[int], systems: dict) -> int:
    """pi 1.6's estimate of the current system message replayed from the system messages of
    ``rows`` (in context order: a compaction's own, then the system-message entries after it), read
    from the ``system_json`` column with the object model's rules (``systems``: the messages
    decoded so far, by row)."""
    from ..pi.tokens import current_system_message, estimate_tokens

    for r in rows:
        if r not in systems:
            systems[r] = _system_message(prep.table, r)
    current = current_system_message([systems[r] for r in rows])
    return estimate_tokens(current, rules="pi-1.6") if current is not None else 0


def _system_message(table, row: int):
    """The system message of ``row`` (a system-message entry, or a compaction that carries one),
    decoded from ``system_json``; :class:`~sessionlab.errors.MissingColumnError` without it."""
    import json

    from ..errors import MissingColumnError
    from ..pi.io.dialects import message_from_dict

    text = table["system_json"][row].as_py() if "system_json" in table.column_names else None
    if text is None:
        raise MissingColumnError(
            "system_json", f"an edit removes a system message, and the projected estimate needs the others "
            f"replayed: the table has no system_json value for entry {table['entry_id'][row].as_py()!r} of "
            f"{table['file'][row].as_py()!r}; load the session files again to fill it")
    return message_from_dict(json.loads(text), "pi")
