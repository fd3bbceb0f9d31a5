"""Session repositories: create, open, list, delete and fork sessions (the seed's ``SessionRepo``).

:class:`JsonlSessionRepo` uses pi's layout under its root,
``--<encoded cwd>--/<header timestamp>_<session id>.jsonl`` (the encoded cwd drops one leading
``/`` or ``\\`` and turns ``/``, ``\\`` and ``:`` into ``-``), so a repo over
``~/.pi/agent/sessions`` sees pi's own sessions and pi sees the repo's. Session ids must match
``^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`` and every path is checked to stay inside the root.

Forking follows the seed's ``getEntriesToFork``: without ``entry_id`` every entry is copied (all
branches, same ids, as pi's ``forkFrom``); with ``position="at"`` the branch up to and including
the entry; with ``position="before"`` the branch up to the entry's parent, and a ``message`` target
must be a user message. The branch is taken with ``get_path_to_root_or_compaction``, so after a
compaction only what the context needs is copied. Two repairs keep the copy self-contained:
the first copied entry becomes a root (no dangling parent), and when the copy starts after the
root, the thinking level, model and active tools in effect there are written first as
``thinking_level_change`` / ``model_change`` / ``active_tools_change`` entries, so the fork's
context equals the source's at the fork point. The new header's ``parent_session`` is the source
file's path (JSONL, as pi) or the source session id (in memory).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from .context import derive_session_context_state
from .errors import EntryNotFoundError, InvalidForkTargetError, UnsafePathError
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


def _check_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not _SAFE_ID.match(session_id):
        raise UnsafePathError(f"unsafe session id {session_id!r}")
    return session_id


def get_entries_to_fork(
    storage: InMemorySessionStorage, entry_id: str | None = None, *, position: ForkPosition = "before"
) -> list[E.SessionEntry]:
    """The seed's ``getEntriesToFork`` (see the module doc), before the repairs."""
    if entry_id is None:
        return [e for e in storage.get_entries() if not isinstance(e, E.LeafEntry)]
    target = storage.get_entry(entry_id)
    if target is None:
        raise EntryNotFoundError(f"entry {entry_id!r} not found")
    if position == "at":
        effective: str | None = target.id
    elif position == "before":
        if isinstance(target, E.MessageEntry) and not isinstance(target.message, M.UserMessage):
            raise InvalidForkTargetError(f"entry {entry_id!r} is not a user message")
        effective = target.parent_id
    else:
        raise ValueError(f"position must be 'before' or 'at', not {position!r}")
    if effective is None or storage.get_entry(effective) is None:
        return []
    return storage.get_path_to_root_or_compaction(effective)


def _fork_entries(storage: InMemorySessionStorage, entry_id: str | None, position: ForkPosition,
                  new_id: Any) -> list[E.SessionEntry]:
    entries = get_entries_to_fork(storage, entry_id, position=position)
    if entry_id is None or not entries:
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
    from .context import iso_to_ms

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


class InMemorySessionRepo:
    """Sessions in memory, by id (for tests and scratch work)."""

    def __init__(self) -> None:
        self._storages: dict[str, InMemorySessionStorage] = {}

    def create(self, *, cwd: str | None = None, session_id: str | None = None,
               parent_session: str | None = None, metadata: dict[str, Any] | None = None) -> Session:
        header = new_session_header(session_id=session_id, cwd=cwd, parent_session=parent_session, metadata=metadata)
        if header.id in self._storages:
            raise ValueError(f"session {header.id!r} exists")
        storage = InMemorySessionStorage(header)
        self._storages[header.id] = storage
        return Session(storage)

    def _get(self, source: str | SessionInfo | Session) -> InMemorySessionStorage:
        sid = source.storage.get_metadata().id if isinstance(source, Session) else (
            source.id if isinstance(source, SessionInfo) else source)
        try:
            return self._storages[sid]
        except KeyError:
            raise EntryNotFoundError(f"no session {sid!r}") from None

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

    def delete(self, source: str | SessionInfo) -> None:
        del self._storages[self._get(source).get_metadata().id]

    def fork(self, source: str | SessionInfo | Session, entry_id: str | None = None,
             position: ForkPosition = "before", *, session_id: str | None = None) -> Session:
        """A new session with the entries to fork (see the module doc)."""
        src = self._get(source)
        new = self.create(cwd=src.get_metadata().cwd, session_id=session_id, parent_session=src.get_metadata().id)
        for e in _fork_entries(src, entry_id, position, new.storage.create_entry_id):
            new.storage.append_entry(e)
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
        if session_id is not None:
            _check_id(session_id)
            if self._find(session_id):
                raise ValueError(f"session {session_id!r} exists")
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
            if not isinstance(st, JsonlSessionStorage):
                raise TypeError("not a JSONL session")
            return self._inside(st.file_path)
        if isinstance(source, SessionInfo):
            if source.path is None:
                raise EntryNotFoundError(f"session {source.id!r} has no file")
            return self._inside(Path(source.path))
        s = os.fspath(source)
        if s.endswith(".jsonl") or "/" in s or "\\" in s:
            p = Path(s)
            p = self._inside(p if p.is_absolute() else self.root / p)
            if not p.exists():
                raise EntryNotFoundError(f"no session file {p}")
            return p
        _check_id(s)
        exact = self._find(s)
        matches = exact or [p for p in self._files() if p.stem.split("_", 1)[-1].startswith(s)]
        if len(matches) != 1:
            what = "no session" if not matches else f"{len(matches)} sessions match"
            raise EntryNotFoundError(f"{what} {s!r}")
        return matches[0]

    def open(self, source: str | os.PathLike[str] | SessionInfo) -> Session:
        """Open by id (or unique id prefix, as pi's ``--session``), path, or :class:`SessionInfo`."""
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

    def delete(self, source: str | os.PathLike[str] | SessionInfo) -> None:
        self._resolve(source).unlink()

    def fork(self, source: str | os.PathLike[str] | SessionInfo | Session, entry_id: str | None = None,
             position: ForkPosition = "before", *, session_id: str | None = None, cwd: str | None = None) -> Session:
        """Write a new session file with the entries to fork (see the module doc)."""
        src_path = self._resolve(source)
        src = JsonlSessionStorage(src_path, on_bad_lines="skip")
        header = new_session_header(session_id=session_id, cwd=cwd if cwd is not None else src.get_metadata().cwd,
                                    parent_session=str(src_path))
        if session_id is not None and self._find(session_id):
            raise ValueError(f"session {session_id!r} exists")
        storage = JsonlSessionStorage(self.path_for(header), dialect=src.dialect, header=header, create=True)
        entries = _fork_entries(src, entry_id, position, storage.create_entry_id)
        if entries:
            storage._ensure_writer().append_many(entries)
            for e in entries:
                InMemorySessionStorage.append_entry(storage, e)
        return Session(storage)
