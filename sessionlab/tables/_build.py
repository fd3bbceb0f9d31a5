"""The tables of a load, built from its per-file results (:class:`._file.FileResult`).

:class:`~.corpus.Corpus` calls these once each, on first access; the ``*_table`` functions are
that corpus's tables. Arrays are built through :mod:`sessionlab._arrow` (pyarrow's own conversions
import pandas).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .._arrow import arrow_indices, from_numpy, from_pylist, scalar, shown, strings, to_numpy
from .._arrow import compute as pc
from .._rowsof import joined_tables
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


_MOST_CHUNKS = 256
_SMALL_CHUNK = 64  # (rows: below this on average, the chunks cost more than one copy of the table)


def _joined(files: list[FileResult], name: str, schema: pa.Schema) -> pa.Table:
    """The files' tables ``name`` one after the other (a batch's consecutive files as one slice);
    many small tables left (thousands of short sessions) copied into one chunk per column, which
    every later pass over a column would otherwise join again."""
    tables = joined_tables([r.raw_table(name) for r in files])
    if not tables:  # (pa.nulls: no conversion of Python values, which would import pandas)
        return pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
    t = pa.concat_tables(tables)
    many_small = len(tables) > _MOST_CHUNKS and t.num_rows < _SMALL_CHUNK * len(tables)
    return t.combine_chunks() if many_small else t


def entries_of(files: list[FileResult]) -> pa.Table:
    """The entries tables of the files, one after the other."""
    return _joined(files, "entries", ENTRY_SCHEMA)


def blocks_of(files: list[FileResult]) -> pa.Table:
    """The blocks tables of the files (loaded with blocks), one after the other."""
    return _joined(files, "blocks", BLOCK_SCHEMA)


def issues_of(files: list[FileResult]) -> pa.Table:
    """Every line issue of the files, in file order."""
    issues = [i for r in files for i in r.issues]
    values = {"file": [shown(i.path) for i in issues], "line": [i.line for i in issues],
              "kind": [i.kind for i in issues], "message": [i.message for i in issues],
              "excerpt": [i.excerpt for i in issues], "entry_id": [i.entry_id for i in issues]}
    # (from buffers: pa.Table.from_pylist imports pandas, which a load does not need)
    return pa.Table.from_arrays([from_pylist(values[f.name], f.type) for f in ISSUE_SCHEMA], schema=ISSUE_SCHEMA)


def session_totals(entries: pa.Table, *, files: pa.Array | None = None, codes: np.ndarray | None = None) -> pa.Table:
    """Per-file aggregates of an entries table (one row per ``file``, in order of first appearance).

    Grouped in NumPy: ``Table.group_by`` imports ``pyarrow.dataset``, which imports pandas. Sums
    add the rows in row order (``np.bincount``), as a hash aggregate does."""
    if files is None or codes is None:
        from ._facts import file_codes

        codes, files = file_codes(entries)
    k = len(files)
    typ = entries.column("type")
    flags = {"is_entry": np.ones(entries.num_rows, np.int64)}
    for flag, value in (("is_message", "message"), ("is_compaction", "compaction"),
                        ("is_branch_summary", "branch_summary")):
        flags[flag] = to_numpy(pc.equal(typ, scalar(value)), False).astype(np.int64)
    out: dict[str, pa.Array] = {"file": files}
    for name, c, agg in _AGGREGATES:
        col = entries.column(c) if c in entries.column_names else flags[c]
        out[name] = _group_sum(codes, k, to_numpy(col, 0) if c not in flags else col) if agg == "sum" \
            else _group_extreme(codes, k, col, agg)
    return pa.table(out)


def _group_sum(codes: np.ndarray, k: int, v: np.ndarray) -> pa.Array:
    """Per group, the sum of ``v`` (integers exactly)."""
    if v.dtype.kind == "f":
        return from_numpy(np.bincount(codes, weights=v, minlength=k))
    if np.abs(v).sum() < 2**53:
        return from_numpy(np.bincount(codes, weights=v, minlength=k).astype(np.int64))
    acc = np.zeros(k, np.int64)
    np.add.at(acc, codes, v)
    return from_numpy(acc)


def _group_extreme(codes: np.ndarray, k: int, col: pa.ChunkedArray, agg: str) -> pa.Array:
    """Per group, the ``min`` or ``max`` of a column of integers or timestamps (null: no value)."""
    valid = to_numpy(pc.is_valid(col), False)
    v = np.asarray(to_numpy(col, 0), np.int64)[valid]
    ufunc, start = (np.minimum, np.iinfo(np.int64).max) if agg == "min" else (np.maximum, np.iinfo(np.int64).min)
    acc = np.full(k, start, np.int64)
    ufunc.at(acc, codes[valid], v)
    seen = np.bincount(codes[valid], minlength=k) > 0
    return from_numpy(acc, mask=~seen, type=col.type)


def sessions_of(files: list[FileResult], entries: pa.Table) -> pa.Table:
    """One row per session file: its header, its facts (:mod:`._facts`: name, leaf, leaves, fork
    points, calls) and totals over ``entries``."""
    from ._facts import (  # (the sessions table only: not a first entries table)
        FACT_COLUMNS,
        declared,
        file_codes,
        file_facts,
    )

    ok = [r for r in files if r.session is not None]
    codes, files = file_codes(entries)
    totals = session_totals(entries, files=files, codes=codes)
    facts = file_facts(entries, files=files, codes=codes).to_pydict()
    fact_at = {f: i for i, f in enumerate(facts["file"])}
    by_file = {f: i for i, f in enumerate(totals["file"].to_pylist())}
    at = np.array([by_file.get(shown(r.path), -1) for r in ok], np.int64)
    at = arrow_indices(np.maximum(at, 0), at < 0)  # each session file's row of totals (null: none)
    types = {c.name: c.type for c in SESSION_COLUMNS}
    cols: dict[str, pa.Array | pa.ChunkedArray] = {}
    for name, _, agg in _AGGREGATES:
        col = totals[name].take(at).cast(types[name])
        cols[name] = pc.fill_null(col, scalar(0, types[name])) if agg == "sum" and name.endswith("count") else col
    cols["header_timestamp"] = parse_timestamps(strings([(r.session or {}).get("header_timestamp") for r in ok]))
    empty = {"name": None, "leaf_id": None, "leaf_count": 0, "fork_count": 0, "call_count": 0, "has_name_entry": False}
    per_file = [declared(r.session or {}, {k: facts[k][fact_at[r.path]] for k in facts} if r.path in fact_at else empty)
                for r in ok]
    for fact in FACT_COLUMNS:
        cols[fact] = from_pylist([f[fact] for f in per_file], types[fact])
    for c in SESSION_COLUMNS:
        if c.name not in cols:
            cols[c.name] = from_pylist([(r.session or {}).get(c.name) for r in ok], c.type)
    return pa.table({c.name: cols[c.name] for c in SESSION_COLUMNS}, schema=SESSION_SCHEMA)


def labels_of(entries: pa.Table) -> pa.Table:
    """The labels in effect: per (file, target), the last ``label`` entry in file order, when its
    label is a non-empty string (an empty or null label clears it), as pi's ``getLabel``."""
    rows = np.nonzero(to_numpy(pc.equal(entries["type"], scalar("label")), False))[0]
    t = entries.take(arrow_indices(rows)).select(["session_id", "file", "target_id", "label"])
    has = np.nonzero(to_numpy(pc.is_valid(t["target_id"]), False))[0]
    key = np.zeros(len(has), np.int64)
    for name in ("file", "target_id"):
        enc = pc.dictionary_encode(t[name].take(arrow_indices(has)).combine_chunks(), null_encoding="encode")
        key = key * max(len(enc.dictionary), 1) + np.asarray(to_numpy(enc.indices), np.int64)
    _, last_of_key = np.unique(key[::-1], return_index=True)
    # the last label entry of each target, in file order
    t = t.take(arrow_indices(np.sort(has[::-1][last_of_key])))
    keep = pc.fill_null(pc.greater(pc.utf8_length(t["label"]), scalar(0, pa.int32())), scalar(False))
    return t.filter(keep).cast(schema_of(LABEL_COLUMNS))
