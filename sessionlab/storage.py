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
  instead of hanging (pi hangs).

Persisting ``set_leaf_id`` (used by ``Session.move_to``): a ``leaf`` record whose ``targetId`` (or
``target_id``) is the new leaf and whose parent is that same entry. sessionlab reads it as a leaf
pointer. pi keeps entries of unknown types as they are and takes the last line as its leaf; its
branch runs through the target and the record adds nothing to the context, so pi resumes on the
same branch with the same context.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import CycleError, EntryNotFoundError, SessionError
from .io.dialects import Dialect
from .io.migrate import CURRENT_VERSION
from .io.reader import OnBadLines, SessionFile, read_session
from .io.writer import SessionWriter, write_session
from ._rules import session_name
from .model import entries as E
from .model import messages as M

__all__ = [
    "SessionStats",
    "SessionStorage",
    "InMemorySessionStorage",
    "JsonlSessionStorage",
    "create_timestamp",
    "new_session_header",
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

    def __init__(self, metadata: E.SessionHeader | None = None, entries: Iterable[E.SessionEntry] = ()) -> None:
        self.metadata = metadata if metadata is not None else new_session_header()
        self.entries: list[E.SessionEntry] = []
        self.by_id: dict[str, E.SessionEntry] = {}
        self.labels_by_id: dict[str, str] = {}
        self.leaf_id: str | None = None
        self._name: str | None = None
        for e in entries:
            self._index(e)

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
        if leaf_id == self.leaf_id:
            return
        if leaf_id is not None and leaf_id not in self.by_id:
            raise EntryNotFoundError(f"entry {leaf_id!r} not found")
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
        node = self.by_id.get(leaf_id)
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
        self.file_path = Path(path)
        self.fsync = fsync
        self.session_file: SessionFile | None = None
        if self.file_path.exists() and self.file_path.stat().st_size > 0:
            sf = read_session(self.file_path, on_bad_lines=on_bad_lines)
            if sf.header is None:
                raise SessionError("invalid_session", f"{self.file_path} has no session header")
            if dialect is not None and dialect != sf.dialect:
                raise ValueError(f"{self.file_path} is in the {sf.dialect!r} dialect, not {dialect!r}")
            super().__init__(sf.header, sf.entries)
            self.session_file = sf
            if sf.version == 4:  # pi's v4 file: leaf, labels and name are values (sessionlab.io.v4); read-only
                self.leaf_id, self.labels_by_id, self._name = sf.leaf_id, dict(sf.labels), sf.name or None
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

    def _ensure_writer(self) -> SessionWriter:
        if self._writer is None:
            if self._needs_upgrade and self.session_file is not None:
                upgraded = replace(self.session_file, header=self.metadata, version=CURRENT_VERSION, _source=[])
                write_session(upgraded, self.file_path)
                self._needs_upgrade = False
            self._writer = SessionWriter(
                self.file_path, dialect=self.dialect, fsync=self.fsync,
                header=None if self._file_exists else self.metadata,
            )
            self._file_exists = True
        return self._writer

    def append_entry(self, entry: E.SessionEntry) -> None:
        self._ensure_writer().append(entry)
        super().append_entry(entry)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
