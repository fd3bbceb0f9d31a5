"""A SQLite store's sessions, listed whole or in parts.

A store holds an agent's thousands of sessions (Goose's ``sessions.db``). A load of the default
folders need not list them all before any is read: the store is cut into parts by its rows'
``rowid`` (``<db>#rows <first>..<last>``, :func:`database_parts`: two numbers asked of the store's
index) and each worker lists the sessions of the parts it is given (:func:`part_rows`) where it
reads them. Listed whole (:func:`database_members` with :data:`ROW_ORDER`) or part after part, the
sessions come in the same order: the rows', as the agent wrote them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._chain import store_connection
from ._spec import member_path

__all__ = ["PART_ROWS", "ROW_ORDER", "database_members", "database_parts", "part_rows", "split_part"]

PART_ROWS = 1024
"""The rowids a part spans: a part is a small share of a task (a task reads thousands of sessions)."""

ROW_ORDER = "rowid"
"""The order a store's sessions are listed in, whole or in parts."""

_PART = "#rows "


def _databases(folders: Sequence[Path], name: str) -> list[str]:
    """The file ``name`` in each folder where it is one, each file once (by its real path)."""
    out: list[str] = []
    seen: set[str] = set()
    for folder in folders:
        db = Path(folder) / name
        if db.is_file() and os.path.realpath(db) not in seen:
            seen.add(os.path.realpath(db))
            out.append(str(db))
    return out


def database_members(folders: Sequence[Path], name: str, sql: str,
                     errors: list[tuple[str, str]] | None = None) -> list[str]:
    """The sessions of the SQLite store ``name`` in each folder as member paths
    (``<db>#<session id>``, ids from ``sql``, in its order); a store found twice is read once, one
    that cannot be read goes to ``errors``."""
    import sqlite3

    out: list[str] = []
    for db in _databases(folders, name):
        try:
            with store_connection(db) as con:
                prefix = member_path(db, "")  # (``member_path`` joined once: a store lists thousands)
                out += [f"{prefix}{k}" for (k,) in con.execute(sql)]
        except sqlite3.Error as exc:
            if errors is not None:
                errors.append((db, f"{type(exc).__name__}: {exc}"))
    return out


def database_parts(folders: Sequence[Path], name: str, table: str,
                   errors: list[tuple[str, str]] | None = None) -> list[str]:
    """The SQLite store ``name`` in each folder (a store found twice: once) as parts of
    :data:`PART_ROWS` rowids of its ``table`` each, ``<db>#rows <first>..<last>``, in order; a store
    without a row has none, one that cannot be read goes to ``errors``."""
    import sqlite3

    rows = PART_ROWS
    out: list[str] = []
    for db in _databases(folders, name):
        try:
            with store_connection(db) as con:  # (the ends of the rowid index: no row is read)
                low, high = con.execute(f'SELECT min(rowid), max(rowid) FROM "{table}"').fetchone()
        except sqlite3.Error as exc:
            if errors is not None:
                errors.append((db, f"{type(exc).__name__}: {exc}"))
            continue
        if low is not None:
            out += [f"{db}{_PART}{a}..{min(a + rows - 1, high)}" for a in range(low, high + 1, rows)]
    return out


def split_part(part: str) -> tuple[str, int, int]:
    """``(db, first rowid, last rowid)`` of a part of :func:`database_parts`."""
    db, _, span = part.rpartition(_PART)
    first, _, last = span.partition("..")
    return db, int(first), int(last)


def part_rows(part: str, table: str, columns: str = "id") -> list[tuple]:
    """The ``columns`` (SQL, the session's id first) of the rows of a part's (:func:`database_parts`)
    ``table`` whose rowid is in the part's span, in the rows' order."""
    db, first, last = split_part(part)
    with store_connection(db) as con:
        sql = f'SELECT {columns} FROM "{table}" WHERE rowid BETWEEN ? AND ? ORDER BY {ROW_ORDER}'
        return con.execute(sql, (first, last)).fetchall()
