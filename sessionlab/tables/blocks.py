"""The blocks table: one row per content block of every message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the *_df functions only, when called
    import pandas as pd

import pyarrow as pa

from ..pi.io.issues import OnBadLines
from ._conventions import returns
from ._load import Source
from ._schema import BLOCK_COLUMNS
from .corpus import _load, to_pandas

__all__ = ["blocks_table", "blocks_df"]


def blocks_table(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
                 max_workers: int | None = None, agents: Sequence[str] | None = None) -> pa.Table:
    """Load the content blocks of message and custom_message entries into an Arrow table
    (``load(source).blocks``, in one read).

    For every message whose estimate is built from content (user, assistant, toolResult, custom),
    ``ceil(sum(chars) / 4)`` over its blocks equals the entry's ``est_tokens``.

    Args:
        source: As for :func:`entries_table`.
        on_bad_lines: As for :func:`entries_table`.
        progress: As for :func:`entries_table`.
        max_workers: As for :func:`entries_table`.
        agents: As for :func:`entries_table`.

    Returns:
        A ``pyarrow.Table`` with columns:

{columns}

    Example:
        >>> b = blocks_table("tests/data/pi/generated/sessions")
        >>> sorted(set(b.column("block_type").to_pylist()))
        ['image', 'text', 'thinking', 'toolCall']
    """
    return _load(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers,
                 want_blocks=True, agents=agents).blocks


def blocks_df(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
              max_workers: int | None = None,
              agents: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`blocks_table` as a pandas DataFrame with Arrow-backed dtypes."""
    return to_pandas(blocks_table(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers,
                                  agents=agents))


blocks_table = returns(BLOCK_COLUMNS)(blocks_table)
