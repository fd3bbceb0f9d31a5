"""The entries table: one row per entry of every loaded session."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the *_df functions only, when called
    import pandas as pd

import pyarrow as pa

from ..pi.io.issues import OnBadLines
from ..pi.rules import DEFAULT_RULES, Rules
from ._cache import CacheOption
from ._conventions import returns
from ._load import Source
from ._schema import ENTRY_COLUMNS
from .corpus import load, to_pandas

__all__ = ["entries_table", "entries_df", "to_pandas"]


def entries_table(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
                  columns: list[str] | None = None, max_workers: int | None = None,
                  rules: Rules = DEFAULT_RULES, cache: CacheOption = None,
                  agents: Sequence[str] | None = None) -> pa.Table:
    """Load sessions into an Arrow table with one row per entry: ``load(source).entries``.

    The issues found are on the corpus (:func:`sessionlab.load`); use it to keep both.

    Args:
        source: A session file, a folder (searched recursively for ``*.jsonl``), a glob, or a list
            of these; each file is read as pi, Claude Code or Codex, whichever wrote it. ``None``:
            every default root that exists (pi's ``$PI_CODING_AGENT_DIR/sessions`` or
            ``~/.pi/agent/sessions``, Claude Code's ``projects`` folders, Codex's ``sessions`` and
            ``archived_sessions``; see :func:`sessionlab.tables.default_roots`).
        on_bad_lines: ``"warn"`` (one :class:`~sessionlab.BadLinesWarning` per damaged file),
            ``"raise"`` (:class:`~sessionlab.BadInputError`) or ``"skip"``. Damaged lines never
            stop the load: every valid entry is kept and every problem is in :func:`issues_table`.
        progress: ``True`` shows a tqdm bar (also in notebooks), ``False`` never; ``None`` shows one
            in a terminal when the load takes more than a second.
        columns: Keep only these columns (in this order).
        max_workers: Size of the worker pool (default: up to 2, one per core): threads with the
            native scanner, else processes (see :func:`sessionlab.load`).
        rules: Whose per-entry estimates: ``"pi-1.6"`` (default) or ``"pi-0.58"`` (no user-image
            tokens, no system role). Recorded in the table (:func:`table_rules`); the analysis
            functions follow it.
        cache: ``None`` (default): keep each file's rows in the cache folder
            (``$SESSIONLAB_CACHE_DIR``, else ``platformdirs.user_cache_dir("sessionlab")``) and on
            the next load read unchanged files from it and parse only the new lines of files that
            grew; a folder path: that folder; ``False``: no cache. The result is always what a
            fresh load returns. ``sessionlab cache clear`` empties it.
        agents: Keep only these agents' files (``"pi"``, ``"claude-code"``, ``"codex"``).

    Returns:
        A ``pyarrow.Table`` in file order, then line order, with columns:

{columns}

    Example:
        >>> t = entries_table("tests/data/pi/generated/sessions")
        >>> t.num_rows, t.column("type")[0].as_py()
        (138, 'model_change')
    """
    table = load(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers,
                 rules=rules, cache=cache, agents=agents).entries
    if columns is not None:
        table = table.select(columns)
    return table


def entries_df(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
               columns: list[str] | None = None, max_workers: int | None = None,
               rules: Rules = DEFAULT_RULES, cache: CacheOption = None,
               agents: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`entries_table` as a pandas DataFrame with Arrow-backed dtypes (same columns).

    Example:
        >>> df = entries_df("tests/data/pi/generated/sessions")
        >>> str(df["est_tokens"].dtype)
        'int64[pyarrow]'
    """
    return to_pandas(entries_table(source, on_bad_lines=on_bad_lines, progress=progress, columns=columns,
                                   max_workers=max_workers, rules=rules, cache=cache, agents=agents))


entries_table = returns(ENTRY_COLUMNS)(entries_table)
