"""A session file's key for the cache, and what changed between two keys.

The key: device, inode, size, mtime, ctime, a hash of the first and of the last KB (one open, one
fstat, two positioned reads) and, once cached, the CRC-32 of the whole file (``crc``) and whether it
was cached within the mtime's resolution (``racy``). :func:`classify` says whether a file is
unchanged, has grown (only appended to) or changed otherwise; :func:`compare` does it for a load.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._cache_files import file_crc

__all__ = ["Changes", "classify", "compare", "probe"]

KB = 1024
RACY_NS = 2_000_000_000  # mtime this close to the time of caching: check the whole file's CRC next time


def hash_bytes(data: bytes) -> str:
    import hashlib  # (with the cache only: its OpenSSL module is a tenth of the loader's import)

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def probe(path: str, *, hashes: bool = True) -> dict[str, Any] | None:
    """A file's key: device, inode, size, mtime and (with ``hashes``) the hashes of its first and
    last KB; None when it cannot be read."""
    try:
        if not hashes:
            st = os.stat(path)
            return stat_key(st)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
        try:  # one open, fstat and two positioned reads: the whole cost of an unchanged file
            st = os.fstat(fd)
            head = _pread(fd, min(KB, st.st_size), 0)
            tail = _pread(fd, KB, st.st_size - KB) if st.st_size > KB else head
        finally:
            os.close(fd)
    except OSError:
        return None
    return {**stat_key(st), "head": hash_bytes(head), "tail": hash_bytes(tail)}


STAT_FIELDS = ("dev", "ino", "size", "mtime_ns", "ctime_ns")


def stat_fields(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What a key keeps of a stat (:data:`STAT_FIELDS`), as a tuple (a worker's trip back carries it)."""
    # (ctime: no program sets it back, so a `touch -r` that restores the mtime still shows)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def stat_key(st: os.stat_result | tuple) -> dict[str, int]:
    """A key of a stat alone (or of its :func:`stat_fields`)."""
    return dict(zip(STAT_FIELDS, st if type(st) is tuple else stat_fields(st)))


def same_stat(key: dict) -> Callable[[Any], bool]:
    """A check that a file's stat is still the one in ``key`` (it did not change while read)."""
    return lambda st: (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (key["size"], key["mtime_ns"], key["ctime_ns"])


def _pread(fd: int, n: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # (Windows)
    return os.read(fd, n)


def classify(old: dict[str, Any] | None, new: dict[str, Any] | None, path: str) -> str:
    """``"unchanged"``, ``"grown"`` or ``"changed"`` (also for a file new to ``old``).

    With the CRC-32 of the whole file as cached (``crc``, what the cache keeps), a file whose
    size, mtime, ctime, first and last KB all match is unchanged unless it was cached within the
    mtime's resolution (``racy``: its CRC is checked); any other file of the same size is unchanged
    only if its CRC matches; a larger file has grown only if its first ``size`` bytes have that CRC."""
    if not old or not new or (old["dev"], old["ino"]) != (new["dev"], new["ino"]):
        return "changed"
    crc = old.get("crc")
    same = [old.get(k) == new.get(k) for k in ("size", "mtime_ns", "ctime_ns", "head", "tail")
            if k in old and k in new]
    if all(same):
        if old.get("racy") and crc is not None and file_crc(path, old["size"]) != crc:
            return "changed"
        return "unchanged"
    if new["size"] < old["size"] or ("head" in old and old.get("head") != new.get("head")):
        return "changed"
    if new["size"] == old["size"]:  # touched (or edited in place): its bytes decide
        return "unchanged" if crc is not None and old.get("tail") == new.get("tail") and \
            file_crc(path, old["size"]) == crc else "changed"
    if "tail" in old:  # the KB that ended the file is still there
        start = max(old["size"] - KB, 0)
        try:
            with open(path, "rb") as fh:
                fh.seek(start)
                if hash_bytes(fh.read(old["size"] - start)) != old["tail"]:
                    return "changed"
        except OSError:
            return "changed"
    if crc is not None and file_crc(path, old["size"]) != crc:
        return "changed"  # the cached part was edited (same length) before the append
    return "grown"


def moved(old: dict, new: dict | None) -> bool:
    """Whether an unchanged file's stat moved on (touched): its manifest entry takes the new one."""
    return new is not None and any(old.get(k) != new.get(k) for k in ("mtime_ns", "ctime_ns"))


@dataclass
class Changes:
    """What a reload found, per file path (in load order)."""

    added: list[str] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether anything was added, appended to, rewritten or removed."""
        return bool(self.added or self.appended or self.rewritten or self.removed)

    def __repr__(self) -> str:
        return (f"Changes(added={len(self.added)}, appended={len(self.appended)}, "
                f"rewritten={len(self.rewritten)}, removed={len(self.removed)}, unchanged={len(self.unchanged)})")


def compare(old_keys: Mapping[str, dict], new_keys: Mapping[str, dict | None], paths: Iterable[str]) -> Changes:
    """The :class:`Changes` between two loads' file keys."""
    ch = Changes()
    for p in paths:
        if p not in old_keys:
            ch.added.append(p)
            continue
        kind = classify(old_keys[p], new_keys.get(p), p)
        (ch.unchanged if kind == "unchanged" else ch.appended if kind == "grown" else ch.rewritten).append(p)
    ch.removed = [p for p in old_keys if p not in new_keys]
    return ch


class KeyStat:
    """A key's stat fields under ``os.stat_result``'s names (for :func:`same_stat`)."""

    def __init__(self, key: dict) -> None:
        self.st_size, self.st_mtime_ns, self.st_ctime_ns = key["size"], key["mtime_ns"], key["ctime_ns"]
