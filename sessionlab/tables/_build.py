"""The tables of a load, built from its per-file results (:class:`._file.FileResult`).

:class:`~.corpus.Corpus` calls these once each, on first access; the ``*_table`` functions are
that corpus's tables.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .._arrow import compute as pc
from ._arrays import parse_timestamps
from ._file import FileResult
from ._schema import (
    BLOCK_SCHEMA,
    ENTRY_SCHEMA,
    ISSUE_SCHEMA,
    LABEL_COLUMNS,
    SESSION_COLUMNS,
    SESSION_SCHEMA,
    schema_of,
)

__all__ = ["entries_of", "blocks_of", "issues_of", "sessions_of", "labels_of", "session_totals"]

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


def entries_of(files: list[FileResult]) -> pa.Table:
    """The entries tables of the files, one after the other."""
    tables = [r.entries for r in files if r.entries is not None]
    return pa.concat_tables(tables) if tables else ENTRY_SCHEMA.empty_table()


def blocks_of(files: list[FileResult]) -> pa.Table:
    """The blocks tables of the files (loaded with blocks), one after the other."""
    tables = [r.blocks for r in files if r.blocks is not None]
    return pa.concat_tables(tables) if tables else BLOCK_SCHEMA.empty_table()


def issues_of(files: list[FileResult]) -> pa.Table:
    """Every line issue of the files, in file order."""
    rows = [{"file": i.path, "line": i.line, "kind": i.kind, "message": i.message, "excerpt": i.excerpt,
             "entry_id": i.entry_id} for r in files for i in r.issues]
    return pa.Table.from_pylist(rows, schema=ISSUE_SCHEMA)


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


def sessions_of(files: list[FileResult], entries: pa.Table) -> pa.Table:
    """One row per session file: its header and file-order facts plus totals over ``entries``."""
    ok = [r for r in files if r.session is not None]
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


def labels_of(entries: pa.Table) -> pa.Table:
    """The labels in effect: per (file, target), the last ``label`` entry in file order, when its
    label is a non-empty string (an empty or null label clears it), as pi's ``getLabel``."""
    is_label = np.asarray(pc.fill_null(pc.equal(entries["type"], "label"), False).to_numpy(zero_copy_only=False),
                          bool)
    rows = np.nonzero(is_label)[0]
    t = entries.take(pa.array(rows, pa.int64())).select(["session_id", "file", "target_id", "label"])
    numbered = t.append_column("_row", pa.array(np.arange(t.num_rows), pa.int64()))
    numbered = numbered.filter(pc.is_valid(numbered["target_id"]))
    last = numbered.group_by(["file", "target_id"], use_threads=False).aggregate([("_row", "max")])
    # the last label entry of each target, in file order
    t = t.take(pa.array(np.sort(last["_row_max"].to_numpy()), pa.int64()))
    keep = pc.fill_null(pc.greater(pc.utf8_length(t["label"]), 0), False)
    return t.filter(keep).cast(schema_of(LABEL_COLUMNS))
