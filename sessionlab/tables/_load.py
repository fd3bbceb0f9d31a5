"""Finding session files and loading many of them in parallel.

Sources: a file, a folder (searched recursively for ``*.jsonl``), a glob pattern, or a list of
these; ``None`` means every default root of the agents that exists (:func:`default_roots`): pi's
sessions folder, Claude Code's projects folders and Codex's sessions folders. ``agents=`` keeps the
files of some agents only. After the files are loaded, one pass over the Claude Code and Codex
files removes repeated usage and prices the calls (:func:`._agents.finish_agents`). Files are
loaded in chunks by a pool of one worker per core (at most ``max_workers``), about two chunks per
worker (4-32 MB each); small loads run in the calling thread, where a pool would cost more than it
saves. Results keep the order of the sorted file list.

With the native scanner the workers are threads: it releases the GIL while it scans, and nothing
has to travel back. Without it they are processes, and a worker sends a chunk's tables back as one
Arrow IPC stream per table kind (sliced per file on arrival) rather than pickling each file's
tables: that pickling cost more than the loading and made two workers no faster than one.
"""

from __future__ import annotations

import glob
import importlib
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, Union

import pyarrow as pa

from .._arrow import without_pandas
from .._rowsof import RowsOf, joined_tables, row_count
from ..agents import check_agents, jsonl_below, name_listed
from ..errors import NativeLoaderWarning, SourceNotFoundError
from ..pi.io.formats import HEAD_BYTES
from ..pi.io.issues import LineIssue, OnBadLines, check_on_bad_lines, report_issues
from . import _cache
from ._bundle import bundled, expanded, read_spend
from ._cache_keys import stat_key
from ._file import FileResult, keep_read_buffer, label_other_agents, load_chunk, paused_collector
from ._listed import listed_stores, load_stores
from ._members import file_count, file_paths, member_agents
from ._native import native_available
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA

__all__ = ["Source", "OnBadLines", "default_sessions_dir", "default_roots", "find_files", "load_files", "refresh",
           "LoadResult"]

Source = Union[str, os.PathLike, Sequence[str | os.PathLike], None]

_SERIAL_BYTES = 4_000_000  # below this, loading in-process beats starting workers
# files per task: about 1/(2 x workers) of the load (two tasks per worker balance the pool; every
# task builds its own tables, so fewer, larger ones cost less), within these bounds
_CHUNK_BYTES = (4_000_000, 32_000_000)
# what a file costs beyond its bytes (opened, its agent told, its session and slices made), counted
# as bytes when the load is cut into tasks: thousands of small files weigh as much as a few big ones
_FILE_BYTES = 12_000
# the default folders the early workers read are not stated by the listing from this many files on
# (their stats, one after the other, would delay every read: Droid's 362,048 took 3.5 s): the files
# are then cut into tasks by count, thousands to a task, whose sizes even out; at most this many
# files to a task (fewer, larger tasks: each builds its tables once)
_UNSTATED_FILES = 10_000
_UNSTATED_TASK_FILES = 8_000


def default_sessions_dir() -> Path:
    """pi's sessions folder: ``$PI_CODING_AGENT_DIR/sessions`` (``~`` expanded), else
    ``~/.pi/agent/sessions``."""
    from ..agents.pi import sessions_dir

    return sessions_dir()


def default_roots() -> dict[str, list[Path]]:
    """Each agent's default session folders (existing or not), as each agent's module declares them
    (:mod:`sessionlab.agents`): for example pi's ``$PI_CODING_AGENT_DIR/sessions`` (else
    ``~/.pi/agent/sessions``), Claude Code's ``projects`` folders of ``$CLAUDE_CONFIG_DIR`` (else
    ``~/.config/claude/projects`` and ``~/.claude/projects``), Codex's ``sessions`` and
    ``archived_sessions`` of ``$CODEX_HOME`` (else of ``~/.codex``)."""
    from .. import agents

    return agents.default_roots()


def _agent_of(path: str) -> str:
    from ..agents import detect, opener

    if (agent := opener(path)) is not None:
        return agent
    try:
        with open(path, "rb") as fh:
            return detect(fh.read(HEAD_BYTES), path)
    except OSError:
        return "pi"  # the load reports the read error


def _before_fork(prices: bool = True, agents: Sequence[str] | None = None) -> None:
    """Import what every worker would import on its first file (the readers of ``agents``, all by
    default; the price table unless the loading process prices their calls, see
    :func:`_load_chunk`), once, before the workers are forked from this process. (Another agent's
    reader, for a file of it among theirs, is imported on that file.)"""
    from .. import agents as registry
    from . import _agents  # noqa: F401

    for spec in registry.specs() if agents is None else map(registry.spec, agents):
        for ref in (spec.reader, spec.finish):
            if ref is not None:
                importlib.import_module(ref.partition(":")[0])
    importlib.import_module("msgspec")  # (what the readers decode JSON with: imported on a first record)
    if prices:
        _price_table()


def _price_table() -> None:
    """Load the price table's data (~0.2 s) where calls will be priced, before the first is."""
    from ..pricing import model_rates

    model_rates("claude-sonnet-4-5")


def _warm(prices: bool = True, agents: Sequence[str] | None = None) -> None:
    """An early worker's first task, run while the load lists its files: what it would otherwise
    do on its first file (import the readers of the load's ``agents`` and the price table;
    pyarrow's first conversion of Python values, told that there is no pandas:
    :func:`~sessionlab._arrow.without_pandas`)."""
    without_pandas()
    _before_fork(prices, agents)


def _early_pool(source: Source, agents: Sequence[str] | None, max_workers: int | None, reads: bool = True,
                prices: bool = True) -> Any:
    """Worker processes started before the files are listed, each warming up (:func:`_warm`),
    when the load will want processes: the default folders of agents other than pi (whose files
    are read by Python that holds the GIL). Their start overlaps the listing,
    and they load even a small load's files (warm by then: the parent, which would otherwise load
    them, would first import what they did). None otherwise, and when the load ``reads`` no file
    itself (a cache answers it). ``prices``: whether the workers price the calls they read."""
    from .. import agents as registry

    workers = max_workers if max_workers is not None else min(2, os.cpu_count() or 1)
    if not reads or source is not None or agents is None or workers <= 1 or not sys.platform.startswith("linux"):
        return None  # (elsewhere a worker starts by importing everything again: not for a small load)
    chosen = registry.check_agents(agents)  # (checked first: a misuse is reported before any process starts)
    if "pi" in chosen:
        return None
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
    for _ in range(workers):  # (each its load's readers alone: all of them were ~0.05 s a worker)
        pool.submit(_warm, prices, chosen)
    return pool


def _sources_uncached(agents: Sequence[str] | None) -> bool:
    """Whether every chosen agent keeps its sessions where no cache keeps them: sources its reader
    opens itself (a database's, :func:`_cached`) or stores a worker lists. Not all agents (None)."""
    from .. import agents as registry

    specs = [registry.spec(a) for a in registry.check_agents(agents)] if agents is not None else []
    return bool(specs) and all(s.opens is not None or s.stores is not None for s in specs)


def _mostly_agents(paths: list[str], sample: int = 16) -> bool:
    """Whether most of a sample of the files (spread over the list) are other agents' than pi's:
    their readers are Python that holds the GIL, so the pool's workers are processes."""
    step = max(1, len(paths) // sample)
    picked = paths[::step][:sample]
    return sum(_agent_of(p) != "pi" for p in picked) * 2 > len(picked)


def _expand(item: str | os.PathLike, errors: list[tuple[str, str]] | None = None) -> list[str]:
    from ..agents import opener

    if opener(str(item)) is not None:  # a session an agent's reader opens itself (`<database>#<id>`)
        return [str(item)]
    p = Path(item)
    if p.is_dir():
        return jsonl_below([p], errors if errors is not None else [])
    if p.is_file():
        return [str(p)]
    s = str(item)
    if any(ch in s for ch in "*?["):
        matched = sorted(f for f in glob.glob(s, recursive=True) if os.path.isfile(f))
        if not matched:
            raise SourceNotFoundError(f"no file matches the glob {s}")
        return matched
    raise SourceNotFoundError(f"no such file, folder or matching glob: {s}")


def find_files(source: Source = None, *, agents: Sequence[str] | None = None) -> list[str]:
    """The session files a source names, deduplicated, in order (folders and globs sorted).

    ``source=None`` reads every default root that exists (:func:`default_roots`). ``agents``
    (``"pi"``, ``"claude-code"``, ``"codex"``) keeps only those agents' files (decided from the
    first bytes of each file when ``source`` is given).

    Example:
        >>> find_files("tests/data/pi/real")  # doctest: +SKIP
        ['tests/data/pi/real/before-compaction.jsonl', 'tests/data/pi/real/large-session.jsonl']
    """
    return _find(source, agents)[0]


def _find(source: Source, agents: Sequence[str] | None, stats: dict[str, os.stat_result] | None = None, *,
          stat_below: int | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """:func:`find_files`, and the folders that could not be listed (path, error). A file reached
    twice (a symlink or hard link beside it, a folder named twice) is kept once, where first found.
    ``stats`` (when given) gets each file's stat as listed, for the load to size and key it.
    ``stat_below`` (the default folders only): when they hold that many files or more, none is
    stated, the paths only kept once each; the load's workers state each file as they open it
    (:func:`_first_copies` keeps a file reached twice once)."""
    from .. import agents as registry

    chosen = registry.check_agents(agents)
    errors: list[tuple[str, str]] = []
    found: list[str] = []
    if source is None:
        found = registry.default_files(chosen, errors=errors)
        if stat_below is not None and len(found) >= stat_below:
            return found, errors  # (each path once already)
    else:
        items: Iterable = [source] if isinstance(source, (str, os.PathLike)) else source
        for item in items:
            found += _expand(item, errors)
    seen: dict[str, None] = {}
    inodes: set[tuple[int, int]] = set()
    names: dict = {}  # (a store's folder listed once: see _no_such_file)
    for f in found:
        if "#" in f and _no_such_file(f, names):
            st = ident = None  # (a store's session: no file of its own)
        else:
            try:
                st = os.stat(f)
                ident = (st.st_dev, st.st_ino)
            except OSError:
                st = ident = None  # (gone since it was listed: its read reports it)
        if f in seen or ident in inodes:
            continue
        seen[f] = None
        if stats is not None and st is not None:
            stats[f] = st
        if ident is not None:
            inodes.add(ident)
    if source is None or agents is None:
        return list(seen), errors
    return [f for f in seen if _agent_of(f) in chosen], errors


def _no_such_file(path: str, names: dict) -> bool:
    """Whether ``path`` (a store's session, ``<store>#<id>``, unless a file has that name) names no
    file in its folder, from the folder's names listed once (``names``, by folder): a store's
    thousands of sessions, a failed stat each otherwise. False when the folder cannot be listed
    (then the stat answers)."""
    return name_listed(path, names) is False


def _load_chunk(paths: list[str], want_blocks: bool, spend_only: bool = False, listed_by: str | None = None) -> tuple:
    """A worker process's task: load files and pack the results for the trip back (see :func:`_pack`).
    A spend-only load's calls are priced on their way back (:func:`_unpack`): its workers never
    load the price table. ``listed_by``: the paths are that agent's stores, their sessions listed
    here (:func:`._listed.load_stores`)."""
    return _pack(_loaded(paths, want_blocks, spend_only, listed_by, price=not spend_only))


def _loaded(paths: list[str], want_blocks: bool, spend_only: bool, listed_by: str | None, *,
            price: bool = True) -> list[FileResult]:
    """A task's results; a usage report's (``spend_only``) with the sessions of the agents that allow
    it as bundles (:func:`._bundle.bundled`): what each session's own result costs on the way back
    and in every pass over the load is most of a small session's time."""
    spend = spend_only and not want_blocks

    def load(ps: list[str]) -> list[FileResult]:
        if spend:  # (a store's spend rows read together where its agent can)
            return read_spend(ps, lambda qs: load_chunk(qs, False, True, price=price), price=price)
        return load_chunk(ps, want_blocks, spend_only, price=price)

    results = load(paths) if listed_by is None else load_stores(paths, listed_by, load)
    return bundled(results) if spend else results


def _to_ipc(helds: list[Any], schema: pa.Schema) -> tuple[bytes, list[int], list[int]]:
    """The tables of a chunk as held (tables, :class:`RowsOf`, None) as one Arrow IPC stream without
    its columns that hold no value, each one's row count (-1 for None) and the positions of the
    columns left out (of tables of ``schema`` only: :func:`_from_ipc` puts them back as nulls).
    Most of an agent's columns are null (pi's compaction and context columns): sent whole, they
    were most of the bytes copied from buffer to buffer on the way, each copy into fresh memory."""
    present = joined_tables(helds)  # (a batch's consecutive files as one slice, never one per file)
    sink = pa.BufferOutputStream()
    empty: list[int] = []
    if present:
        # one batch for the chunk: a batch per file costs a message of ~56 columns' metadata each,
        # more than many small files' rows
        whole = present[0] if len(present) == 1 else pa.concat_tables(present).combine_chunks()
        if whole.num_rows and whole.schema.equals(schema):
            empty = [i for i, c in enumerate(whole.columns) if c.null_count == whole.num_rows]
            whole = whole.drop_columns([whole.column_names[i] for i in empty]) if empty else whole
        with pa.ipc.new_stream(sink, whole.schema) as writer:
            writer.write_table(whole)
    return sink.getvalue().to_pybytes(), [-1 if t is None else row_count(t) for t in helds], empty


def _from_ipc(data: bytes, counts: list[int], empty: list[int], schema: pa.Schema,
              change: Any = None) -> list[RowsOf | None]:
    """Each file's table of a chunk's IPC stream (:func:`_to_ipc`; ``schema``: its tables' whole
    schema, the columns left out null again, one array shared by those of a type), ``change``
    (when given) applied to the chunk's one table first."""
    if not data:
        return [None] * len(counts)
    table = pa.ipc.open_stream(data).read_all().combine_chunks()
    if empty:
        nulls: dict[pa.DataType, pa.Array] = {}
        for i in empty:
            t = schema.field(i).type
            if t not in nulls:
                nulls[t] = pa.nulls(table.num_rows, t)
        left_out = set(empty)
        arrays = [nulls[f.type] if i in left_out else table.column(f.name) for i, f in enumerate(schema)]
        table = pa.Table.from_arrays(arrays, schema=schema)
    if change is not None:
        table = change(table)
    out: list[RowsOf | None] = []
    start = 0
    for n in counts:  # each file's rows of the one table (sliced when asked for)
        out.append(None if n < 0 else RowsOf(table, start, n))
        start += max(n, 0)
    return out


def _pack(results: list[FileResult]) -> tuple:
    """Chunk results without their tables, plus the tables as IPC streams: pickling ~30 small
    Arrow arrays per file cost the pool more than the loading itself."""
    entries = _to_ipc([r.raw_table("entries") for r in results], ENTRY_SCHEMA)
    blocks = _to_ipc([r.raw_table("blocks") for r in results], BLOCK_SCHEMA)
    for r in results:
        r.entries = r.blocks = None
    return results, entries, blocks


def _unpack(packed: tuple, price: bool = False) -> list[FileResult]:
    """A worker's chunk back as results (``price``: its calls priced, see :func:`_load_chunk`)."""
    results, entries, blocks = packed
    if price:
        from ._agents import price_rows
    for r, e, b in zip(results, _from_ipc(*entries, ENTRY_SCHEMA, price_rows if price else None),
                       _from_ipc(*blocks, BLOCK_SCHEMA)):
        r.entries, r.blocks = e, b
    return results


def _chunks(paths: list[str], sizes: list[int], target: int) -> list[list[str]]:
    out: list[list[str]] = []
    cur: list[str] = []
    size = 0
    for p, n in zip(paths, sizes):
        cur.append(p)
        size += n
        if size >= target:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


def _size(p: str) -> int:
    try:
        return os.path.getsize(p)
    except OSError:
        return 0


def _sizes(paths: list[str], stats: dict[str, os.stat_result] | None = None) -> list[int]:
    """Each path's bytes (from ``stats`` where it has the path); a session in a store (``<db>#<id>``)
    its share of the store's, so that a store of many sessions is loaded in parallel chunks too."""
    known = stats if stats is not None else {}
    sizes: list[int] = []
    stores: dict[str, list[int]] = {}
    for i, p in enumerate(paths):
        st = known.get(p)
        # (a path the listing could not stat that has a ``#``: a store's session, no stat of its own)
        n = st.st_size if st is not None else 0 if stats is not None and "#" in p else _size(p)
        if n == 0 and st is None and "#" in p:
            stores.setdefault(p.rpartition("#")[0], []).append(i)
        sizes.append(n)
    for store, members in stores.items():  # (one stat per store, not per session)
        share = _size(store) // len(members) if os.path.isfile(store) else 0
        for i in members:
            sizes[i] = share
    return sizes


def _context() -> Any:
    # fork starts workers in milliseconds (the loader's modules are already imported); elsewhere
    # the platform default
    import multiprocessing

    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _progress_bar(progress: bool | None, total: int) -> object | None:
    if progress is False:
        return None
    if progress is None and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None  # auto: a terminal only (notebooks opt in with progress=True)
    try:
        if progress:
            from tqdm.auto import tqdm
        else:
            from tqdm import tqdm
    except ImportError:
        return None
    # delay: only loads that run long show a bar
    return tqdm(total=total, unit="file", desc="sessions", delay=0 if progress else 1.0, leave=False)


@dataclass
class LoadResult:
    """The per-file results of a load, in file order (``files``); what changed since the cache (or
    since the ``previous`` load of :func:`refresh`) is in ``changes``. ``results``: the results as
    loaded, where a usage report's load carries many sessions as one (:mod:`._bundle`)."""

    results: list[FileResult]
    source: Source = None
    options: dict = field(default_factory=dict)
    # each file's key (what :func:`refresh` compares), or a function that makes them on first use
    key_source: Any = field(default_factory=dict, repr=False)
    changes: _cache.Changes | None = None

    @property
    def keys(self) -> dict[str, dict]:
        """Each file's key: the cache's, else its stat as listed, or as its worker opened it when
        the listing stated none (made on first use: most loads are never refreshed)."""
        if callable(self.key_source):
            self.key_source = self.key_source()
        return self.key_source

    @property
    def files(self) -> list[FileResult]:
        """One result per file (a bundle's sessions each their own, see :func:`._bundle.expanded`)."""
        return expanded(self.results)

    @property
    def issues(self) -> list[LineIssue]:
        return [i for r in self.results for i in r.issues]


def _iter_results(paths: list[str], want_blocks: bool, max_workers: int | None,
                  stats: dict[str, os.stat_result] | None = None, spend_only: bool = False,
                  pool: Any = None, stated: bool = True, listed_by: str | None = None
                  ) -> Iterator[tuple[int, list[FileResult]]]:
    """Each task's count of ``paths`` and its results, in order."""
    workers = max_workers if max_workers is not None else min(2, os.cpu_count() or 1)
    # (files the listing did not state weigh alike: their bytes are not known before they are read)
    sizes = [n + _FILE_BYTES for n in _sizes(paths, stats)] if stated else [_FILE_BYTES] * len(paths)
    total = sum(sizes)
    low, high = _CHUNK_BYTES
    if stated and listed_by is None:
        target = min(high, max(low, total // (2 * max(workers, 1))))
    elif stated:  # (stores whose sessions a task lists first: their results come back sooner from more tasks)
        target = min(high, max(low // 2, total // (8 * max(workers, 1))))
    else:  # (sizes unknown: four tasks per worker and more, so that one of larger files does not hold the end)
        target = min(_UNSTATED_TASK_FILES * _FILE_BYTES, max(low // 2, total // (8 * max(workers, 1))))
    chunks = _chunks(paths, sizes, target)
    counts = [len(c) for c in chunks]
    if pool is not None:  # (started while the files were listed, see _early_pool: warm, even for a small load)
        yield from zip(counts, _pool_results(pool, chunks, want_blocks, spend_only, listed_by))
        return
    if workers <= 1 or len(paths) <= 1 or total < _SERIAL_BYTES:
        for chunk in chunks:
            yield len(chunk), _loaded(chunk, want_blocks, spend_only, listed_by)
        return
    if native_available() and listed_by is None and not _mostly_agents(paths):
        # the C scanner releases the GIL while it scans: threads share the work without the
        # processes' start-up and without shipping tables back
        with ThreadPoolExecutor(max_workers=min(workers, len(chunks)), initializer=keep_read_buffer) as tx:
            yield from zip(counts, tx.map(load_chunk, chunks, [want_blocks] * len(chunks), [spend_only] * len(chunks)))
        return
    from concurrent.futures import ProcessPoolExecutor  # (no scanner, or other agents' files)

    _before_fork(prices=not spend_only)

    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=_context(),
                             initializer=without_pandas) as ex:
        yield from zip(counts, _pool_results(ex, chunks, want_blocks, spend_only, listed_by))


def _pool_results(pool: Any, chunks: list[list[str]], want_blocks: bool, spend_only: bool,
                  listed_by: str | None = None) -> Iterator[list[FileResult]]:
    """The chunks' results from worker processes, in order (a spend-only load's calls priced here,
    each chunk's at once as it comes: the price table is loaded while the workers read)."""
    n = len(chunks)
    results = pool.map(_load_chunk, chunks, [want_blocks] * n, [spend_only] * n, [listed_by] * n)
    if spend_only and n:  # (no chunk, as when only stores are listed: the stores' chunks go first)
        _price_table()
    for packed in results:
        yield _unpack(packed, spend_only)


def load_files(source: Source = None, *, want_blocks: bool = False, on_bad_lines: OnBadLines = "warn",
               progress: bool | None = None, max_workers: int | None = None,
               cache: _cache.CacheOption = None, agents: Sequence[str] | None = None,
               spend_only: bool = False) -> LoadResult:
    """Load every file of ``source``; issues are warned, raised or kept per ``on_bad_lines``.

    ``max_workers``: the pool's size (default: up to 2, one per core). The workers are threads when
    the native scanner is built (it releases the GIL) and most files are pi's, else processes;
    small loads use none.

    ``cache``: ``None`` (default) or ``True`` keeps the files' tables in the cache folder
    (``$SESSIONLAB_CACHE_DIR``, else the user's cache folder) and reads unchanged files from it
    and only the new lines of grown ones; a path uses that folder; ``False`` reads everything.
    Loads with ``want_blocks`` are not cached. See :mod:`sessionlab.tables._cache`.

    ``agents``: keep only those agents' files (see :func:`find_files`).

    ``spend_only``: for a usage report. Unless blocks are wanted, the readers of the other agents
    keep their spend rows alone (see :func:`~sessionlab.agents.reading_spend_only`) for what no
    cache keeps: every file when there is no cache to fill (``cache=False``, or an empty
    ``$SESSIONLAB_CACHE_DIR``), else the sessions read every time (those of a database).
    """
    check_on_bad_lines(on_bad_lines)
    with paused_collector():  # (a load makes objects by the million, none in a cycle)
        return _load_files(source, want_blocks, on_bad_lines, progress, max_workers, cache, agents, spend_only)


def _load_files(source: Source, want_blocks: bool, on_bad_lines: OnBadLines, progress: bool | None,
                max_workers: int | None, cache: Any, agents: Sequence[str] | None,
                spend_only: bool = False) -> LoadResult:
    store = None if want_blocks else _cache.Store.for_source(cache, source)
    spend_only = spend_only and not want_blocks
    # (the files a cache keeps are read whole, to fill it; the sessions it never keeps need not be)
    spend_files = spend_only and store is None
    # (a cache answers for files; the sessions the chosen agents' readers open themselves, a
    # database's, are read every time, and for a usage report their spend rows alone)
    uncached = store is not None and source is None and _sources_uncached(agents)
    pool = _early_pool(source, agents, max_workers, store is None or uncached,
                       prices=not (spend_files or spend_only and uncached))
    bar = None
    opened: list[FileResult] | None = None  # (the files, when their workers' stats are their keys)
    try:
        stats: dict[str, os.stat_result] = {}  # (each file's stat as listed: its size and key)
        paths, unlisted, stores = _listing(source, agents, stats, pool)
        # (many files in the default folders the early workers read: they state each file as they
        # open it, rather than the listing all of them, one after the other, before any is read)
        stated = pool is None or len(paths) < _UNSTATED_FILES
        bar = _progress_bar(progress, len(paths) + sum(map(len, stores.values())))

        def load_whole(ps: list[str], spend: bool = spend_files, listed_by: str | None = None
                       ) -> Iterator[list[FileResult]]:
            # (stores, which no listing states, weigh alike too when there are many: their sizes
            # asked one by one, before any is read, cost more than an even share of them)
            sized = stated if listed_by is None else pool is None or len(ps) < _UNSTATED_FILES
            for n, chunk in _iter_results(ps, want_blocks, max_workers, stats, spend, pool, sized, listed_by):
                yield chunk
                if bar is not None:  # (a chunk of stores: a step per store, or part of one)
                    bar.update(file_count(chunk) if listed_by is None else n)  # type: ignore[attr-defined]

        if store is None:
            results = list(chain.from_iterable(load_whole(paths)))
            if not stated:
                results = opened = _first_copies(results)
        else:
            results = _cached(store, paths, load_whole, lambda ps: load_whole(ps, spend_only))
        # (the sessions of stores listed by reading them, after the files: never cached, so for a
        # usage report their spend rows alone)
        by_store = [r for a, ps in stores.items() for r in chain.from_iterable(load_whole(ps, spend_only, a))]
    finally:
        if bar is not None:
            bar.close()  # type: ignore[attr-defined]
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    # (folders that could not be listed: a read_error each, after the files, never cached)
    results = results + by_store + [_unlisted(p, msg) for p, msg in unlisted]
    _warn_native_errors(results)
    if store is not None:  # (every file a chunk loaded is labelled there: only those the cache grew are not)
        label_other_agents(results)
    if member_agents(results) - {"pi", None}:  # (other agents' files: their own passes, their prices)
        from ._agents import finish_agents
        finish_agents(results)
    _report(results, on_bad_lines)
    options = {"want_blocks": want_blocks, "on_bad_lines": on_bad_lines, "max_workers": max_workers, "cache": cache,
               "agents": agents, "spend_only": spend_only}
    # (without the cache, a file's key is its stat as listed, or as its worker opened it, before it
    # was read: a change while it was read shows as a change to the next refresh)
    if store is not None:
        keys: Any = store.keys
    elif opened is not None:
        keys = lambda: {r.path: stat_key(r.stat) if r.stat is not None else {}  # noqa: E731
                        for r in expanded(opened)}
    else:
        keys = lambda: {p: stat_key(st) if (st := stats.get(p)) is not None else {}  # noqa: E731
                        for p in chain(paths, file_paths(by_store))}
    return LoadResult(results, source, options, keys, store.changes if store is not None else None)


def _unlisted(path: str, msg: str) -> FileResult:
    return FileResult(path=path, issues=[LineIssue(path, 0, "read_error", f"cannot list the folder: {msg}")])


def _listing(source: Source, agents: Sequence[str] | None, stats: dict[str, os.stat_result], pool: Any
             ) -> tuple[list[str], list[tuple[str, str]], dict[str, list[str]]]:
    """The files of the load (:func:`_find`), the folders that could not be listed and, for a load
    of the default folders, the stores of the agents that list their sessions by reading them
    (:func:`._listed.listed_stores`), by agent: their sessions are listed by the workers that read
    them."""
    unlisted: list[tuple[str, str]] = []
    stores = listed_stores(agents, unlisted) if source is None else {}
    rest = agents if not stores else [a for a in check_agents(agents) if a not in stores]
    if rest is not None and not rest:
        return [], unlisted, stores
    paths, errors = _find(source, rest, stats, stat_below=None if pool is None else _UNSTATED_FILES)
    return paths, errors + unlisted, stores


def _first_copies(results: list[FileResult]) -> list[FileResult]:
    """The results of a load whose listing stated no file, a file reached twice (a symlink or hard
    link beside it, a folder named twice) kept once, where first found: by the device and inode
    its worker's stat gave (:attr:`FileResult.stat`)."""
    stats = chain.from_iterable([r.stat] if r.members is None else r.members.stats for r in results)
    idents = [st[:2] for st in stats if st is not None]
    if len(set(idents)) == len(idents):
        return results  # (no file twice: the usual load)
    seen: set[tuple[int, int]] = set()
    out: list[FileResult] = []
    for r in expanded(results):
        st = r.stat
        if st is not None:
            ident = st[:2]
            if ident in seen:
                continue
            seen.add(ident)
        out.append(r)
    return out


def _cached(store: _cache.Store, paths: list[str], load_whole: Any, load_own: Any) -> list[FileResult]:
    """The files through the cache (``load_whole`` reading those it lacks), and the sources an
    agent's reader opens itself (a session in a database: no file of its own to key) read every
    time by ``load_own`` (for a usage report: their spend rows alone), in ``paths``' order."""
    from ..agents import openers, sharing_stores

    with sharing_stores():  # (a store's schema checked once, not once per session of it)
        own = {p for p, (_, _, agent) in zip(paths, openers(paths)) if agent is not None}
    if not own:
        return store.load(paths, load_whole)
    if len(own) == len(paths):  # (a database's sessions alone: as read, a usage report's bundles too;
        # the cache, which keeps none of them, is left as it is)
        return list(chain.from_iterable(load_own(paths)))
    done = {r.path: r for r in store.load([p for p in paths if p not in own], load_whole)}
    done.update((r.path, r) for r in expanded(chain.from_iterable(load_own([p for p in paths if p in own]))))
    return [done[p] for p in paths]


def refresh(previous: LoadResult, **options) -> LoadResult:
    """Load ``previous``'s source again (same options unless given); ``changes`` of the result says
    which files were added, appended to, rewritten, removed or left unchanged since ``previous``.

    Example:
        >>> first = load_files("tests/data/pi/generated/sessions")  # doctest: +SKIP
        >>> later = refresh(first)  # doctest: +SKIP
        >>> later.changes  # doctest: +SKIP
        Changes(added=0, appended=1, rewritten=0, removed=0, unchanged=6)
    """
    new = load_files(previous.source, **{**previous.options, **options})
    new.changes = _cache.compare(previous.keys, new.keys, file_paths(new.results))
    return new


def _warn_native_errors(results: list[FileResult]) -> None:
    """One warning for the files the native scanner failed on (they were loaded the slow way)."""
    failed = [r for r in results if r.native_error is not None]
    if failed:
        first = failed[0]
        warnings.warn(f"the native scanner failed on {len(failed)} file(s) and the slower paths loaded them "
                      f"(first: {first.path}: {first.native_error}); please report this bug with the file",
                      NativeLoaderWarning, stacklevel=4)


def _report(results: list[FileResult], on_bad_lines: OnBadLines) -> None:
    for r in results:
        if not r.issues:
            continue
        if r.members is None:
            report_issues(r.path, r.issues, on_bad_lines, stacklevel=4)
            continue
        by_file: dict[str, list[LineIssue]] = {}  # (a bundle's issues: each of its files' own, in its order,
        for i in r.issues:  # as its files' own results give them: :func:`._bundle.expanded`)
            by_file.setdefault(i.path, []).append(i)
        for p in r.members.paths:
            if p in by_file:
                report_issues(p, by_file[p], on_bad_lines, stacklevel=4)
