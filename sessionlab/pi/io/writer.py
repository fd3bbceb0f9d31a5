"""Writing sessions: whole files atomically, single entries append-only under a file lock.

- :func:`write_session` writes a :class:`SessionFile` to a temporary file beside the target and
  renames it into place, so a reader never sees half a file. Lines read from a file and not
  changed since are written back exactly as they were (byte for byte, key order, number format
  and unknown fields included); other entries are serialized the way pi's ``JSON.stringify``
  does.
- :class:`SessionWriter` appends one whole line per entry with a single ``write`` on a file opened
  in append mode, under an exclusive advisory lock (``fcntl.flock``) so two processes never
  interleave; if a crash left a torn last line, the next append first ends it with a newline, so
  the torn line stays one bad line and the new entry is whole. Before writing it checks, under the
  lock, that its path still names the file it opened (else the file was deleted or replaced, and
  the entry would be lost) and, when told the size it expects, that nobody appended since.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..._jsjson import js_stringify
from ...errors import ReadOnlyFormatError, SessionDeletedError, StaleSessionError, WriterClosedError, check_option
from ..model import SessionEntry, SessionHeader
from .dialects import Dialect, entry_to_dict, header_to_dict
from .migrate import CURRENT_VERSION
from .reader import SessionFile
from .v4 import sniff_v4

_HEAD_BYTES = 1 << 16  # enough for any header line sessionlab would need to recognise

try:  # POSIX
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


__all__ = ["write_session", "SessionWriter", "to_line", "check_unchanged", "locked_file"]


@contextmanager
def locked_file(path: str | os.PathLike[str]) -> Iterator[int]:
    """An fd of the file at ``path`` (which must exist), held under the exclusive lock appends take.

    Raises :class:`~sessionlab.errors.SessionDeletedError` when there is no file."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise SessionDeletedError(f"{path} was deleted; nothing was written") from None
    try:
        _lock(fd)
        try:
            yield fd
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def same_file(path: str | os.PathLike[str], fd: int) -> bool:
    """Whether ``path`` still names the open file ``fd``."""
    try:
        now, st = os.stat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def to_line(obj: SessionEntry | SessionHeader | dict, dialect: Dialect = "pi") -> str:
    """One entry (or the header, or a plain dict) as its JSONL text, without the newline."""
    if isinstance(obj, SessionHeader):
        d: Any = header_to_dict(obj, dialect)
    elif isinstance(obj, dict):
        d = obj
    else:
        d = entry_to_dict(obj, dialect)
    return js_stringify(d)


def write_session(session_file: SessionFile, path: str | os.PathLike[str], *, dialect: Dialect | None = None) -> None:
    """Write ``session_file`` to ``path`` (atomically), in ``dialect`` (default: the file's own).

    Written in its own dialect, a file that was read and not changed comes back byte for byte
    (BOM and CRLF line ends included). Bad lines the reader reported are not written back.
    A v1/v2 file that was changed is written as version 3 (what pi would write after migrating).
    A v4 file (``version`` 4) is read-only: :class:`~sessionlab.errors.ReadOnlyFormatError`.

    Example:
        >>> sf = read_session("a.jsonl")  # doctest: +SKIP
        >>> write_session(sf, "b.jsonl", dialect="seed")  # doctest: +SKIP
    """
    if session_file.version == 4:
        raise ReadOnlyFormatError(
            f"{session_file.path or 'this session'} is a v4 file (pi's experimental harness format), which "
            "sessionlab reads but does not write; nothing was written to " + str(path))
    dialect = dialect or session_file.dialect
    src = {id(obj): text for obj, text in session_file._source}
    objs: list[Any] = ([session_file.header] if session_file.header is not None else []) + list(session_file.entries)
    same_dialect = dialect == session_file.dialect
    untouched = all(id(o) in src for o in objs) and len(objs) == len(session_file._source)
    # Original text is only safe to reuse when the file keeps its version: old-version lines
    # cannot be mixed with v3 lines.
    reuse = same_dialect and (untouched or session_file.version == CURRENT_VERSION)
    lines = [src[id(o)] if reuse and id(o) in src else to_line(o, dialect) for o in objs]
    nl = session_file.newline if same_dialect else "\n"
    text = nl.join(lines)
    # no final newline only when reproducing a file whose last (kept) line had none
    last_reused = bool(objs) and reuse and id(objs[-1]) in src
    if lines and (session_file.final_newline or not same_dialect or not last_reused):
        text += nl
    data = text.encode("utf-8", "surrogatepass")
    if session_file.bom and same_dialect:
        data = b"\xef\xbb\xbf" + data
    atomic_write_bytes(Path(path), data)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``path``, fsync it, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _mode_for(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _check_same_file(path: Path, st: os.stat_result) -> None:
    """Raise when ``path`` no longer names the open file whose stat is ``st``."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        raise SessionDeletedError(f"{path} was deleted; nothing was written") from None
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        raise StaleSessionError(f"{path} was replaced by another file since it was opened; nothing was "
                                "written. Reopen the session to continue from its current state")


def check_unchanged(path: str | os.PathLike[str], size: int) -> None:
    """Raise :class:`~sessionlab.errors.StaleSessionError` when the file at ``path`` is no longer
    ``size`` bytes (or :class:`~sessionlab.errors.SessionDeletedError` when it is gone)."""
    try:
        now = os.stat(path).st_size
    except FileNotFoundError:
        raise SessionDeletedError(f"{path} was deleted; nothing was written") from None
    if now != size:
        raise StaleSessionError(f"{path} changed since this session last read or wrote it ({size:,} bytes "
                                f"then, {now:,} now); nothing was written. Reopen the session")


def _mode_for(path: Path) -> int:
    """The replaced file's permissions, or what a new file gets under the umask."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class SessionWriter:
    """Append entries to a session file, one whole line each, safely across processes.

    ``header`` is written first when the file is new or empty. With ``fsync=True`` every append
    is on disk before ``append`` returns; otherwise it is flushed to the OS (safe against a killed
    process, not against a power cut).

    Example:
        >>> with SessionWriter("s.jsonl", header=SessionHeader(id="s1", version=3)) as w:  # doctest: +SKIP
        ...     w.append(MessageEntry(id="a1b2c3d4", message=UserMessage(content="hi")))
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        dialect: Dialect = "pi",
        fsync: bool = False,
        header: SessionHeader | None = None,
    ) -> None:
        check_option("dialect", dialect, ("pi", "seed"))
        self.path = Path(path)
        self.dialect: Dialect = dialect
        self.fsync = fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        head = os.pread(self._fd, _HEAD_BYTES, 0)
        if head and sniff_v4(head.split(b"\n", 1)[0]):
            self.close()
            raise ReadOnlyFormatError(f"{self.path} is a v4 file (pi's experimental harness format), which "
                                      "sessionlab reads but does not write; nothing was appended")
        self.size = os.fstat(self._fd).st_size  # after this writer's last write
        self.wrote_header = False  # False with a header: the file had content already
        if header is not None:
            self._append_text(to_line(header, dialect), only_if_empty=True)

    def append(self, entry: SessionEntry | SessionHeader | dict, *, expect_size: int | None = None) -> int:
        """Append one entry as one line; returns the file's new size.

        With ``expect_size``, raise :class:`~sessionlab.errors.StaleSessionError` (and write
        nothing) when the file's size is another: someone else wrote to it.
        """
        return self._append_text(to_line(entry, self.dialect), expect_size=expect_size)

    def append_line(self, line: str, *, expect_size: int | None = None) -> int:
        """Append one line of JSON text already made (see :meth:`append`)."""
        return self._append_text(line, expect_size=expect_size)

    def append_many(self, entries: list, *, expect_size: int | None = None) -> int:
        """Append several entries under one lock, as one write (see :meth:`append`)."""
        if not entries:
            return self.size
        return self._append_text("\n".join(to_line(e, self.dialect) for e in entries), expect_size=expect_size)

    def _append_text(self, text: str, only_if_empty: bool = False, expect_size: int | None = None) -> int:
        if self._fd is None:
            raise WriterClosedError("writer is closed")
        fd = self._fd
        payload = (text + "\n").encode("utf-8", "surrogatepass")
        _lock(fd)
        try:
            st = os.fstat(fd)
            _check_same_file(self.path, st)
            size = st.st_size
            if only_if_empty:
                if size > 0:
                    return size
                self.wrote_header = True
            if expect_size is not None and size != expect_size:
                raise StaleSessionError(
                    f"{self.path} changed since this session last read or wrote it ({expect_size:,} bytes then, "
                    f"{size:,} now): another handle or process appended to it. Nothing was written; reopen "
                    "the session to continue from its current state")
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload  # end a torn line left by a crash
            view = memoryview(payload)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            if self.fsync:
                os.fsync(fd)
            self.size = size + len(payload)
            return self.size
        finally:
            _unlock(fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass
