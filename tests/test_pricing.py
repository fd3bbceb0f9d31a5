"""price_calls (per-token rates read once per model and tier, applied with NumPy) against
genai-prices' own calc_price on every call."""

from __future__ import annotations

import random

import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.pricing import price_array, price_calls

MODELS = ["claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-haiku-4-5-20251001", "gpt-5.3-codex",
          "gpt-5.2-codex", "gpt-5.4"]


def _reference(model, inp, out, cr, cw, cw1h):
    prov = "anthropic" if model.startswith("claude") else "openai"
    u = Usage(input_tokens=inp + cr + cw, output_tokens=out, cache_read_tokens=cr, cache_write_tokens=cw,
              **({"cache_write_1h_tokens": cw1h} if cw1h else {}))
    return float(calc_price(u, model_ref=model, provider_id=prov).total_price)


def test_price_calls_equals_calc_price_per_call():
    rng = random.Random(7)
    rows = []
    for _ in range(300):
        m = rng.choice(MODELS)
        big = rng.random() < 0.3  # some prompts over the long-context thresholds
        cr = rng.randint(0, 320_000 if big else 150_000)
        cw = rng.randint(0, 30_000) if m.startswith("claude") else 0
        cw1h = rng.randint(0, cw) if cw and rng.random() < 0.3 else 0
        rows.append((m, rng.randint(0, 5_000), rng.randint(0, 8_000), cr, cw, cw1h))
    costs, unknown = price_calls(*zip(*rows))
    assert unknown == {}
    for r, c in zip(rows, costs):
        assert c == pytest.approx(_reference(*r), rel=1e-9, abs=1e-12), r
    assert any(r[3] + r[1] + r[4] > 200_000 for r in rows)  # the tier was exercised


def test_unknown_models_and_empty_calls():
    costs, unknown = price_calls(["nope-1", "nope-1", "nope-1", None], [10, 0, 5, 1], [1, 0, 0, 0], [0, 0, 0, 0],
                                 [0, 0, 0, 0])
    assert costs == [None, 0.0, None, None]
    assert unknown == {"nope-1": [0, 2], "(none)": [3]}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["claude-sonnet-4-5", "gpt-5", "", None, "no-such-model"]), max_size=60),
       st.integers(0, 60))
def test_calls_grouped_by_model_from_an_arrow_array_as_from_names(models, cut):
    # (the priced rows of a load come as an Arrow column: grouped in C, the groups of the plain loop)
    import numpy as np
    import pyarrow as pa

    from sessionlab.pricing import _positions

    want = _positions(models)
    chunked = pa.chunked_array([pa.array(models[:cut], pa.string()), pa.array(models[cut:], pa.string())])
    for got in (_positions(pa.array(models, pa.string())), _positions(chunked)):
        assert list(got) == list(want)  # (in order of first appearance)
        assert all(np.array_equal(got[m], want[m]) for m in want)
    inp = list(range(len(models)))
    assert np.array_equal(price_array(pa.array(models, pa.string()), inp, inp, inp, inp)[0],
                          price_array(models, inp, inp, inp, inp)[0], equal_nan=True)
