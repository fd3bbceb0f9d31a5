"""Prices fitted to what the sessions paid: per model, USD per token of input, output, cache read
and cache write, by least squares on the recorded calls (the simulation prices its what-ifs with
them, the cache-miss table its misses)."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from .._arrow import from_numpy, scalar, to_numpy
from ..tables import call_mask
from ..tables.corpus import SessionIds, select_sessions

__all__ = ["fit_prices", "prices_from", "string_codes"]


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(col, fill), dtype)


def fit_prices(entries, *, session_id: SessionIds = None) -> dict[str, tuple[float, float, float, float]]:
    """Per model: USD per token for (input, output, cache read, cache write), fitted by least
    squares to the recorded calls' usage and cost (exact when the recorded costs are linear);
    ``session_id``: fitted to the calls of this session (or these sessions) only."""
    table = select_sessions(entries, session_id)
    cols = ["model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd"]
    # (only the columns the fit reads are filtered: the whole table's strings would cost more)
    calls = table.select(cols).filter(from_numpy(call_mask(table)))

    def col(name: str) -> np.ndarray:
        return _np(calls[name], 0, np.float64)

    x = np.stack([col("input_tokens"), col("output_tokens"), col("cache_read_tokens"), col("cache_write_tokens")], 1)
    y = col("cost_usd")
    names, codes = string_codes(pc.fill_null(calls["model"], scalar("")))
    return prices_from(names, codes, x, y)


def prices_from(names: list[str], codes: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict:
    """:func:`fit_prices` on arrays: per model ``names[code]``, the least-squares USD per token of
    the calls' (input, output, cache read, cache write) ``x`` against their cost ``y``."""
    prices: dict[str, tuple[float, float, float, float]] = {}
    for code, m in sorted(enumerate(names), key=lambda cm: cm[1]):  # one small fit per model
        sel = codes == code
        xs, ys = x[sel], y[sel]
        used = xs.sum(0) > 0
        coef = np.zeros(4)
        if used.any() and ys.any():
            sol, *_ = np.linalg.lstsq(xs[:, used], ys, rcond=None)
            coef[used] = np.clip(sol, 0, None)
        prices[m] = tuple(float(c) for c in coef)  # type: ignore[assignment]
    return prices


def string_codes(col) -> tuple[list[str], np.ndarray]:
    """A string column as (distinct values, code of every row; -1 for null)."""
    enc = pc.dictionary_encode(col).unify_dictionaries()
    if not enc.num_chunks:
        return [], np.zeros(0, np.int64)
    return enc.chunks[0].dictionary.to_pylist(), np.concatenate([_np(c.indices, -1, np.int64) for c in enc.chunks])
