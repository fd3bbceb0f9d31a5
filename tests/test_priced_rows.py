"""The pricing of a batch's calls (``_agents._priced``: the calls with usage and no cost, and the
sessions' running totals, at once) against a plain loop that prices each row alone, on random rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.pricing import base_rates, price_calls
from sessionlab.tables._agents import _priced

TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
SCHEMA = pa.schema([("model", pa.string())] + [(c, pa.int64()) for c in TOKENS]
                   + [("cost_usd", pa.float64()), ("cost_source", pa.string()), ("usage_kind", pa.string())])

count = st.one_of(st.none(), st.integers(0, 300_000))  # (past 200k: a long-context tier)
row = st.fixed_dictionaries({
    "model": st.sampled_from(["claude-sonnet-4-5", "gpt-4o", "gemini-2.5-pro", "gemini-2-5-pro", "no-such-model",
                              None]),
    **{c: count for c in TOKENS},
    "cost_usd": st.one_of(st.none(), st.floats(0, 5)),
    "cost_source": st.sampled_from([None, "recorded", "fallback", "unknown", "priced"]),
    "usage_kind": st.sampled_from([None, "message", "session_total"]),
})


def _reference(rows: list[dict], priced: list[bool]) -> list[dict]:
    out = []
    for r, p in zip(rows, priced):
        r = dict(r)
        if not (p and r["input_tokens"] is not None and r["cost_usd"] is None and r["cost_source"] != "unknown"):
            pass
        elif r["usage_kind"] == "session_total":  # (a session's totals: base rates)
            rates = base_rates(r["model"]) if r["model"] else None
            r["cost_usd"] = None if rates is None else sum((r[k] or 0) * rate for k, rate in zip(TOKENS[:4], rates[:4]))
            if r["cost_source"] != "fallback" or rates is None:
                r["cost_source"] = "priced" if rates is not None else "unknown"
        else:
            (c,), _ = price_calls([r["model"]], *([r[k] or 0] for k in TOKENS))
            r["cost_usd"] = c
            if r["cost_source"] != "fallback" or c is None:
                r["cost_source"] = "priced" if c is not None else "unknown"
        out.append(r)
    return out


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(row, max_size=25), data=st.data())
def test_a_batch_is_priced_as_each_row_alone(rows, data):
    priced = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    t = pa.Table.from_pylist(rows, schema=SCHEMA)
    got = _priced(t, np.array(priced, np.bool_)).to_pylist()
    assert got == _reference(rows, priced)


def test_the_rows_priced_and_those_left_alone():
    rows = [{"model": "claude-sonnet-4-5", "input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": None,
             "cache_write_tokens": 0, "cache_write_1h_tokens": None, "cost_usd": None, "cost_source": s,
             "usage_kind": "message"}
            for s in (None, "fallback", "unknown", "recorded")]
    rows.append({**rows[0], "model": "no-such-model"})
    got = _priced(pa.Table.from_pylist(rows, schema=SCHEMA), np.ones(len(rows), np.bool_)).to_pylist()
    assert [r["cost_source"] for r in got] == ["priced", "fallback", "unknown", "priced", "unknown"]
    assert got[0]["cost_usd"] == got[1]["cost_usd"] == got[3]["cost_usd"] > 0
    assert got[2]["cost_usd"] is None and got[4]["cost_usd"] is None
    totals = [{**rows[0], "usage_kind": "session_total", "input_tokens": 300_000, "model": m}
              for m in ("claude-sonnet-4-5", "gemini-2-5-pro", "no-such-model")]
    got = _priced(pa.Table.from_pylist(totals, schema=SCHEMA), np.ones(3, np.bool_)).to_pylist()
    rates = base_rates("claude-sonnet-4-5")  # (base rates past a long-context tier's threshold: a total)
    assert got[0]["cost_usd"] == 300_000 * rates[0] + 10 * rates[1] + 0 * rates[2] + 0 * rates[3]
    assert got[1]["cost_usd"] > 0 and got[1]["cost_source"] == "priced"  # (found as gemini-2.5-pro)
    assert got[2]["cost_usd"] is None and got[2]["cost_source"] == "unknown"


def test_a_chunk_is_priced_on_the_rows_of_agents_whose_calls_are_priced():
    from sessionlab.tables._agents import price_rows

    row = {"model": "claude-sonnet-4-5", "input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": 0,
           "cache_write_tokens": 0, "cache_write_1h_tokens": None, "cost_usd": None, "cost_source": None,
           "usage_kind": "message"}
    t = pa.Table.from_pylist([row] * 4, schema=SCHEMA).append_column("agent", pa.array(["goose", None, "pi", "amp"]))
    got = price_rows(t).to_pylist()
    assert [r["cost_source"] for r in got] == ["priced", None, None, "priced"]  # (pi records its costs)
    assert got[0]["cost_usd"] == got[3]["cost_usd"] > 0


@pytest.mark.parametrize("cost", [None, 0.25])
def test_a_totals_row_as_a_tuple_is_the_row_a_reader_s_dict_gives(cost):
    """A store's spend read keeps a session's totals as the tuple of ``TOTALS``; a reader's rows
    as the dict: the same row once it has its columns."""
    from sessionlab.agents._rows import COLUMNS, TOTALS, row_values, totals_row, totals_values

    args = ("goose:s", "2026-05-01T10:00:00.000Z", "m", "p", 100, 30, 20, 10, 5, cost)
    as_dict = dict(zip(COLUMNS, row_values(totals_row(*args), 1, None), strict=True))
    as_tuple = {**dict.fromkeys(COLUMNS), **dict(zip(TOTALS, totals_values(*args), strict=True))}
    assert as_tuple == as_dict
    assert (as_dict["total_tokens"], as_dict["side_node"], as_dict["cost_source"]) == (
        160, True, None if cost is None else "recorded")


_HEADS = ("line_no", "entry_id", "parent_id", "timestamps", "model", "provider", "message_id", "is_error",
          "error_message", "stop_reason")


@settings(max_examples=200, deadline=None)
@given(st.tuples(st.integers(1, 50), st.text(max_size=3), st.none() | st.text(max_size=3),
                 st.none() | st.just("2026-06-01T00:00:00.000Z"), st.none() | st.just("gpt-5"),
                 st.none() | st.just("openai"), st.none() | st.text(max_size=3), st.booleans(),
                 st.none() | st.just("overloaded"), st.none() | st.just("stop")),
       st.none() | st.tuples(*[st.integers(0, 10**7)] * 5, st.none() | st.floats(0, 10)),
       st.sampled_from([{}, {"est_tokens": 0}, {"est_tokens": 0, "tool_call_count": 0}]))
def test_a_call_row_built_straight_is_the_row_of_its_dict(values, usage, defaults):
    """``CallRows.row`` (Copilot's and Kilo's spend rows) is ``row_values`` of the call's dict row."""
    from sessionlab.agents._rows import CallRows, row_values

    row = {"role": "assistant", **defaults, **dict(zip(_HEADS[1:], values[1:]))}
    if usage is not None:
        row.update(zip(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                        "reasoning_tokens", "cost_usd"), usage))
    assert CallRows(_HEADS, **defaults).row(values, usage) == row_values(row, values[0], None)
