"""Rows to an :class:`AgentFile`, for the agents whose stores hold usage records rather than a tree
(Droid, Kilo, Codebuff, Hermes...): each reader lists its rows as dicts, this builds the columns.

A row's keys are entry column names (``entry_id``, ``role``, ``model``, ``input_tokens``...) plus
``timestamps`` (ISO text); missing keys are null. Rows without a ``parent_id`` key form a chain (each
the child of the row before), the shape of a format that has no tree. A row with usage gets its
``total_tokens`` and ``context_tokens`` (the sum of the four parts), ``usage_kind = 'message'`` and
``cost_source = 'recorded'`` when it carries a cost (else the load prices it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..pi.io.formats import AgentFile
from ._spec import is_spend_row, spend_only

__all__ = ["COLUMNS", "TOTALS", "CallRows", "SpendRows", "agent_file", "as_int", "file_rows", "row_values",
           "totals_dict", "totals_row", "totals_values", "text"]

COLUMNS = ("line_no", "entry_id", "parent_id", "type", "role", "timestamps", "provider", "model", "input_tokens",
           "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "total_tokens",
           "context_tokens", "cost_usd", "cost_source", "usage_kind", "tool_name", "tool_call_count", "is_error",
           "error_message", "est_tokens", "side_node", "name", "message_id", "stop_reason")

_PARTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


_BASE = {**dict.fromkeys(COLUMNS), "type": "message", "side_node": False}  # (a row's defaults, in column order)
_N = len(COLUMNS)
_ENTRY_ID = COLUMNS.index("entry_id")


def agent_file(path: str, agent: str, rows: list[dict], session: dict[str, Any]) -> AgentFile:
    """The rows as an AgentFile of ``agent`` with the session facts ``session`` (``session_id``...)."""
    af = AgentFile(path=path, agent=agent, session=dict(session))
    # (as tuples: the batch's table turns its files' rows into columns at once; a spend-only read,
    # see ._spec.reading_spend_only, the spend rows alone)
    af.rows = file_rows(rows, spend_only())
    af.row_names = COLUMNS
    af.n = len(af.rows)
    return af


def file_rows(rows: list[dict], spend: bool) -> list[tuple]:
    """A reader's rows of one session as tuples of :data:`COLUMNS` (:func:`row_values`), each at
    its place among them and the child of the row before unless it names its parent; with
    ``spend``, its spend rows alone (a row left out is still the parent of the row after it)."""
    full = []
    prev = None
    for i, r in enumerate(rows):
        if spend and not is_spend_row(r):
            prev = r.get("entry_id")
            continue
        values = row_values(r, i + 1, prev)
        full.append(values)
        prev = values[_ENTRY_ID]
    return full


def row_values(r: dict, line_no: int, prev: str | None) -> tuple:
    """One row as a tuple of :data:`COLUMNS`: the defaults, then the row's own values (a row's
    other keys left out), at ``line_no``, the child of the row ``prev`` unless it names its parent.
    A row with usage gets its total and context tokens (the sum of the four parts), ``usage_kind =
    'message'`` and ``cost_source = 'recorded'`` when it carries a cost, unless it says otherwise."""
    x = {**_BASE, "line_no": line_no, "parent_id": prev, **r}
    if x["input_tokens"] is not None:
        # (the four parts of _PARTS, added without a generator: a store reads a row per session)
        total = (int(x["input_tokens"] or 0) + int(x["output_tokens"] or 0) + int(x["cache_read_tokens"] or 0)
                 + int(x["cache_write_tokens"] or 0))
        if "total_tokens" not in r:
            x["total_tokens"] = total
        if "context_tokens" not in r:
            x["context_tokens"] = total
        if "usage_kind" not in r:
            x["usage_kind"] = "message"
        if x["cost_usd"] is not None and "cost_source" not in r:
            x["cost_source"] = "recorded"
    values = tuple(x.values())
    return values if len(values) == _N else values[:_N]


class CallRows:
    """A reader's calls as spend rows built straight, each the tuple :func:`row_values` makes of
    the call's dict row (a store's or a task's thousands of calls: a dict per row, merged into a
    dict of every column, cost more than the rows): the ``defaults`` of every call, then each
    call's values of the columns ``heads``, in their order, and its usage. Each reader's test holds
    its rows built so equal to :func:`row_values` of its dict rows."""

    def __init__(self, heads: tuple[str, ...], **defaults: Any) -> None:
        self.base = row_values({"role": "assistant", **defaults}, 0, None)
        self.at = tuple(_AT[c] for c in heads)

    def row(self, values: tuple, usage: tuple | None = None) -> tuple:
        """A call of the ``heads`` ``values`` and the ``usage`` (input, output, cache read, cache
        write, reasoning, cost or None; None: no usage) as :func:`row_values` makes it: the total
        and context tokens the sum of the four parts, the usage ``message``'s, a cost recorded."""
        row = list(self.base)
        for i, v in zip(self.at, values):
            row[i] = v
        if usage is not None:
            inp, out, cache_read, cache_write, reasoning, cost = usage
            total = inp + out + cache_read + cache_write
            row[_USAGE:_USAGE + 7] = (inp, out, cache_read, cache_write, reasoning, total, total)
            row[_KIND] = "message"
            if cost is not None:
                row[_COST:_COST + 2] = (cost, "recorded")
        return tuple(row)


_AT = {c: i for i, c in enumerate(COLUMNS)}
# (CallRows.row sets input to context tokens, and cost and its source, as slices: their order in
# COLUMNS, which the readers' tests of CallRows hold)
_USAGE, _KIND, _COST = _AT["input_tokens"], _AT["usage_kind"], _AT["cost_usd"]


@dataclass
class SpendRows:
    """A usage report's read of many sessions of one store at once
    (:attr:`~sessionlab.agents.AgentSpec.spend_members`): their spend rows as tuples of
    :data:`COLUMNS` (:func:`row_values`), one session after the other, how many each has
    (``counts``), and their session facts as columns (``sessions``: ``session_id``, and any of
    ``name``, ``cwd``, ``agent_version``, ``parent_session_id``, ``root_session_id``)."""

    rows: list[tuple]
    counts: list[int]
    sessions: dict[str, list]
    issues: list = field(default_factory=list)
    row_names: tuple[str, ...] = COLUMNS


def text(v: Any) -> str | None:
    """``v`` stripped when it is a non-blank string, else None."""
    return v.strip() or None if isinstance(v, str) else None


def as_int(v: Any) -> int:
    """A token count as written (a number or numeric text), 0 when missing or not a number."""
    if type(v) is int:  # (most counts: no conversion)
        return v if v > 0 else 0
    if isinstance(v, bool):
        return 0
    if isinstance(v, (int, float)):
        return max(int(v), 0)
    if isinstance(v, str):
        try:
            return max(int(float(v)), 0)
        except ValueError:
            return 0
    return 0


#: the columns of a session's totals row as :func:`totals_values` gives it (the others are null, its
#: ``parent_id`` too: the row is the first of its session)
TOTALS = ("line_no", "entry_id", "type", "role", "timestamps", "model", "provider", "input_tokens", "output_tokens",
          "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "total_tokens", "context_tokens",
          "usage_kind", "cost_usd", "cost_source", "side_node")


def totals_values(entry_id: str, ts: str | None, model: str, provider: str | None, inp: int, out: int,
                  cache_read: int, cache_write: int, reasoning: int, cost: float | None) -> tuple:
    """A session's running totals as one row of :data:`TOTALS`, the first of its session: a side
    node of type ``usage`` (no message, no call) whose usage counts once (``usage_kind =
    'session_total'``). ``out`` includes ``reasoning``. A cost given is recorded; otherwise the
    totals are priced with their batch, at the model's base rates
    (:func:`sessionlab.pricing.price_totals`). A store's spend read keeps these tuples as they are
    (:class:`SpendRows` with ``row_names=TOTALS``); :func:`totals_row` is the same row as a dict."""
    source = "recorded" if cost is not None else None
    return (1, entry_id, "usage", None, ts, model, provider, inp, out, cache_read, cache_write, reasoning,
            inp + out + cache_read + cache_write, None, "session_total", cost, source, True)


def totals_row(entry_id: str, ts: str | None, model: str, provider: str | None, inp: int, out: int, cache_read: int,
               cache_write: int, reasoning: int, cost: float | None) -> dict:
    """:func:`totals_values` as a row of a reader's rows (:func:`totals_dict`)."""
    return totals_dict(totals_values(entry_id, ts, model, provider, inp, out, cache_read, cache_write, reasoning,
                                     cost))


def totals_dict(values: tuple) -> dict:
    """A totals row of :data:`TOTALS` as a row of a reader's rows (for :func:`agent_file`: its line
    is its place among them)."""
    row = dict(zip(TOTALS, values, strict=True))
    del row["line_no"]
    return row
