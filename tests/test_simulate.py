"""Compaction simulation: recorded contexts for NeverCompact, a plain loop as reference, validation
against the compactions sessions really made, and the policies themselves."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sessionlab import estimate_tokens, open_session
from sessionlab.analysis import contexts
from sessionlab.compaction import (
    FractionPolicy,
    KeepLastTurnsPolicy,
    NeverCompact,
    PiThresholdPolicy,
    RetainedTailPolicy,
    SummarySize,
    fit_prices,
    prepare_compaction,
    simulate_compaction,
)
from sessionlab.synth import generate_session
from sessionlab.tables import entries_table
from tests._pi_expected import PI

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def data_table():
    return entries_table(DATA)


@pytest.fixture(scope="module")
def pi_table():
    return entries_table(PI / "generated" / "sessions", on_bad_lines="skip")


def test_policies_describe_themselves():
    assert PiThresholdPolicy(200_000).trigger_tokens == 183_616
    assert PiThresholdPolicy(200_000).keep == ("tokens", 20_000)
    assert FractionPolicy(100_000, 0.8, 5_000).trigger_tokens == 80_000
    assert KeepLastTurnsPolicy(100_000, 3).keep == ("turns", 3)
    assert RetainedTailPolicy(100_000, 7).keep == ("messages", 7)
    assert math.isinf(NeverCompact().trigger_tokens)
    with pytest.raises(ValueError):
        SummarySize(tokens=100, fraction=0.1)
    with pytest.raises(ValueError):
        SummarySize(tokens=None, fraction=2.0)


@pytest.mark.parametrize("which", ["data", "pi"])
def test_never_compact_keeps_the_recorded_context(which, data_table, pi_table):
    table = data_table if which == "data" else pi_table
    recorded = {(r["session_id"], r["at_id"]): r["context_tokens"] for r in contexts(table, at="calls").to_pylist()}
    for mode in ("keep", "replace"):
        res = simulate_compaction(table, [NeverCompact()], recorded=mode, branch="all")
        rows = res.calls.to_pylist()
        assert len(rows) > (1000 if which == "data" else 20)
        for r in rows:
            if mode == "keep":
                assert r["prompt_tokens"] == recorded[(r["session_id"], r["at_id"])]
        if mode == "replace":  # only sessions that never compacted keep their recorded sizes
            compacted = {r["session_id"] for r in res.sessions.to_pylist() if r["recorded_compactions"]}
            # (a fork replays its parent's compaction before its own first call)
            compacted |= set(table.filter(pc.equal(table["type"], "compaction"))["session_id"].to_pylist())
            same = [r for r in rows if r["session_id"] not in compacted]
            assert same and all(r["prompt_tokens"] == recorded[(r["session_id"], r["at_id"])] for r in same)
        assert not any(r["compacted"] for r in rows)


def test_a_trigger_never_reached_changes_nothing(data_table):
    res = simulate_compaction(data_table, [NeverCompact(10**9), PiThresholdPolicy(10**9), FractionPolicy(10**9, 0.9)])
    s = res.sessions.to_pandas()
    for col in ("prompt_tokens", "peak_context_tokens", "cost_usd", "compactions", "overflow_calls"):
        by = s.pivot(index="session_id", columns="policy_index", values=col)
        assert (by[0] == by[1]).all() and (by[0] == by[2]).all()


def test_prices_are_fitted_exactly_from_linear_costs(data_table):
    prices = fit_prices(data_table)
    # the generator prices claude-sonnet-4-5 at $3 / $15 / $0.30 / $3.75 per million tokens
    assert prices["claude-sonnet-4-5"] == pytest.approx((3e-6, 15e-6, 0.3e-6, 3.75e-6), rel=1e-6)


def test_validation_against_what_pi_really_did(pi_table):
    """Sample B compacted twice by hand (/compact, small keepRecentTokens): with pi's defaults the
    threshold is never reached, and the report says so, call by call."""
    res = simulate_compaction(pi_table, [PiThresholdPolicy(200_000)])
    b = [r for r in res.sessions.to_pylist() if r["session_id"].startswith("00000028")][0]
    assert (b["recorded_compactions"], b["compactions"], b["matched_compactions"]) == (2, 0, 0)
    flagged = [r["at_id"] for r in res.calls.to_pylist() if r["recorded_compaction"]]
    # the calls each recorded compaction follows: 00000046's branch aside, 00000045 and 00000052
    session = open_session(next((PI / "generated" / "sessions").rglob("*00000028-*.jsonl")))
    want = []
    for c in ("00000047", "00000054"):
        e = session.get_entry(c)
        while e.type != "message" or e.message.role != "assistant":
            e = session.get_entry(e.parent_id)
        want.append(e.id)
    assert sorted(set(flagged) & set(want)) == sorted(want)


def test_validation_on_a_session_compacted_by_pis_threshold(data_table):
    """The api-server session compacted by pi's rule (window 30000, reserve 7500, keep 6000): the
    simulation's first compaction is after the same call."""
    sid = next(r["session_id"] for r in data_table.select(["session_id", "file"]).to_pylist()
               if "api-server" in r["file"])
    res = simulate_compaction(data_table, [PiThresholdPolicy(30_000, 7_500, 6_000)])
    calls = [r for r in res.calls.to_pylist() if r["session_id"] == sid]
    first_sim = next(r["call_index"] for r in calls if r["compacted"])
    first_rec = next(r["call_index"] for r in calls if r["recorded_compaction"])
    assert first_sim == first_rec
    s = [r for r in res.sessions.to_pylist() if r["session_id"] == sid][0]
    assert s["recorded_compactions"] == 2 and s["matched_compactions"] >= 1


def reference(session, policies, prices):
    """A plain per-call loop over the current branch, from the object model (recorded="keep")."""
    branch = session.get_branch()
    calls = [e for e in branch if e.type == "message" and e.message.role == "assistant"]
    from sessionlab import estimate_context_tokens

    def prompt_at(e):
        if not e.parent_id:
            return 0
        return estimate_context_tokens(session.build_context(leaf_id=e.parent_id).messages).tokens

    prompts = [prompt_at(e) for e in calls] + [-math.inf]
    out = []
    for p in policies:
        removed, rows = 0.0, []
        prev_after, prev_model, broke = 0.0, None, True
        window = p.context_window if p.context_window is not None and not math.isinf(p.trigger_tokens) else math.inf
        for n_call, e in enumerate(calls):
            i = branch.index(e)
            prompt_full = prompts[n_call]
            u = e.message.usage
            usable = u is not None and e.message.stop_reason not in ("aborted", "error")
            total = u.context_tokens() if usable else prompt_full
            prompt, before = max(prompt_full - removed, 0), max(total - removed, 0)
            compacted = False
            turn_end = usable and e.message.stop_reason != "toolUse" and before > p.trigger_tokens
            overflow = prompts[n_call + 1] - removed > window
            if turn_end or overflow:
                kind, value = p.keep
                path = branch[: i + 1]
                msgs = [x for x in path if x.type == "message"]
                if kind == "tokens":
                    prep = prepare_compaction(path, keep_recent_tokens=value)
                    start = prep.first_kept_branch_index if prep is not None else 0  # (1.6: nothing to do)
                    kept_entries = [x for x in path[start:] if x.type == "message"]
                elif kind == "turns":
                    users = [x for x in msgs if x.message.role == "user"]
                    kept_entries = msgs[msgs.index(users[-value]):] if len(users) >= value else msgs
                else:
                    kept_entries = msgs[-value:] if len(msgs) >= value else msgs
                kept = min(sum(estimate_tokens(x.message) for x in kept_entries), before)
                summary = p.summary.tokens if p.summary.tokens is not None else min(
                    math.ceil(p.summary.fraction * (before - kept)), p.summary.max_tokens or math.inf)
                rem = max(before - kept - summary, 0)
                if rem > 0:
                    removed += rem
                    compacted = True
            after = max(total - removed, 0)
            cached = 0.0 if broke or e.message.model != prev_model else min(prev_after, prompt)
            p_in, p_out, p_read, p_write = prices[e.message.model]
            cost = cached * p_read + (prompt - cached) * (p_write if p_write > 0 else p_in) + u.output * p_out
            rows.append((e.id, round(prompt), round(before), round(after), compacted, cost))
            prev_after, prev_model, broke = after, e.message.model, compacted
        out.append(rows)
    return out


POLICIES = [PiThresholdPolicy(12_000, 2_000, 3_000), FractionPolicy(20_000, 0.5, 2_000),
            KeepLastTurnsPolicy(15_000, 1, 3_000), RetainedTailPolicy(15_000, 4, 3_000),
            PiThresholdPolicy(12_000, 2_000, 3_000, summary=SummarySize(tokens=None, fraction=0.1, max_tokens=800)),
            NeverCompact(10_000)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), branch_prob=st.sampled_from([0.0, 0.2]), window=st.sampled_from([20_000, 60_000]))
@example(seed=29, branch_prob=0.2, window=20_000)  # a compaction after context edits (see test_synth)
@example(seed=120, branch_prob=0.2, window=20_000)  # a fraction-sized summary of 986.97 tokens (sums off by one)
def test_vectorised_simulation_equals_a_plain_loop(tmp_path_factory, seed, branch_prob, window):
    compare_with_plain_loop(tmp_path_factory, seed, branch_prob, window)


def compare_with_plain_loop(tmp_path_factory, seed, branch_prob, window):
    d = tmp_path_factory.mktemp("sim")
    path = generate_session(d, seed=seed, turns=12, branch_prob=branch_prob, compaction_window=window)
    table = entries_table(path)
    res = simulate_compaction(table, POLICIES, recorded="keep")
    session = open_session(path)
    want = reference(session, POLICIES, fit_prices(table))
    calls = res.calls.to_pandas()
    for pi_, rows in enumerate(want):
        got = calls[calls.policy_index == pi_].sort_values("call_index")
        assert list(got.at_id) == [r[0] for r in rows]
        assert list(got.prompt_tokens) == [r[1] for r in rows]
        assert list(got.context_before) == [r[2] for r in rows]
        assert list(got.context_after) == [r[3] for r in rows]
        assert list(got.compacted) == [r[4] for r in rows]
        assert list(got.cost_usd) == pytest.approx([r[5] for r in rows], rel=1e-9, abs=1e-12)
    return calls


def test_the_plain_loop_comparison_sees_compactions(tmp_path_factory):
    """The property above is not vacuous: a fixed session compacts under every compacting policy."""
    calls = compare_with_plain_loop(tmp_path_factory, seed=7, branch_prob=0.2, window=20_000)
    per_policy = calls.groupby("policy_index").compacted.sum()
    assert (per_policy.iloc[:-1] > 0).all() and per_policy.iloc[-1] == 0


@pytest.mark.parametrize("branch", ["current", "all"])
def test_calls_table_is_built_once_and_matches_the_sessions(data_table, branch):
    """The per-call table is built on first access; it has one row per (branch, policy, call) and
    its per-branch sums are the sessions table's."""
    pols = [PiThresholdPolicy(100_000), FractionPolicy(64_000, 0.5, 5_000), NeverCompact(200_000)]
    res = simulate_compaction(data_table, pols, branch=branch)
    calls = res.calls
    assert res.calls is calls
    s = res.sessions.to_pylist()
    assert calls.num_rows == sum(r["calls"] for r in s) > 0
    sums: dict = {}
    for r in calls.to_pylist():
        key = (r["session_id"], r["leaf_id"], r["policy_index"])
        n, comp = sums.get(key, (0, 0))
        sums[key] = (n + 1, comp + r["compacted"])
    assert sums == {(r["session_id"], r["leaf_id"], r["policy_index"]): (r["calls"], r["compactions"]) for r in s}
    assert "sessions=" in repr(res)


def test_no_calls_gives_empty_tables():
    t = entries_table(PI / "generated" / "sessions", on_bad_lines="skip").slice(0, 0)
    res = simulate_compaction(t, [PiThresholdPolicy(100_000)])
    assert res.sessions.num_rows == 0 and res.calls.num_rows == 0
