"""Session repositories: create, open, list, delete and fork sessions (the seed's ``SessionRepo``).

:class:`JsonlSessionRepo` uses pi's layout under its root,
``--<encoded cwd>--/<header timestamp>_<session id>.jsonl`` (the encoded cwd drops one leading
``/`` or ``\\`` and turns ``/``, ``\\`` and ``:`` into ``-``), so a repo over
``~/.pi/agent/sessions`` sees pi's own sessions and pi sees the repo's. Session ids must match
``^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$``, be at most 200 characters and not end in
``.jsonl`` (``open("x.jsonl")`` means a file); the encoded cwd must fit a file name (255 bytes).
Every path is checked to stay inside the root.

Opening, deleting and forking by id match the **whole** id (pi's ``--session`` also takes a prefix:
a prefix deleted the wrong session); an unknown id raises
:class:`~sessionlab.errors.SessionNotFoundError` naming the ids that look like it, an id found in
two folders :class:`~sessionlab.errors.AmbiguousSessionError` naming the files. A deleted session
refuses further appends. A fork is checked completely (source, target, position, new id) before
anything is created, so a failed fork leaves no session behind.

Forking follows the seed's ``getEntriesToFork``: without ``entry_id`` every entry is copied (all
branches, same ids, as pi's ``forkFrom``) and the fork's leaf is the source's ("from current
leaf": a ``leaf`` record is added when the source's leaf is not its last entry); with
``position="at"`` the branch up to and including the entry; with ``position="before"`` the branch
up to the entry's parent, and a ``message`` target must be a user message. The branch is taken
with ``get_path_to_root_or_compaction``, so after a compaction only what the context needs is
copied. Two repairs keep the copy self-contained:
the first copied entry becomes a root (no dangling parent), and when the copy starts after the
root, the thinking level, model and active tools in effect there are written first as
``thinking_level_change`` / ``model_change`` / ``active_tools_change`` entries, so the fork's
context equals the source's at the fork point. The new header's ``parent_session`` is the source
file's path (JSONL, as pi) or the source session id (in memory).
"""

from __future__ import annotations

import difflib
import os
import re
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..errors import (
    AmbiguousSessionError,
    ArgumentValueError,
    InvalidForkTargetError,
    SessionNotFoundError,
    UnsafePathError,
)
from ._validate import check_choice, check_json, check_str, check_type
from .context import derive_session_context_state
from .io.dialects import Dialect
from .io.reader import read_session
from .model import entries as E
from .model import messages as M
from .session import Session
from .storage import (
    InMemorySessionStorage,
    JsonlSessionStorage,
    create_timestamp,
    new_session_header,
    require_node,
)

__all__ = [
    "SessionInfo",
    "InMemorySessionRepo",
    "JsonlSessionRepo",
    "get_entries_to_fork",
    "encode_cwd",
    "session_file_name",
]

_SAFE_ID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_MAX_ID = 200  # with pi's timestamp prefix and ".jsonl" the file name stays under 255 bytes
_MAX_NAME = 255  # bytes in a file or folder name on common file systems
ForkPosition = Literal["before", "at"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session as a repo lists it. ``modified`` follows pi's ``/resume`` list: the newest
    user/assistant message time, else the newest entry time, else the header time, else the file's
    modification time (Unix ms)."""

    id: str
    path: str | None
    cwd: str | None
    name: str | None
    created: str | None
    modified: int
    entry_count: int
    parent_session: str | None = None


def encode_cwd(cwd: str) -> str:
    """pi's folder name for a working directory: ``/home/u/p`` -> ``--home-u-p--``."""
    s = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", s) + "--"


def session_file_name(header: E.SessionHeader) -> str:
    """pi's file name: the header timestamp with ``:`` and ``.`` as ``-``, ``_``, the id, ``.jsonl``."""
    ts = (header.timestamp or create_timestamp()).replace(":", "-").replace(".", "-")
    return f"{ts}_{header.id}.jsonl"


def _check_id(session_id: str, argument: str = "session_id") -> str:
    check_str(session_id, argument)
    if not _SAFE_ID.match(session_id):
        raise UnsafePathError(f"unsafe session id {session_id!r}: ids are letters, digits, '.', '_' and '-', "
                              "starting and ending with a letter or digit")
    if len(session_id) > _MAX_ID:
        raise ArgumentValueError(argument, f"{argument} is {len(session_id)} characters; at most {_MAX_ID} fit "
                                           "in a session file name")
    if session_id.endswith(".jsonl"):
        raise ArgumentValueError(argument, f"{argument} {session_id!r} ends in '.jsonl', which open() would "
                                           "read as a file name; choose an id without it")
    return session_id


def _check_cwd(cwd: str | None) -> str | None:
    check_str(cwd, "cwd", optional=True)
    if cwd is not None and len(encode_cwd(cwd).encode("utf-8", "surrogatepass")) > _MAX_NAME:
        raise ArgumentValueError("cwd", f"cwd is too long for pi's folder layout: its folder name would be over "
                                        f"{_MAX_NAME} bytes")
    return cwd


def _check_create(cwd: str | None, session_id: str | None, parent_session: str | None,
                  metadata: dict[str, Any] | None) -> None:
    """The checks every repo's ``create`` makes before anything is created."""
    _check_cwd(cwd)
    if session_id is not None:
        _check_id(session_id)
    check_str(parent_session, "parent_session", optional=True)
    check_type(metadata, dict, "metadata", optional=True)
    check_json(metadata, "metadata")


def _new_entry_id() -> str:
    return uuid.uuid4().hex[:8]


def get_entries_to_fork(
    storage: InMemorySessionStorage, entry_id: str | None = None, *, position: ForkPosition = "before"
) -> list[E.SessionEntry]:
    """The seed's ``getEntriesToFork`` (see the module doc), before the repairs."""
    check_choice(position, ("before", "at"), "position")
    if entry_id is None:
        return [e for e in storage.get_entries() if not isinstance(e, E.LeafEntry)]
    check_str(entry_id, "entry_id")
    if isinstance(storage.get_entry(entry_id), E.LeafEntry):
        raise InvalidForkTargetError(f"entry {entry_id!r} is a leaf record, not an entry of the conversation")
    target = require_node(storage, entry_id, "entry_id")
    if position == "at":
        effective: str | None = target.id
    else:
        if isinstance(target, E.MessageEntry) and not isinstance(target.message, M.UserMessage):
            raise InvalidForkTargetError(f"entry {entry_id!r} is not a user message")
        effective = target.parent_id
    if effective is None or storage.get_entry(effective) is None:
        return []
    return storage.get_path_to_root_or_compaction(effective)


def _fork_entries(storage: InMemorySessionStorage, entry_id: str | None, position: ForkPosition,
                  new_id: Any = _new_entry_id) -> list[E.SessionEntry]:
    """The entries a fork writes, in order: for a full fork, a ``leaf`` record last when the source's
    leaf is not its last entry (the fork resumes where the source is)."""
    entries = get_entries_to_fork(storage, entry_id, position=position)
    if entry_id is None:
        leaf = storage.get_leaf_id()
        last = entries[-1].id if entries else None
        if entries and leaf != last:
            taken = {e.id for e in entries}
            rid = new_id()
            while rid in taken:
                rid = new_id()
            entries.append(E.LeafEntry(id=rid, parent_id=leaf, timestamp=create_timestamp(), target_id=leaf))
        return entries
    if not entries:
        return entries
    taken = {e.id for e in entries}

    def fresh_id() -> str:
        while True:
            eid = new_id()
            if eid not in taken and storage.get_entry(eid) is None:
                taken.add(eid)
                return eid

    full = storage.get_branch(entries[-1].id)
    prefix = full[: len(full) - len(entries)]
    out: list[E.SessionEntry] = []
    parent: str | None = None
    if prefix:
        state = derive_session_context_state(prefix)
        ts = entries[0].timestamp
        if state.model is not None:
            out.append(E.ModelChangeEntry(id=fresh_id(), parent_id=parent, timestamp=ts,
                                          provider=state.model.provider, model_id=state.model.model_id))
            parent = out[-1].id
        if state.thinking_level != "off":
            out.append(E.ThinkingLevelChangeEntry(id=fresh_id(), parent_id=parent, timestamp=ts,
                                                  thinking_level=state.thinking_level))
            parent = out[-1].id
        if state.active_tool_names is not None:
            out.append(E.ActiveToolsChangeEntry(id=fresh_id(), parent_id=parent, timestamp=ts,
                                                active_tool_names=state.active_tool_names))
            parent = out[-1].id
    out.append(replace(entries[0], parent_id=parent))
    out.extend(entries[1:])
    return out


def _modified(header: E.SessionHeader | None, entries: list[E.SessionEntry], fallback: float) -> int:
    from .._time import iso_to_ms

    best = None
    for e in entries:
        if isinstance(e, E.MessageEntry) and isinstance(e.message, (M.UserMessage, M.AssistantMessage)):
            t = e.message.timestamp
            if isinstance(t, (int, float)) and (best is None or t > best):
                best = t
    if best is None:
        times = [t for t in (iso_to_ms(e.timestamp) for e in entries) if t is not None]
        best = max(times) if times else (iso_to_ms(header.timestamp) if header else None)
    return int(best) if best is not None else int(fallback * 1000)


def _did_you_mean(wanted: str, ids: list[str]) -> str:
    """``"; did you mean ...?"`` with the ids that start with ``wanted`` or look like it, or ``""``."""
    near = [i for i in ids if i.startswith(wanted)] + difflib.get_close_matches(wanted, ids, n=3)
    near = list(dict.fromkeys(near))[:5]
    return f"; did you mean {', '.join(map(repr, near))}? (ids match whole)" if near else ""


class InMemorySessionRepo:
    """Sessions in memory, by id (for tests and scratch work)."""

    def __init__(self) -> None:
        self._storages: dict[str, InMemorySessionStorage] = {}

    def create(self, *, cwd: str | None = None, session_id: str | None = None,
               parent_session: str | None = None, metadata: dict[str, Any] | None = None) -> Session:
        _check_create(cwd, session_id, parent_session, metadata)
        if session_id in self._storages:
            raise ArgumentValueError("session_id", f"session {session_id!r} exists")
        header = new_session_header(session_id=session_id, cwd=cwd, parent_session=parent_session, metadata=metadata)
        storage = InMemorySessionStorage(header)
        self._storages[header.id] = storage
        return Session(storage)

    def _get(self, source: str | SessionInfo | Session) -> InMemorySessionStorage:
        sid = source.storage.get_metadata().id if isinstance(source, Session) else (
            source.id if isinstance(source, SessionInfo) else source)
        check_str(sid, "source")
        try:
            return self._storages[sid]
        except KeyError:
            raise SessionNotFoundError(f"no session {sid!r}{_did_you_mean(sid, list(self._storages))}") from None

    def open(self, source: str | SessionInfo) -> Session:
        return Session(self._get(source))

    def list(self, *, cwd: str | None = None) -> list[SessionInfo]:
        """Sessions, newest first."""
        out = []
        for sid, st in self._storages.items():
            h = st.get_metadata()
            if cwd is not None and h.cwd != cwd:
                continue
            out.append(SessionInfo(sid, None, h.cwd, st.get_session_name(), h.timestamp,
                                   _modified(h, st.entries, 0), len(st.entries), h.parent_session))
        return sorted(out, key=lambda i: i.modified, reverse=True)

    def delete(self, source: str | SessionInfo | Session) -> None:
        """Remove a session; a :class:`Session` still holding it refuses further appends."""
        storage = self._get(source)
        del self._storages[storage.get_metadata().id]
        storage.deleted = True

    def fork(self, source: str | SessionInfo | Session, entry_id: str | None = None,
             position: ForkPosition = "before", *, session_id: str | None = None) -> Session:
        """A new session with the entries to fork (see the module doc)."""
        src = self._get(source)
        entries = _fork_entries(src, entry_id, position)  # (raises before anything is created)
        new = self.create(cwd=src.get_metadata().cwd, session_id=session_id, parent_session=src.get_metadata().id)
        for e in entries:
            new.storage._index(e)  # copies as they are (a source read from a file may hold odd entries)
        return new


class JsonlSessionRepo:
    """Sessions as JSONL files under ``root`` in pi's layout (see the module doc).

    Example:
        >>> repo = JsonlSessionRepo("/tmp/sessions")  # doctest: +SKIP
        >>> s = repo.create(cwd="/home/me/proj")  # doctest: +SKIP
    """

    def __init__(self, root: str | os.PathLike[str], *, dialect: Dialect = "pi") -> None:
        self.root = Path(root).resolve()
        self.dialect: Dialect = dialect

    def _inside(self, path: Path) -> Path:
        p = path.resolve()
        if not p.is_relative_to(self.root):
            raise UnsafePathError(f"{path} is outside the repository root {self.root}")
        return p

    def path_for(self, header: E.SessionHeader) -> Path:
        _check_id(header.id)
        return self._inside(self.root / encode_cwd(header.cwd or "") / session_file_name(header))

    def create(self, *, cwd: str | None = None, session_id: str | None = None,
               parent_session: str | None = None, metadata: dict[str, Any] | None = None) -> Session:
        """A new session; its file (header line) is written at once."""
        _check_create(cwd, session_id, parent_session, metadata)
        if session_id is not None and self._find(session_id):
            raise ArgumentValueError("session_id", f"session {session_id!r} exists")
        header = new_session_header(session_id=session_id, cwd=cwd, parent_session=parent_session, metadata=metadata)
        path = self.path_for(header)
        return Session(JsonlSessionStorage(path, dialect=self.dialect, header=header, create=True))

    def _files(self) -> list[Path]:
        return sorted(p for p in self.root.glob("*/*.jsonl") if p.is_file())

    def _find(self, session_id: str) -> list[Path]:
        return [p for p in self._files() if p.stem.split("_", 1)[-1] == session_id]

    def _resolve(self, source: str | os.PathLike[str] | SessionInfo | Session) -> Path:
        if isinstance(source, Session):
            st = source.storage
            check_type(st, JsonlSessionStorage, "source.storage")
            return self._existing(self._inside(st.file_path))  # type: ignore[union-attr]
        if isinstance(source, SessionInfo):
            if source.path is None:
                raise SessionNotFoundError(f"session {source.id!r} has no file")
            return self._existing(self._inside(Path(source.path)))
        check_type(source, (str, os.PathLike), "source")
        s = os.fspath(source)
        if s.endswith(".jsonl") or "/" in s or "\\" in s:
            p = Path(s)
            return self._existing(self._inside(p if p.is_absolute() else self.root / p))
        _check_id(s, "source")
        matches = self._find(s)
        if not matches:
            ids = [p.stem.split("_", 1)[-1] for p in self._files()]
            raise SessionNotFoundError(f"no session {s!r} under {self.root}{_did_you_mean(s, ids)}")
        if len(matches) > 1:
            raise AmbiguousSessionError(f"{len(matches)} sessions have the id {s!r}: "
                                        + ", ".join(map(str, matches)) + "; pass the file's path instead")
        return matches[0]

    @staticmethod
    def _existing(p: Path) -> Path:
        if not p.is_file():
            raise SessionNotFoundError(f"no session file {p}")
        return p

    def open(self, source: str | os.PathLike[str] | SessionInfo) -> Session:
        """Open by the whole id, a path (ending in ``.jsonl`` or with a folder), or :class:`SessionInfo`."""
        return Session(JsonlSessionStorage(self._resolve(source)))

    def list(self, *, cwd: str | None = None) -> list[SessionInfo]:
        """Every readable session under the root, newest first (``cwd`` filters on the header)."""
        out = []
        for p in self._files():
            sf = read_session(p, on_bad_lines="skip")
            h = sf.header
            if h is None or (cwd is not None and h.cwd != cwd):
                continue
            name = None
            for e in sf.entries:
                if isinstance(e, E.SessionInfoEntry) and e.name:
                    name = e.name
            out.append(SessionInfo(h.id, str(p), h.cwd, name, h.timestamp,
                                   _modified(h, sf.entries, p.stat().st_mtime), len(sf.entries), h.parent_session))
        return sorted(out, key=lambda i: i.modified, reverse=True)

    def delete(self, source: str | os.PathLike[str] | SessionInfo | Session) -> None:
        """Delete a session's file. Any :class:`Session` still open on it refuses further appends."""
        self._resolve(source).unlink()
        if isinstance(source, Session):
            source.storage.deleted = True  # type: ignore[attr-defined]

    def fork(self, source: str | os.PathLike[str] | SessionInfo | Session, entry_id: str | None = None,
             position: ForkPosition = "before", *, session_id: str | None = None, cwd: str | None = None) -> Session:
        """Write a new session file with the entries to fork (see the module doc)."""
        src_path = self._resolve(source)
        src = source.storage if isinstance(source, Session) else JsonlSessionStorage(src_path, on_bad_lines="skip")
        if isinstance(src, JsonlSessionStorage) and src._file_exists:
            src._check_size()  # a handle another one appended behind: its view is stale (StaleSessionError)
        new_cwd = cwd if cwd is not None else src.get_metadata().cwd
        _check_create(new_cwd, session_id, None, None)
        if session_id is not None and self._find(session_id):
            raise ArgumentValueError("session_id", f"session {session_id!r} exists")
        entries = _fork_entries(src, entry_id, position)  # (raises before anything is created)
        header = new_session_header(session_id=session_id, cwd=new_cwd, parent_session=str(src_path))
        path = self.path_for(header)
        storage = JsonlSessionStorage(path, dialect=src.dialect, header=header, create=True)  # type: ignore[attr-defined]
        try:
            storage._store_copies(entries)
        except BaseException:
            storage.close()
            path.unlink(missing_ok=True)  # a fork that could not be written completely is not kept
            raise
        return Session(storage)
