"""What an agent declares: :class:`AgentSpec`, one per module of :mod:`sessionlab.agents`."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import ArgumentValueError

__all__ = ["AgentSpec", "home_path", "jsonl_below", "USAGE_COLUMNS", "null_usage", "member_path", "split_member",
           "one_member", "ToolNames", "NeedsOldLines", "spend_only", "reading_spend_only", "is_spend_row",
           "store_memo"]

USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
                 "context_tokens", "cost_usd", "reasoning_tokens", "cache_write_1h_tokens", "usage_kind",
                 "cost_source")
"""The entries columns of a row's usage: what a repeat of counted usage has nulled."""


def home_path(raw: str) -> Path:
    """A folder named by an environment variable, ``~`` expanded."""
    return Path(os.path.expanduser(raw.strip()))


def member_path(store: str | os.PathLike, key: str) -> str:
    """The path of one session of a store that holds many (a SQLite database): ``<store>#<key>``.
    An agent's ``files`` lists these; the load opens the store and its reader reads the session."""
    return f"{os.fspath(store)}#{key}"


# what a batch of sessions being read shares (:func:`._chain.sharing_stores`): ``stores`` (path ->
# connection), ``memo`` (question -> answer), ``members`` (store -> its sessions in the batch)
BATCH = threading.local()


def spend_only() -> bool:
    """Whether the batch being read wants its spend rows alone (:func:`reading_spend_only`)."""
    return getattr(BATCH, "spend_only", False)


@contextlib.contextmanager
def reading_spend_only(on: bool) -> Iterator[None]:
    """While a batch is read for a usage report with no cache to fill: readers may leave out every
    row but the spend rows (:func:`is_spend_row`: the calls and other usage rows), and leave those
    rows' columns outside their usage (tool counts, estimates, errors) unset. A usage report of such
    a load is the full load's (a test holds every agent's fixtures to it)."""
    before = spend_only()
    BATCH.spend_only = on
    try:
        yield
    finally:
        BATCH.spend_only = before


def is_spend_row(row: dict) -> bool:
    """Whether a reader's row is one a spend-only read keeps: an assistant row (a call, with usage
    or not) or a row with usage (a superset of what :func:`sessionlab.tables.call_mask` and
    ``usage_kind`` count)."""
    return row.get("role") == "assistant" or row.get("usage_kind") is not None or row.get("input_tokens") is not None


def split_member(path: str) -> tuple[str, str | None]:
    """``(store, key)`` of a :func:`member_path`; ``(path, None)`` for a path that is a file itself
    (asked several times per session: answered once per batch while one is read)."""
    if "#" not in path:
        return path, None
    return _remembered(path)


def _remembered(path: str, listed: bool = True) -> tuple[str, str | None]:
    """:func:`_split_member` of a path with a ``#``, once per batch while stores are shared."""
    memo = getattr(BATCH, "memo", None)
    if memo is None:
        return _split_member(path, listed)
    got = memo.get(("member", path))
    if got is None:
        got = memo[("member", path)] = _split_member(path, listed)
    return got


_LISTED_RUN = 16  # (a store's consecutive sessions from this many on: their folder listed once)


def split_members(paths: Sequence[str]) -> list[tuple[str, str | None]]:
    """:func:`split_member` of each path. While stores are shared, a store's next session
    (``<store>#<key>`` after another of the same store, a key with no folder in it) is answered from
    the one before, asking only whether its own name is a file of the folder (listed once per batch):
    a batch of a database's thousands of sessions asks no more of each. A store's few sessions
    (fewer than :data:`_LISTED_RUN` in a row: many small exports of one folder) each ask their own
    name instead, a failed stat, rather than their folder be listed whole."""
    out: list[tuple[str, str | None]] = []
    memo = getattr(BATCH, "memo", None)
    last, base, names = None, "", None  # (the store answered last, its name, its folder's names)
    runs = _run_lengths([p.rpartition("#")[0] for p in paths]) if memo is not None else None
    for i, p in enumerate(paths):
        if "#" not in p:
            out.append((p, None))
            continue
        prefix, _, key = p.rpartition("#")
        if prefix == last and key and "/" not in key and os.sep not in key and f"{base}#{key}" not in names:
            got = memo[("member", p)] = (prefix, key)  # type: ignore[index]  # (what split_member asks next)
            out.append(got)
            continue
        last = None
        if runs is not None and runs[i] < _LISTED_RUN:
            out.append(_remembered(p, listed=False))
            continue
        got = split_member(p)
        out.append(got)
        if memo is not None and got == (prefix, key) and key and "/" not in key and os.sep not in key:
            base, names = os.path.basename(prefix), _folder_names().get(os.path.split(p)[0])
            last = prefix if names is not None else None
    return out


def _run_lengths(keys: list[str]) -> list[int]:
    """The length of the run of equal consecutive ``keys`` each one is in."""
    out: list[int] = []
    i = 0
    while i < len(keys):
        j = i + 1
        while j < len(keys) and keys[j] == keys[i]:
            j += 1
        out += [j - i] * (j - i)
        i = j
    return out


def _split_member(path: str, listed: bool = True) -> tuple[str, str | None]:
    """:func:`split_member` asked anew (``listed``: while stores are shared, whether ``path`` exists
    is first looked up in its folder's names, see :func:`_may_exist`)."""
    if (not listed or _may_exist(path)) and os.path.exists(path):
        return path, None
    store, _, key = path.rpartition("#")
    # (a store's thousands of sessions: one stat of it per batch)
    return (store, key) if store_memo(("isfile", store), lambda: os.path.isfile(store)) else (path, None)


def _may_exist(path: str) -> bool:
    """Whether ``path`` may name an entry of its folder: while stores are shared, False when the
    folder's names (listed once per batch) do not hold it (a store's thousands of sessions, a failed
    stat each otherwise); True when they do or the folder cannot be listed (a stat answers)."""
    if getattr(BATCH, "memo", None) is None:
        return True
    return name_listed(path, _folder_names()) is not False


def _folder_names() -> dict[str, frozenset[str] | None]:
    """The batch's folders listed so far (folder -> its names, None when it cannot be listed)."""
    return store_memo(("folder names",), dict)


def name_listed(path: str, names: dict[str, frozenset[str] | None]) -> bool | None:
    """Whether ``path``'s name is among its folder's names, listed once per folder into ``names``
    (a store's thousands of ``<store>#<id>`` sessions ask the same folder); None when the folder
    cannot be listed."""
    folder, name = os.path.split(path)
    if folder not in names:
        try:
            names[folder] = frozenset(os.listdir(folder or "."))
        except OSError:
            names[folder] = None
    listed = names[folder]
    return None if listed is None else name in listed


def store_memo(key: Any, compute: Any) -> Any:
    """``compute()``, asked once per batch for ``key`` while stores are shared, else every time."""
    memo = getattr(BATCH, "memo", None)
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


class NeedsOldLines(Exception):
    """A new line of a grown file refers to an old line that its reader's saved state does not hold
    (the file is then read whole; see :attr:`AgentSpec.resume`)."""


class ToolNames(dict):
    """Tool call id -> tool name, noting which ids a result asked for: the calls still waiting for
    their result (:meth:`pending`) are what a reader resumed on the file's later lines needs. A
    resumed reader's miss is :class:`NeedsOldLines` (only the old lines know that call's name)."""

    def __init__(self, pending: dict[str, str] | None = None, *, resumed: bool = False) -> None:
        super().__init__(pending or {})
        self.asked: set[str] = set()
        self.resumed = resumed

    def get(self, key: Any, default: Any = None) -> Any:
        self.asked.add(key)
        if key in self:
            return self[key]
        if self.resumed:
            raise NeedsOldLines(key)
        return default

    def pending(self) -> dict[str, str]:
        """The calls no result has asked for yet."""
        return {k: v for k, v in self.items() if k not in self.asked}


def one_member(path: str) -> tuple[str, str]:
    """``(store, key)`` of a :func:`member_path`; a store given whole (it holds many sessions) is an
    :class:`~sessionlab.errors.ArgumentValueError` naming the form to use."""
    store, key = split_member(path)
    if key is None:
        raise ArgumentValueError("path", f"{path} holds many sessions: name one as {path}#<session id>, or load "
                                 "the agent's default folders")
    return store, key


def jsonl_below(roots: Sequence[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every ``*.jsonl`` regular file below the folders that exist, each folder's files sorted;
    symlinked folders are followed, each folder read once (a link back up is no loop); a folder that
    cannot be listed goes to ``errors`` as (path, error)."""
    out: list[str] = []
    for root in roots:
        if Path(root).is_dir():
            out += _walk(Path(root), errors if errors is not None else [])
    return out


def _walk(root: Path, errors: list[tuple[str, str]]) -> list[str]:
    """The ``*.jsonl`` regular files under ``root``, sorted; symlinked folders are followed, each
    folder read once (a link back up is no loop); a folder that cannot be listed goes to ``errors``.
    (``os.scandir``: an entry knows its kind, so a folder of thousands of files costs no stat each.)"""
    out: list[str] = []
    seen: set[tuple[int, int]] = set()

    def walk(folder: str) -> None:
        try:
            st = os.stat(folder)
        except OSError:
            return
        if (st.st_dev, st.st_ino) in seen:
            return  # reached again through a symlink
        seen.add((st.st_dev, st.st_ino))
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            errors.append((exc.filename or folder, f"{type(exc).__name__}: {exc.strerror or exc}"))
            return
        subfolders = []
        for e in entries:
            try:
                is_dir = e.is_dir()  # (a link to a folder followed, as os.walk(followlinks=True))
            except OSError:
                is_dir = False
            if is_dir:
                subfolders.append(e.path)
            elif e.name.endswith(".jsonl") and _is_file(e):
                out.append(e.path)
        for sub in subfolders:
            walk(sub)

    walk(str(root))
    return sorted(out)


def _is_file(e: os.DirEntry) -> bool:
    """Whether the entry is a regular file, a link followed (as ``os.path.isfile``: False on an error)."""
    try:
        return e.is_file()
    except OSError:
        return False


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec:
    """One agent, as data: the registry (:func:`sessionlab.agents.register`) drives format
    detection, ``load(agents=...)``, the default folders, the CLI's ``--agent`` choices, the
    call rule of the facts module and the docs from these fields.

    Attributes:
        name: The ``agent`` column's value (``"claude-code"``); also what ``agents=`` and ``--agent`` take.
        title: The agent's name for people (``"Claude Code"``).
        recognise: Whether one JSON object from the head of a file (one of its first lines) is
            this agent's. Detection asks every agent, in registry order, about each line.
        recognise_start: Whether a first line longer than the head (64 KB) is this agent's, from its
            first 4 KB (optional).
        recognise_file: Whether a file is this agent's from its path and first bytes, asked before
            the lines are (optional): for files that are no JSONL (a SQLite database, one JSON
            document per session), known by their names.
        roots: The agent's default session folders (existing or not), following its environment
            variables.
        env: The environment variables ``roots`` follows, for the docs.
        files: The session files below ``roots()``, ``files(folders, errors)`` (default: every
            ``*.jsonl``, :func:`jsonl_below`; a folder that cannot be listed goes to ``errors``).
        reader: ``"module:function"`` of the reader, ``read(path, fh) -> AgentFile`` (a binary file
            object in, the common columns out), imported on first use; None for pi, whose files
            take the pi loader's paths (the C scanner, msgspec, the object model).
        finish: ``"module:function"`` of a pass over all of a load's files of this agent (in load
            order) after reading, or None: ``finish(results)``.
        calls_need_usage: A call is an assistant line that carries usage (the others are the same
            response's streamed lines or replays); False: every assistant message is a call.
        priced: Calls without a recorded cost are priced from the price table (``cost_source``).
        side_kinds: The line kinds kept in the tree as side nodes (never leaves), for the docs.
        folder_doc: Where the files live, in words, for the docs.
        together: ``together(path, head) -> (key, parent key)``: files with one key, and a file
            with its parent key's files, need one another in a load's cross-file pass (so the Dask
            path keeps them in one partition); None: each file stands alone.
        opens: Whether a path that ``files`` lists is a source the reader opens itself rather than
            one file per session (a session in a SQLite database, ``<database>#<session id>``; a
            folder of files): the loader neither opens, detects nor caches it, and the reader gets
            ``fh=None``. None: every source is a file the loader opens. Of a store's session
            (:func:`member_path`) it may ask the store and whether the id holds a ``/``, not the
            id itself: a batch asks it once per store (:func:`~sessionlab.agents.opener`).
        resume: ``"module:function"``, ``resume(path, fh, state, lines_before) -> AgentFile | None``:
            the new lines of a file that grew, read alone with the ``state`` its reader left in the
            ``AgentFile`` (what the cache keeps), or None when they need the old lines (the file is
            then read whole). None: a grown file is read whole.
        members: ``"module:function"``, ``members(store, keys) -> list[AgentFile]``: the sessions of
            a store (``<store>#<key>`` for each key) read together, in the keys' order, each as
            :meth:`read` gives it alone; while a batch shares its stores, the load reads a store's
            sessions of the batch with one call (:func:`~sessionlab.agents.read_source`). None: one
            :meth:`read` per session.
        stores: The files whose sessions ``files`` lists by reading them (Copilot's exports: which
            sessions a file holds is known once it is parsed), ``stores(folders, errors)``, or None.
            A load of the default folders lists the stores alone and lists each one's sessions in
            the worker that reads them (:meth:`store_sessions`): each store parsed once, in parallel.
        store_sessions: ``"module:function"``, ``store_sessions(store) -> list[str]``: a store's
            sessions (:func:`member_path`), read to list them; the reads that follow in the same
            process take what it parsed until the agent's ``finish`` lets it go. Set with ``stores``.
        spend_members: ``"module:function"``, ``spend_members(store, keys) -> SpendRows``: a usage
            report's read of sessions of a store together (:class:`~sessionlab.agents._rows.SpendRows`:
            their spend rows and facts as :meth:`read_members` gives them, no object per session),
            carried as one result with those of the task's stores of the agent read just before
            (:mod:`sessionlab.tables._bundle`); None: they are read one by one.
        bundled: Whether a usage report's load may carry the sessions one task read as one result
            (:mod:`sessionlab.tables._bundle`: their rows one table, their session rows columns);
            None: when the agent has no ``finish`` (a pass that asks each file's own result).
    """

    name: str
    title: str
    recognise: Callable[[dict], bool]
    roots: Callable[[], list[Path]]
    recognise_start: Callable[[bytes], bool] | None = None
    recognise_file: Callable[[str, bytes], bool] | None = None
    env: tuple[str, ...] = ()
    files: Callable[[list[Path], list[tuple[str, str]]], list[str]] = jsonl_below
    reader: str | None = None
    finish: str | None = None
    calls_need_usage: bool = True
    priced: bool = True
    side_kinds: tuple[str, ...] = ()
    folder_doc: str = ""
    together: Callable[[str, bytes], tuple[Any, Any]] | None = None
    opens: Callable[[str], bool] | None = None
    resume: str | None = None
    members: str | None = None
    stores: Callable[[list[Path], list[tuple[str, str]]], list[str]] | None = None
    store_sessions: str | None = None
    spend_members: str | None = None
    bundled: bool | None = None

    @property
    def bundles(self) -> bool:
        """Whether the sessions of a task may be carried as one result (:attr:`bundled`)."""
        return self.finish is None if self.bundled is None else self.bundled

    def read(self, path: str, fh: IO[bytes] | None) -> Any:
        """The file read into the common columns (an ``AgentFile``)."""
        if self.reader is None:
            raise ArgumentValueError("agent", f"{self.name} files are read by the pi loader, not by a reader "
                                     "of the registry")
        return _resolve(self.reader)(path, fh)

    def read_members(self, store: str, keys: list[str]) -> list[Any]:
        """The sessions ``keys`` of ``store`` read together (:attr:`members`), else one by one."""
        if self.members is None:
            return [self.read(member_path(store, k), None) for k in keys]
        return _resolve(self.members)(store, keys)

    def read_spend(self, store: str, keys: list[str]) -> Any:
        """The spend rows of the sessions ``keys`` of ``store`` (:attr:`spend_members`)."""
        if self.spend_members is None:
            raise ArgumentValueError("agent", f"{self.name} reads no store's spend rows together")
        return _resolve(self.spend_members)(store, keys)

    def sessions_of(self, store: str) -> list[str]:
        """The sessions of one of its :attr:`stores`, listed by reading it (:attr:`store_sessions`)."""
        if self.store_sessions is None:
            raise ArgumentValueError("agent", f"{self.name} lists no store's sessions by reading it")
        return _resolve(self.store_sessions)(store)

    def resume_read(self, path: str, fh: IO[bytes], state: Any, lines_before: int) -> Any:
        """The lines after the first ``lines_before`` of a file that grew, read alone from ``fh``
        (at the first new line) with the ``state`` the reader left (an ``AgentFile`` of the new rows
        whose session facts are the whole file's), or None when they cannot be read alone."""
        if self.resume is None:
            return None
        return _resolve(self.resume)(path, fh, state, lines_before)

    def finish_load(self, results: list) -> None:
        if self.finish is not None:
            _resolve(self.finish)(results)


def _resolve(ref: str) -> Callable:
    module, _, name = ref.partition(":")
    # (a reader is resolved once per file: the loaded module without importlib's locks)
    return getattr(sys.modules.get(module) or importlib.import_module(module), name)


def null_usage(t: Any, drop: Any, source: Any = None) -> Any:
    """``t`` with the usage columns nulled on the rows of ``drop`` (a boolean mask), after each row
    took the usage of row ``source[row]`` (when given: an index array, ``arange`` for no move)."""
    for c, col in usage_nulled(t, drop, source).items():
        t = t.set_column(t.schema.get_field_index(c), c, col)
    return t


def usage_nulled(t: Any, drop: Any, source: Any = None) -> dict:
    """The usage columns of table ``t`` as :func:`null_usage` leaves them, each one array."""
    import numpy as np
    import pyarrow.compute as pc

    from .._arrow import arrow_indices, from_numpy, scalar

    mask = from_numpy(np.asarray(drop, np.bool_))
    take = None if source is None else arrow_indices(source)
    out = {}
    for c in USAGE_COLUMNS:
        col = t.column(c).combine_chunks()
        col = col if take is None else col.take(take)
        out[c] = pc.if_else(mask, scalar(None, col.type), col)
    return out
