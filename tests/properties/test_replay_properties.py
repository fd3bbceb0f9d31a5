"""The replay engine's array passes equal plain loops: the stop search over runs, and every
policy's compactions found one round at a time for all (policy, run) pairs."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.compaction._replay import Policies, Runs, StopSearch, find_compactions
from sessionlab.pi.compaction.summary_prompt import SUMMARY_PROMPT_TOKENS

lengths = st.lists(st.integers(1, 40), min_size=1, max_size=8)
value = st.one_of(st.integers(0, 60), st.just(-math.inf))


def plain_first_above(v, start, limit, end):
    for i in range(start, end):
        if v[i] > limit:
            return i
    return end


@settings(max_examples=200, deadline=None)
@given(lengths.flatmap(lambda ls: st.tuples(st.just(ls), st.lists(st.lists(value, min_size=sum(ls),
                                                                           max_size=sum(ls)), min_size=1, max_size=3))),
       st.data())
def test_stop_search_equals_a_plain_scan(runs_values, data):
    lens, values = runs_values
    start = np.r_[0, np.cumsum(lens)[:-1]].astype(np.int64)
    end = start + np.array(lens)
    arrays = [np.array(v, np.float64) for v in values]
    search = StopSearch(arrays, start, end)
    n = data.draw(st.integers(1, 20))
    which = np.array(data.draw(st.lists(st.integers(0, len(arrays) - 1), min_size=n, max_size=n)))
    run = np.array(data.draw(st.lists(st.integers(0, len(lens) - 1), min_size=n, max_size=n)))
    at = np.array([data.draw(st.integers(0, lens[r] - 1)) for r in run])  # (a search starts inside its run)
    limit = np.array(data.draw(st.lists(st.one_of(st.integers(-5, 65), st.just(math.inf)), min_size=n,
                                        max_size=n)), np.float64)
    got = search.first_above(which, run, start[run] + at, limit, end[run])
    want = [plain_first_above(arrays[w], start[r] + a, lim, end[r]) for w, r, a, lim in zip(which, run, at, limit)]
    assert got.tolist() == want


def plain_compactions(runs: Runs, pols: Policies) -> list[tuple]:
    """Per policy, per run, call by call: compact after a call whose usage total (less what was
    removed) is above the trigger at a turn end, or whose next call's prompt would not fit."""
    in_price = np.where(runs.price[0] > 0, runs.price[0], runs.price[3])
    out = []
    for p in range(len(pols.trigger)):
        if not math.isfinite(pols.trigger[p]):
            continue
        for r, (s, e) in enumerate(zip(runs.start, runs.end)):
            removed = 0.0
            for k in range(s, e):
                over = runs.can_trigger[k] and runs.total[k] > pols.trigger[p] + removed
                overflow = k + 1 < e and runs.prompt[k + 1] > pols.window[p] + removed
                if not (over or overflow):
                    continue
                context = runs.total[k] - removed
                kept = pols.kept[pols.rule[p], k] if pols.rule[p] >= 0 else 0.0
                replaced = context - min(kept, context)
                summ = pols.s_fixed[p] if pols.s_fixed[p] >= 0 else min(math.ceil(pols.s_frac[p] * replaced),
                                                                        pols.s_cap[p])
                rem = max(replaced - summ, 0)
                if rem > 0:
                    cost = (replaced + SUMMARY_PROMPT_TOKENS) * in_price[k] + summ * runs.price[1][k]
                    out.append((p, r, k, rem, replaced, cost))
                removed += rem
    return sorted(out)


policy = st.tuples(st.one_of(st.integers(0, 3000), st.just(math.inf)),  # trigger
                   st.one_of(st.integers(0, 4000), st.just(math.inf)),  # window
                   st.one_of(st.integers(0, 500), st.just(-1)),  # fixed summary, or a fraction
                   st.sampled_from([0.0, 0.1, 0.5]), st.sampled_from([math.inf, 100.0]), st.integers(-1, 1))


@settings(max_examples=200, deadline=None)
@given(lengths, st.lists(policy, min_size=1, max_size=6), st.data())
def test_find_compactions_equals_a_plain_loop(lens, policies, data):
    K, S = sum(lens), len(lens)
    start = np.r_[0, np.cumsum(lens)[:-1]].astype(np.int64)

    def ints(lo, hi, n=K):
        return np.array(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), np.float64)

    prompt = ints(0, 4000)
    total = prompt + ints(0, 800)
    runs = Runs(rows=np.arange(K), leaf=np.arange(S), start=start, prompt=prompt, total=total,
                can_trigger=ints(0, 1).astype(bool), price=ints(0, 3, 4 * K).reshape(4, K) * 1e-6,
                same_model=np.ones(K, bool), output=ints(0, 50), recorded_cost=np.zeros(K),
                recorded_compaction=np.zeros(K, bool))
    cols = list(zip(*policies))
    pols = Policies(trigger=np.array(cols[0], np.float64), window=np.array(cols[1], np.float64),
                    s_fixed=np.array(cols[2], np.float64), s_frac=np.array(cols[3]), s_cap=np.array(cols[4]),
                    rule=np.array(cols[5], np.int64), kept=np.vstack([ints(0, 3000), ints(0, 300)]),
                    cut_rows=np.zeros((2, K), np.int64))
    comp = find_compactions(runs, pols)
    got = sorted(zip(comp.pol.tolist(), comp.run.tolist(), comp.pos.tolist(), comp.removed.tolist(),
                     comp.summarized.tolist(), comp.summary_cost.tolist()))
    assert got == plain_compactions(runs, pols)
    # one event per (policy, run) pair a round: a pair's events come in position order
    order = np.argsort(comp.pol * S + comp.run, kind="stable")
    assert (np.diff(comp.pos[order])[np.diff((comp.pol * S + comp.run)[order]) == 0] > 0).all()
