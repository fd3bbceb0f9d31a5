"""An append-aware cache of loaded session files: reloads read only what changed.

Agents append to their session files, and notebooks reload the same history all day. The cache
keeps, per source (the folder, file or glob list given to the loader), the entries of every file
of the last load in Arrow IPC files and a manifest: for each file its key (path, device and inode,
size, mtime, ctime, a hash of its first and last KB, and the CRC-32 of the whole file as cached:
:mod:`._cache_keys`), its session row and its line issues. On the next load each file is one of:

- *unchanged* (same key): its rows come from the cache (memory-mapped, no copy); a file whose
  stat changed but not its size (touched, or edited in place) is unchanged only if its CRC-32
  still matches;
- *grown* (same device/inode and first KB, larger, the KB that used to end it still there, and
  the CRC-32 of its first ``size`` bytes still the cached file's): only the bytes after its last
  complete line are parsed (after the header and a one-line stand-in for each old entry they
  name as parent, so they parse as a clean file, on the path a fresh load takes), the new rows
  get their line numbers, entry and parent indexes in the whole file, and the file's session
  facts (name, leaf, leaf count) are recomputed from its rows. Only a clean pi v3 file whose
  first line is its header is extended this way; and only when the new lines are clean apart
  from parents in the old part, and are entries whose row needs no other line (messages of the
  usual roles, model and thinking changes, labels, names, custom entries, branch summaries): a
  duplicated id, a torn last line, a compaction... and the file is rescanned whole;
- anything else (new, rewritten, truncated, replaced, migrated): loaded whole.

A file modified within two seconds of being cached could change again within the resolution of
its mtime, so its entry is marked ``racy`` and its CRC-32 is checked on the next load ("racily
clean", as git calls it). The cache's own files are checked before use (a sealed manifest,
a CRC-32 per segment, every field and row range of every file entry: :mod:`._cache_files`); what
does not match is read afresh, with one :class:`~sessionlab.errors.CacheWarning`. Every write
goes to a new temporary file, fsynced and renamed over the old one, so a killed process or a
power cut leaves the previous cache or none, never a torn one. Results always equal a fresh
load: the property tests in ``tests/properties/test_cache_properties.py`` append, truncate,
rewrite and tear files between loads, and the fuzz target ``tests/fuzz/cache_worker.py`` damages
the cache between loads. What the cache detects and what it cannot: ``docs/cache.md``.

Location: ``SESSIONLAB_CACHE_DIR`` if set (empty: no cache by default), else
``platformdirs.user_cache_dir("sessionlab")``; ``sessionlab cache clear`` empties it.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Union

import pyarrow as pa

from .._arrow import shown
from .._rowsof import RowsOf, joined_tables, row_count
from ..errors import ArgumentTypeError, CacheError, CacheWarning
from ..pi.io.issues import LineIssue
from . import _cache_files as files
from ._cache_files import atomic_write, file_crc, seal_manifest, split_manifest
from ._cache_grow import extend, extend_agent
from ._cache_keys import RACY_NS, Changes, classify, compare, hash_bytes, moved, probe, same_stat
from ._file import FileResult
from ._schema import ENTRY_SCHEMA

__all__ = ["CacheOption", "Changes", "default_cache_dir", "resolve_cache", "clear_cache", "cache_size", "Store",
           "probe", "classify", "compare", "seal_manifest", "split_manifest"]

CacheOption = Union[bool, str, os.PathLike, None]

_FORMAT = 5
_BATCH_BYTES = 16_000_000  # file bytes per record batch of a segment (about as many Arrow bytes)
_MAX_SEGMENTS = 8  # past this many segments for one source, a write packs everything into one


def default_cache_dir() -> Path | None:
    """``$SESSIONLAB_CACHE_DIR`` (``~`` expanded; an empty value means no cache), else the user's
    cache folder from platformdirs (``~/.cache/sessionlab`` on Linux)."""
    env = os.environ.get("SESSIONLAB_CACHE_DIR")
    if env is not None:
        return Path(os.path.expanduser(env)) if env.strip() else None
    import platformdirs

    return Path(platformdirs.user_cache_dir("sessionlab"))


def resolve_cache(cache: CacheOption) -> Path | None:
    """The folder ``cache`` names: ``None``/``True`` the default, ``False`` none, else the path."""
    if cache is False:
        return None
    if cache is None or cache is True:
        return default_cache_dir()
    if isinstance(cache, (str, os.PathLike)):
        return Path(os.path.expanduser(os.fspath(cache)))
    raise ArgumentTypeError("cache", f"cache must be None, True, False or a folder path, not {type(cache).__name__}")


def clear_cache(cache: CacheOption = None) -> tuple[Path | None, int, int]:
    """Remove the cache's own files (never through a symlink, never another file); returns
    (folder, files removed, bytes freed). :class:`~sessionlab.errors.CacheError` when the cache
    folder is a symlink or not a folder, or some files could not be removed."""
    return files.clear_cache(resolve_cache(cache))


def cache_size(cache: CacheOption = None) -> int:
    """Bytes the cache's files take on disk."""
    return files.cache_size(resolve_cache(cache))


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """Changes whenever the code that makes the rows may have: the schema, the loader's files (pi's,
    the agents' readers, the tables') and the price table the agents' calls are priced from."""
    from importlib.util import find_spec

    here = Path(__file__).resolve().parent.parent
    parts = [str(_FORMAT), str(ENTRY_SCHEMA)]
    prices = find_spec("genai_prices")
    found = [sorted(Path(prices.origin).parent.glob("*.py"))] if prices is not None and prices.origin else []
    for group in [sorted(here.glob(p)) for p in ("tables/*.py", "pi/**/*.py", "agents/*.py", "*.py", "_scan*")] + found:
        for f in group:
            st = f.stat()
            parts.append(f"{f.relative_to(f.parent.parent)}:{st.st_size}:{st.st_mtime_ns}")
    parts.append(os.environ.get("SESSIONLAB_NATIVE", ""))
    return hash_bytes("\n".join(parts).encode())


# ---------------------------------------------------------------------------------------------
# the store: one IPC file per source


def _issue_row(i: LineIssue) -> list:
    return [i.line, i.kind, i.message, i.excerpt, i.entry_id]


def _issue(path: str, row: list) -> LineIssue:
    return LineIssue(path, row[0], row[1], row[2], row[3], row[4])


class Store:
    """The cache of one source: ``load`` returns each file's result, from the cache where it can.

    On disk: a manifest ``<source key>.json`` (each file's key, session row, issues, and where its
    rows are) and a few immutable Arrow IPC *segments* ``<source key>-<id>.arrow`` holding each
    file's rows as its own record batches. A reload that changed some files writes one new segment
    with just those files' rows and a new manifest; past ``_MAX_SEGMENTS`` segments everything is
    rewritten into one. Segments and manifests are written to a temporary name, fsynced and renamed,
    and the manifest's rename is the commit: a killed process leaves the previous cache in force.
    The manifest is sealed with its CRC-32 and names each segment's CRC-32 and size; a file is served
    from the cache only when all of that matches and its entry's fields are valid (else it is read
    afresh, with one :class:`~sessionlab.errors.CacheWarning` per load).
    """

    def __init__(self, root: Path, source_key: str) -> None:
        self.dir = files.store_dir(root)
        self.key = source_key
        self.manifest = self.dir / f"{source_key}.json"
        self.keys: dict[str, dict] = {}
        self.changes = Changes()
        self.damage: list[str] = []  # what was wrong with the cache this load (for the warning)
        self.segment_records: dict[str, dict] = {}  # the segments read this load: name, size, crc

    @classmethod
    def for_source(cls, cache: CacheOption, source: Any) -> Store | None:
        root = resolve_cache(cache)
        if root is None:
            return None
        items = [source] if source is None or isinstance(source, (str, os.PathLike)) else list(source)
        spec = [[None, None] if i is None else [os.fspath(i), os.path.abspath(os.fspath(i))] for i in items]
        try:
            return cls(root, hash_bytes(json.dumps(spec, ensure_ascii=True).encode()))
        except CacheError as exc:
            warnings.warn(f"sessionlab cache not used: {exc}", CacheWarning, stacklevel=3)
            return None

    def _read(self) -> tuple[dict[str, list[pa.Table]], dict[str, dict]] | None:
        try:
            data = self.manifest.read_bytes()
        except OSError:
            return None  # no cache yet
        try:
            meta = json.loads(split_manifest(data)[1])
        except ValueError:
            self.damage.append("its manifest does not match its checksum")
            return None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT or meta.get("fingerprint") != _fingerprint():
            return None  # one from another version: load as if none
        segs, listed = meta.get("segments"), meta.get("files")
        if not isinstance(segs, list) or not isinstance(listed, list) or not all(
                isinstance(g, dict) and isinstance(g.get("name"), str) and isinstance(g.get("crc"), int)
                and isinstance(g.get("size"), int) for g in segs):
            self.damage.append("its manifest is not one the cache wrote")
            return None
        segments, batch_rows = self._open_segments(segs)
        lost = {g["name"] for g in segs} - set(segments)
        entries: dict[str, dict] = {}
        twice: set[str] = set()
        for e in listed:
            if isinstance(e, dict) and isinstance(e.get("segment"), str) and e["segment"] in lost:
                continue  # its segment is gone (another process's newer write) or damaged (counted)
            if not files.valid_entry(e, batch_rows) or not _rows_match(e, segments):
                self.damage.append("a file's entry in its manifest is not valid")
            elif e["path"] in entries or e["path"] in twice:
                self.damage.append("its manifest lists a file twice")
                twice.add(e["path"])
                entries.pop(e["path"], None)
            else:
                entries[e["path"]] = e
        return segments, entries

    def _open_segments(self, segs: list[dict]) -> tuple[dict[str, list[pa.Table]], dict[str, list[int]]]:
        """The segments whose checksum matches, as tables per batch, and their rows per batch."""
        segments: dict[str, list[pa.Table]] = {}
        batch_rows: dict[str, list[int]] = {}
        for g in segs:
            name = g["name"]
            if not (files.NAME.fullmatch(name) and name.startswith(self.key + "-") and name.endswith(".arrow")):
                self.damage.append("its manifest names a file that is not a segment")
                continue
            ok = files.segment_ok(self.dir / name, g["size"], g["crc"])
            if not ok:
                if ok is False:
                    self.damage.append(f"segment {name} does not match its checksum")
                continue  # (None: gone, removed by another process's newer write)
            try:
                reader = pa.ipc.open_file(pa.memory_map(str(self.dir / name), "r"))
                same = reader.schema == ENTRY_SCHEMA
                tables = [pa.Table.from_batches([reader.get_batch(i)]) for i in range(reader.num_record_batches)] \
                    if same else []
            except (OSError, ValueError, pa.ArrowException):
                same = None if not (self.dir / name).exists() else False  # (None: removed meanwhile)
            if not same:
                if same is False:
                    self.damage.append(f"segment {name} cannot be read")
                continue
            segments[name] = tables
            batch_rows[name] = [t.num_rows for t in tables]
            self.segment_records[name] = g
        return segments, batch_rows

    def load(self, paths: list[str], load_whole: Callable[[list[str]], Iterator[list[FileResult]]]) -> list[FileResult]:
        """Each path's result, in order; the cache is updated when anything changed."""
        old = self._read()
        segments, entries = old if old is not None else ({}, {})
        if old is not None:
            files.cleanup(self.dir)  # (a killed writer's temporary files, even when this load writes nothing)
        now_keys = {p: probe(p) for p in paths}
        results: dict[str, FileResult] = {}
        grown: list[str] = []
        whole: list[str] = []
        touched: dict[str, dict] = {}
        for p in paths:
            e = entries.get(p)
            kind = classify(e, now_keys[p], p) if e is not None else "new"
            if kind == "unchanged":
                results[p] = _cached(p, e, segments)  # type: ignore[arg-type]
                self.changes.unchanged.append(p)
                if moved(e, now_keys[p]):  # type: ignore[arg-type]
                    touched[p] = now_keys[p] or {}
            elif kind == "grown":
                grown.append(p)
            else:
                whole.append(p)
                (self.changes.added if kind == "new" else self.changes.rewritten).append(p)
        fresh_meta: dict[str, dict] = {}
        for p in grown:
            old_p = _cached(p, entries[p], segments)
            grow = extend_agent if old_p.loader == "agent" else extend
            got = grow(p, entries[p], old_p, now_keys[p])
            if got is None:
                whole.append(p)
                self.changes.rewritten.append(p)
            else:
                results[p], fresh_meta[p] = got
                self.changes.appended.append(p)
        if whole:
            order = {p: i for i, p in enumerate(paths)}
            whole.sort(key=order.__getitem__)
            for chunk in load_whole(whole):
                for r in chunk:
                    results[r.path] = r
        self.changes.removed = [p for p in entries if p not in now_keys]
        out = [results[p] for p in paths]
        read_whole = set(whole)
        self.keys = {p: (None if p in read_whole else fresh_meta.get(p) or entries.get(p)) or _key_only(now_keys[p])
                     or {} for p in paths}
        if self.damage:
            warnings.warn(f"sessionlab cache {self.dir} was damaged ({self.damage[0]}"
                          f"{f'; {len(self.damage) - 1} more problems' if len(self.damage) > 1 else ''}): "
                          "the files it held were read afresh and the cache is written again", CacheWarning,
                          stacklevel=4)
        if self.changes.changed or old is None or touched or self.damage:
            try:
                written = self._write(out, entries, now_keys, fresh_meta, read_whole, touched)
                self.keys.update({p: m for p, m in written.items() if p in self.keys})
            except OSError:
                pass  # a read-only or full disk only costs the next load its speed
        return out

    def _metas(self, results: list[FileResult], old: dict[str, dict], keys: dict[str, dict | None],
               fresh_meta: dict[str, dict], loaded: set[str],
               touched: dict[str, dict]) -> list[tuple[FileResult, dict, bool]]:
        """(result, manifest entry, rows to write) for each file to keep in the cache."""
        now = time.time_ns()
        metas: list[tuple[FileResult, dict, bool]] = []
        for r in results:
            if r.session is None or r.raw_table("entries") is None:  # (not sliced to ask: see RowsOf)
                continue  # a file that failed: try again next time
            if r.path in fresh_meta:
                metas.append((r, fresh_meta[r.path], True))
            elif r.path in loaded:
                key = keys.get(r.path)
                if key is None or key["size"] != r.nbytes:
                    continue  # the file changed while it was read: do not keep that
                crc = file_crc(r.path, key["size"], check=same_stat(key))
                if crc is None:
                    continue  # ... or while its checksum was taken
                meta = dict(key, crc=crc, racy=key["mtime_ns"] >= now - RACY_NS)
                metas.append((r, meta, True))
            else:
                meta = dict(old[r.path])
                if r.path in touched:
                    meta.update({k: touched[r.path][k] for k in ("mtime_ns", "ctime_ns")})
                meta["racy"] = meta["mtime_ns"] >= now - RACY_NS
                metas.append((r, meta, False))
        return metas

    def _write(self, results: list[FileResult], old: dict[str, dict], keys: dict[str, dict | None],
               fresh_meta: dict[str, dict], loaded: set[str], touched: dict[str, dict]) -> dict[str, dict]:
        metas = self._metas(results, old, keys, fresh_meta, loaded, touched)
        kept = {m["segment"] for _, m, write in metas if not write}
        rewrite_all = len(kept) + 1 > _MAX_SEGMENTS or bool(self.damage)
        name = f"{self.key}-{os.urandom(6).hex()}.arrow"
        batches: list[pa.RecordBatch] = []
        group: list[Any] = []  # (tables or RowsOf)
        rows = size = 0
        out = []
        for r, meta, write in metas:
            if write or rewrite_all:
                # a file's rows are a slice of one record batch of many files: one batch to decode
                # per ~16 MB on reading instead of one per file
                meta.update(segment=name, batch=len(batches), offset=rows)
                held = r.raw_table("entries")
                group.append(held)
                rows += row_count(held)
                size += r.nbytes  # (the file's bytes: about its rows' Arrow bytes, and free to know)
                if size >= _BATCH_BYTES:
                    batches.append(_one_batch(group))
                    group, rows, size = [], 0, 0
            meta.update(path=r.path, rows=row_count(r.raw_table("entries")), nbytes=r.nbytes,
                        session=r.session, loader=r.loader, issues=[_issue_row(i) for i in r.issues])
            if r.agent_extra is not None:  # what the agent's pass over a load needs of the file (JSON)
                meta["extra"] = r.agent_extra
            if r.agent_state is not None:  # what its reader needs to read the file's new lines alone
                meta["resume"] = r.agent_state
            out.append(meta)
        if group:
            batches.append(_one_batch(group))
        used = sorted({m["segment"] for m in out})
        self.dir.mkdir(parents=True, exist_ok=True)
        files.cleanup(self.dir)
        seg_meta = [self.segment_records[n] for n in used if n in self.segment_records]
        if name in used:
            size, crc = atomic_write(self.dir / name, write=lambda tmp: _write_ipc(tmp, batches))
            seg_meta.append({"name": name, "size": size, "crc": crc})
        body = json.dumps({"format": _FORMAT, "fingerprint": _fingerprint(), "segments": seg_meta, "files": out},
                          ensure_ascii=True)
        atomic_write(self.manifest, seal_manifest(body.encode()))
        for f in self.dir.glob(f"{self.key}-*.arrow"):  # segments this manifest no longer uses
            if f.name not in used and files.NAME.fullmatch(f.name):
                try:
                    f.unlink()
                except OSError:
                    pass
        return {m["path"]: m for m in out}


def _one_batch(helds: list[Any]) -> pa.RecordBatch:
    """Files' tables as held (tables or :class:`RowsOf`), one after the other as one batch."""
    tables = [t for t in joined_tables(helds) if t.num_rows]
    if not tables:
        return pa.RecordBatch.from_pylist([], schema=ENTRY_SCHEMA)
    return pa.concat_tables(tables).combine_chunks().to_batches()[0]


def _cached(path: str, e: dict, segments: dict[str, list[pa.Table]]) -> FileResult:
    entries = RowsOf(segments[e["segment"]][e["batch"]], e["offset"], e["rows"])  # (sliced when asked for)
    return FileResult(path=path, nbytes=e["nbytes"], entries=entries, session=e["session"],
                      issues=[_issue(path, row) for row in e["issues"]], loader=e.get("loader"),
                      agent_extra=e.get("extra"), agent_state=e.get("resume"))


def _rows_match(e: dict, segments: dict[str, list[pa.Table]]) -> bool:
    """Whether the rows an entry names are all of its file's rows and only those (its ``file``
    at both ends with ``entry_index`` 0 and rows - 1, and the row after them not its file's next),
    and its session row and issues are its own (the session's ``file``, the issue count): a wrong
    offset, count or row cannot serve another file's rows, or part of them."""
    name = shown(e["path"])
    s = e["session"]
    if s.get("file") != e["path"] or s.get("issue_count") != len(e["issues"]):
        return False
    t = segments[e["segment"]][e["batch"]]
    n, first = e["rows"], e["offset"]
    after = first + n
    if after < t.num_rows and t["file"][after].as_py() == name and t["entry_index"][after].as_py() == n:
        return False  # the file has more rows than the entry says
    if n == 0:
        return True
    last = after - 1
    return (t["entry_index"][first].as_py() == 0 and t["entry_index"][last].as_py() == n - 1
            and t["file"][first].as_py() == name and t["file"][last].as_py() == name)


def _key_only(key: dict | None) -> dict | None:
    return None if key is None else dict(key)


def _write_ipc(path: Path, batches: list[pa.RecordBatch]) -> None:
    """A segment: an Arrow IPC file of ``batches`` (one or more per file, as the manifest counts them)."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, ENTRY_SCHEMA) as writer:
        for batch in batches:
            writer.write_batch(batch)
