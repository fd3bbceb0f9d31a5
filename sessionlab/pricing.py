"""Prices for calls whose file records no cost (Claude Code, Codex), from the ``genai-prices`` table.

``genai-prices`` ships a snapshot of the providers' price lists and works offline. Its convention
is that ``input_tokens`` *include* cached ones (cache reads and writes are sub-counts), so a call's
prompt total is ``input + cache_read + cache_write`` in sessionlab's additive buckets. Where a
model has a long-context tier, the tier is chosen per request from that prompt total and applies
to the whole request, as the providers bill it.

A model is priced through its per-token rates: they are read once per (model, tier) from
``genai-prices`` (prices are linear within a tier), then every call is priced at once with NumPy.

Example:
    >>> costs, unknown = price_calls(["claude-sonnet-4-5"], [10], [100], [1000], [0], [0])
    >>> round(costs[0], 6), unknown
    (0.00183, {})
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np

from ._arrow import to_numpy

__all__ = ["price_calls", "model_rates", "price_model_id"]

# Bedrock and Vertex spell a model as <route>/<region>.anthropic.<model>-v1:0 or <model>@<date>
_ROUTE = re.compile(r"^(?:converse|invoke|bedrock|vertex_ai|vertex)/")
_BEDROCK = re.compile(r"^(?:(?:us|eu|apac|jp|au|ca|global|us-gov)\.)?(?:anthropic|openai|meta|amazon|mistral)\.(.+?)"
                      r"(?:-v\d+(?::\d+)?)?$")
_VERTEX = re.compile(r"^(claude-[a-z0-9.-]+)@(\d{8})$")


def price_model_id(model: str) -> str:
    """The model id a price table knows for a Bedrock or Vertex id (others unchanged).

    Example:
        >>> price_model_id("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0")
        'claude-haiku-4-5-20251001'
        >>> price_model_id("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), price_model_id("claude-opus-4-1@20250805")
        ('claude-sonnet-4-5-20250929', 'claude-opus-4-1-20250805')
    """
    m = _ROUTE.sub("", model)
    b = _BEDROCK.match(m)
    if b is not None:
        return b.group(1)
    v = _VERTEX.match(m)
    if v is not None:
        return f"{v.group(1)}-{v.group(2)}"
    return m

_PROBE = 1000  # tokens per probe: rates are exact (prices are per token)


def _provider(model: str) -> str | None:
    m = model.lower()
    if m.startswith("claude") or m.startswith("anthropic"):
        return "anthropic"
    if m.startswith(("gpt", "o1", "o3", "o4", "codex")):
        return "openai"
    return None


@functools.lru_cache(maxsize=512)
def _lookup(model: str) -> tuple | None:
    """(tier starts, calc) for a model, or None when genai-prices has no price for it (a Bedrock or
    Vertex id is looked up as its model: :func:`price_model_id`)."""
    from genai_prices import Usage, calc_price  # (imported on first use: it loads its snapshot)

    model = price_model_id(model)

    prov = _provider(model)
    try:
        p = calc_price(Usage(input_tokens=_PROBE, output_tokens=0), model_ref=model, provider_id=prov)
    except LookupError:
        try:
            p = calc_price(Usage(input_tokens=_PROBE, output_tokens=0), model_ref=model)
        except LookupError:
            return None
        prov = p.provider.id
    starts: set[int] = set()
    mp = p.model_price
    for name in ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok"):
        v = getattr(mp, name, None)
        for t in getattr(v, "tiers", None) or ():
            starts.add(int(t.start))

    def calc(**kw: int) -> Decimal:
        return calc_price(Usage(**kw), model_ref=model, provider_id=prov).total_price

    return tuple(sorted(starts)), calc


@functools.lru_cache(maxsize=1024)
def model_rates(model: str, tier: int = 0) -> tuple[float, float, float, float, float] | None:
    """USD per token for (uncached input, output, cache read, cache write 5m, cache write 1h) of
    ``model`` in its ``tier`` (0: base; k: above the k-th threshold), or None without a price."""
    found = _lookup(model)
    if found is None:
        return None
    starts, calc = found
    total = starts[tier - 1] + _PROBE if tier else _PROBE  # a prompt total inside the tier
    t = total
    base = calc(input_tokens=t, output_tokens=0)
    r_in = base / t
    r_out = (calc(input_tokens=t, output_tokens=_PROBE) - base) / _PROBE
    r_cr = calc(input_tokens=t, cache_read_tokens=t, output_tokens=0) / t
    r_cw = calc(input_tokens=t, cache_write_tokens=t, output_tokens=0) / t
    try:
        r_1h = calc(input_tokens=t, cache_write_tokens=t, cache_write_1h_tokens=t, output_tokens=0) / t
    except (ValueError, KeyError):
        r_1h = r_cw
    return float(r_in), float(r_out), float(r_cr), float(r_cw), float(r_1h)


@functools.lru_cache(maxsize=1024)
def base_rates(model: str) -> tuple[float, float, float, float, float] | None:
    """:func:`model_rates` of ``model``'s base tier; a name whose version lost its dot
    (``gemini-2-5-pro``) is also tried with it. None without a price."""
    for name in dict.fromkeys((model, re.sub(r"(\d)-(\d)", r"\1.\2", model, count=1))):
        r = model_rates(name, 0)
        if r is not None:
            return r
    return None


def price_totals(models: Sequence[str | None], inp: Any, out: Any, cache_read: Any, cache_write: Any) -> np.ndarray:
    """USD of token totals that add up many requests (sessions' running totals), at each model's
    base rates (:func:`base_rates`: a long-context tier is a property of one request, which a total
    is not), as a float64 array, NaN where the model has no price."""
    a = [np.asarray(v, np.float64) for v in (inp, out, cache_read, cache_write)]
    cost = np.full(len(models), np.nan)
    for m, idx in _positions(models).items():
        r = base_rates(m) if m else None
        if r is not None:
            cost[idx] = a[0][idx] * r[0] + a[1][idx] * r[1] + a[2][idx] * r[2] + a[3][idx] * r[3]
    return cost


def _positions(models: Any) -> dict[str | None, np.ndarray]:
    """Each model's positions in ``models`` (in order of first appearance): one pass to group the
    calls, whose costs are then computed per model at once. ``models``: names, or an Arrow array of
    them (a load's calls by the hundred thousand: grouped without a Python object per call)."""
    if hasattr(models, "dictionary_encode"):  # (an Arrow array or chunked array)
        import pyarrow as pa

        enc = models.combine_chunks() if isinstance(models, pa.ChunkedArray) else models
        enc = enc.dictionary_encode(null_encoding="encode")  # (codes in order of first appearance)
        codes = to_numpy(enc.indices).astype(np.int64)  # (pyarrow's own to_numpy would import pandas)
        order = np.argsort(codes, kind="stable")  # (each model's positions ascending)
        ends = np.cumsum(np.bincount(codes, minlength=len(enc.dictionary)))
        return {m: order[e - n:e] for m, e, n in zip(enc.dictionary.to_pylist(), ends.tolist(),
                                                      np.diff(np.r_[0, ends]).tolist())}
    by_model: dict[str | None, list[int]] = {}
    for i, m in enumerate(models):
        by_model.setdefault(m, []).append(i)
    return {m: np.asarray(where) for m, where in by_model.items()}


def price_calls(models: Sequence[str | None], inp: Sequence[int], out: Sequence[int], cache_read: Sequence[int],
                cache_write: Sequence[int], cache_write_1h: Sequence[int | None] | None = None,
                ) -> tuple[list[float | None], dict[str, list[int]]]:
    """USD cost of each call from its model and additive token buckets.

    Returns the costs (None for a call whose model has no price and whose tokens are not all zero)
    and ``{model: [positions]}`` of those unpriced calls.
    """
    h = None if cache_write_1h is None else [0 if x is None else x for x in cache_write_1h]
    cost, unknown = price_array(models, inp, out, cache_read, cache_write, h)
    return [None if np.isnan(c) else float(c) for c in cost.tolist()], unknown


def price_array(models: Sequence[str | None], inp: Any, out: Any, cache_read: Any, cache_write: Any,
                cache_write_1h: Any = None) -> tuple[np.ndarray, dict[str, list[int]]]:
    """:func:`price_calls` with the token counts as arrays (or sequences) of numbers, no None, and
    the costs as a float64 array, NaN where there is no price."""
    n = len(models)
    a = {k: np.asarray(v, np.float64) for k, v in (("in", inp), ("out", out), ("cr", cache_read),
                                                    ("cw", cache_write))}
    h = np.zeros(n) if cache_write_1h is None else np.asarray(cache_write_1h, np.float64)
    cost = np.full(n, np.nan)
    prompt = a["in"] + a["cr"] + a["cw"]
    unknown: dict[str, list[int]] = {}
    for m, idx in _positions(models).items():
        found = _lookup(m) if m else None
        if found is None:
            empty = (a["in"][idx] + a["out"][idx] + a["cr"][idx] + a["cw"][idx]) == 0
            cost[idx[empty]] = 0.0
            if (~empty).any():
                unknown[m or "(none)"] = idx[~empty].tolist()
            continue
        starts = np.asarray(found[0], np.float64)
        tier = np.searchsorted(starts, prompt[idx], side="left") if len(starts) else np.zeros(len(idx), int)
        for t in np.unique(tier):
            sel = idx[tier == t]
            r = model_rates(m, int(t))
            assert r is not None
            cost[sel] = (a["in"][sel] * r[0] + a["out"][sel] * r[1] + a["cr"][sel] * r[2]
                         + (a["cw"][sel] - h[sel]) * r[3] + h[sel] * r[4])
    return cost, unknown
