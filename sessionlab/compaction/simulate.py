"""What-if compaction: replay the recorded calls of every session under many policies at once.

The replay never invents model output: call ``k`` of a branch keeps its recorded output, and its
prompt is what the branch had accumulated by then, minus what the simulated compactions removed.

Per call (all policies at once, arrays shaped policies x calls):

- ``prompt``: the context the call was sent, pi's ``estimateContextTokens`` at its parent;
  ``total``: its usage total after the call (pi's ``calculateContextTokens``). With
  ``recorded="replace"`` (default) the session's own compactions are undone first: each adds back
  what it removed (its ``tokensBefore`` minus the context right after it), so every policy starts
  from the uncompacted conversation; ``recorded="keep"`` leaves them in place and compacts on top.
- a policy compacts after call ``k`` when ``total - removed > trigger_tokens`` and the call ended a
  turn (pi checks after the agent's run ends: a call that is not a tool use, not aborted, not an
  error), or when the next call's prompt would not fit the policy's window (pi's overflow
  recovery: the provider refuses, pi compacts and retries). It keeps what its ``keep`` rule
  names (pi's cut point, the last turns, the last messages: estimated tokens of those messages),
  replaces the rest with a summary of the policy's size, and everything after is that much
  smaller. A compaction breaks the prompt cache.
- cost: each model's prices per token are fitted from the recorded calls (``cost = input * a +
  output * b + cache_read * c + cache_write * d``, least squares); a call reads from the cache what
  the previous call on the branch left (unless a compaction or a model change came between) and
  pays the rest as cache writes (models that wrote cache) or fresh input.

Finding the next compaction of every policy is a binary search over a range-maximum table of the
calls, so the work per session is ``O(policies x log calls)`` per compaction event; only sessions
(and events) are looped over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._rules import Rules
from ..analysis._forest import per_table
from ..analysis.contexts import _first_line_of_response, _prepare
from ..analysis.usage import current_branch_mask
from ..tables._pi16 import table_rules_for
from ..tables._schema import Column, columns_doc, schema_of
from ..tables.corpus import SessionIds, select_sessions
from .cut_points import _arrays, cut_point_rows
from .policies import CompactionPolicy

__all__ = ["SimulationResult", "simulate_compaction", "fit_prices", "SIMULATION_SESSION_COLUMNS",
           "SIMULATION_CALL_COLUMNS"]

_S, _I32, _I64, _F64, _B = pa.string(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()

SIMULATION_SESSION_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("file", _S, "Session file."),
    Column("leaf_id", _S, "The branch's leaf."),
    Column("policy", _S, "Policy name."),
    Column("policy_index", _I32, "Position of the policy in the list given."),
    Column("context_window", _I64, "The policy's window (null for NeverCompact without one)."),
    Column("calls", _I64, "Calls replayed."),
    Column("compactions", _I64, "Simulated compactions."),
    Column("recorded_compactions", _I64, "Compactions the session really made on this branch."),
    Column("matched_compactions", _I64, "Simulated compactions right after a call the session really "
           "compacted after."),
    Column("peak_context_tokens", _I64, "Largest context (usage total) reached."),
    Column("prompt_tokens", _I64, "Prompt tokens sent, summed over the calls."),
    Column("summarized_tokens", _I64, "Tokens replaced by summaries, summed over the compactions."),
    Column("cost_usd", _F64, "Estimated cost of the calls with fitted per-model prices."),
    Column("recorded_cost_usd", _F64, "The calls' recorded cost."),
    Column("overflow_calls", _I64, "Calls whose prompt would not fit the window."),
)
SIMULATION_CALL_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("leaf_id", _S, "The branch's leaf."),
    Column("policy_index", _I32, "Policy position."),
    Column("at_id", _S, "The assistant call."),
    Column("call_index", _I64, "0-based position of the call on the branch."),
    Column("prompt_tokens", _I64, "Prompt sent at this call under the policy."),
    Column("context_before", _I64, "Context after the call (usage total) before any compaction."),
    Column("context_after", _I64, "Context after the compaction this call triggered (= before when none)."),
    Column("compacted", _B, "Whether the policy compacted after this call."),
    Column("cut_entry_id", _S, "First entry kept by that compaction."),
    Column("recorded_compaction", _B, "Whether the session really compacted after this call."),
    Column("cost_usd", _F64, "Estimated cost of the call under the policy."),
)


class SimulationResult:
    """``sessions``: one row per (session branch, policy); ``calls``: one row per (branch, policy,
    call), built on first access (it is policies x calls rows long); ``policies``: as given.
    ``sessions_df()`` and ``calls_df()`` are their pandas views.

    Columns of ``sessions``:

{sessions}

    Columns of ``calls``:

{calls}
    """

    __slots__ = ("sessions", "_calls", "policies")
    columns = {"sessions": SIMULATION_SESSION_COLUMNS, "calls": SIMULATION_CALL_COLUMNS}

    def __init__(self, sessions: pa.Table, calls: pa.Table | Callable[[], pa.Table], policies: tuple = ()) -> None:
        self.sessions = sessions
        self._calls = calls
        self.policies = policies

    @property
    def calls(self) -> pa.Table:
        if callable(self._calls):
            self._calls = self._calls()
        return self._calls

    def sessions_df(self):
        from ..tables.corpus import to_pandas

        return to_pandas(self.sessions)

    def calls_df(self):
        from ..tables.corpus import to_pandas

        return to_pandas(self.calls)

    def __repr__(self) -> str:
        return f"SimulationResult(sessions={self.sessions.num_rows} rows, policies={len(self.policies)})"


SimulationResult.__doc__ = SimulationResult.__doc__.replace(  # type: ignore[union-attr]
    "{sessions}", columns_doc(SIMULATION_SESSION_COLUMNS, 4)).replace(
    "{calls}", columns_doc(SIMULATION_CALL_COLUMNS, 4))


def fit_prices(entries, *, session_id: SessionIds = None) -> dict[str, tuple[float, float, float, float]]:
    """Per model: USD per token for (input, output, cache read, cache write), fitted by least
    squares to the recorded calls' usage and cost (exact when the recorded costs are linear);
    ``session_id``: fitted to the calls of this session (or these sessions) only."""
    table = select_sessions(entries, session_id)
    calls = table.filter(pc.and_(pc.equal(table["type"], "message"), pc.equal(table["role"], "assistant")))

    def col(name: str) -> np.ndarray:
        return np.asarray(pc.fill_null(calls[name], 0).to_numpy(zero_copy_only=False), np.float64)

    x = np.stack([col("input_tokens"), col("output_tokens"), col("cache_read_tokens"), col("cache_write_tokens")], 1)
    y = col("cost_usd")
    models = np.asarray(pc.fill_null(calls["model"], "").to_numpy(zero_copy_only=False), object)
    prices: dict[str, tuple[float, float, float, float]] = {}
    for m in sorted(set(models.tolist())):  # one small fit per model
        sel = models == m
        xs, ys = x[sel], y[sel]
        used = xs.sum(0) > 0
        coef = np.zeros(4)
        if used.any() and ys.any():
            sol, *_ = np.linalg.lstsq(xs[:, used], ys, rcond=None)
            coef[used] = np.clip(sol, 0, None)
        prices[m] = tuple(float(c) for c in coef)  # type: ignore[assignment]
    return prices


def _range_max_table(v: np.ndarray) -> list[np.ndarray]:
    """``t[j][i] = max(v[i : i + 2**j])`` (shorter at the end)."""
    t = [v]
    j = 1
    while (1 << j) <= len(v):
        prev = t[-1]
        half = 1 << (j - 1)
        nxt = prev.copy()
        nxt[: len(v) - half] = np.maximum(prev[: len(v) - half], prev[half:])
        t.append(nxt)
        j += 1
    return t


def _first_above(table: list[np.ndarray], start: np.ndarray, limit: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each query, the first index in ``[start, end)`` whose value is ``> limit`` (``end`` if none)."""
    n = len(table[0])
    pos = start.copy()  # invariant: every value in [start, pos) is <= limit
    for j in range(len(table) - 1, -1, -1):
        step = 1 << j
        ok = pos + step <= end
        blk = np.where(ok, table[j][np.minimum(pos, n - 1)], np.inf)
        jump = ok & (blk <= limit)
        pos = np.where(jump, pos + step, pos)
    return pos


def simulate_compaction(
    entries,
    policies: Sequence[CompactionPolicy],
    *,
    session_id: SessionIds = None,
    branch: Literal["current", "all"] = "current",
    recorded: Literal["replace", "keep"] = "replace",
    prices: dict[str, tuple[float, float, float, float]] | None = None,
    rules: Rules | None = None,
) -> SimulationResult:
    """Replay every session's calls under each policy (see the module doc).

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        policies: policies to compare (see :mod:`sessionlab.compaction.policies`).
        session_id: replay only this session (or these sessions).
        branch: ``"current"`` replays each session's current branch; ``"all"`` every branch (one
            run per leaf; calls shared by branches count in each).
        recorded: ``"replace"`` undoes the session's own compactions first; ``"keep"`` keeps them.
        prices: per-model prices; default :func:`fit_prices` on all of ``entries`` (also when
            ``session_id`` picks some sessions, so a session's figures do not depend on which
            others are replayed with it).
        rules: whose contexts and cut points: ``"pi-1.6"`` or ``"pi-0.58"`` (default: the table's).

    Returns:
        :class:`SimulationResult` with ``sessions`` (columns in ``SIMULATION_SESSION_COLUMNS``) and
        ``calls`` (columns in ``SIMULATION_CALL_COLUMNS``).

    Example:
        >>> policies = [PiThresholdPolicy(200_000), NeverCompact()]
        >>> res = simulate_compaction(load("data/"), policies)  # doctest: +SKIP
        >>> res.sessions.to_pandas()[["session_id", "policy", "compactions", "cost_usd"]]  # doctest: +SKIP
    """
    policies = list(policies)
    if branch not in ("current", "all"):
        raise ValueError(f"branch must be 'current' or 'all', not {branch!r}")
    if recorded not in ("replace", "keep"):
        raise ValueError(f"recorded must be 'replace' or 'keep', not {recorded!r}")
    prices = prices if prices is not None else fit_prices(entries)
    table = select_sessions(entries, session_id)
    which = table_rules_for(table, rules)
    prep = _prepare(table, which)
    cut = _arrays(table)
    f = prep.forest
    n = table.num_rows

    # per-row quantities (whole table, vectorised)
    calls = prep.is_call & ~f.cyclic  # (a streamed Claude Code response is one call)
    call_rows = np.nonzero(calls)[0]
    base = f.parent[_first_line_of_response(prep, call_rows)]
    ctx = prep.compute(base)
    prompt_rec = np.zeros(n, np.int64)
    prompt_rec[call_rows] = ctx["context_tokens"]
    is_comp = prep.is_comp & ~f.cyclic
    removed_at = np.zeros(n, np.int64)
    comp_rows = np.nonzero(is_comp)[0]
    if recorded == "replace" and comp_rows.size:
        # what the compaction left: its summary and the kept messages, estimated (the usage of a
        # kept assistant message still counts the old, uncompacted context)
        after = prep.compute(comp_rows)["estimate_only"]
        tb = np.asarray(pc.fill_null(table["tokens_before"], 0).to_numpy(zero_copy_only=False), np.int64)[comp_rows]
        removed_at[comp_rows] = np.maximum(tb - after, 0)
    removed_above = f.path_sum(removed_at)
    if recorded == "replace":
        # the uncompacted prompt: the last usage before the call, uncompacted, plus the estimates
        # of every message after it (pi's estimate on the whole branch, compactions undone)
        u = prep.usage[np.maximum(base, 0)]
        u_ok = (base >= 0) & (u >= 0)
        uu = np.maximum(u, 0)
        bb = np.maximum(base, 0)
        prompt_full = np.zeros(n, np.int64)
        prompt_full[call_rows] = np.where(
            u_ok, prep.ctx_tok[uu] + removed_above[uu] + prep.cum_est[bb] - prep.cum_est[uu],
            np.where(base >= 0, prep.cum_est[bb], 0))
    else:
        prompt_full = prompt_rec
    out_tok = np.asarray(pc.fill_null(table["output_tokens"], 0).to_numpy(zero_copy_only=False), np.int64)
    # the context after a call: its usage total; a call without usable usage (aborted, error) adds
    # nothing to what it was sent
    total_full = np.where(prep.usage_source, prep.ctx_tok + removed_above, prompt_full)
    stop = np.asarray(pc.fill_null(table["stop_reason"], "").to_numpy(zero_copy_only=False), object)
    can_trigger = calls & prep.usage_source & (stop != "toolUse")
    model = np.asarray(pc.fill_null(table["model"], "").to_numpy(zero_copy_only=False), object)
    cost_rec = np.asarray(pc.fill_null(table["cost_usd"], 0.0).to_numpy(zero_copy_only=False), np.float64)
    # the call each recorded compaction follows
    near_call = f.nearest(calls)
    comp_after_call = np.zeros(n, bool)
    if comp_rows.size:
        par = f.parent[comp_rows]
        follows = np.where(par >= 0, near_call[np.maximum(par, 0)], -1)
        comp_after_call[follows[follows >= 0]] = True
    # kept tokens per keep rule, at every call (the branch through the call)
    is_msg = f.isin("type", ("message",))
    msg_est = np.where(is_msg, cut.est, 0)
    cum_msg = cut.cum_msg
    kinds = sorted({p.keep for p in policies if p.keep[0] != "none"})
    kept_at: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    cnt_user = f.path_sum(cut.is_user.astype(np.int64))
    cnt_msg = f.path_sum(is_msg.astype(np.int64))
    for kind, value in kinds:
        if kind == "tokens" and which == "pi-1.6":
            from ._cut16 import cut_point_rows_16
            from .cut_points import _arrays16

            r = cut_point_rows_16(per_table(_arrays16, table), call_rows, value, prep.compute(call_rows))
            rows = r["cut"]  # (what it keeps: the message entries from the cut on, as for the other rules)
            kept = np.where(rows >= 0, cum_msg[call_rows] - (cum_msg - msg_est)[np.maximum(rows, 0)],
                            cum_msg[call_rows])
        elif kind == "tokens":
            r = cut_point_rows(cut, call_rows, value)
            rows, kept = r["cut"], r["kept"]
        else:
            counts = cnt_user if kind == "turns" else cnt_msg
            excl = counts - (cut.is_user if kind == "turns" else is_msg)
            rows = f.deepest_at_most(excl, call_rows, counts[call_rows] - value)
            rows = np.where(counts[call_rows] >= value, rows, -1)
            kept = np.where(rows >= 0, cum_msg[call_rows] - (cum_msg - msg_est)[np.maximum(rows, 0)],
                            cum_msg[call_rows])
        full_rows = np.full(n, -1, np.int64)
        full_kept = np.zeros(n, np.int64)
        full_rows[call_rows] = rows
        full_kept[call_rows] = kept
        kept_at[(kind, value)] = (full_rows, full_kept)

    # the runs: one branch per session (current) or per leaf (all)
    runs = _runs(table, f, prep, branch)
    n_pol = len(policies)
    thr = np.array([p.trigger_tokens for p in policies], np.float64)
    window = np.array([p.context_window if p.context_window is not None else np.inf for p in policies], np.float64)
    s_fixed = np.array([p.summary.tokens if p.summary.tokens is not None else -1 for p in policies], np.float64)
    s_frac = np.array([p.summary.fraction or 0.0 for p in policies], np.float64)
    s_cap = np.array([p.summary.max_tokens if p.summary.max_tokens is not None else np.inf for p in policies])

    runs = [(leaf, calls_) for leaf, calls_ in runs if len(calls_)]
    if not runs:
        empty: list[dict[str, np.ndarray]] = []
        return SimulationResult(_sessions_table(table, empty, policies), _calls_table(table, empty), tuple(policies))
    sess, calls_of = _replay(runs, n_pol, prompt_full, total_full, can_trigger, model, out_tok, cost_rec,
                             comp_after_call, policies, kept_at, thr, window, s_fixed, s_frac, s_cap, prices)
    # the per-call table (2 million rows for 100 policies on the benchmark corpus) is built when
    # first asked for: comparing policies needs only the sessions table
    return SimulationResult(_sessions_table(table, [sess], policies), lambda: _calls_table(table, [calls_of()]),
                            tuple(policies))


def _replay(runs, n_pol, prompt_full, total_full, can_trigger, model, out_tok, cost_rec, comp_after_call,
            policies, kept_at, thr, window, s_fixed, s_frac, s_cap, prices):
    """Every run (a branch's calls in order) under every policy at once.

    The runs' calls are laid end to end in one array of ``K`` positions, each run a segment; the
    per-policy state is a ``policies x K`` array. Each round finds, for every (run, policy) pair
    still active, its next compaction with a binary search over a range-maximum table bounded by
    the run's end, so Python loops over rounds (the most compactions any run has), not runs.
    Returns the sessions-table columns and a function giving the calls-table columns.
    """
    lens = np.array([len(c) for _, c in runs], np.int64)
    seg_start = np.concatenate(([0], np.cumsum(lens)[:-1]))
    seg_end = seg_start + lens
    gc = np.concatenate([c for _, c in runs])  # the table row of every position
    K, S = len(gc), len(runs)
    is_start = np.zeros(K, bool)
    is_start[seg_start] = True
    P = prompt_full[gc].astype(np.float64)
    T = total_full[gc].astype(np.float64)
    rmq = _range_max_table(np.where(can_trigger[gc], T, -np.inf))
    # overflow: the next call's prompt (in the same run) would not fit the window: pi compacts first
    nxt = np.r_[P[1:], -np.inf]
    nxt[seg_end - 1] = -np.inf
    rmq_next = _range_max_table(nxt)
    kept = np.zeros((n_pol, K))
    cut_rows = np.full((n_pol, K), -1, np.int64)
    for pi_, p in enumerate(policies):
        if p.keep[0] != "none":
            rws, kp = kept_at[p.keep]
            kept[pi_] = kp[gc]
            cut_rows[pi_] = rws[gc]
    removed_here = np.zeros((n_pol, K))
    compacted = np.zeros((n_pol, K), bool)
    # the (policy, run) pairs, flat: pair = policy * S + run
    pol = np.repeat(np.arange(n_pol), S)
    end = np.tile(seg_end, n_pol)
    start = np.tile(seg_start, n_pol)
    D = np.zeros(n_pol * S)
    summarized = np.zeros(n_pol * S)
    active = np.isfinite(thr)[pol]
    while active.any():  # one compaction event per active pair per round
        idx = np.nonzero(active)[0]
        pp = pol[idx]
        k = np.minimum(_first_above(rmq, start[idx], thr[pp] + D[idx], end[idx]),
                       _first_above(rmq_next, start[idx], window[pp] + D[idx], end[idx]))
        found = k < end[idx]
        idx, k, pp = idx[found], k[found], pp[found]
        active[:] = False
        if idx.size == 0:
            break
        C = T[k] - D[idx]
        kp = np.minimum(kept[pp, k], C)
        replaced = C - kp
        summ = np.where(s_fixed[pp] >= 0, s_fixed[pp], np.minimum(s_frac[pp] * replaced, s_cap[pp]))
        rem = np.maximum(replaced - summ, 0)
        real = rem > 0
        removed_here[pp[real], k[real]] = rem[real]
        compacted[pp[real], k[real]] = True
        summarized[idx[real]] += replaced[real]
        D[idx] += rem
        start[idx] = k + 1
        active[idx] = start[idx] < end[idx]
    # removed tokens so far, per run: a cumsum along the positions, restarted at each run
    cs = np.cumsum(removed_here, axis=1)
    base = np.where(seg_start > 0, cs[:, np.maximum(seg_start - 1, 0)], 0.0)
    D_after = cs - np.repeat(base, lens, axis=1)
    D_before = D_after - removed_here
    prompt = np.maximum(P[None, :] - D_before, 0)
    before = np.maximum(T[None, :] - D_before, 0)
    after = np.maximum(T[None, :] - D_after, 0)
    # cache: the previous call's context is read back unless a compaction or model change intervened
    # (or the call starts its run)
    mdl = model[gc]
    prev_after = np.concatenate([np.zeros((n_pol, 1)), after[:, :-1]], axis=1)
    same_model = np.r_[False, mdl[1:] == mdl[:-1]] & ~is_start
    broke = np.concatenate([np.ones((n_pol, 1), bool), compacted[:, :-1]], axis=1) | ~same_model[None, :]
    cached = np.where(broke, 0.0, np.minimum(prev_after, prompt))
    fresh = np.maximum(prompt - cached, 0)
    names, code = np.unique(mdl, return_inverse=True)
    price = np.array([prices.get(m, (0.0, 0.0, 0.0, 0.0)) for m in names.tolist()], np.float64).reshape(-1, 4)
    pr = price[code].T  # 4 x K: input, output, cache read, cache write
    new_price = np.where(pr[3] > 0, pr[3], pr[0])
    cost = cached * pr[2][None, :] + fresh * new_price[None, :] + out_tok[gc][None, :] * pr[1][None, :]
    rec_comp = comp_after_call[gc]

    def per_run(a: np.ndarray, op=np.add) -> np.ndarray:
        """runs x policies, flat (session-major, as the output): ``op`` over each run's positions."""
        return op.reduceat(a, seg_start, axis=1).T.ravel()

    leaf = np.array([leaf for leaf, _ in runs], np.int64)
    sess = {
        "row": np.repeat(gc[seg_start], n_pol), "leaf": np.repeat(leaf, n_pol),
        "policy_index": np.tile(np.arange(n_pol), S), "calls": np.repeat(lens, n_pol),
        "compactions": per_run(compacted.astype(np.int64)),
        "recorded_compactions": np.repeat(np.add.reduceat(rec_comp.astype(np.int64), seg_start), n_pol),
        "matched_compactions": per_run((compacted & rec_comp[None, :]).astype(np.int64)),
        "peak_context_tokens": per_run(before, np.maximum), "prompt_tokens": per_run(prompt),
        "summarized_tokens": summarized.reshape(n_pol, S).T.ravel(), "cost_usd": per_run(cost),
        "recorded_cost_usd": np.repeat(np.add.reduceat(cost_rec[gc], seg_start), n_pol),
        "overflow_calls": per_run((prompt > window[:, None]).astype(np.int64)),
    }

    def calls() -> dict[str, np.ndarray]:
        # run by run, each run policy by policy: one slice of the policies x K arrays per run
        bounds = list(zip(seg_start.tolist(), seg_end.tolist()))

        def by_run(a: np.ndarray) -> np.ndarray:  # policies x K -> flat, in output order
            return np.concatenate([a[:, s0:s1].ravel() for s0, s1 in bounds])

        def tiled(v: np.ndarray) -> np.ndarray:  # per position -> repeated for every policy
            return np.concatenate([np.tile(v[s0:s1], n_pol) for s0, s1 in bounds])

        block = n_pol * lens
        return {
            "row": tiled(gc), "first": np.repeat(gc[seg_start], block), "leaf": np.repeat(leaf, block),
            "policy_index": np.concatenate([np.repeat(np.arange(n_pol), n) for n in lens.tolist()]),
            "call_index": tiled(np.arange(K) - np.repeat(seg_start, lens)),
            "prompt_tokens": by_run(prompt), "context_before": by_run(before), "context_after": by_run(after),
            "compacted": by_run(compacted), "cut_row": by_run(np.where(compacted, cut_rows, -1)),
            "recorded_compaction": tiled(rec_comp), "cost_usd": by_run(cost),
        }

    return sess, calls


def _runs(table: pa.Table, f, prep, branch: str) -> list[tuple[int, np.ndarray]]:
    """(leaf row, the calls on its branch in order) for every branch to replay."""
    n = table.num_rows
    calls = prep.is_call & ~f.cyclic
    if branch == "current":
        on = current_branch_mask(table, f)
        codes = f.file_code
        leaf_of = {}
        # the leaf of each file's current branch: its deepest row on the branch
        rows = np.nonzero(on)[0]
        order = np.lexsort((f.depth[rows], codes[rows]))
        last = rows[order][np.r_[codes[rows][order][1:] != codes[rows][order][:-1], True]] if rows.size else rows
        for r in last:
            leaf_of[codes[r]] = r
        sel = np.nonzero(on & calls)[0]
        sel = sel[np.lexsort((f.depth[sel], codes[sel]))]
        out = []
        if sel.size:
            splits = np.nonzero(codes[sel][1:] != codes[sel][:-1])[0] + 1
            for part in np.split(sel, splits):
                out.append((leaf_of.get(codes[part[0]], -1), part))
        return out
    has_child = np.zeros(n, bool)
    p = f.parent[(f.parent >= 0) & ~f.is_leaf_record]
    has_child[p] = True
    leaves = np.nonzero(~has_child & ~f.is_leaf_record & ~f.cyclic)[0]
    out = []
    for leaf in leaves:  # one run per leaf
        same = np.nonzero((f.file_code == f.file_code[leaf]) & calls)[0]
        on = same[f.is_ancestor(same, np.full(len(same), leaf))]
        out.append((int(leaf), on[np.argsort(f.depth[on], kind="stable")]))
    return out


def _cat(parts: list[dict[str, np.ndarray]], key: str, dtype=None) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype or np.int64)
    return np.concatenate([p[key] for p in parts]).astype(dtype) if dtype else np.concatenate([p[key] for p in parts])


def _take_rows(col, rows: np.ndarray) -> pa.Array:
    rows = np.asarray(rows, np.int64)
    return pc.take(col, pa.array(rows, pa.int64(), mask=rows < 0))


def _sessions_table(table: pa.Table, parts: list[dict[str, np.ndarray]], policies: list) -> pa.Table:
    pidx = _cat(parts, "policy_index")
    names = np.array([p.name for p in policies] or [""], object)
    windows = np.array([p.context_window if p.context_window is not None else -1 for p in policies] or [-1])
    win = windows[pidx] if len(pidx) else np.zeros(0, np.int64)
    return pa.Table.from_pydict({
        "session_id": _take_rows(table["session_id"], _cat(parts, "row")),
        "file": _take_rows(table["file"], _cat(parts, "row")),
        "leaf_id": _take_rows(table["entry_id"], _cat(parts, "leaf")),
        "policy": pa.array(names[pidx] if len(pidx) else [], pa.string()),
        "policy_index": pa.array(pidx, pa.int32()),
        "context_window": pa.array(win, pa.int64(), mask=win < 0),
        **{k: pa.array(np.round(_cat(parts, k)).astype(np.int64)) for k in (
            "calls", "compactions", "recorded_compactions", "matched_compactions", "peak_context_tokens",
            "prompt_tokens", "summarized_tokens")},
        "cost_usd": pa.array(_cat(parts, "cost_usd", np.float64)),
        "recorded_cost_usd": pa.array(_cat(parts, "recorded_cost_usd", np.float64)),
        "overflow_calls": pa.array(_cat(parts, "overflow_calls", np.int64)),
    }, schema=schema_of(SIMULATION_SESSION_COLUMNS))


def _calls_table(table: pa.Table, parts: list[dict[str, np.ndarray]]) -> pa.Table:
    return pa.Table.from_pydict({
        "session_id": _take_rows(table["session_id"], _cat(parts, "first")),
        "leaf_id": _take_rows(table["entry_id"], _cat(parts, "leaf")),
        "policy_index": pa.array(_cat(parts, "policy_index"), pa.int32()),
        "at_id": _take_rows(table["entry_id"], _cat(parts, "row")),
        "call_index": pa.array(_cat(parts, "call_index"), pa.int64()),
        **{k: pa.array(np.round(_cat(parts, k, np.float64)).astype(np.int64)) for k in (
            "prompt_tokens", "context_before", "context_after")},
        "compacted": pa.array(_cat(parts, "compacted", bool), pa.bool_()),
        "cut_entry_id": _take_rows(table["entry_id"], _cat(parts, "cut_row")),
        "recorded_compaction": pa.array(_cat(parts, "recorded_compaction", bool), pa.bool_()),
        "cost_usd": pa.array(_cat(parts, "cost_usd", np.float64)),
    }, schema=schema_of(SIMULATION_CALL_COLUMNS))
