"""The issues table: every line-numbered problem found while loading."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the *_df functions only, when called
    import pandas as pd

import pyarrow as pa

from ._conventions import returns
from ._load import Source
from ._schema import ISSUE_COLUMNS
from .corpus import load, to_pandas

__all__ = ["issues_table", "issues_df"]


def issues_table(source: Source = None, *, progress: bool | None = None, max_workers: int | None = None,
                 agents: Sequence[str] | None = None) -> pa.Table:
    """Load sessions and return their line issues (nothing is warned or raised):
    ``load(source, on_bad_lines="skip").issues``.

    Issue kinds are those of :func:`sessionlab.read_session` plus ``read_error`` (line 0) for a
    file that could not be read at all (or is no regular file any more: a FIFO, a device) or a
    folder that could not be listed, and ``bad_value`` for an entry with a number no total can use
    (a cost that is not finite, a token count above 2**53 or no whole number: missing in the
    table, see ``sessionlab.tables._values``). Claude Code and Codex files add ``bad_field`` (a field of
    an unexpected JSON type), ``line_too_long`` (a line past the streaming limit, skipped unread;
    Claude Code's ``file-history-snapshot`` lines are skipped silently), ``missing_payload`` and
    ``unknown_type`` (Codex); a load adds one ``unknown_model`` per model without a price.

    Args:
        source: As for :func:`entries_table`.
        progress: As for :func:`entries_table`.
        max_workers: As for :func:`entries_table`.
        agents: As for :func:`entries_table`.

    Returns:
        A ``pyarrow.Table`` with columns:

{columns}

    Example:
        >>> issues_table("tests/data/pi/generated/synthetic").column("kind").to_pylist()[:2]
        ['missing_header', 'invalid_json']
    """
    return load(source, on_bad_lines="skip", progress=progress, max_workers=max_workers, agents=agents).issues


def issues_df(source: Source = None, *, progress: bool | None = None, max_workers: int | None = None,
              agents: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`issues_table` as a pandas DataFrame with Arrow-backed dtypes."""
    return to_pandas(issues_table(source, progress=progress, max_workers=max_workers, agents=agents))


issues_table = returns(ISSUE_COLUMNS)(issues_table)
