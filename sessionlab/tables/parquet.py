"""Writing tables as a Parquet dataset.

Layout (partitioned by session): a folder of ``part-00000.parquet``, ``part-00001.parquet``... in
table order, each holding whole sessions (a session never spans two files) and at most about
``rows_per_file`` rows. There are no hive ``key=value`` folders, so no column moves into the path
and every reader gets the table back unchanged, column types included::

    pyarrow.parquet.read_table(path)              # or pyarrow.dataset.dataset(path)
    duckdb.sql(f"SELECT * FROM read_parquet('{path}/*.parquet')")
    polars.read_parquet(f"{path}/*.parquet")
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import SourceNotFoundError
from ._load import Source
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA, ISSUE_SCHEMA, SESSION_SCHEMA
from .corpus import Corpus
from .entries import entries_table

__all__ = ["to_parquet", "read_parquet"]


def _boundaries(table: pa.Table, rows_per_file: int) -> list[tuple[int, int]]:
    n = table.num_rows
    if n == 0:
        return [(0, 0)]
    key = "file" if "file" in table.column_names else ("session_id" if "session_id" in table.column_names else None)
    if key is None:
        starts = np.arange(0, n, rows_per_file)
    else:
        col = table.column(key).combine_chunks()
        codes = np.asarray(col.dictionary_encode().indices.fill_null(-1))
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    out: list[tuple[int, int]] = []
    begin = 0
    for s in list(starts[1:]) + [n]:  # one step per session: group whole sessions into files
        if s - begin >= rows_per_file:
            out.append((begin, int(s)))
            begin = int(s)
    if begin < n:
        out.append((begin, n))
    return out


def to_parquet(table_or_source: pa.Table | Corpus | Source, path: str | os.PathLike, *, rows_per_file: int = 1_000_000,
               compression: str = "zstd") -> list[Path]:
    """Write a table (or the entries table of a source) as a Parquet dataset folder.

    Existing ``part-*.parquet`` files in ``path`` are replaced. See the module doc for the layout.

    Args:
        table_or_source: Any sessionlab table, a :class:`~sessionlab.Corpus` (its entries), or a
            source for :func:`entries_table`.
        path: The dataset folder (created if needed).
        rows_per_file: Start a new file once a file holds this many rows (at a session boundary).
        compression: Parquet codec.

    Returns:
        The files written, in order.

    Example:
        >>> files = to_parquet("tests/data/pi/generated/sessions", "/tmp/entries.parquet")  # doctest: +SKIP
        >>> pyarrow.parquet.read_table("/tmp/entries.parquet").num_rows  # doctest: +SKIP
        138
    """
    if isinstance(table_or_source, Corpus):
        table = table_or_source.entries
    else:
        table = table_or_source if isinstance(table_or_source, pa.Table) else entries_table(table_or_source)
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.parquet"):
        old.unlink()
    files = []
    for i, (a, b) in enumerate(_boundaries(table, rows_per_file)):
        f = out / f"part-{i:05d}.parquet"
        pq.write_table(table.slice(a, b - a), f, compression=compression)
        files.append(f)
    return files


def _with_hive_agent(table: pa.Table, file: str) -> pa.Table:
    """A partitioned dataset keeps ``agent`` in its folder names (``agent=pi/...``), not in the
    files: an entries table gets that column back from them."""
    if "agent" in table.column_names or "agent" not in ENTRY_SCHEMA.names:
        return table
    parts = [p[len("agent="):] for p in file.replace("\\", "/").split("/") if p.startswith("agent=")]
    if not parts:
        return table
    from .._arrow import strings

    return table.append_column("agent", strings([parts[-1]] * table.num_rows))


def read_parquet(path: str | os.PathLike, *, storage_options: dict | None = None) -> pa.Table:
    """Read a dataset written by :func:`to_parquet` or :func:`sessionlab.dask.to_parquet` back.

    ``path`` is a dataset folder (every ``*.parquet`` below it, in sorted order: the files of
    :func:`to_parquet` come back in table order; hive partition folders such as ``agent=pi/date=...``
    are not turned into columns) or one Parquet file; an fsspec URL with ``storage_options`` works
    too. A table with the columns of a sessionlab table gets that table's schema back.

    Example:
        >>> read_parquet("/tmp/entries.parquet").num_rows  # doctest: +SKIP
        138
    """
    root = os.fspath(path)
    fs = None
    if "://" in root:
        from fsspec.core import url_to_fs

        fs, root = url_to_fs(root, **(storage_options or {}))
        files = [root] if fs.isfile(root) else sorted(f for f in fs.find(root) if f.endswith(".parquet"))
    else:
        files = [root] if os.path.isfile(root) else sorted(str(f) for f in Path(root).rglob("*.parquet"))
    tables = [_with_hive_agent(pq.read_table(f, filesystem=fs), f) for f in files]
    if not tables:
        raise SourceNotFoundError(f"no Parquet files in {os.fspath(path)}")
    table = pa.concat_tables(tables, promote_options="permissive")
    for schema in (ENTRY_SCHEMA, SESSION_SCHEMA, BLOCK_SCHEMA, ISSUE_SCHEMA):
        if set(table.column_names) == set(schema.names):
            return table.select(schema.names).cast(schema)
    return table
