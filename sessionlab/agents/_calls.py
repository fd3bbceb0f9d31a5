"""An assistant message that is a call as the row a :class:`~._chain.Chain` makes of it, built
straight as the tuple :meth:`~._chain.Chain.done` gives: a store's spend read (OpenCode's) makes
thousands at once, where a chain per session, a dict per row and a file per session cost more than
the rows themselves; a spend-only read of a file (Qwen's) hands its calls to its chain so
(:meth:`~._chain.Chain.call`). A test holds the two equal."""

from __future__ import annotations

from typing import Any

from ._chain import _COLS, _EMPTY_ROW, _ROW_NAMES, _ROW_VALUES

__all__ = ["CALL_NAMES", "call_values"]

CALL_NAMES = _ROW_NAMES
"""The columns of :func:`call_values`' tuples (a chain's: ``est_chars`` counts characters)."""

_AT = {c: i for i, c in enumerate(_COLS)}
_BASE = list(_ROW_VALUES({**_EMPTY_ROW, "role": "assistant", "est_tokens": 0, "tool_call_count": 0}))
_HEAD = [_AT[c] for c in ("line_no", "entry_id", "parent_id", "timestamps", "provider", "model")]
_USAGE = [_AT[c] for c in ("model", "provider", "input_tokens", "output_tokens", "cache_read_tokens",
                           "cache_write_tokens", "reasoning_tokens", "total_tokens", "context_tokens", "usage_kind")]
_COST, _SOURCE = _AT["cost_usd"], _AT["cost_source"]


def call_values(line_no: int, entry_id: str, parent_id: str | None, ts: Any, provider: Any, model: Any,
                usage: tuple | None = None) -> tuple:
    """The row of ``Chain.add(line_no, entry_id, ts, role="assistant", provider=provider,
    model=model, tool_call_count=0)`` with its ``parent_id``, then ``Chain.usage_of(i, usage)`` (the
    arguments of :meth:`~._chain.Chain.usage` in its order: ``model, provider, inp, out,
    cache_read, cache_write, reasoning, total, cost``; None: no usage), as a tuple of
    :data:`CALL_NAMES`."""
    row = _BASE.copy()
    for i, v in zip(_HEAD, (line_no, entry_id, parent_id, ts, provider, model)):
        row[i] = v
    if usage is not None:
        model, provider, inp, out, cache_read, cache_write, reasoning, total, cost = usage
        for i, v in zip(_USAGE, (model, provider, inp, out, cache_read, cache_write, reasoning,
                                 total if total is not None else inp + out + cache_read + cache_write,
                                 inp + cache_read + cache_write + out, "message")):
            row[i] = v
        if cost is not None:
            row[_COST], row[_SOURCE] = cost, "recorded"
    return tuple(row)
