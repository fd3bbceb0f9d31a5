"""One load of many session files: :func:`load` returns a :class:`Corpus`.

The files are scanned once; the corpus then builds each table on first access from what that scan
gave (the entries table is the only one most analyses need). Every analysis function, plot and
widget takes a corpus or an entries table: :func:`as_entries` turns either (or a pandas view)
into the entries table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported by the *_df methods only, when called
    import pandas as pd

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

import pyarrow as pa

from .._arrow import compute as pc
from .._arrow import scalar, strings
from ..errors import ArgumentTypeError, ArgumentValueError
from ..pi.io.issues import OnBadLines
from ..pi.rules import DEFAULT_RULES, Rules
from ._build import blocks_of, entries_of, issues_of, labels_of, sessions_of
from ._bundle import expanded
from ._cache import CacheOption
from ._file import FileResult
from ._follow import POLL_INTERVAL, Backend, Follower, watched_paths
from ._load import Source, load_files
from ._members import file_paths
from ._pi16 import apply_rules
from ._schema import ENTRY_SCHEMA

__all__ = ["Corpus", "load", "watch", "labels_of", "as_entries", "select_sessions", "one_session", "session_ids",
           "session_mask", "SessionIds", "to_pandas"]

SessionIds = str | Sequence[str] | None
"""One session id, a list of them, or None for every session."""


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """The pandas view of a table, every column with an Arrow-backed dtype."""
    import pandas as pd

    return table.to_pandas(types_mapper=pd.ArrowDtype)


class Corpus:
    """The sessions of one :func:`load` (which makes it): entries, sessions, blocks, issues and
    labels as Arrow tables, each built on first access (``*_df()`` for the pandas views).

    Attributes:
        entries: One row per entry (see :func:`~sessionlab.entries_table` for the columns).
        sessions: One row per session file (:func:`~sessionlab.sessions_table`), with the path that
            loaded each file in its ``loader`` column.
        blocks: One row per content block (:func:`~sessionlab.blocks_table`). The scan that made the
            other tables leaves blocks out (they cost time and memory most analyses do not need),
            so the first access reads the files again for them.
        issues: Every line issue found (:func:`~sessionlab.issues_table`), whatever ``on_bad_lines``
            said.
        labels: The labels in effect: session_id, file, target_id, label (pi's ``getLabel`` for
            every labelled entry). Session names are the sessions table's ``name`` column.
        files: The paths loaded, in order.
        rules: The ``rules=`` of the load.
        agents: The ``agents=`` of the load (None: every agent).

    Example:
        >>> c = load("tests/data/pi/generated/sessions")
        >>> c.entries.num_rows, c.sessions.num_rows, c.issues.num_rows
        (138, 7, 0)
    """

    def __init__(self, results: list[FileResult], *, want_blocks: bool = False,
                 max_workers: int | None = None, rules: Rules = DEFAULT_RULES, loaded: Any = None,
                 agents: Sequence[str] | None = None) -> None:
        self._results = results
        self.rules = rules
        self._loaded = loaded  # the LoadResult (source, options, cache keys): what refresh() reloads
        self.changes = getattr(loaded, "changes", None)
        # the agents asked for (None: all); the files are already those agents' files
        self.agents = None if agents is None else ([agents] if isinstance(agents, str) else list(agents))
        self._has_blocks = want_blocks
        self._max_workers = max_workers

    def __repr__(self) -> str:
        return f"Corpus({len(self.files)} files, {self.entries.num_rows} entries)"

    @property
    def files(self) -> list[str]:
        return file_paths(self._results)

    @cached_property
    def entries(self) -> pa.Table:
        table = apply_rules(entries_of(self._results), self.rules)
        if getattr(self._loaded, "options", {}).get("spend_only"):
            return table  # (a usage report's load: it needs none of the arrays below, which wait for first use)
        for hook in _ON_ENTRIES:  # the forest arrays every analysis shares (sessionlab.tables.forest.at_load)
            hook(table)
        return table

    @cached_property
    def sessions(self) -> pa.Table:
        return sessions_of(expanded(self._results), self.entries)

    @cached_property
    def issues(self) -> pa.Table:
        return issues_of(self._results)

    @cached_property
    def labels(self) -> pa.Table:
        return labels_of(self.entries)

    @cached_property
    def blocks(self) -> pa.Table:
        if self._has_blocks:
            return blocks_of(self._results)
        # a second read, for the blocks only (issues were reported by the first)
        res = load_files(self.files, want_blocks=True, on_bad_lines="skip", progress=False,
                         max_workers=self._max_workers)
        return blocks_of(res.files)

    def refresh(self) -> Corpus:
        """The same source loaded again, through the cache: unchanged files are not read again and
        files that grew are read from where they ended. ``changes`` of the new corpus says which
        files were added, appended to, rewritten, removed or left unchanged since this one.

        Example:
            >>> later = load("tests/data/pi/generated/sessions", cache=False).refresh()
            >>> len(later.changes.unchanged)
            7
        """
        from ._load import refresh

        if self._loaded is None:
            raise ArgumentTypeError("corpus", "this corpus was not made by load(): nothing to refresh")
        new = refresh(self._loaded)
        return Corpus(new.files, want_blocks=self._has_blocks, max_workers=self._max_workers, rules=self.rules,
                      loaded=new)

    def follow(self, callback: Callable[[Corpus], object] | None = None, *, backend: Backend = "auto",
               interval: float = POLL_INTERVAL) -> Follower:
        """Keep this corpus current while agents write to its files: a background thread waits for
        a change to the source's files, then loads it again with :meth:`refresh` (unchanged files
        are not read again; a grown pi file parses only its new lines) and calls
        ``callback(new_corpus)``. Nothing runs while nothing changes.

        Args:
            callback: Called with each new corpus, in the follower's thread.
            backend: ``"watchfiles"`` (the operating system's file events; needs the ``live``
                extra), ``"poll"`` (a look at the files every ``interval`` seconds) or ``"auto"``
                (watchfiles when installed).
            interval: Seconds between two looks when polling.

        Returns:
            A running :class:`~sessionlab.tables.Follower` (its ``corpus`` is the newest; stop it
            with ``stop()`` or a ``with`` block).

        Example:
            >>> with load("sessions/").follow(lambda c: print(c.changes)) as f:  # doctest: +SKIP
            ...     f.wait(60)
        """
        if self._loaded is None:
            raise ArgumentTypeError("corpus", "this corpus was not made by load(): nothing to follow")
        paths = watched_paths(self._loaded.source, self._loaded.options.get("agents"))
        return Follower(self, callback, paths=paths, backend=backend, interval=interval)

    def entries_df(self) -> pd.DataFrame:
        return to_pandas(self.entries)

    def sessions_df(self) -> pd.DataFrame:
        return to_pandas(self.sessions)

    def blocks_df(self) -> pd.DataFrame:
        return to_pandas(self.blocks)

    def issues_df(self) -> pd.DataFrame:
        return to_pandas(self.issues)

    def labels_df(self) -> pd.DataFrame:
        return to_pandas(self.labels)


_ON_ENTRIES: list[Callable[[pa.Table], object]] = []


def on_entries(hook: Callable[[pa.Table], object]) -> None:
    """Call ``hook(table)`` on every entries table a :class:`Corpus` builds: the layers above the
    tables (:mod:`sessionlab.tables.forest`) build the per-table arrays every analysis shares there."""
    if hook not in _ON_ENTRIES:
        _ON_ENTRIES.append(hook)


def load(source: Source = None, *, on_bad_lines: OnBadLines = "warn", progress: bool | None = None,
         max_workers: int | None = None, rules: Rules = DEFAULT_RULES, cache: CacheOption = None,
         agents: Sequence[str] | None = None) -> Corpus:
    """Load session files once; the :class:`Corpus` gives every table of them.

    Args:
        source: A session file, a folder (searched recursively for ``*.jsonl``), a glob, or a list
            of these. ``None``: every agent's default folders that exist
            (:func:`~sessionlab.tables.default_roots`: pi's ``$PI_CODING_AGENT_DIR/sessions`` or
            ``~/.pi/agent/sessions``, Claude Code's ``projects``, Codex's ``sessions``).
        on_bad_lines: ``"warn"`` (one :class:`~sessionlab.BadLinesWarning` per damaged file),
            ``"raise"`` (:class:`~sessionlab.BadInputError`) or ``"skip"``. Damaged lines never
            stop the load: every valid entry is kept and every problem is in ``corpus.issues``.
        progress: ``True`` shows a tqdm bar (also in notebooks), ``False`` never; ``None`` shows one
            in a terminal when the load takes more than a second.
        max_workers: Size of the worker pool (default: up to 2, one per core). The workers are
            threads when the native scanner is built (it releases the GIL while it scans), else
            processes; loads under a few MB run in the calling thread.
        rules: Whose per-entry estimates: ``"pi-1.6"`` (default) or ``"pi-0.58"`` (no user-image
            tokens, no system role); recorded on the entries table (:func:`~sessionlab.table_rules`),
            whose rules every analysis then follows.
        cache: ``None`` (default): keep each file's rows in the cache folder
            (``$SESSIONLAB_CACHE_DIR``, else ``platformdirs.user_cache_dir("sessionlab")``); the next
            load reads unchanged files from it and parses only the new lines of files that grew; a
            folder path: that folder; ``False``: no cache. The result is always what a fresh load
            returns. ``sessionlab cache clear`` empties it.
        agents: Keep only these agents' files (``"pi"``, ``"claude-code"``, ``"codex"``; default:
            all). Each file's agent is detected from its first bytes.

    Returns:
        A :class:`Corpus`.

    Raises:
        FileNotFoundError: A path of ``source`` names no file, folder or matching glob.

    Example:
        >>> corpus = load("tests/data/pi/generated/sessions")
        >>> corpus.sessions.column("loader").to_pylist().count("objects")
        0
    """
    return _load(source, on_bad_lines=on_bad_lines, progress=progress, max_workers=max_workers, rules=rules,
                 cache=cache, agents=agents)


def watch(source: Source = None, *, backend: Backend = "auto", interval: float = POLL_INTERVAL,
          **load_options: Any) -> Iterator[Corpus]:
    """The corpus of ``source`` now, then again each time its files change (see :meth:`Corpus.follow`):
    a loop over it runs its body once per change and waits, using no CPU, in between.

    ``load_options`` are :func:`load`'s (``agents=``, ``cache=``...). Closing the iterator (leaving
    the loop) stops the watch.

    Example:
        >>> for corpus in watch("~/.pi/agent/sessions"):  # doctest: +SKIP
        ...     print(corpus.entries.num_rows)
    """
    corpus = load(source, **load_options)
    yield corpus
    with corpus.follow(backend=backend, interval=interval) as follower:
        seen = 0
        while follower.wait(since=seen):
            seen = follower.updates
            yield follower.corpus


def _load(source: Source, *, on_bad_lines: OnBadLines, progress: bool | None, max_workers: int | None,
          want_blocks: bool = False, rules: Rules = DEFAULT_RULES, cache: CacheOption = None,
          agents: Sequence[str] | None = None) -> Corpus:
    from ..pi.rules import check_rules

    check_rules(rules)
    res = load_files(source, want_blocks=want_blocks, on_bad_lines=on_bad_lines, progress=progress,
                     max_workers=max_workers, cache=cache, agents=agents)
    return Corpus(res.files, want_blocks=want_blocks, max_workers=max_workers, rules=rules, loaded=res,
                  agents=agents)


def as_entries(entries: Any) -> pa.Table:
    """The entries table of a :class:`Corpus`, an Arrow table or a pandas DataFrame (converted back
    to the entries schema's types)."""
    if isinstance(entries, Corpus):
        return entries.entries
    if isinstance(entries, pa.Table):
        return entries
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        raise ArgumentTypeError("entries", "entries must be a Corpus or a pyarrow.Table") from None
    if isinstance(entries, pd.DataFrame):
        table = pa.Table.from_pandas(entries, preserve_index=False)
        for i, name in enumerate(table.column_names):  # back to the entries schema's types
            if name in ENTRY_SCHEMA.names:
                want = ENTRY_SCHEMA.field(name).type
                if table.schema.field(name).type != want:
                    table = table.set_column(i, name, pc.cast(table[name], want))
        return table
    raise ArgumentTypeError("entries", f"entries must be a Corpus, a pyarrow.Table or a pandas.DataFrame, "
                    f"not {type(entries).__name__}")


def session_ids(session_id: SessionIds) -> list[str] | None:
    """``session_id`` as a list of ids (None: every session)."""
    if session_id is None:
        return None
    if isinstance(session_id, str):
        return [session_id]
    if isinstance(session_id, (pa.Array, pa.ChunkedArray)):
        return session_id.to_pylist()
    ids = list(session_id)
    if not all(isinstance(s, str) for s in ids):
        raise ArgumentTypeError("session_id", "session_id must be a session id, a list of them, or None")
    return ids


def session_mask(table: pa.Table, session_id: SessionIds) -> pa.Array | None:
    """Which rows belong to the sessions named (None when every row does)."""
    ids = session_ids(session_id)
    if ids is None:
        return None
    mask = pc.is_in(table["session_id"], value_set=strings(ids))
    return pc.fill_null(mask, scalar(False))


def select_sessions(entries: Any, session_id: SessionIds) -> pa.Table:
    """The entries table of ``entries`` (see :func:`as_entries`), only the rows of the sessions
    named by ``session_id`` (one id or a list; None: all of them)."""
    table = as_entries(entries)
    mask = session_mask(table, session_id)
    return table if mask is None else table.filter(mask)


def one_session(entries: Any, session_id: SessionIds = None) -> pa.Table:
    """The rows of one session: ``session_id`` (or a list holding just it), or, when None, the only
    session of the table.

    Raises:
        EntryNotFoundError: No rows for ``session_id``.
        ValueError: Several sessions named or, with None, in the table; or the session is in
            several files.
    """
    from ..errors import EntryNotFoundError

    table = as_entries(entries)
    ids = session_ids(session_id)
    if ids is None:
        ids = pc.unique(table["session_id"]).to_pylist()
        if len(ids) != 1:
            raise ArgumentValueError("session_id", f"the table holds {len(ids)} sessions; pass session_id")
    elif len(ids) != 1:
        raise ArgumentValueError("session_id", f"this function draws one session; session_id names {len(ids)}")
    mask = session_mask(table, ids)
    rows = table.filter(mask) if mask is not None else table
    if rows.num_rows == 0:
        raise EntryNotFoundError(f"no entries for session {ids[0]!r}")
    if "file" in rows.column_names and len(pc.unique(rows["file"])) > 1:
        raise ArgumentValueError("session_id",
                                 f"session {ids[0]!r} is in several files; filter the table by file first")
    return rows
