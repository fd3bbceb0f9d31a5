"""A file's table that is, until asked for, some rows of its batch's table (:class:`RowsOf`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["RowsOf", "Table", "joined_tables", "row_count", "rebatched", "batch_tables"]


class RowsOf:
    """Rows ``start`` to ``start + n`` of a batch's table: what a file's table is until it is asked
    for. Thousands of small files' tables sliced one by one (and joined again) cost more than
    reading them; :func:`._build.entries_of` joins a batch's consecutive files as one slice."""

    __slots__ = ("table", "start", "n")

    def __init__(self, table: pa.Table, start: int, n: int) -> None:
        self.table, self.start, self.n = table, start, n

    def __reduce__(self) -> tuple:  # (pickled as the file's own rows, never the batch's)
        return _identity, (self.table.slice(self.start, self.n),)


def _identity(value: Any) -> Any:
    return value


class Table:
    """A table attribute of :class:`FileResult` that may hold a :class:`RowsOf` (sliced when read)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return None  # (the dataclass field's default)
        v = obj.__dict__.get(self.key)
        if type(v) is RowsOf:
            v = obj.__dict__[self.key] = v.table.slice(v.start, v.n)
        return v

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.key] = value


def row_count(held: Any) -> int:
    """The rows of a table as held (a table, a :class:`RowsOf` or None: 0), without slicing it."""
    if held is None:
        return 0
    return held.n if type(held) is RowsOf else held.num_rows


def batch_tables(helds: list[Any]) -> list[pa.Table]:
    """The tables that hold the rows of tables as held (each batch's whole table once, a table of
    its own as it is): every row of theirs, and maybe rows of files not given (a superset, to ask
    whether any row at all is of a kind before finding whose it is)."""
    seen: dict[int, pa.Table] = {}
    for held in helds:
        if held is not None:
            t = held.table if type(held) is RowsOf else held
            seen.setdefault(id(t), t)
    return list(seen.values())


def joined_tables(helds: list[Any]) -> list[pa.Table]:
    """Tables as held (tables, :class:`RowsOf`, None), with consecutive rows of one batch's table
    as one slice: what joined one after the other is the same table as all of them."""
    tables: list[pa.Table] = []
    run_table: Any = None  # (the batch rows joined so far: rows start to end of run_table)
    start = end = 0
    for held in helds:
        if type(held) is RowsOf:
            if held.table is run_table and held.start == end:
                end += held.n
                continue
            if run_table is not None:
                tables.append(run_table.slice(start, end - start))
            run_table, start, end = held.table, held.start, held.start + held.n
            continue
        if run_table is not None:
            tables.append(run_table.slice(start, end - start))
            run_table = None
        if held is not None:
            tables.append(held)
    if run_table is not None:
        tables.append(run_table.slice(start, end - start))
    return tables


def rebatched(results: list[Any], change: Any, name: str = "entries") -> None:
    """The tables ``name`` of ``results`` (files with one) changed at once: joined into one table,
    ``change(table, counts)`` (the same rows, in order; ``counts``: each file's rows) and each
    file given its rows of the result. A change per file costs thousands of small files more than
    the change itself."""
    todo = [r for r in results if r.raw_table(name) is not None]
    if not todo:
        return
    counts = [row_count(r.raw_table(name)) for r in todo]
    tables = joined_tables([r.raw_table(name) for r in todo])
    whole = tables[0] if len(tables) == 1 else pa.concat_tables(tables).combine_chunks()
    changed = change(whole, counts)
    start = 0
    for r, n in zip(todo, counts):
        setattr(r, name, RowsOf(changed, start, n))
        start += n
