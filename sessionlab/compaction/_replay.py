"""The replay engine of :func:`~sessionlab.compaction.simulate_compaction`: every run under every
policy at once.

The runs' calls are laid end to end in one array of ``K`` positions, each run (a branch's calls in
order) a segment (:class:`Runs`); the per-policy state is a ``policies x K`` array
(:class:`Policies`). Each round finds, for every (run, policy) pair still active, its next
compaction with a binary search over a range-maximum table bounded by the run's end
(:class:`StopSearch`), so Python loops over rounds (the most compactions any run has), not runs,
and a round is a few dozen passes over the pairs still active. Costs, the sessions columns and the
calls columns are then a few passes over the ``policies x K`` arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..pi.compaction.summary_prompt import SUMMARY_PROMPT_TOKENS


@dataclass(frozen=True, slots=True)
class Runs:
    """The branches to replay, their calls laid end to end (``K`` positions, ``S`` runs).

    Per position: ``rows`` (the call's table row), ``prompt`` (the prompt sent with nothing
    compacted), ``total`` (the usage total after the call, nothing compacted), ``can_trigger`` (the
    call ended a turn with usable usage), ``price`` (``4 x K``: USD per token of the call's model for
    input, output, cache read, cache write), ``same_model`` (same model as the previous position of
    its run; False at a run's start), ``output`` (output tokens), ``recorded_cost``,
    ``recorded_compaction`` (the session compacted right after this call). Per run: ``leaf`` (its
    leaf row) and ``start`` (its first position).
    """

    rows: np.ndarray
    leaf: np.ndarray
    start: np.ndarray
    prompt: np.ndarray
    total: np.ndarray
    can_trigger: np.ndarray
    price: np.ndarray
    same_model: np.ndarray
    output: np.ndarray
    recorded_cost: np.ndarray
    recorded_compaction: np.ndarray

    @property
    def lens(self) -> np.ndarray:
        return np.diff(np.r_[self.start, len(self.rows)])

    @property
    def end(self) -> np.ndarray:
        return np.r_[self.start[1:], len(self.rows)]


@dataclass(frozen=True, slots=True)
class Policies:
    """Per policy: ``trigger``, ``window`` (``inf`` without one), the summary size (``s_fixed``
    tokens, or -1 for a ``s_frac`` fraction capped at ``s_cap``) and ``rule``, its keep rule's row
    in ``kept`` and ``cut_rows`` (-1: keeps nothing). Per (keep rule, position): ``kept`` (tokens
    the rule keeps if the policy compacts after that call) and ``cut_rows`` (the first kept entry's
    table row, -1 for none)."""

    trigger: np.ndarray
    window: np.ndarray
    s_fixed: np.ndarray
    s_frac: np.ndarray
    s_cap: np.ndarray
    rule: np.ndarray
    kept: np.ndarray
    cut_rows: np.ndarray


@dataclass(frozen=True, slots=True)
class Compactions:
    """Every simulated compaction, one entry each: its policy ``pol``, its ``run`` and the position
    ``pos`` of the call it follows; the tokens it ``removed`` (summarised minus the summary), the
    tokens it ``summarized`` and the ``summary_cost`` of its summary call."""

    pol: np.ndarray
    run: np.ndarray
    pos: np.ndarray
    removed: np.ndarray
    summarized: np.ndarray
    summary_cost: np.ndarray

    def dense(self, values, shape: tuple[int, int], dtype=np.float64) -> np.ndarray:
        """``values`` (one per compaction, or a scalar) laid out as a ``policies x K`` array."""
        out = np.zeros(shape, dtype)
        out[self.pol, self.pos] = values
        return out

    def per_run(self, values, n_pol: int, n_runs: int) -> np.ndarray:
        """Sums of ``values`` (one per compaction) per (run, policy), run-major."""
        return np.bincount(self.run * n_pol + self.pol, weights=values, minlength=n_runs * n_pol)


def range_max_table(v: np.ndarray) -> list[np.ndarray]:
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


class StopSearch:
    """Binary searches over a range-maximum table for the first value above a limit, in several
    value arrays of the same runs, each query bounded by its run's end.

    Every value array is laid out run by run with a NaN after each run, the arrays end to end: a
    block holding a run's end has a NaN maximum, which no comparison passes, so the search stops
    there without bounds checks, and a query needs only as many levels as its run is long.
    """

    def __init__(self, values: list[np.ndarray], start: np.ndarray, end: np.ndarray) -> None:
        lens = end - start
        S, K = len(start), int(lens.sum())
        self.run_shift = np.arange(S)  # a run's positions move right by one per earlier run's NaN
        self.width = K + S  # one value array in the layout
        laid = np.full(len(values) * self.width, np.nan)
        at = np.arange(K) + np.repeat(self.run_shift, lens)
        for i, v in enumerate(values):
            laid[i * self.width + at] = v
        self.table = range_max_table(laid)

    def offset(self, which, run: np.ndarray) -> np.ndarray:
        """Where run ``run``'s values of array ``which`` (an int, or one per query) are laid out:
        a position's index in the table is the position plus this."""
        return self.run_shift[run] + np.asarray(which, np.int64) * self.width

    def descend(self, at: np.ndarray, limit: np.ndarray, span: int) -> np.ndarray:
        """From table indices ``at`` (any shape), the first index at or after each whose value is
        ``> limit`` (the NaN after its run if none), each query passing at most ``span`` values."""
        pos = at.copy()
        for j in range(int(span).bit_length() - 1, -1, -1):
            pos += (self.table[j][pos] <= limit) * (1 << j)
        return pos

    def first_above(self, which, run: np.ndarray, start: np.ndarray, limit: np.ndarray,
                    end: np.ndarray) -> np.ndarray:
        """For each query, the first position in ``[start, end)`` of run ``run`` whose value in
        array ``which`` (an int, or an int per query) is ``> limit`` (``end`` if none)."""
        off = self.offset(which, run)
        return self.descend(start + off, limit, (end - start).max(initial=0)) - off


def summary_prices(price: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """USD per token of a summary call's prompt and output, per position. pi asks for no caching
    of a summary request (``cacheRetention: "none"``), so its prompt is paid as fresh input; a model
    whose fitted input price is 0 (its calls never paid fresh input) pays its cache-write price."""
    return np.where(price[0] > 0, price[0], price[3]), price[1]


def find_compactions(runs: Runs, pols: Policies) -> Compactions:
    """Every policy's compactions on every run, one compaction per (policy, run) pair a round.

    A round is a few dozen passes over the pairs still active, whatever the number of policies:
    both searches (the trigger and the next call's overflow) in one :class:`StopSearch` descent,
    then the compaction each found pair makes. Each pair's state is a column of two arrays (whole
    numbers, then tokens and sizes), so pairs that are done leave in two passes."""
    S, K = len(runs.start), len(runs.rows)
    # overflow: the next call's prompt (in the same run) would not fit the window: pi compacts first
    nxt = np.r_[runs.prompt[1:], -np.inf]
    nxt[runs.end - 1] = -np.inf
    search = StopSearch([np.where(runs.can_trigger, runs.total, -np.inf), nxt], runs.start, runs.end)
    kept = np.vstack([pols.kept, np.zeros((1, K))])  # (a policy that keeps nothing reads the last row)
    # the (policy, run) pairs still active, in pair order (pair = policy * S + run): policy, run,
    # where its search starts, its run's end, its kept row, where the two searches' values lie;
    # the tokens it removed so far, its trigger, window and summary size
    pair = np.nonzero(np.repeat(np.isfinite(pols.trigger), S))[0]
    pp, run = pair // S, pair % S
    rule = np.where(pols.rule[pp] >= 0, pols.rule[pp], len(kept) - 1)
    ints = np.array([pp, run, runs.start[run], runs.end[run], rule, search.offset(0, run), search.offset(1, run)],
                    np.int64).reshape(7, len(pair))
    floats = np.array([np.zeros(len(pair)), pols.trigger[pp], pols.window[pp], pols.s_fixed[pp], pols.s_frac[pp],
                       pols.s_cap[pp]], np.float64).reshape(6, len(pair))
    events: list[tuple[np.ndarray, ...]] = []
    while ints.shape[1]:  # one compaction event per active pair per round
        pp, run, start, end, rule = ints[:5]
        removed = floats[0]
        m = len(start)
        at = search.descend((ints[5:] + start).ravel(), (floats[1:3] + removed).ravel(), int((end - start).max()))
        k = np.minimum(at[:m] - ints[5], at[m:] - ints[6])
        found = k < end
        if not found.all():
            ints, floats, k = np.compress(found, ints, 1), np.compress(found, floats, 1), k[found]
            if not found.any():
                break
            pp, run, start, end, rule = ints[:5]
        removed, _, _, s_fixed, s_frac, s_cap = floats
        context = runs.total[k] - removed
        kept_k = kept[rule, k]
        replaced = context - np.minimum(kept_k, context)
        # (a summary is whole tokens: a fraction of what it replaces is rounded up, so every sum stays exact)
        summ = np.where(s_fixed >= 0, s_fixed, np.minimum(np.ceil(s_frac * replaced), s_cap))
        rem = np.maximum(replaced - summ, 0)
        real = rem > 0
        events.append((pp, run, k, rem, replaced, summ) if real.all() else
                      (pp[real], run[real], k[real], rem[real], replaced[real], summ[real]))
        removed += rem  # (in place: the pairs' state)
        ints[2] = k + 1
        go = ints[2] < end
        if not go.all():
            ints, floats = np.compress(go, ints, 1), np.compress(go, floats, 1)
    if not events:
        i, f = np.zeros(0, np.int64), np.zeros(0)
        return Compactions(i, i, i, f, f, f)
    pol, run, pos, rem, replaced, summ = (np.concatenate(col) for col in zip(*events))
    in_price, out_price = summary_prices(runs.price)
    return Compactions(pol, run, pos, rem, replaced, (replaced + SUMMARY_PROMPT_TOKENS) * in_price[pos]
                       + summ * out_price[pos])


def call_tokens_and_costs(runs: Runs, comp: Compactions, n_pol: int) -> dict[str, np.ndarray]:
    """``prompt``, ``after`` (the context after the call and its compaction) and ``cost`` of every
    call under every policy (``policies x K``), and ``before_at``: the context after each
    compaction's call before it compacted (elsewhere the same as ``after``).

    A call reads back from the cache the previous call's context unless a compaction or a model
    change came between (or it starts its run), and pays the rest of its prompt as cache writes
    (models that write cache) or fresh input: so the call after a compaction writes its whole
    prompt to the cache again. The removed tokens so far are one running sum, and what differs at
    the compactions' own positions is fixed up there. Four ``policies x K`` arrays in all: every
    other step writes into one of them.
    """
    K, S = len(runs.rows), len(runs.start)
    # removed up to and with each call, restarted at each run: the compactions' tokens, less at
    # each run's start what the policy removed in the run before, in one running sum (whole tokens:
    # exact in any order)
    removed = comp.dense(comp.removed, (n_pol, K))
    if S > 1 and len(comp.pos):
        per_run = np.bincount(comp.run * n_pol + comp.pol, weights=comp.removed, minlength=S * n_pol)
        removed[:, runs.start[1:]] -= per_run.reshape(S, n_pol)[:-1].T
    np.cumsum(removed, axis=1, out=removed)
    at = (comp.pol, comp.pos)
    removed_before = removed[at] - comp.removed  # (the same as after but where it compacts)
    prompt = runs.prompt - removed
    prompt[at] = runs.prompt[comp.pos] - removed_before
    np.maximum(prompt, 0, out=prompt)
    after = np.subtract(runs.total, removed, out=removed)
    np.maximum(after, 0, out=after)
    before_at = np.maximum(runs.total[comp.pos] - removed_before, 0)
    # what each call reads back: the previous call's context (nothing after a compaction, at a
    # run's start or after a model change)
    cached = np.empty_like(prompt)
    cached[:, 0] = 0.0
    np.minimum(after[:, :-1], prompt[:, 1:], out=cached[:, 1:])
    cached[:, ~runs.same_model] = 0.0
    nxt = comp.pos + 1 < K
    cached[comp.pol[nxt], comp.pos[nxt] + 1] = 0.0
    pr = runs.price
    new_price = np.where(pr[3] > 0, pr[3], pr[0])
    cost = cached * pr[2]
    cached -= prompt  # (now minus the tokens paid as new: cache writes or fresh input)
    cached *= new_price
    cost -= cached
    del cached
    cost += runs.output * pr[1]
    return {"prompt": prompt, "after": after, "before_at": before_at, "cost": cost}


def session_columns(runs: Runs, pols: Policies, comp: Compactions, calls: dict[str, np.ndarray]) -> dict:
    """The sessions-table columns, one row per (run, policy), runs major."""
    n_pol, S = len(pols.trigger), len(runs.start)

    def per_run(a: np.ndarray, op=np.add) -> np.ndarray:
        """runs x policies, flat (run-major, as the output): ``op`` over each run's positions."""
        return op.reduceat(a, runs.start, axis=1).T.ravel()

    def repeat(v: np.ndarray) -> np.ndarray:  # per run -> the same for every policy
        return np.repeat(v, n_pol)

    cost = per_run(calls["cost"])
    peak = per_run(calls["after"], np.maximum)  # (a compaction's call peaks before it compacts)
    np.maximum.at(peak, comp.run * n_pol + comp.pol, calls["before_at"])
    summary_cost = comp.per_run(comp.summary_cost, n_pol, S)
    recorded_cost = repeat(np.add.reduceat(runs.recorded_cost, runs.start))
    rec_comp = runs.recorded_compaction
    return {
        "row": repeat(runs.rows[runs.start]), "leaf": repeat(runs.leaf),
        "policy_index": np.tile(np.arange(n_pol), S), "calls": repeat(runs.lens),
        "compactions": comp.per_run(None, n_pol, S),
        "recorded_compactions": repeat(np.add.reduceat(rec_comp.astype(np.int64), runs.start)),
        "matched_compactions": comp.per_run(rec_comp[comp.pos].astype(np.float64), n_pol, S),
        "peak_context_tokens": peak, "prompt_tokens": per_run(calls["prompt"]),
        "summarized_tokens": comp.per_run(comp.summarized, n_pol, S), "cost_usd": cost,
        "summary_calls_cost_usd": summary_cost, "recorded_cost_usd": recorded_cost,
        "net_saving_usd": recorded_cost - (cost + summary_cost),
        "overflow_calls": np.add.reduceat(calls["prompt"] > pols.window[:, None], runs.start, axis=1,
                                          dtype=np.int64).T.ravel(),
    }


def call_columns(runs: Runs, pols: Policies, comp: Compactions, calls: dict[str, np.ndarray]
                 ) -> Callable[[], dict[str, np.ndarray]]:
    """A function giving the calls-table columns, one row per (run, policy, call), in that order."""

    def build() -> dict[str, np.ndarray]:
        n_pol, K = len(pols.trigger), len(runs.rows)
        shape = (n_pol, K)
        rule = pols.rule[comp.pol]
        cut = np.where(rule >= 0, pols.cut_rows[np.maximum(rule, 0), comp.pos], -1)
        lens = runs.lens
        # the flat position of every output row in a policies x K array: run by run, policy by
        # policy, the run's positions; one gather per column
        block = n_pol * lens
        first = np.repeat(np.cumsum(block) - block, block)  # each run's first output row
        within = np.arange(len(first)) - first
        run_start = np.repeat(runs.start, block)
        pol = within // np.repeat(lens, block)
        pos = run_start + within - pol * np.repeat(lens, block)
        flat = pol * K + pos

        def take(a: np.ndarray) -> np.ndarray:
            return a.reshape(-1)[flat]

        before = calls["after"].copy()
        before[comp.pol, comp.pos] = calls["before_at"]

        return {
            "row": runs.rows[pos], "first": runs.rows[run_start], "leaf": np.repeat(runs.leaf, block),
            "policy_index": pol, "call_index": pos - run_start,
            "prompt_tokens": take(calls["prompt"]), "context_before": take(before),
            "context_after": take(calls["after"]), "compacted": take(comp.dense(True, shape, bool)),
            "cut_row": take(comp.dense(cut + 1, shape, np.int64) - 1),
            "recorded_compaction": runs.recorded_compaction[pos], "cost_usd": take(calls["cost"]),
            "summary_cost_usd": take(comp.dense(comp.summary_cost, shape)),
        }

    return build


def replay(runs: Runs, pols: Policies) -> tuple[dict, Callable[[], dict[str, np.ndarray]]]:
    """The sessions-table columns and a function giving the calls-table columns."""
    comp = find_compactions(runs, pols)
    calls = call_tokens_and_costs(runs, comp, len(pols.trigger))
    return session_columns(runs, pols, comp, calls), call_columns(runs, pols, comp, calls)
