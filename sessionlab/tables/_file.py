"""One file to its tables: the fast path when it accepts the file, else the tolerant path.

This is the unit of work the loader runs in its process pool; it never raises (a file that cannot
be read becomes a ``read_error`` issue) so one bad file cannot stop the others.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import stat
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from .._arrow import compute as pc
from .._arrow import strings
from .._rowsof import RowsOf, Table, rebatched
from ..agents import detect as detect_agent
from ..agents import label_pi_format, opener, pi_format, reading_spend_only, sharing_stores
from ..pi.io.formats import HEAD_BYTES
from ..pi.io.issues import LineIssue
from ._arrays import parse_timestamps, with_pi_defaults
from ._cache_keys import stat_fields
from ._native import NativeBatch, native_available
from ._pi16 import resolve
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA
from ._values import check_values_all, raw_issue

__all__ = ["FileResult", "Loader", "load_file", "load_data", "load_chunk", "materialize"]

Loader = Literal["native", "msgspec", "objects", "agent"]

_ENTRY_NAMES = [f.name for f in ENTRY_SCHEMA]
_BLOCK_NAMES = [f.name for f in BLOCK_SCHEMA]


# The two slower paths, imported on first use: a load the C scanner takes whole never needs them
# (nor the object model they are built on).

def fast_columns(data: bytes, *, want_blocks: bool = False) -> dict[str, Any]:
    """The msgspec path (:func:`._fast.fast_columns`); raises :class:`._fast.Refused`."""
    from ._fast import fast_columns as columns

    return columns(data, want_blocks=want_blocks)


def parse_session_bytes(data: bytes, **options: Any) -> Any:
    """The object model's tolerant reader (:func:`sessionlab.pi.io.reader.parse_session_bytes`)."""
    from ..pi.io.reader import parse_session_bytes as parse

    return parse(data, **options)


@dataclass
class FileResult:
    """What one file gives: its entries (and blocks) tables, its session row and its issues."""

    path: str
    entries: pa.Table | None = Table()  # (a pa.Table, or a RowsOf set by a batch: see raw_table)
    blocks: pa.Table | None = Table()
    session: dict[str, Any] | None = None
    issues: list[LineIssue] = field(default_factory=list)
    # which path loaded the file: the C scanner, the msgspec path or the object model (None: unread)
    loader: Loader | None = None
    nbytes: int = 0  # the file's size as read (the cache keys its files by it)
    # set when the native scanner failed on the file (a bug: the loader warns once per load)
    native_error: str | None = None
    # the file's bytes, kept until :func:`materialize` has resolved the rows that need other lines
    # (the C scanner's batch keeps its own files' bytes until it has)
    data: bytes | None = field(default=None, repr=False)
    # the entry columns until :func:`materialize` turns a batch of files into one table
    pending: tuple[dict[str, Any], int, str | None] | None = field(default=None, repr=False)
    # what the load's cross-file pass needs of a Codex file (see ._agents.finish_agents)
    agent_extra: Any = field(default=None, repr=False)
    # what the agent's reader needs to read the file's new lines alone when it grows (the cache keeps it)
    agent_state: Any = field(default=None, repr=False)
    # an agent file's rows until :func:`._agents.materialize_agents` builds its batch's table
    agent_pending: Any = field(default=None, repr=False)
    # the file's stat as it was opened (:func:`._cache_keys.stat_fields`; None for a source the agent's
    # reader opens itself): its key and identity where the listing stated no file
    stat: tuple[int, int, int, int, int] | None = field(default=None, repr=False)
    # set on a result that stands for many sessions (a usage report's load: :mod:`._bundle`), whose
    # own path is its first session's and session None
    members: Any = field(default=None, repr=False)

    def raw_table(self, name: str) -> Any:
        """``entries`` or ``blocks`` as held: a table, a :class:`RowsOf` or None."""
        return self.__dict__.get(_HELD.get(name) or "_" + name)  # (asked of every file, several times a load)

    @property
    def fast(self) -> bool:
        """Whether a fast path (native or msgspec) loaded the file."""
        return self.loader in ("native", "msgspec")


_HELD = {"entries": "_entries", "blocks": "_blocks"}  # (where :class:`Table` keeps each)


def _parent_indices(sf: Any) -> list[int | None]:
    """Each entry's parent as an index into the file's entries: the later entry when an id repeats,
    never a seed leaf record (the tolerant path; the fast path gets it from one index lookup)."""
    last: dict[str, int] = {}
    for i, e in enumerate(sf.entries):  # one pass: a dict from id to its last position
        if isinstance(e.id, str) and e.type != "leaf":
            last[e.id] = i
    return [last.get(e.parent_id) if isinstance(e.parent_id, str) and e.type != "leaf" else None
            for e in sf.entries]


def materialize(results: list[FileResult]) -> None:
    """Build the entries tables of a batch of files at once: one Arrow array per column for the
    whole batch (far fewer conversions than one per file), sliced back per file (zero-copy)."""
    pend = [r for r in results if r.pending is not None]
    if not pend:
        return
    counts = [r.pending[1] for r in pend]  # type: ignore[index]
    owner = pa.array(np.repeat(np.arange(len(pend)), counts))
    arrays = []
    for f in ENTRY_SCHEMA:
        if f.name == "session_id":
            arrays.append(pc.take(pa.array([r.pending[2] for r in pend], pa.string()), owner))  # type: ignore[index]
        elif f.name == "file":
            arrays.append(pc.take(strings([r.path for r in pend]), owner))
        elif f.name == "timestamp":
            # strings are parsed for the whole batch at once; the msgspec path hands them over parsed
            ts = [r.pending[0]["timestamps"] for r in pend]  # type: ignore[index]
            if all(isinstance(t, list) for t in ts):
                arrays.append(parse_timestamps(list(chain.from_iterable(ts))))
            else:
                arrays.append(_concat([t if isinstance(t, pa.Array) else parse_timestamps(t) for t in ts]))
        else:
            pieces: list[Any] = [r.pending[0].get(f.name) for r in pend]  # type: ignore[index]
            pieces = [[None] * r.pending[1] if p is None else p for p, r in zip(pieces, pend)]  # type: ignore[index]
            if all(isinstance(p, list) for p in pieces):
                arrays.append(pa.array(list(chain.from_iterable(pieces)), f.type))
            else:
                arrays.append(_concat([
                    p if isinstance(p, pa.Array) and p.type == f.type else pa.array(p, f.type) for p in pieces]))
    table = with_pi_defaults(pa.Table.from_arrays(arrays, schema=ENTRY_SCHEMA))
    table = resolve(table, [(n, r.data, (r.session or {}).get("dialect") or "pi") for r, n in zip(pend, counts)])
    start = 0
    for r, n in zip(pend, counts):
        r.entries = RowsOf(table, start, n)
        r.pending = r.data = None
        start += n


def _concat(arrays: list[pa.Array]) -> pa.Array:
    """The arrays as one; a single array as it is (a huge file's columns are not copied again)."""
    return arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)


def _blocks_table(rows: list[tuple], session_id: str | None) -> pa.Table:
    cols = list(zip(*rows)) if rows else [()] * (len(_BLOCK_NAMES) - 1)
    arrays = [pa.array([session_id] * len(rows), pa.string())]
    arrays += [pa.array(list(c), f.type) for c, f in zip(cols, list(BLOCK_SCHEMA)[1:])]
    return pa.Table.from_arrays(arrays, schema=BLOCK_SCHEMA)


def _session_row(head: dict[str, Any], declared: dict[str, Any], path: str, n_issues: int, loader: Loader) -> dict:
    """The header of a session (and what a v4 file declares: name, leaf, tips); its facts and
    totals come from the entries table (:mod:`._facts`, :mod:`._build`)."""
    return {**head, "file": path, **declared, "issue_count": n_issues, "loader": loader, "agent": "pi"}


def load_file(path: str, want_blocks: bool = False) -> FileResult:
    """Load one file; never raises."""
    res = FileResult(path=path)
    data, _ = _read(res, want_blocks)
    return res if data is None else _stated(load_data(path, data, want_blocks), res.stat)


def _stated(res: FileResult, st: tuple | None) -> FileResult:
    """``res`` (made anew from a file's bytes) with the stat of the file as it was opened."""
    res.stat = st
    return res


class ReadBuffer:
    """One buffer files are read into in turn. A fresh ``bytes`` per file costs the kernel a page
    fault per 4 KB of it (in a fresh process as much time as the scan); the scanner copies what it
    keeps, and a file :class:`NativeBatch` needs again keeps the buffer (:meth:`detach`)."""

    def __init__(self) -> None:
        self.buf = bytearray(0)

    def detach(self) -> None:
        """Leave the current buffer to whoever holds a view of it; the next read takes a new one."""
        self.buf = bytearray(0)

    def read(self, fh: Any, head: bytes) -> memoryview:
        """The whole of ``fh``, whose first bytes ``head`` were read, as a view of the buffer (valid
        until the next read)."""
        need = max(len(head), os.fstat(fh.fileno()).st_size) + 1  # (+1: the end is seen in one read)
        if len(self.buf) < need:
            self.buf = bytearray(max(need, 2 * len(self.buf)))  # a new object: old views stay valid
        n = len(head)
        self.buf[:n] = head
        while True:
            with memoryview(self.buf) as view:
                k = fh.readinto(view[n:])
            if not k:
                return memoryview(self.buf)[:n]
            n += k
            if n == len(self.buf):  # the file grew while it was read
                self.buf = self.buf + bytearray(len(self.buf))


_THREAD = threading.local()  # a loader pool thread's ReadBuffer, freed when the thread ends


def keep_read_buffer() -> None:
    """Give the calling thread one :class:`ReadBuffer` for every chunk it loads (the loader pool's
    initializer: a buffer per chunk would grow, and be zeroed, again for each)."""
    _THREAD.buffer = ReadBuffer()


def _read(res: FileResult, want_blocks: bool = False,
          into: ReadBuffer | None = None) -> tuple[bytes | memoryview | None, str]:
    """A pi session file's bytes (a view of ``into`` when given) and its agent (pi, or one whose
    sessions are pi session files); no bytes when the file was another agent's (then read into
    ``res`` as it streams) or failed (a ``read_error`` issue in ``res``).
    The agent is decided from the first 64 KB, so a Claude Code file is never read whole."""
    try:
        agent = opener(res.path)
        if agent is not None:  # a source the agent's reader opens itself (a session in a database)
            _agents().load_agent_file(res, agent, None, want_blocks, defer=True)
            return None, agent
        fd, st = _open_regular(res.path)
        try:
            res.stat = stat_fields(st)
            head = _head(fd, st.st_size)
            agent = detect_agent(head, res.path)
            if agent != "pi" and not pi_format(agent):
                with _reader_file(fd, head) as fh:
                    _agents().load_agent_file(res, agent, fh, want_blocks, defer=True)
                return None, agent
            if len(head) < HEAD_BYTES:  # (the whole file; the head itself, not copied into ``into``: most
                return head, agent  # files are small)
            with _file_of(fd) as fh:  # (at the end of the head)
                if into is not None:
                    return into.read(fh, head), agent
                fh.seek(0)  # (read whole again rather than joined to the head: one copy of a huge file)
                return fh.read(), agent
        finally:
            os.close(fd)
    except Exception as exc:  # a file that fails must not stop the others: it becomes an issue
        _failed(res, exc)
        return None, "pi"


def read_agent_file(path: str, wanted: Any) -> tuple[str, Any, tuple, int] | None:
    """``path`` read by its agent's reader when it is a file of an agent that ``wanted(agent)``
    (never pi's, nor another agent's pi session file, nor a source a reader opens itself): its agent,
    the reader's :class:`~sessionlab.pi.io.formats.AgentFile`, its stat as opened
    (:func:`stat_fields`) and the bytes read, as :func:`_read` reads it; None for any other file
    (left unread past its first bytes). Raises what opening or reading it raised."""
    if opener(path) is not None:
        return None
    fd, st = _open_regular(path)
    try:
        head = _head(fd, st.st_size)
        agent = detect_agent(head, path)
        if agent == "pi" or pi_format(agent) or not wanted(agent):
            return None
        with _reader_file(fd, head) as fh:
            af, nbytes = _agents().read_agent(path, agent, fh)
        return agent, af, stat_fields(st), nbytes
    finally:
        os.close(fd)


def _file_of(fd: int) -> Any:
    """A binary file object of the open descriptor, which leaves it open when closed (no regular
    file's read waits: the descriptor, opened non-blocking, is made blocking for the object)."""
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb", closefd=False)


def _reader_file(fd: int, head: bytes) -> Any:
    """What an agent's reader reads an open file from, at its start: its first bytes when they are
    the whole file (read from memory, not again), else the file (:func:`_file_of`)."""
    if len(head) < HEAD_BYTES:
        return io.BytesIO(head)
    fh = _file_of(fd)
    fh.seek(0)
    return fh


def _agents() -> Any:
    """:mod:`._agents` (the other agents' readers), imported on first use, then found without the
    import machinery (asked once per file of another agent)."""
    mod = sys.modules.get(f"{__package__}._agents")
    if mod is None:
        from . import _agents as mod
    return mod


def _open_regular(path: str) -> tuple[int, os.stat_result]:
    """``path`` opened for reading (a descriptor) and its stat, without waiting on a FIFO or a
    device (opened non-blocking, then refused unless it is a regular file: one that was replaced
    since it was listed). The descriptor and a file object made of it read alike: no regular
    file's read blocks."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file (a FIFO, a device or a folder): skipped")
        return fd, st
    except BaseException:
        os.close(fd)
        raise


def _head(fd: int, size: int) -> bytes:
    """The first :data:`HEAD_BYTES` of the open file (all of a smaller one: ``size`` bytes, or
    fewer when it shrank), read from the descriptor without a file object."""
    head = os.read(fd, HEAD_BYTES)
    while len(head) < min(size, HEAD_BYTES):  # (a short read)
        more = os.read(fd, HEAD_BYTES - len(head))
        if not more:
            break
        head += more
    return head


def _failed(res: FileResult, exc: Exception) -> FileResult:
    res.entries = res.blocks = res.session = res.pending = res.loader = None
    res.issues = [LineIssue(res.path, 0, "read_error", f"{type(exc).__name__}: {exc}")]
    return res


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """The cyclic garbage collector paused: it would walk every object a load made so far, again and
    again, to find next to none (reference counting frees what a reader drops; what little is
    cyclic waits for the collector to resume)."""
    with _PAUSE_LOCK:  # (the collector is the process's: the first to pause it, the last to resume)
        if _PAUSED[0] == 0:
            _PAUSED[1] = gc.isenabled()
            gc.disable()
        _PAUSED[0] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _PAUSED[0] -= 1
            if _PAUSED[0] == 0 and _PAUSED[1]:
                _aged()
                gc.enable()


def _aged() -> None:
    """Every object the collector tracks moved to its oldest generation, without a walk: those made
    in a pause are young to it, and it would walk them all (a load's results, ~20 ms) at the first
    allocation after it resumes; they are collected with the oldest generation instead. Not done
    while the caller keeps objects frozen (``gc.freeze``): unfreezing would let them go too."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


_PAUSE_LOCK = threading.Lock()
_PAUSED: list = [0, False]  # (loaders in the collector's pause, whether it ran before the first)


def load_chunk(paths: list[str], want_blocks: bool = False, spend_only: bool = False, *,
               price: bool = True) -> list[FileResult]:
    """Load several files, their tables built once for the batch; never raises (``spend_only``: the
    readers of other agents may keep their spend rows alone, see :func:`~sessionlab.agents.reading_spend_only`;
    ``price``: whether calls without a cost are priced here, else left for the caller to price
    with :func:`._agents.price_rows`).

    With the native scanner, clean pi v3 files go through it (one :class:`NativeBatch` for the
    chunk); the files it refuses, and every file without it, go through :func:`load_data`. A
    scanner that raises (rather than refusing) has a bug: the files concerned take the other paths
    and carry ``native_error``, which :func:`~._load.load_files` turns into one warning.
    """
    # (readers make millions of short-lived dicts, none cyclic)
    with paused_collector(), sharing_stores(paths), reading_spend_only(spend_only):
        if not native_available():
            results = [load_file(p, want_blocks) for p in paths]
        else:
            results = _native_chunk(paths, want_blocks)
    materialize(results)
    label_other_agents(results)
    if price and any(r.loader != "agent" and (r.session or {}).get("agent", "pi") != "pi" for r in results):
        from ._agents import price_pi_format  # (OpenClaw's pi files: priced where they are read)

        price_pi_format(results)
    if any(r.agent_pending is not None for r in results):
        from ._agents import materialize_agents

        for res, exc in materialize_agents(results, price=price):  # (as a read that fails: a read_error issue)
            _failed(res, exc)
    check_values_all(results)
    return results


def label_other_agents(results: list[FileResult]) -> None:
    """The files pi's loader read for another agent whose sessions are pi session files (OpenClaw's)
    labelled with it, their session and the ``agent`` column of their entries (all at once)."""
    claimed = label_pi_format(results)
    if not claimed:
        return
    names = [a for _, a in claimed]

    def label(t: pa.Table, counts: list[int]) -> pa.Table:
        agent = pa.array(names, pa.string()).take(pa.array(np.repeat(np.arange(len(names)), counts)))
        return t.set_column(t.schema.get_field_index("agent"), "agent", agent)

    rebatched([r for r, _ in claimed], label)


def _native_chunk(paths: list[str], want_blocks: bool) -> list[FileResult]:
    """The files of a chunk through one :class:`NativeBatch` (those it refuses through :func:`load_data`)."""
    batch = NativeBatch(want_blocks)
    buffer = getattr(_THREAD, "buffer", None) or ReadBuffer()
    results = []
    for path in paths:
        res = FileResult(path=path)
        data, agent = _read(res, want_blocks, buffer)
        if data is None:
            results.append(res)
            continue
        res.nbytes = len(data)
        error: str | None = None
        try:
            accepted = batch.add(res, data, agent)
        except Exception as exc:  # a scanner bug (or out of memory): the slower paths load the file
            accepted, error = False, f"{type(exc).__name__}: {exc}"
        if not accepted:
            res = _stated(load_data(path, bytes(data), want_blocks), res.stat)
            res.native_error = error
        elif batch.kept_last and type(data) is memoryview:  # (a view of the buffer: it is the batch's now)
            buffer.detach()
        results.append(res)
    try:
        batch.finish()
    except Exception as exc:  # a scanner bug: the files it had accepted take the other paths
        error = f"{type(exc).__name__}: {exc}"
        redo = [i for i, r in enumerate(results) if r.loader == "native" and r.entries is None]
        for i in redo:
            results[i] = _stated(load_file(results[i].path, want_blocks), results[i].stat)
            results[i].native_error = error
    # a timestamp string the scanner took that is not a date: a bad_timestamp issue, which the slower
    # paths report (rare: the file is read again)
    results = [_stated(load_file(r.path, want_blocks), r.stat) if r.fast and _null_timestamps(r.raw_table("entries"))
               else r for r in results]
    return results


def _null_timestamps(held: Any) -> int:
    """The null timestamps of a file's entries as held (its batch's rows stay unsliced in the file)."""
    if held is None:
        return 0
    col = held.table.column("timestamp").slice(held.start, held.n) if type(held) is RowsOf else held.column("timestamp")
    return col.null_count


def load_data(path: str, data: bytes, want_blocks: bool = False) -> FileResult:
    """Load one file's bytes on the msgspec fast path, else the tolerant path; never raises."""
    res = FileResult(path=path, data=data, nbytes=len(data))
    try:
        agent = detect_agent(data[:HEAD_BYTES], path)
        if agent != "pi" and not pi_format(agent):
            res.data = None  # (the bytes are only kept for pi's cross-line columns, see materialize)
            from ._agents import load_agent_bytes
            return load_agent_bytes(res, agent, data, want_blocks)
        if not _load_msgspec(res, data, want_blocks):
            _load_objects(res, data, want_blocks)
    except Exception as exc:  # a file that fails must not stop the others: it becomes an issue
        _failed(res, exc)
    return res


def _load_msgspec(res: FileResult, data: bytes, want_blocks: bool) -> bool:
    """The msgspec path into ``res``; False when it refuses the file."""
    from ._fast import Refused

    try:
        out = fast_columns(data, want_blocks=want_blocks)
    except Refused:
        return False
    head, cols = out["header"], out["columns"]
    res.pending = (cols, len(cols["type"]), head["session_id"])
    if want_blocks:
        res.blocks = _blocks_table(out["blocks"], head["session_id"])
    res.session = _session_row(head, {}, res.path, 0, "msgspec")
    res.loader = "msgspec"
    return True


def _load_objects(res: FileResult, data: bytes, want_blocks: bool) -> None:
    """The tolerant path (the object model) into ``res``."""
    from ._objects import _str, block_rows, declared_facts, entry_rows

    sf = parse_session_bytes(data, path=res.path, on_bad_lines="skip")
    h = sf.header
    sid = _str(h.id) if h is not None else None
    rows = entry_rows(sf)
    odd = [raw_issue(res.path, sf.line_numbers[i], sf.entries[i].id, r["bad_values"])
           for i, r in enumerate(rows) if "bad_values" in r]  # (a loop over the few odd rows' keys)
    res.issues = sorted([*sf.issues, *odd], key=lambda i: i.line) if odd else list(sf.issues)
    cols = {name: [r.get(name) for r in rows] for name in _ENTRY_NAMES}
    cols["entry_index"] = list(range(len(rows)))
    cols["parent_index"] = _parent_indices(sf)
    cols["line_no"] = sf.line_numbers
    cols["timestamps"] = [_str(e.timestamp) for e in sf.entries]  # (a non-string is null)
    res.pending = (cols, len(rows), sid)
    if want_blocks:
        brows = block_rows(sf)
        res.blocks = _blocks_table([tuple(r[k] for k in _BLOCK_NAMES[1:]) for r in brows], sid)
    head = {"session_id": sid, "version": sf.version, "dialect": sf.dialect,
            "cwd": _str(h.cwd) if h else None, "parent_session": _str(h.parent_session) if h else None,
            "header_timestamp": _str(h.timestamp) if h else None}
    res.session = _session_row(head, declared_facts(sf), res.path, len(res.issues), "objects")
    res.loader = "objects"
