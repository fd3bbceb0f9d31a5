"""Session storages: where a session's entries live (the seed's ``SessionStorage``).

:class:`InMemorySessionStorage` keeps entries in a list plus an id index;
:class:`JsonlSessionStorage` does the same and persists every append to a JSONL file at once.
Both answer the seed's queries the same way (a property test checks it):

- the leaf follows pi: after each append it is the new entry; on load it is the last entry in
  file order, except that a seed ``leaf`` record moves it to its target;
- labels and the session name are global, last entry in file order wins (pi's rule); an empty
  ``session_info`` name does not clear the name (pi 0.58.3);
- a duplicate id: the later entry wins in lookups (as in pi);
- every walk up the parent chain is guarded: a loop raises :class:`~sessionlab.errors.CycleError`
  instead of hanging (pi hangs);
- a ``leaf`` record whose target is not in the file (the reader reports it) leaves the leaf where pi
  puts an unknown leaf: on the last entry.

Appending checks the entry first and stores nothing when it fails: it needs a new string id
(:class:`~sessionlab.errors.InvalidEntryError` otherwise), a parent that is an entry of the session
(:class:`~sessionlab.errors.EntryNotFoundError`), and values JSON holds as they are
(:class:`~sessionlab.errors.UnstorableValueError` names the field). The entry kept in memory is
the one its JSON line reads back as (a tuple in ``details`` is a list, as after a reload), so
memory and file agree after every append. A deleted session refuses appends
(:class:`~sessionlab.errors.SessionDeletedError`); a JSONL file changed by someone else since this
storage last read or wrote it refuses them too (:class:`~sessionlab.errors.StaleSessionError`):
the new entry's parent would be an outdated leaf.

Persisting ``set_leaf_id`` (used by ``Session.move_to``): a ``leaf`` record whose ``targetId`` (or
``target_id``) is the new leaf and whose parent is that same entry. sessionlab reads it as a leaf
pointer. pi keeps entries of unknown types as they are and takes the last line as its leaf; its
branch runs through the target and the record adds nothing to the context, so pi resumes on the
same branch with the same context.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .._jsjson import js_parse, js_stringify
from ..errors import (
    ArgumentValueError,
    CycleError,
    EntryNotFoundError,
    InvalidEntryError,
    SessionDeletedError,
    SessionError,
    StaleSessionError,
)
from ._validate import ENTRY_CLASSES, check_json, check_str, check_type
from .io.dialects import Dialect, entry_from_dict, entry_to_dict
from .io.migrate import CURRENT_VERSION
from .io.reader import OnBadLines, SessionFile, last_node_id, parse_session_bytes
from .io.writer import SessionWriter, check_unchanged, locked_file, same_file, write_session
from .model import entries as E
from .model import messages as M
from .rules import session_name

__all__ = [
    "SessionStats",
    "SessionStorage",
    "InMemorySessionStorage",
    "JsonlSessionStorage",
    "create_timestamp",
    "new_session_header",
    "require_node",
]


def create_timestamp() -> str:
    """Now as pi writes it: ISO-8601 UTC with milliseconds, e.g. ``2026-01-15T10:00:01.000Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_session_header(
    *, session_id: str | None = None, cwd: str | None = None, parent_session: str | None = None,
    metadata: dict[str, Any] | None = None, timestamp: str | None = None,
) -> E.SessionHeader:
    """A fresh version-3 header (a UUID-4 session id unless given; ``cwd`` defaults to the current one)."""
    return E.SessionHeader(
        version=CURRENT_VERSION,
        id=session_id or str(uuid.uuid4()),
        timestamp=timestamp or create_timestamp(),
        cwd=cwd if cwd is not None else os.getcwd(),
        parent_session=parent_session,
        metadata=metadata,
    )


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Counts and totals over a set of entries.

    Token totals and cost sum the ``usage`` of assistant messages (pi's footer rule).
    """

    entry_count: int = 0
    entries_by_type: dict[str, int] = field(default_factory=dict)
    message_count: int = 0
    messages_by_role: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost_total: float = 0.0

    @classmethod
    def of(cls, entries: Iterable[E.SessionEntry]) -> SessionStats:
        by_type: Counter[str] = Counter()
        by_role: Counter[str] = Counter()
        tok = [0, 0, 0, 0, 0]
        cost = 0.0
        n = 0
        for e in entries:
            n += 1
            by_type[str(e.type)] += 1
            if isinstance(e, E.MessageEntry) and e.message is not None:
                by_role[str(e.message.role)] += 1
                m = e.message
                if isinstance(m, M.AssistantMessage) and m.usage is not None:
                    u = m.usage
                    tok[0] += int(u.input or 0)
                    tok[1] += int(u.output or 0)
                    tok[2] += int(u.cache_read or 0)
                    tok[3] += int(u.cache_write or 0)
                    tok[4] += u.context_tokens()
                    if u.cost is not None and u.cost.total:
                        cost += float(u.cost.total)
        return cls(
            entry_count=n, entries_by_type=dict(by_type), message_count=sum(by_role.values()),
            messages_by_role=dict(by_role), input_tokens=tok[0], output_tokens=tok[1],
            cache_read_tokens=tok[2], cache_write_tokens=tok[3], total_tokens=tok[4], cost_total=cost,
        )


@runtime_checkable
class SessionStorage(Protocol):
    """The seed's storage interface."""

    def get_metadata(self) -> E.SessionHeader: ...
    def get_leaf_id(self) -> str | None: ...
    def set_leaf_id(self, leaf_id: str | None) -> None: ...
    def create_entry_id(self) -> str: ...
    def append_entry(self, entry: E.SessionEntry) -> None: ...
    def get_entry(self, entry_id: str) -> E.SessionEntry | None: ...
    def find_entries(self, type: str) -> list[E.SessionEntry]: ...
    def get_label(self, entry_id: str) -> str | None: ...
    def get_session_name(self) -> str | None: ...
    def get_branch(self, leaf_id: str | None = None) -> list[E.SessionEntry]: ...
    def get_path_to_root_or_compaction(self, leaf_id: str | None) -> list[E.SessionEntry]: ...
    def get_entries(self, options: Mapping[str, Any] | None = None) -> list[E.SessionEntry]: ...
    def get_session_stats(self) -> SessionStats: ...


class InMemorySessionStorage:
    """Entries in memory: a list in append order, an id index, a label cache and the leaf.

    Example:
        >>> s = InMemorySessionStorage()
        >>> s.get_leaf_id() is None
        True
    """

    _dialect: Dialect = "pi"  # how entries are checked to round-trip through JSON

    def __init__(self, metadata: E.SessionHeader | None = None, entries: Iterable[E.SessionEntry] = ()) -> None:
        self.metadata = check_type(metadata, E.SessionHeader, "metadata", optional=True) or new_session_header()
        self.lock = threading.RLock()  # appends and leaf moves, one thread at a time (see Session)
        self.entries: list[E.SessionEntry] = []
        self.by_id: dict[str, E.SessionEntry] = {}
        self.labels_by_id: dict[str, str] = {}
        self.leaf_id: str | None = None
        self._name: str | None = None
        self.deleted = False
        for e in entries:
            self._index(e)
        if self.leaf_id is not None and (self.by_id.get(self.leaf_id) is None
                                         or isinstance(self.by_id[self.leaf_id], E.LeafEntry)):
            # a leaf record pointing at a missing entry: pi's leaf for an unknown id, the last entry
            self.leaf_id = last_node_id(self.entries)

    # -- index -------------------------------------------------------------------------------
    def _index(self, entry: E.SessionEntry) -> None:
        self.entries.append(entry)
        if isinstance(entry, E.LeafEntry):
            self.leaf_id = entry.target_id
            if entry.id is not None:
                self.by_id[entry.id] = entry
            return
        if entry.id is not None:
            self.by_id[entry.id] = entry
        self.leaf_id = entry.id
        if isinstance(entry, E.LabelEntry) and entry.target_id is not None:
            if entry.label:
                self.labels_by_id[entry.target_id] = entry.label
            else:
                self.labels_by_id.pop(entry.target_id, None)
        elif isinstance(entry, E.SessionInfoEntry):  # the latest one names the session (pi 1.6)
            self._name = session_name(entry.name)

    # -- the seed's methods ------------------------------------------------------------------
    def get_metadata(self) -> E.SessionHeader:
        return self.metadata

    def get_leaf_id(self) -> str | None:
        return self.leaf_id

    def set_leaf_id(self, leaf_id: str | None) -> None:
        """Move the leaf (``None``: the next append starts a new root).

        Records the move as a seed ``leaf`` entry (see the module doc), so the storages agree and
        a JSONL file reopens on the same leaf. Moving to the current leaf records nothing.
        """
        with self.lock:
            self._set_leaf_id(leaf_id)

    def _set_leaf_id(self, leaf_id: str | None) -> None:
        if leaf_id is not None:
            require_node(self, leaf_id, "leaf_id")
        if leaf_id == self.leaf_id:
            return
        record = E.LeafEntry(id=self.create_entry_id(), parent_id=leaf_id, timestamp=create_timestamp(),
                             target_id=leaf_id)
        self.append_entry(record)

    def create_entry_id(self) -> str:
        """pi's scheme: 8 hex characters of a UUID-4, unique in the session (full UUID if 100 tries collide)."""
        for _ in range(100):
            eid = uuid.uuid4().hex[:8]
            if eid not in self.by_id:
                return eid
        return str(uuid.uuid4())

    def append_entry(self, entry: E.SessionEntry) -> None:
        """Store a new entry (checked first, see the module doc); the leaf moves to it."""
        with self.lock:
            self._append_entry(entry)

    def _append_entry(self, entry: E.SessionEntry) -> None:
        if self.deleted:
            raise SessionDeletedError(f"session {self.metadata.id!r} was deleted; nothing can be appended")
        check_type(entry, ENTRY_CLASSES, "entry")
        if not isinstance(entry.id, str) or not entry.id:
            raise InvalidEntryError(f"a {entry.type} entry needs a string id (see create_entry_id()), "
                                    f"not {entry.id!r}")
        if entry.id in self.by_id:
            raise InvalidEntryError(f"id {entry.id!r} is already used by a {self.by_id[entry.id].type} entry")
        if isinstance(entry, E.LeafEntry):
            if entry.target_id is not None:
                require_node(self, entry.target_id, "entry.target_id")
        elif entry.parent_id is not None:
            require_node(self, entry.parent_id, "entry.parent_id")
        d = entry_to_dict(entry, self._dialect)
        for key, value in d.items():  # (the error names the field: data['x'], message['details']...)
            check_json(value, key)
        line = js_stringify(d)
        self._store(entry_from_dict(js_parse(line), self._dialect), line)

    def _store(self, entry: E.SessionEntry, line: str) -> None:
        """Keep a checked entry (``line`` is its JSON text)."""
        self._index(entry)

    def get_entry(self, entry_id: str) -> E.SessionEntry | None:
        return self.by_id.get(entry_id)

    def find_entries(self, type: str) -> list[E.SessionEntry]:
        """Entries of one ``type`` (on-disk spelling, e.g. ``"compaction"``), in append order."""
        return [e for e in self.entries if e.type == type]

    def get_label(self, entry_id: str) -> str | None:
        return self.labels_by_id.get(entry_id)

    def get_session_name(self) -> str | None:
        return self._name

    def get_branch(self, leaf_id: str | None = None, *, default_leaf: bool = True) -> list[E.SessionEntry]:
        """Entries root -> ``leaf_id`` (default: the current leaf). Stops at a missing parent
        (the branch starts at an orphan); raises ``CycleError`` on a loop."""
        if leaf_id is None and default_leaf:
            leaf_id = self.leaf_id
        if leaf_id is None:
            return []
        check_str(leaf_id, "leaf_id")
        node = self.by_id.get(leaf_id)  # (a leaf record gives pi's view of it)
        if node is None:
            raise EntryNotFoundError(f"entry {leaf_id!r} not found")
        path: list[E.SessionEntry] = []
        seen: set[str] = set()
        while node is not None:
            if node.id in seen:
                raise CycleError(f"parent chain of {leaf_id!r} loops at {node.id!r}")
            seen.add(node.id)  # type: ignore[arg-type]
            path.append(node)
            pid = node.parent_id
            node = self.by_id.get(pid) if pid is not None else None
        path.reverse()
        return path

    def get_path_to_root_or_compaction(self, leaf_id: str | None) -> list[E.SessionEntry]:
        """The part of the branch the context needs, root-most first.

        Walks back from ``leaf_id``. At the latest compaction: with a ``retained_tail`` the walk
        stops there (the compaction carries the tail); otherwise it goes on back to the
        compaction's ``first_kept_entry_id`` and stops there (or at the compaction when that id is
        not on the branch). Without a compaction it reaches the root.
        """
        branch = self.get_branch(leaf_id, default_leaf=False)
        for i in range(len(branch) - 1, -1, -1):
            e = branch[i]
            if isinstance(e, E.CompactionEntry):
                start = i
                if e.retained_tail is None and e.first_kept_entry_id is not None:
                    for j in range(i - 1, -1, -1):
                        if branch[j].id == e.first_kept_entry_id:
                            start = j
                            break
                return branch[start:]
        return branch

    def get_entries(self, options: Mapping[str, Any] | None = None) -> list[E.SessionEntry]:
        """Entries in append order. ``options``: ``"type"`` (a type or list of types) keeps only
        those; ``"leaf_id"`` keeps the branch to that leaf; ``"include_leaf_records"`` (default
        True) keeps the seed's ``leaf`` records."""
        opts = dict(options or {})
        entries = self.get_branch(opts["leaf_id"]) if "leaf_id" in opts else list(self.entries)
        types = opts.get("type")
        if types is not None:
            wanted = {types} if isinstance(types, str) else set(types)
            entries = [e for e in entries if e.type in wanted]
        if not opts.get("include_leaf_records", True):
            entries = [e for e in entries if not isinstance(e, E.LeafEntry)]
        return entries

    def get_session_stats(self) -> SessionStats:
        """Stats over every entry of the session (all branches)."""
        return SessionStats.of(self.entries)


class JsonlSessionStorage(InMemorySessionStorage):
    """A session in a JSONL file; every append is written (and flushed) before it returns.

    Opening an existing file (any version, either dialect) reads it and changes nothing until the
    first append. That first append rewrites a v1/v2 pi file as version 3 (atomically, as pi does
    on open) so old and new lines never mix. A new file is written (header first) when the first
    entry is appended, unless ``create=True`` writes the header at once.

    Example:
        >>> s = JsonlSessionStorage("/tmp/s.jsonl", header=new_session_header(cwd="/p"))  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        dialect: Dialect | None = None,
        header: E.SessionHeader | None = None,
        on_bad_lines: OnBadLines = "warn",
        fsync: bool = False,
        create: bool = False,
    ) -> None:
        check_type(path, (str, os.PathLike), "path")
        check_type(header, E.SessionHeader, "header", optional=True)
        self.file_path = Path(path)
        self.fsync = fsync
        self.session_file: SessionFile | None = None
        self._size = 0  # the file's size after our last read or write (another writer changes it)
        data = self._read_existing()
        if data:
            sf = parse_session_bytes(data, path=str(self.file_path), on_bad_lines=on_bad_lines)
            if sf.header is None:
                raise SessionError("invalid_session", f"{self.file_path} has no session header")
            if dialect is not None and dialect != sf.dialect:
                raise ArgumentValueError("dialect",
                                         f"{self.file_path} is in the {sf.dialect!r} dialect, not {dialect!r}")
            super().__init__(sf.header, sf.entries)
            self.session_file = sf
            if sf.version == 4:  # pi's v4 file: leaf, labels and name are values (sessionlab.pi.io.v4); read-only
                self.leaf_id, self.labels_by_id, self._name = sf.leaf_id, dict(sf.labels), sf.name or None
            self._size = len(data)
            self.dialect: Dialect = sf.dialect
            self._needs_upgrade = (sf.version or CURRENT_VERSION) < CURRENT_VERSION
            self._file_exists = True
        else:
            super().__init__(header if header is not None else new_session_header())
            self.dialect = dialect or "pi"
            self._needs_upgrade = False
            self._file_exists = False
        self._writer: SessionWriter | None = None
        if create and not self._file_exists:
            self._ensure_writer()

    @property
    def _dialect(self) -> Dialect:  # type: ignore[override]
        return self.dialect

    def _read_existing(self) -> bytes:
        """The file's bytes (empty when there is no file yet)."""
        if self.file_path.is_dir():
            raise ArgumentValueError("path", f"{self.file_path} is a folder, not a session file "
                                             "(JsonlSessionRepo(folder) lists the sessions in a folder)")
        try:
            return self.file_path.read_bytes()
        except FileNotFoundError:
            return b""

    def _ensure_writer(self) -> SessionWriter:
        if self._writer is None:
            if self._file_exists and not self.file_path.exists():
                raise SessionDeletedError(f"{self.file_path} was deleted; nothing can be appended to this session")
            if self._needs_upgrade and self.session_file is not None:
                self._upgrade()
            self._writer = SessionWriter(
                self.file_path, dialect=self.dialect, fsync=self.fsync,
                header=None if self._file_exists else self.metadata,
            )
            if not self._file_exists:
                if not self._writer.wrote_header:  # someone created the file since we looked
                    self._writer.close()
                    self._writer = None
                    raise StaleSessionError(f"{self.file_path} was created by another handle or process since "
                                            "this session was opened; nothing was written. Open it again")
                self._size = self._writer.size
            self._file_exists = True
        return self._writer

    def _check_size(self) -> None:
        check_unchanged(self.file_path, self._size)

    def _upgrade(self) -> None:
        """Rewrite the v1/v2 file as v3 under the lock appends take, so no append made meanwhile by
        another process is lost. When another handle upgraded it first, its file is re-read (under
        its lock) and kept if it holds exactly this handle's entries; anything else is stale."""
        assert self.session_file is not None
        with locked_file(self.file_path) as fd:
            if same_file(self.file_path, fd):
                check_unchanged(self.file_path, self._size)  # (someone appended: stale)
                upgraded = replace(self.session_file, header=self.metadata, version=CURRENT_VERSION, _source=[])
                write_session(upgraded, self.file_path)
                self._size = self.file_path.stat().st_size
                self._needs_upgrade = False
                return
        with locked_file(self.file_path) as fd:  # replaced: by another handle's upgrade?
            data = _read_fd(fd)
        sf = parse_session_bytes(data, path=str(self.file_path), on_bad_lines="skip")
        if (sf.version != CURRENT_VERSION or sf.header is None or sf.header.id != self.metadata.id
                or [e.id for e in sf.entries] != [e.id for e in self.entries]):
            raise StaleSessionError(f"{self.file_path} changed since this session read it (another handle "
                                    "upgraded or appended to it); nothing was written. Reopen the session")
        self.session_file, self._size, self._needs_upgrade = sf, len(data), False

    def _store(self, entry: E.SessionEntry, line: str) -> None:
        self._size = self._ensure_writer().append_line(line, expect_size=self._size)
        self._index(entry)

    def _store_copies(self, entries: list[E.SessionEntry]) -> None:
        """Write and keep entries copied from another session as they are (a fork's copy)."""
        if entries:
            self._size = self._ensure_writer().append_many(entries, expect_size=self._size)
            for e in entries:
                self._index(e)

    def close(self) -> None:
        """Close the file (a later append opens it again)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _read_fd(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def require_node(storage: SessionStorage, entry_id: Any, argument: str) -> E.SessionEntry:
    """The entry ``entry_id`` of ``storage`` (any :class:`SessionStorage`), which must be a node of
    the tree: a string id of an entry that is not a seed ``leaf`` record. ``argument`` names the
    caller's argument."""
    check_str(entry_id, argument)
    entry = storage.get_entry(entry_id)
    if entry is None:
        raise EntryNotFoundError(f"{argument}: entry {entry_id!r} not found")
    if isinstance(entry, E.LeafEntry):
        raise InvalidEntryError(f"{argument}: {entry_id!r} is a leaf record (a pointer to the current leaf), "
                                "not an entry of the conversation")
    return entry
