"""The what-if's cost model against hand-computed examples: the calls' cost with the cache written
again after every compaction, the summary calls, and the net saving.

The session is written line by line here, so every number below can be checked with a pencil:
four turns of one user message (400 characters: 100 estimated tokens) and one assistant answer
(200 characters: 50 estimated tokens; 100 tokens written to the cache, 50 output tokens). Prices
are given, not fitted: $3 / $15 / $0.30 / $3.75 per million input / output / cache-read /
cache-write tokens.
"""

from __future__ import annotations

import json

import pytest

from sessionlab.compaction import NeverCompact, RetainedTailPolicy, SummarySize, simulate_compaction
from sessionlab.pi.compaction.summary_prompt import (
    CONVERSATION_WRAPPER,
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    SUMMARY_PROMPT_TOKENS,
)
from sessionlab.tables import entries_table

MODEL = "claude-sonnet-4-5"
IN, OUT, READ, WRITE = 3e-6, 15e-6, 0.3e-6, 3.75e-6
PRICES = {MODEL: (IN, OUT, READ, WRITE)}


def _line(i: int, parent: int | None, message: dict) -> str:
    return json.dumps({"type": "message", "id": f"{i:08x}", "parentId": None if parent is None else f"{parent:08x}",
                       "timestamp": f"2026-01-15T10:00:{i:02d}.000Z", "message": message})


def write_session(path) -> None:
    """Turn t (1..4): the user's 400 characters, then an answer that read t-1 turns' context from
    the cache (150 tokens a turn), wrote 100 new tokens and output 50: usage total 150 * t."""
    lines = [json.dumps({"type": "session", "version": 3, "id": "0000aaaa-0000-4000-8000-000000000000",
                         "timestamp": "2026-01-15T10:00:00.000Z", "cwd": "/home/user/proj"})]
    parent = None
    for t in range(1, 5):
        user, call = 2 * t - 1, 2 * t
        lines.append(_line(user, parent, {"role": "user", "content": "u" * 400, "timestamp": 0}))
        read = 150 * (t - 1)
        cost = read * READ + 100 * WRITE + 50 * OUT
        lines.append(_line(call, user, {
            "role": "assistant", "content": [{"type": "text", "text": "a" * 200}], "api": "anthropic-messages",
            "provider": "anthropic", "model": MODEL, "stopReason": "stop", "timestamp": 0,
            "usage": {"input": 0, "output": 50, "cacheRead": read, "cacheWrite": 100, "totalTokens": read + 150,
                      "cost": {"input": 0, "output": 50 * OUT, "cacheRead": read * READ, "cacheWrite": 100 * WRITE,
                               "total": cost}}}))
        parent = call
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("costs") / "session.jsonl"
    write_session(path)
    return entries_table(path)


# Both policies keep the last two messages (the user's 100 and the answer's 50 estimated tokens:
# 150) and write 20-token summaries; window 1000, so no call overflows.
OFTEN = RetainedTailPolicy(1_000, tail_messages=2, reserve_tokens=800, summary=SummarySize(tokens=20))  # trigger 200
RARELY = RetainedTailPolicy(1_000, tail_messages=2, reserve_tokens=600, summary=SummarySize(tokens=20))  # trigger 400


def test_the_summary_prompt_is_pis_prompt_estimated_as_pi_does():
    # ceil(310 / 4) for the system prompt + ceil((33 + 879) / 4) for the instructions around the messages
    assert (len(SUMMARIZATION_SYSTEM_PROMPT), len(CONVERSATION_WRAPPER), len(SUMMARIZATION_PROMPT)) == (310, 33, 879)
    assert SUMMARY_PROMPT_TOKENS == 78 + 228 == 306


def test_hand_computed_costs(table):
    res = simulate_compaction(table, [OFTEN, RARELY, NeverCompact(1_000)], recorded="keep", prices=PRICES)
    s = {r["policy_index"]: r for r in res.sessions.to_pylist()}
    # prompts sent (pi's estimate at the call's parent: the last usage total + the user's 100):
    # 100, 250, 400, 550; usage totals after the calls: 150, 300, 450, 600.
    #
    # recorded: 100 written + 50 out, plus 150 * (t - 1) read back
    #   1125 + 1170 + 1215 + 1260 = 4770 (millionths of a dollar)
    recorded = (100 * WRITE + 50 * OUT) * 4 + (0 + 150 + 300 + 450) * READ
    assert recorded == pytest.approx(4770e-6)
    #
    # OFTEN (trigger 200): call 2 ends at 300 > 200: keeps 150, summarises 150, summary 20, so 130
    #   removed; call 3: prompt 400 - 130 = 270, ends at 450 - 130 = 320 > 200: summarises 320 - 150
    #   = 170, removes 150 (280 in all); call 4: prompt 550 - 280 = 270, ends at 320: summarises 170
    #   again. Calls: 1: 100 written + 50 out = 1125; 2: 150 read (call 1's context) + 100 written
    #   + out = 45 + 375 + 750 = 1170; 3 and 4 follow a compaction: nothing read, all 270 written
    #   again: 1012.5 + 750 = 1762.5 each. Sum 5820.
    often_calls = 1125e-6 + 1170e-6 + 2 * (270 * WRITE + 50 * OUT)
    assert often_calls == pytest.approx(5820e-6)
    #   Summary calls: (summarised + 306) at the input price + 20 output tokens:
    #   (150 + 306) * 3 + 300 = 1668; (170 + 306) * 3 + 300 = 1728, twice. Sum 5124.
    often_summaries = (150 + 306) * IN + 20 * OUT + 2 * ((170 + 306) * IN + 20 * OUT)
    assert often_summaries == pytest.approx(5124e-6)
    #
    # RARELY (trigger 400): only call 3 (450) compacts: summarises 450 - 150 = 300, removes 280;
    #   call 4: prompt 270, all written again. Calls: 1125 + 1170 + 1215 (as recorded: 300 read,
    #   100 written) + 1762.5 = 5272.5; summary: (300 + 306) * 3 + 300 = 2118.
    rarely_calls = 1125e-6 + 1170e-6 + (300 * READ + 100 * WRITE + 50 * OUT) + (270 * WRITE + 50 * OUT)
    rarely_summaries = (300 + 306) * IN + 20 * OUT
    assert (rarely_calls, rarely_summaries) == pytest.approx((5272.5e-6, 2118e-6))

    want = {0: (3, 150 + 170 + 170, often_calls, often_summaries),
            1: (1, 300, rarely_calls, rarely_summaries),
            2: (0, 0, recorded, 0.0)}
    for i, (compactions, summarized, calls_cost, summary_cost) in want.items():
        r = s[i]
        assert (r["compactions"], r["summarized_tokens"]) == (compactions, summarized)
        assert r["cost_usd"] == pytest.approx(calls_cost, rel=1e-12)
        assert r["summary_calls_cost_usd"] == pytest.approx(summary_cost, rel=1e-12, abs=1e-15)
        assert r["recorded_cost_usd"] == pytest.approx(recorded, rel=1e-12)
        assert r["net_saving_usd"] == pytest.approx(recorded - calls_cost - summary_cost, rel=1e-9, abs=1e-15)
    # net savings: 4770 - 5820 - 5124 = -6174; 4770 - 5272.5 - 2118 = -2620.5; 0 for never
    assert [s[i]["net_saving_usd"] for i in range(3)] == pytest.approx([-6174e-6, -2620.5e-6, 0.0], abs=1e-12)


def test_the_calls_table_puts_each_summary_call_at_the_call_that_compacted(table):
    res = simulate_compaction(table, [OFTEN, RARELY], recorded="keep", prices=PRICES)
    calls = res.calls.to_pandas().sort_values(["policy_index", "call_index"])
    often = calls[calls.policy_index == 0]
    assert list(often.compacted) == [False, True, True, True]
    assert list(often.summary_cost_usd) == pytest.approx([0.0, 1668e-6, 1728e-6, 1728e-6], abs=1e-15)
    assert list(often.prompt_tokens) == [100, 250, 270, 270]
    assert list(often.cost_usd) == pytest.approx([1125e-6, 1170e-6, 1762.5e-6, 1762.5e-6], rel=1e-12)
    rarely = calls[calls.policy_index == 1]
    assert list(rarely.summary_cost_usd) == pytest.approx([0.0, 0.0, 2118e-6, 0.0], abs=1e-15)
    sessions = res.sessions.to_pandas()
    assert list(calls.groupby("policy_index").summary_cost_usd.sum()) == pytest.approx(
        list(sessions.sort_values("policy_index").summary_calls_cost_usd), rel=1e-12)


def test_compacting_more_often_costs_more(table):
    """Each compaction makes the next call write its whole prompt to the cache again (no read): the
    policy that compacts three times pays more for its calls than the one that compacts once, even
    though it sends fewer prompt tokens, and more again once its summaries are paid for."""
    res = simulate_compaction(table, [OFTEN, RARELY], recorded="keep", prices=PRICES)
    often, rarely = sorted(res.sessions.to_pylist(), key=lambda r: r["policy_index"])
    assert often["compactions"] > rarely["compactions"]
    assert often["prompt_tokens"] < rarely["prompt_tokens"]  # 100 + 250 + 270 + 270 < 100 + 250 + 400 + 270
    assert often["cost_usd"] > rarely["cost_usd"]
    assert often["summary_calls_cost_usd"] > rarely["summary_calls_cost_usd"]
    assert often["net_saving_usd"] < rarely["net_saving_usd"] < 0


def test_without_a_cache_write_price_the_summary_prompt_pays_the_input_price(table):
    """A model fitted without cache writes pays fresh input for every prompt token not read back;
    the summary call pays input for its prompt either way."""
    res = simulate_compaction(table, [RARELY], recorded="keep", prices={MODEL: (IN, OUT, READ, 0.0)})
    r = res.sessions.to_pylist()[0]
    # calls: 100 * 3 + 750 = 1050; 150 read + 100 in: 45 + 300 + 750 = 1095; 300 read + 100 in:
    # 90 + 300 + 750 = 1140; 270 in after the compaction: 810 + 750 = 1560. Sum 4845.
    assert r["cost_usd"] == pytest.approx(4845e-6, rel=1e-12)
    assert r["summary_calls_cost_usd"] == pytest.approx(2118e-6, rel=1e-12)


def test_cost_columns_on_the_sample_sessions():
    """On data/: the net saving is the recorded cost minus both estimates, a policy pays for
    summary calls exactly when it compacts, and the calls table's summary costs add up to the
    sessions table's."""
    from pathlib import Path

    from sessionlab.compaction import PiThresholdPolicy

    data = entries_table(Path(__file__).parent.parent / "data" / "sessions")
    res = simulate_compaction(data, [PiThresholdPolicy(30_000, 7_500, 6_000), NeverCompact(30_000)])
    s = res.sessions.to_pandas()
    assert (s.net_saving_usd == s.recorded_cost_usd - (s.cost_usd + s.summary_calls_cost_usd)).all()
    assert ((s.summary_calls_cost_usd > 0) == (s.compactions > 0)).all()
    assert s.compactions.sum() > 0 and (s[s.policy_index == 1].summary_calls_cost_usd == 0).all()
    c = res.calls.to_pandas()
    assert ((c.summary_cost_usd > 0) == c.compacted).all()
    by = c.groupby(["session_id", "policy_index"]).summary_cost_usd.sum()
    want = s.set_index(["session_id", "policy_index"]).summary_calls_cost_usd
    assert by.reindex(want.index).to_numpy() == pytest.approx(want.to_numpy(), rel=1e-12, abs=0)
