"""Numbers a loaded file holds that no total can use: each becomes a ``bad_value`` line issue on its
entry and a missing value in the table, so every total stays finite and right for the rest.

- a token count above 2**53 (JavaScript's largest exact integer, beyond anything a model call
  uses; near 2**63 the sums would wrap to negative numbers) or, on the tolerant path, one that is
  not a whole number (``5.5``, ``1e308``, the string ``"NaN"``, which the loaders already keep
  as missing) is missing;
- a cost that is not a finite number (``1e400`` is infinity) or is beyond a trillion dollars is
  missing (infinity is not JSON, and one such value made every total infinite).

:func:`check_values` runs on every file a load reads, whichever path read it (the cache keeps the
result, issues included).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .._arrow import compute as pc
from .._arrow import from_numpy, to_numpy
from .._rowsof import joined_tables, row_count
from ..pi.io.issues import LineIssue

__all__ = ["TOKEN_COLUMNS", "MAX_TOKENS", "MAX_COST_USD", "check_values", "check_values_all", "has_bad_values",
           "raw_issue"]

TOKEN_COLUMNS = {"input_tokens": "input", "output_tokens": "output", "cache_read_tokens": "cacheRead",
                 "cache_write_tokens": "cacheWrite", "total_tokens": "totalTokens", "reasoning_tokens": "reasoning",
                 "cache_write_1h_tokens": "cacheWrite1h"}
_CONTEXT_PARTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens")
MAX_TOKENS = 2**53
MAX_COST_USD = 1e12


def _bad_tokens(col: pa.ChunkedArray) -> np.ndarray:
    v = to_numpy(col, 0)
    return (v > MAX_TOKENS) | (v < -MAX_TOKENS)


def _bad_cost(col: pa.ChunkedArray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return ~(np.abs(to_numpy(col, 0.0)) <= MAX_COST_USD)  # (NaN and infinities compare False)


def _bad_rows(t: pa.Table) -> dict[str, np.ndarray]:
    """The rows of each token count or cost column of ``t`` whose value :func:`check_values` nulls
    (only the columns that have one)."""
    bad: dict[str, np.ndarray] = {}
    for c in [*TOKEN_COLUMNS, "cost_usd"]:
        col = t.column(c)
        if col.null_count < len(col):
            rows = _bad_cost(col) if c == "cost_usd" else _bad_tokens(col)
            if rows.any():
                bad[c] = rows
    return bad


def has_bad_values(t: pa.Table) -> bool:
    """Whether any token count or cost of an entries table is one :func:`check_values` nulls."""
    return bool(_bad_rows(t))


def check_values_all(results: list) -> None:
    """:func:`check_values` for a batch of loaded files: every column screened once over the whole
    batch (a file's own pass runs only where a bad number is), so a clean load pays a few array
    passes, not a few per file."""
    loaded = [r for r in results if row_count(r.raw_table("entries"))]
    if not loaded:
        return
    ends = np.cumsum([row_count(r.raw_table("entries")) for r in loaded])
    flagged = np.zeros(len(loaded), bool)
    names = [*TOKEN_COLUMNS, "cost_usd"]
    # (no copy: the files' chunks, a batch's consecutive files as one slice)
    together = pa.concat_tables([t.select(names) for t in joined_tables([r.raw_table("entries") for r in loaded])])
    for rows in _bad_rows(together).values():
        flagged[np.unique(np.searchsorted(ends, np.flatnonzero(rows), side="right"))] = True
    for r in (r for r, f in zip(loaded, flagged) if f):  # (only the files that hold a bad number)
        check_values(r)


def check_values(res: Any) -> None:
    """Null the unusable numbers of a loaded file's entries (a ``FileResult``) and add one
    ``bad_value`` issue per entry that had any (in line order with the file's other issues)."""
    t = res.entries
    if t is None or t.num_rows == 0:
        return
    bad = _bad_rows(t)
    if not bad:
        return
    parts = [bad[c] for c in _CONTEXT_PARTS if c in bad]
    if parts:  # (context_tokens is made of those: missing with them, without an issue of its own)
        t = _mask(t, "context_tokens", np.logical_or.reduce(parts))
    found: dict[int, list[str]] = {}
    for c, rows in bad.items():
        values = t[c].to_pylist()
        for i in np.flatnonzero(rows).tolist():  # (only the few bad rows)
            what = f"usage.{TOKEN_COLUMNS[c]} {values[i]!r} is above 2**53" if c != "cost_usd" else \
                f"usage.cost.total {values[i]!r} is not a finite number of dollars"
            found.setdefault(i, []).append(what)
        t = _mask(t, c, rows)
    lines, ids = t["line_no"].to_pylist(), t["entry_id"].to_pylist()
    new = [LineIssue(res.path, lines[i], "bad_value", "; ".join(found[i]) + ": counted as missing", "", ids[i])
           for i in sorted(found)]
    res.entries = t
    res.issues = sorted([*res.issues, *new], key=lambda i: i.line)
    if res.session is not None:
        res.session["issue_count"] = (res.session.get("issue_count") or 0) + len(new)


def _mask(t: pa.Table, c: str, rows: np.ndarray) -> pa.Table:
    """``t`` with column ``c`` null at ``rows`` too."""
    valid = to_numpy(pc.is_valid(t[c]), False)
    values = to_numpy(t[c], 0.0 if c == "cost_usd" else 0)
    column = from_numpy(values, mask=rows | ~valid, type=t.schema.field(c).type)
    return t.set_column(t.schema.get_field_index(c), c, column)


def raw_issue(path: str, line: int, entry_id: Any, fields: list[tuple[str, Any]]) -> LineIssue:
    """The issue of an entry whose usage fields are present but no whole number (the tolerant path)."""
    what = "; ".join(f"usage.{name} {value!r} is not a whole number of tokens" for name, value in fields)
    return LineIssue(path, line, "bad_value", what + ": counted as missing", "",
                     entry_id if isinstance(entry_id, str) else None)
