"""The sessions table: one row per session file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the *_df functions only, when called
    import pandas as pd

import pyarrow as pa
import pyarrow.compute as pc

from ._load import OnBadLines, Source, load_files
from ._objects import parse_timestamps
from ._schema import ENTRY_SCHEMA, SESSION_COLUMNS, SESSION_SCHEMA, columns_doc
from .entries import to_pandas

__all__ = ["sessions_table", "sessions_df"]

# (session column, entries column, aggregation): totals computed over the entries table
_AGGREGATES = [
    ("first_timestamp", "timestamp", "min"),
    ("last_timestamp", "timestamp", "max"),
    ("input_tokens", "input_tokens", "sum"),
    ("output_tokens", "output_tokens", "sum"),
    ("cache_read_tokens", "cache_read_tokens", "sum"),
    ("cache_write_tokens", "cache_write_tokens", "sum"),
    ("total_tokens", "context_tokens", "sum"),
    ("cost_usd", "cost_usd", "sum"),
    ("entry_count", "is_entry", "sum"),
    ("message_count", "is_message", "sum"),
    ("compaction_count", "is_compaction", "sum"),
    ("branch_summary_count", "is_branch_summary", "sum"),
]


def session_totals(entries: pa.Table) -> pa.Table:
    """Per-file aggregates of an entries table (one row per ``file``)."""
    typ = entries.column("type")
    t = pa.table({
        "file": entries.column("file"),
        **{c: entries.column(c) for _, c, _ in _AGGREGATES if c in entries.column_names},
        "is_entry": pa.array([1] * entries.num_rows, pa.int64()),
        "is_message": pc.cast(pc.equal(typ, "message"), pa.int64()),
        "is_compaction": pc.cast(pc.equal(typ, "compaction"), pa.int64()),
        "is_branch_summary": pc.cast(pc.equal(typ, "branch_summary"), pa.int64()),
    })
    g = t.group_by("file", use_threads=False).aggregate(
        [(c, agg, pc.ScalarAggregateOptions(min_count=0)) if agg == "sum" else (c, agg) for _, c, agg in _AGGREGATES])
    return g.rename_columns({f"{c}_{agg}": name for name, c, agg in _AGGREGATES} | {"file": "file"})


def sessions_table(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
                   max_workers: int | None = None,
        agents: Sequence[str] | None = None) -> pa.Table:
    """Load sessions into an Arrow table with one row per session file.

    Token and cost totals cover every assistant entry of the file (all branches, entries before a
    compaction included), as pi's footer does. A file that could not be read has no row (see
    :func:`issues_table`); a file without a valid header has a row with a null ``session_id``.

    Args:
        source: As for :func:`entries_table`.
        on_bad_lines: As for :func:`entries_table`.
        progress: As for :func:`entries_table`.
        max_workers: As for :func:`entries_table`.

    Returns:
        A ``pyarrow.Table`` with columns:

{columns}

    Example:
        >>> s = sessions_table("tests/data/pi/generated/sessions")
        >>> s.num_rows
        7
    """
    res = load_files(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers, agents=agents)
    ok = [r for r in res.files if r.session is not None]
    tables = [r.entries for r in ok if r.entries is not None]
    entries = pa.concat_tables(tables) if tables else ENTRY_SCHEMA.empty_table()
    totals = session_totals(entries).to_pydict()
    by_file = {f: i for i, f in enumerate(totals["file"])}
    rows = []
    for r in ok:  # one row per session file
        row = dict(r.session)  # type: ignore[arg-type]
        i = by_file.get(r.path)
        for name, _, agg in _AGGREGATES:
            row[name] = totals[name][i] if i is not None else (0 if agg == "sum" and name.endswith("count") else None)
        rows.append(row)
    cols = {c.name: [row.get(c.name) for row in rows] for c in SESSION_COLUMNS}
    cols["header_timestamp"] = parse_timestamps(cols["header_timestamp"])  # type: ignore[assignment]
    return pa.table({c.name: pa.array(cols[c.name], c.type) if not isinstance(cols[c.name], pa.Array)
                     else cols[c.name] for c in SESSION_COLUMNS}, schema=SESSION_SCHEMA)


def sessions_df(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
                max_workers: int | None = None,
        agents: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`sessions_table` as a pandas DataFrame with Arrow-backed dtypes."""
    return to_pandas(sessions_table(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers,
                                    agents=agents))


sessions_table.__doc__ = sessions_table.__doc__.replace("{columns}", columns_doc(SESSION_COLUMNS))  # type: ignore[union-attr]
