"""The sessions table: one row per session file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the *_df functions only, when called
    import pandas as pd

import pyarrow as pa

from ..pi.io.issues import OnBadLines
from ._build import session_totals
from ._cache import CacheOption
from ._conventions import returns
from ._load import Source
from ._schema import SESSION_COLUMNS
from .corpus import load, to_pandas

__all__ = ["sessions_table", "sessions_df", "session_totals"]


def sessions_table(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
                   max_workers: int | None = None, cache: CacheOption = None,
                   agents: Sequence[str] | None = None) -> pa.Table:
    """Load sessions into an Arrow table with one row per session file: ``load(source).sessions``.

    Token and cost totals cover every assistant entry of the file (all branches, entries before a
    compaction included), as pi's footer does. A file that could not be read has no row (see
    :func:`issues_table`); a file without a valid header has a row with a null ``session_id``.

    Args:
        source: As for :func:`entries_table`.
        on_bad_lines: As for :func:`entries_table`.
        progress: As for :func:`entries_table`.
        max_workers: As for :func:`entries_table`.
        cache: As for :func:`entries_table`.
        agents: As for :func:`entries_table`.

    Returns:
        A ``pyarrow.Table`` with columns:

{columns}

    Example:
        >>> s = sessions_table("tests/data/pi/generated/sessions")
        >>> s.num_rows
        7
    """
    return load(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers, cache=cache,
                agents=agents).sessions


def sessions_df(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
                max_workers: int | None = None, cache: CacheOption = None,
                agents: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`sessions_table` as a pandas DataFrame with Arrow-backed dtypes."""
    return to_pandas(sessions_table(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers,
                                    cache=cache, agents=agents))


sessions_table = returns(SESSION_COLUMNS)(sessions_table)
