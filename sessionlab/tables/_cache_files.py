"""The cache's files on disk: names, sealed manifests, checksummed segments, safe writes and clearing.

Everything the cache writes lives in one folder, ``<cache>/entries-v1``, under names of one
pattern: ``<32 hex>.json`` (a manifest), ``<32 hex>-<12 hex>.arrow`` (a segment), and either of
those with ``.tmp-<pid>-<8 hex>`` after it while it is being written. Nothing else there is the
cache's, and nothing is ever removed or written through a symlink:

- :func:`clear_cache` removes only regular files of those names, from a folder opened without
  following symlinks (a symlinked ``entries-v1`` is refused with :class:`~sessionlab.errors.CacheError`);
- :func:`atomic_write` creates its temporary file exclusively (``O_EXCL | O_NOFOLLOW``, a random
  name), fsyncs it, renames it over the target and fsyncs the folder, and removes it on any failure;
- :func:`cleanup` removes the temporary files of processes that are gone (a ``kill -9`` mid-write)
  at once, and any other older than an hour.

A manifest is sealed: its first line is the CRC-32 and length of the JSON after it
(:func:`seal_manifest`, :func:`split_manifest`). A segment's CRC-32 and size are in the manifest and
checked before its first use in a process (:func:`segment_ok`; a segment is immutable, so a
segment whose stat has not changed since is not read again).
"""

from __future__ import annotations

import os
import re
import stat
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CacheError

__all__ = ["SUBDIR", "NAME", "store_dir", "clear_cache", "cache_size", "atomic_write", "cleanup", "seal_manifest",
           "split_manifest", "segment_ok", "file_crc", "valid_entry"]

SUBDIR = "entries-v1"
NAME = re.compile(r"[0-9a-f]{32}(?:\.json|-[0-9a-f]{12}\.arrow)(?:\.tmp-(\d+)-[0-9a-f]{8})?")
STALE_TMP_S = 3600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1 << 20


def store_dir(root: Path) -> Path:
    """The cache's own folder under ``root``; :class:`CacheError` when it exists as anything but a
    real folder (a symlink to elsewhere, a file)."""
    d = root / SUBDIR
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        return d
    except OSError as exc:  # (``root`` is a file)
        raise CacheError(f"{root} is not a folder: it is not the cache's ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise CacheError(f"{d} is a symlink: the cache neither uses nor clears a folder through one")
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"{d} is not a folder: it is not the cache's")
    return d


def _own_files(fd: int) -> list[os.DirEntry]:
    """The regular files of the cache's names in the folder open as ``fd`` (symlinks left out)."""
    with os.scandir(fd) as it:
        return [e for e in it if NAME.fullmatch(e.name) and e.is_file(follow_symlinks=False)]


def clear_cache(root: Path | None) -> tuple[Path | None, int, int]:
    """Remove the cache's files under ``root``; returns (root, files removed, bytes freed).

    Raises :class:`CacheError` when the cache folder is a symlink or not a folder (nothing is
    removed) or when some files could not be removed (the message counts them)."""
    if root is None:
        return None, 0, 0
    d = store_dir(root)
    try:
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
    except FileNotFoundError:
        return root, 0, 0
    except OSError as exc:
        raise CacheError(f"cannot open the cache folder {d}: {exc.strerror or exc}") from None
    n = size = 0
    failed: list[str] = []
    try:
        for e in _own_files(fd):
            try:
                s = e.stat(follow_symlinks=False).st_size
                os.unlink(e.name, dir_fd=fd)
            except FileNotFoundError:
                continue  # (another process cleared it first)
            except OSError as exc:
                failed.append(exc.strerror or str(exc))
                continue
            n += 1
            size += s
    finally:
        os.close(fd)
    if failed:
        raise CacheError(f"could not remove {len(failed)} files from {d} ({failed[0]}); removed {n} files "
                         f"({size / 1e6:.1f} MB)")
    return root, n, size


def cache_size(root: Path | None) -> int:
    """Bytes the cache's own files take under ``root``."""
    if root is None:
        return 0
    try:
        d = store_dir(root)
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
    except (OSError, CacheError):
        return 0
    try:
        return sum(e.stat(follow_symlinks=False).st_size for e in _own_files(fd))
    finally:
        os.close(fd)


def atomic_write(target: Path, data: bytes | memoryview | None = None, *,
                 write: Callable[[Path], Any] | None = None) -> tuple[int, int]:
    """Write ``data`` (or let ``write`` write the file at the path it is given) to a new temporary
    file beside ``target`` (created exclusively, never through a symlink), fsync it, rename it to
    ``target`` and fsync the folder; returns the file's size and CRC-32. On any failure, the
    temporary file is removed and ``target`` is as it was."""
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    flags = os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, os.O_RDWR | flags, 0o644)
    try:
        try:
            if write is not None:
                write(tmp)  # (into the file just created: it is ours)
            else:
                view = memoryview(data if data is not None else b"")
                while view:
                    view = view[os.write(fd, view):]
            size = os.fstat(fd).st_size
            crc = _crc_fd(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sync_dir(target.parent)
    return size, crc or 0


def _sync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # (some file systems cannot sync a folder)
    finally:
        os.close(fd)


def _gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError, OverflowError):
        return False
    return False


def cleanup(d: Path) -> None:
    """Remove temporary files that killed processes left in ``d``: at once when their process is
    gone, else when older than an hour."""
    cutoff = time.time() - STALE_TMP_S
    for f in d.glob("*.tmp-*"):
        m = NAME.fullmatch(f.name)
        if m is None or m.group(1) is None:
            continue
        try:
            st = os.lstat(f)
            if stat.S_ISREG(st.st_mode) and (_gone(int(m.group(1))) or st.st_mtime < cutoff):
                f.unlink()
        except OSError:
            pass


def seal_manifest(body: bytes) -> bytes:
    """``body`` with a first line holding its CRC-32 and length."""
    return b"%08x %d\n" % (zlib.crc32(body), len(body)) + body


def split_manifest(data: bytes) -> tuple[bytes, bytes]:
    """(seal line, body) of a sealed manifest; ValueError when the seal does not match the body."""
    head, sep, body = data.partition(b"\n")
    m = re.fullmatch(rb"([0-9a-f]{8}) (\d{1,12})", head)
    if not sep or m is None or int(m.group(2)) != len(body) or int(m.group(1), 16) != zlib.crc32(body):
        raise ValueError("the manifest's checksum does not match its contents")
    return head, body


_VERIFIED: dict[str, tuple] = {}  # segment path -> its stat when its checksum last matched


def segment_ok(path: Path, size: int, crc: int) -> bool | None:
    """Whether the segment at ``path`` has ``size`` bytes and CRC-32 ``crc`` (None: no such file)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if _VERIFIED.get(str(path)) == sig:
            return True
        if not stat.S_ISREG(st.st_mode) or st.st_size != size or _crc_fd(fd, size) != crc:
            return False
    finally:
        os.close(fd)
    _VERIFIED[str(path)] = sig
    return True


def _crc_fd(fd: int, size: int, start: int = 0) -> int | None:
    """CRC-32 of the first ``size`` bytes of ``fd`` (None when it has fewer), read in chunks."""
    crc, offset = start, 0
    while offset < size:
        chunk = os.pread(fd, min(_CHUNK * 8, size - offset), offset)
        if not chunk:
            return None
        crc = zlib.crc32(chunk, crc)
        offset += len(chunk)
    return crc


def file_crc(path: str, size: int, *, check: Callable[[os.stat_result], bool] | None = None) -> int | None:
    """CRC-32 of a session file's first ``size`` bytes; None when it cannot be read, is shorter, or
    (with ``check``) its stat after the read fails ``check`` (it changed while read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        crc = _crc_fd(fd, size)
        if crc is not None and check is not None and not check(os.fstat(fd)):
            return None
        return crc
    except OSError:
        return None
    finally:
        os.close(fd)


def _int(x: Any, lo: int = 0) -> bool:
    return type(x) is int and x >= lo


_KEY_INTS = ("dev", "ino", "size", "mtime_ns", "ctime_ns", "crc", "nbytes", "rows", "batch", "offset")


def valid_entry(e: Any, batch_rows: dict[str, list[int]]) -> bool:
    """Whether a manifest's file entry has every field the cache reads, of the right type, and
    rows that lie inside a batch of a segment it checked (``batch_rows``: segment -> rows per batch)."""
    if not isinstance(e, dict) or not isinstance(e.get("path"), str) or not all(_int(e.get(k)) for k in _KEY_INTS):
        return False
    if not isinstance(e.get("segment"), str) or not isinstance(e.get("session"), dict):
        return False
    if not all(isinstance(e.get(k), str) for k in ("head", "tail")) or \
            not isinstance(e.get("loader"), (str, type(None))):
        return False
    rows = batch_rows.get(e["segment"])
    if rows is None or e["batch"] >= len(rows) or e["offset"] + e["rows"] > rows[e["batch"]]:
        return False
    issues = e.get("issues")
    if not isinstance(issues, list) or not all(
            isinstance(i, list) and len(i) == 5 and _int(i[0]) and isinstance(i[1], str) and isinstance(i[2], str)
            and isinstance(i[3], (str, type(None))) and isinstance(i[4], (str, type(None))) for i in issues):
        return False
    ext = [e.get(k) for k in ("complete", "lines", "header_end")]
    return all(x is None for x in ext) or all(_int(x) for x in ext)
