"""The cache's grown files: a file that grew since it was cached parses only its new lines.

A pi v3 file's new lines are parsed on the path a fresh load of the whole file takes, after its
header and a one-line stand-in for each old entry they name as parent (:func:`extend`); another
agent's file's new lines are read by its reader from the state it left (:func:`extend_agent`,
:attr:`~sessionlab.agents.AgentSpec.resume`). Either returns None when the file must be read
whole. See :mod:`._cache` for when a file counts as grown.
"""

from __future__ import annotations

import io
import json
import re
import time
import zlib

import pyarrow as pa

from .._arrow import compute as pc
from .._arrow import scalar, strings
from ._cache_keys import RACY_NS, KeyStat, probe, same_stat
from ._file import FileResult, load_data, materialize
from ._native import NativeBatch, native_available
from ._schema import ENTRY_SCHEMA
from ._values import check_values

__all__ = ["extend", "extend_agent"]

_APPENDABLE = {("pi", 3)}  # dialect and version whose lines parse on their own (no migration)
# entries whose row depends on no other line of the file; anything else (a compaction, a system
# message, an entry type this list does not know) sends the file to a whole rescan
# (lists, not arrays: pa.array on Python lists imports pandas, which a plain load must not)
_LINE_LOCAL_TYPES = ["message", "model_change", "thinking_level_change", "label", "session_info", "custom",
                     "custom_message", "branch_summary"]
_LINE_LOCAL_ROLES = ["user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary",
                     "compactionSummary"]


class _Tail:
    """A grown file's part after the last complete line it had when cached: where that part starts
    (``complete``), the lines before it, the end of its first line (a pi header's) and its bytes."""

    def __init__(self, path: str, meta: dict) -> None:
        with open(path, "rb") as fh:
            if meta.get("lines") is None:  # the first append since a whole load: find its last line
                prefix = fh.read(meta["size"])
                self.complete = prefix.rfind(b"\n") + 1
                self.lines = prefix.count(b"\n", 0, self.complete)
                self.header_end = prefix.find(b"\n") + 1
            else:
                self.complete, self.lines, self.header_end = meta["complete"], meta["lines"], meta["header_end"]
            fh.seek(0)
            self.header = fh.read(self.header_end)
            fh.seek(self.complete)
            self.data = fh.read()

    def kept(self, old: FileResult) -> pa.Table:
        """The old rows of the lines before the tail (a torn last line's rows go: it is read again)."""
        kept = old.entries
        assert kept is not None
        if kept.num_rows:
            kept = kept.filter(pc.less_equal(kept["line_no"], scalar(self.lines, pa.int32())))
        return kept

    def key(self, path: str, meta: dict, now: dict | None) -> dict | None:
        """The file's new key (the CRC-32 carried on over the new bytes, where its last complete line
        ends now); None when it changed again while it was read."""
        size = self.complete + len(self.data)
        key = probe(path)
        if key is None or now is None or key["size"] != size or not same_stat(now)(KeyStat(key)):
            return None
        key["crc"] = zlib.crc32(memoryview(self.data)[meta["size"] - self.complete:], meta["crc"])
        key["racy"] = key["mtime_ns"] >= time.time_ns() - RACY_NS
        last_nl = self.data.rfind(b"\n") + 1
        key.update(complete=self.complete + last_nl, lines=self.lines + self.data.count(b"\n", 0, last_nl),
                   header_end=self.header_end)
        return key


def extend(path: str, meta: dict, old: FileResult, now: dict | None) -> tuple[FileResult, dict] | None:
    """``old`` extended by the file's new complete-or-not lines; None when it must be rescanned.
    ``now`` is the file's key taken before its prefix was checked: a file that changed since is
    rescanned."""
    s = old.session or {}
    if (s.get("dialect"), s.get("version")) not in _APPENDABLE or not old.fast:
        return None  # (a file the fast paths refused is read whole: its new lines would take another path)
    try:
        tail = _Tail(path, meta)
    except OSError:
        return None
    lines = tail.lines
    if tail.header_end == 0 or any(i.line <= lines for i in old.issues) or \
            not _is_header(tail.header, s.get("session_id")):
        return None
    kept = tail.kept(old)
    stubs = _stubs(kept, tail.data)
    new = _load_bytes(path, tail.header + b"".join(stubs.values()) + tail.data)
    table = _join(kept, new, lines, list(stubs))
    if table is None:
        return None
    res = FileResult(path=path, nbytes=tail.complete + len(tail.data), entries=table, loader=old.loader,
                     session={**s, "issue_count": 0})  # (facts: the sessions table's owner)
    key = tail.key(path, meta, now)
    return None if key is None else (res, key)  # (None: it changed again while we read: load it whole)


def extend_agent(path: str, meta: dict, old: FileResult, now: dict | None) -> tuple[FileResult, dict] | None:
    """A grown file of another agent than pi: its kept rows and its new lines, read alone by the
    agent's reader with the state it left (:attr:`FileResult.agent_state`); None when it must be
    read whole (the agent's reader cannot go on, or the file changed again meanwhile)."""
    from ._agents import extend_agent_file

    agent = (old.session or {}).get("agent")
    if meta.get("resume") is None or not isinstance(agent, str) or old.entries is None:
        return None
    try:
        tail = _Tail(path, meta)
    except OSError:
        return None
    res = FileResult(path=path, nbytes=tail.complete + len(tail.data))
    try:
        got = extend_agent_file(res, agent, io.BytesIO(tail.data), meta["resume"], tail.lines, tail.kept(old),
                                [i for i in old.issues if i.line <= tail.lines], old.agent_extra)
    except Exception:  # (a state this version's reader does not take: read the file whole)
        return None
    key = None if got is None else tail.key(path, meta, now)
    return None if key is None else (res, key)


_PARENT = re.compile(rb'"parentId":"([^"\\]*)"')
_STUB_TS = "1970-01-01T00:00:00.000Z"


def _stubs(kept: pa.Table, tail: bytes) -> dict[str, bytes]:
    """A one-line stand-in (a ``custom`` entry, no parent) for each old entry the new lines name as
    parent, so the new lines parse as a clean file, on the path a fresh load of the whole file
    takes (the C scanner refuses parents it has not seen). Dropped again in :func:`_join`."""
    named = {m.decode("utf-8", "replace") for m in _PARENT.findall(tail)}
    if not named or not kept.num_rows:
        return {}
    old_ids = set(kept["entry_id"].to_pylist())
    return {i: json.dumps({"type": "custom", "id": i, "parentId": None, "timestamp": _STUB_TS,
                           "customType": "sessionlab-cache-stub"}, separators=(",", ":")).encode() + b"\n"
            for i in sorted(named & old_ids)}


def _load_bytes(path: str, data: bytes) -> FileResult:
    """One file's bytes through the loader's paths, in the order :func:`._file.load_chunk` tries them."""
    if native_available():
        batch = NativeBatch(False)
        res = FileResult(path=path, nbytes=len(data))
        try:
            if batch.add(res, data):
                batch.finish()
                materialize([res])
                check_values(res)
                return res
        except Exception:  # (as load_chunk: the slower paths decide)
            pass
    res = load_data(path, data)
    materialize([res])
    check_values(res)
    return res


def _is_header(line: bytes, session_id: str | None) -> bool:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and obj.get("type") == "session" and obj.get("id") == session_id


def _join(kept: pa.Table, new: FileResult, lines: int, stubs: list[str]) -> pa.Table | None:
    """The kept rows, then the new rows renumbered into the whole file (the stand-ins for their old
    parents dropped); None when the new lines are not clean on their own."""
    s = new.session
    n_s = len(stubs)
    if s is None or new.entries is None or (s.get("dialect"), s.get("version")) not in _APPENDABLE or \
            not new.fast or new.issues:
        return None
    t = new.entries
    if n_s and t["entry_id"].slice(0, n_s).to_pylist() != stubs:
        return None
    t = t.slice(n_s)
    local = pc.and_(pc.is_in(t["type"], value_set=strings(_LINE_LOCAL_TYPES)),
                    pc.or_(pc.not_equal(t["type"], scalar("message")),
                           pc.is_in(t["role"], value_set=strings(_LINE_LOCAL_ROLES))))
    if t.num_rows and not pc.all(pc.fill_null(local, scalar(False))).as_py():
        return None
    n_old = kept.num_rows
    old_ids = kept["entry_id"].combine_chunks() if n_old else strings([])
    if t.num_rows and n_old and pc.any(pc.is_in(t["entry_id"], value_set=old_ids)).as_py():
        return None  # an id used again: the later entry wins lookups in the old rows too
    pidx = pc.cast(t["parent_index"], pa.int64())
    # a parent among the stand-ins is the old row with that id; any other moves past the old rows
    old_parent = pc.index_in(t["parent_id"], value_set=old_ids)
    i64 = pa.int64()
    parent = pc.if_else(pc.less(pidx, scalar(n_s, i64)), old_parent,
                        pc.add(pc.subtract(pidx, scalar(n_s, i64)), scalar(n_old, i64)))
    cols = {
        "line_no": pc.add(pc.cast(t["line_no"], i64), scalar(lines - 1 - n_s, i64)),
        "entry_index": pc.add(pc.subtract(pc.cast(t["entry_index"], i64), scalar(n_s, i64)), scalar(n_old, i64)),
        "parent_index": parent,
    }
    arrays = [pc.cast(cols[f.name], f.type) if f.name in cols else t[f.name] for f in ENTRY_SCHEMA]
    return pa.concat_tables([kept, pa.Table.from_arrays(arrays, schema=ENTRY_SCHEMA)])
