"""The tolerant session reader: every valid entry loads, every problem is a line-numbered record.

Problems found (``LineIssue.kind``):

=====================  ===================================================================
``invalid_json``       a line that is not JSON (pi skips it silently)
``truncated_last_line`` the last line has no newline and does not parse (a crash mid-write)
``glued_objects``      several JSON objects on one line; all are loaded (pi loses the line)
``not_an_object``      a line that is JSON but not an object
``invalid_utf8``       bytes that are not UTF-8; the entry loads with U+FFFD in their place
``missing_header``     the first object is not ``{"type": "session", "id": <string>}``
``unsupported_version`` a header ``version`` newer than 3 or not a number
``missing_id``         entries (v2+) without a string id: one issue per file, on the first; they load
                       but are not tree nodes (nothing points at them; no leaf, no context target).
                       A pi ``--mode json`` event stream (a header, then ``agent_start``,
                       ``message_update``... events without ids) is named as such in the message
``bad_timestamp``      an entry (with an id, not a leaf record) whose ``timestamp`` is missing, not a
                       string, or not an ISO-8601 date
                       (its time is unknown: null in the tables, an "unknown day" in usage by day)
``duplicate_id``       an id seen before; like pi, the later entry wins in id lookups
``dangling_parent``    a parent id not in the file; the entry becomes a root (an orphan)
``parent_cycle``       a parent chain that loops; walks stop with ``CycleError`` (pi hangs)
``unknown_type``       an entry type sessionlab does not know; kept as ``UnknownEntry``
=====================  ===================================================================

Blank lines, a UTF-8 BOM and CRLF line ends are fine and silent. The file is never modified.

A file whose first line is a v4 header (``{"v": 4, "kind": "header", ...}``) is read by
:mod:`sessionlab.io.v4` into the same :class:`SessionFile` (``version`` 4; issue kinds there).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._jsjson import raw_decode
from ..context import iso_to_ms
from ..errors import CycleError, EntryNotFoundError
from ..model import SessionEntry, SessionHeader, UnknownEntry
from ..model.entries import LeafEntry
from .dialects import HEAD_LINES, Dialect, detect_dialect, entry_from_dict, header_from_dict
from .issues import LineIssue, OnBadLines, check_on_bad_lines, report_issues
from .migrate import CURRENT_VERSION, migrate_objects

__all__ = ["LineIssue", "SessionFile", "read_session", "parse_session_bytes", "OnBadLines", "check_on_bad_lines",
           "last_node_id", "report_issues"]


_EXCERPT = 80
_WS = " \t\r\n\ufeff"


@dataclass(eq=False)
class SessionFile:
    """What :func:`read_session` returns.

    ``header`` is ``None`` when the file has no valid header (``missing_header`` issue). ``version``
    is the version as written (1 when absent, ``None`` without a header); ``header.version`` is 3
    after migration.
    ``dialect`` is ``"pi"`` or ``"seed"``. ``entries`` are in file order.
    """

    path: str | None
    header: SessionHeader | None
    entries: list[SessionEntry]
    issues: list[LineIssue] = field(default_factory=list)
    dialect: Dialect = "pi"
    version: int | None = CURRENT_VERSION
    line_numbers: list[int] = field(default_factory=list)
    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True
    # (object as read, its exact text): lets write_session reproduce untouched lines byte for byte
    _source: list[tuple[Any, str]] = field(default_factory=list, repr=False)
    # v4 files only (sessionlab.io.v4; version 4): each entry's write seq, the branch tips
    # (pi.branch.tip: branch name -> tip entry id, in the order they were last set), the session
    # name (pi.session.name), labels (pi.entry.label: entry id -> label), every namespace's final
    # values, and the usage and list writes as read
    entry_seqs: list[int | None] = field(default_factory=list, repr=False)
    branch_tips: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    usage_writes: list[dict[str, Any]] = field(default_factory=list, repr=False)
    list_writes: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def leaf_id(self) -> str | None:
        """pi's leaf after loading: the last entry in file order (entries without an id are not
        nodes); a seed ``leaf`` entry moves it, unless its target is not an entry of the file (then
        pi's fallback for an unknown leaf: the last entry).

        A v4 file has no single leaf but named branch tips: the tip of ``main`` if set, else the
        tip set last, else ``None``.
        """
        if self.version == 4:
            if "main" in self.branch_tips:
                return self.branch_tips["main"]
            return next(reversed(self.branch_tips.values()), None)
        leaf: str | None = None
        for e in self.entries:
            if isinstance(e, LeafEntry):
                leaf = e.target_id
            elif isinstance(e.id, str):
                leaf = e.id
        if leaf is not None and not any(e.id == leaf and not isinstance(e, LeafEntry) for e in self.entries):
            return last_node_id(self.entries)
        return leaf

    def branch(self, entry_id: str) -> list[SessionEntry]:
        """The entries root -> ``entry_id`` (the later entry when an id repeats, as pi's index;
        never a seed ``leaf`` record); a missing parent ends the walk.

        Raises:
            EntryNotFoundError: ``entry_id`` is not an entry of the file.
            CycleError: the parent chain loops.
        """
        by_id = {e.id: e for e in self.entries if isinstance(e.id, str) and not isinstance(e, LeafEntry)}
        node = by_id.get(entry_id)
        if node is None:
            raise EntryNotFoundError(f"entry {entry_id!r} is not an entry of {self.path or 'this session'}")
        path: list[SessionEntry] = []
        seen: set[str] = set()
        while node is not None:
            if node.id in seen:
                raise CycleError(f"parent chain of {entry_id!r} loops at {node.id!r}")
            seen.add(node.id)  # type: ignore[arg-type]
            path.append(node)
            node = by_id.get(node.parent_id) if isinstance(node.parent_id, str) else None
        path.reverse()
        return path


def last_node_id(entries: list[SessionEntry]) -> str | None:
    """The id of the last entry in file order that has an id and is not a seed ``leaf`` record."""
    for e in reversed(entries):
        if not isinstance(e, LeafEntry) and isinstance(e.id, str):
            return e.id
    return None


def read_session(path: str | os.PathLike[str], *, on_bad_lines: OnBadLines = "warn") -> SessionFile:
    """Read one session file (pi v1/v2/v3, pi's v4 harness format, or seed dialect) without modifying it.

    Example:
        >>> sf = read_session("data/pi/before-compaction.jsonl")  # doctest: +SKIP
        >>> sf.version, len(sf.entries), sf.issues
        (1, 1002, [])
    """
    p = Path(path)
    data = p.read_bytes()
    return parse_session_bytes(data, path=str(p), on_bad_lines=on_bad_lines)


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def decoded_lines(raw_lines: list[bytes], report: Any) -> Any:
    """(index, 1-based line number, text) of each line: a CR before the newline dropped, bytes that
    are not UTF-8 replaced by U+FFFD and reported (``report(line, kind, message, text)``)."""
    for idx, raw in enumerate(raw_lines):
        lineno = idx + 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", errors="replace")
            report(lineno, "invalid_utf8", f"invalid UTF-8 at byte {exc.start}; replaced with U+FFFD", text)
        yield idx, lineno, text


MAX_DEPTH = 512
"""Arrays and objects nested deeper than this make a line one bad line (``invalid_json``, "nested
deeper than 512 levels"): Python's parser would otherwise recurse until it fails."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (brackets inside strings not counted);
    counted only when the line has more brackets than :data:`MAX_DEPTH` (cheap otherwise)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for m in _TOKENS.finditer(text):  # (a rare line: one pass over its strings and brackets)
        c = m.group()
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def line_values(text: str) -> tuple[list[tuple[Any, str]], str | None]:
    """The JSON values on one (non-blank) line, with their text, and the decoding error that
    stopped the line (``None`` when the whole line was read). The v3 and v4 readers share it."""
    if nesting_depth(text) > MAX_DEPTH:
        return [], f"nested deeper than {MAX_DEPTH} levels"
    found: list[tuple[Any, str]] = []
    pos = len(text) - len(text.lstrip(_WS))
    error: str | None = None
    while pos < len(text):
        try:
            obj, end = raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:  # (a line nested too deep is one bad line)
            error = str(exc)
            break
        found.append((obj, text[pos:end]))
        pos = end
        while pos < len(text) and text[pos] in _WS:
            pos += 1
    return found, error


class _Objects:
    """Every parsed object of a file (header candidates included), in file order, with its text,
    its line and whether it was alone and clean on its line (``visible``)."""

    def __init__(self) -> None:
        self.objs: list[dict] = []
        self.texts: list[str] = []
        self.lines: list[int] = []
        self.visible: list[bool] = []

    def read(self, raw_lines: list[bytes], final_newline: bool, report: Any) -> None:
        last_idx = len(raw_lines) - 1
        for idx, lineno, text in decoded_lines(raw_lines, report):
            if not text.strip(_WS):
                continue
            found, error = line_values(text)
            if error is not None and not any(isinstance(o, dict) for o, _ in found):
                found = []  # e.g. "nullify" or "123 abc": nothing to recover, one bad line
            if error is not None and not found:
                if idx == last_idx and not final_newline:
                    report(lineno, "truncated_last_line", "the last line is incomplete (no newline, not valid JSON): "
                           "the writer probably stopped mid-line", text)
                else:
                    report(lineno, "invalid_json", f"not valid JSON: {error}", text)
                continue
            if error is not None:
                report(lineno, "invalid_json", f"{len(found)} object(s) recovered, then not valid JSON: {error}", text)
            if len(found) > 1:
                report(lineno, "glued_objects", f"{len(found)} JSON objects on one line; all loaded", text)
            for obj, otext in found:
                if not isinstance(obj, dict):
                    report(lineno, "not_an_object", f"a JSON {type(obj).__name__}, not an object", otext)
                    continue
                self.objs.append(obj)
                self.texts.append(otext)
                self.lines.append(lineno)
                self.visible.append(len(found) == 1 and error is None)

    def take_header(self, report: Any) -> tuple[dict, str, int] | None:
        """The header (object, text, line), removed from the objects, when the first object is
        ``{"type": "session", "id": str}``; else ``None`` and a ``missing_header`` issue."""
        objs = self.objs
        if objs and objs[0].get("type") == "session" and isinstance(objs[0].get("id"), str):
            head = (objs[0], self.texts[0], self.lines[0])
            self.objs, self.texts, self.lines, self.visible = objs[1:], self.texts[1:], self.lines[1:], self.visible[1:]
            return head
        report(self.lines[0] if self.lines else 1, "missing_header", 'the first object is not a session header '
               '{"type": "session", "id": ...}; pi would treat this file as empty', self.texts[0] if self.texts else "")
        return None


def _header_version(header_obj: dict, header_text: str, header_line: int, report: Any) -> int:
    """The version a header declares (1 when absent; 3, reported, when it is not 1, 2 or 3)."""
    v = header_obj.get("version")
    if v is None:
        return 1
    if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= CURRENT_VERSION:
        return v
    report(header_line, "unsupported_version", f"header version {v!r} is not 1, 2 or 3; read as version 3",
           header_text)
    return CURRENT_VERSION


def parse_session_bytes(data: bytes, *, path: str | None = None, on_bad_lines: OnBadLines = "warn") -> SessionFile:
    """Parse the bytes of a session file; see :func:`read_session`."""
    check_on_bad_lines(on_bad_lines)
    from .v4 import parse_v4_bytes, sniff_v4  # (v4 imports this module)

    if sniff_v4(data):
        sf4: SessionFile = parse_v4_bytes(data, path=path)
        _handle_issues(sf4, on_bad_lines)
        return sf4
    spath = path or "<bytes>"
    issues: list[LineIssue] = []

    def report(line: int, kind: str, message: str, text: str = "", entry_id: str | None = None) -> None:
        issues.append(LineIssue(spath, line, kind, message, _excerpt(text), entry_id))

    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    final_newline = data.endswith(b"\n") or not data
    raw_lines = data.split(b"\n")
    if final_newline and raw_lines:
        raw_lines.pop()  # the empty piece after the final newline
    found = _Objects()
    found.read(raw_lines, final_newline, report)
    # A missing final newline belongs to the last line; when that line is not loaded cleanly
    # (truncated, blank, glued), the written-back file must end with a newline, or the next
    # append would be glued to the last good line.
    if not final_newline and not (found.lines and found.lines[-1] == len(raw_lines) and found.visible[-1]):
        final_newline = True
    head = found.take_header(report)
    objs, texts, lines = found.objs, found.texts, found.lines
    dialect = detect_dialect(([head[0]] if head else []) + objs[:HEAD_LINES - 1])
    version = None if head is None else _header_version(*head, report)
    mig_header, mig_objs = head[0] if head else None, objs
    if head is not None and version is not None and dialect == "pi" and version < CURRENT_VERSION:
        mig_header, mig_objs = migrate_objects(head[0], objs, version, found.visible)

    header = header_from_dict(mig_header, dialect) if mig_header is not None else None
    entries = [entry_from_dict(o, dialect) for o in mig_objs]
    source: list[tuple[Any, str]] = [(header, head[1])] if header is not None and head else []
    source.extend(zip(entries, texts))
    _check_tree(entries, lines, texts, report)
    issues.sort(key=lambda i: i.line)
    sf = SessionFile(path=path, header=header, entries=entries, issues=issues, dialect=dialect, version=version,
                     line_numbers=lines, newline="\r\n" if any(ln.endswith(b"\r") for ln in raw_lines) else "\n",
                     bom=bom, final_newline=final_newline, _source=source)
    _handle_issues(sf, on_bad_lines)
    return sf


# the event types of pi's ``--mode json`` output (AgentSessionEvent): a stream, not a session
JSON_MODE_EVENTS = frozenset({
    "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
    "tool_execution_start", "tool_execution_update", "tool_execution_end", "auto_compaction_start",
    "auto_compaction_end", "auto_retry_start", "auto_retry_end",
})


def _report_missing_ids(entries: list[SessionEntry], lines: list[int], texts: list[str], report: Any) -> None:
    """One ``missing_id`` issue for the file (on the first entry without an id)."""
    no_id = [i for i, e in enumerate(entries) if not isinstance(e.id, str) and not isinstance(e, LeafEntry)]
    if not no_id:
        return
    first = no_id[0]
    events = sum(1 for i in no_id if entries[i].type in JSON_MODE_EVENTS)
    if events * 2 > len(no_id):
        msg = (f"this is a pi --mode json event stream, not a session file: {len(no_id)} lines are events "
               f"without ids ({events} agent/turn/message/tool events); they are kept but are not tree nodes")
    else:
        msg = (f"{len(no_id)} entr{'y has' if len(no_id) == 1 else 'ies have'} no string id (first on this line); "
               "kept, but nothing can point at them and they are not leaves or context targets")
    report(lines[first], "missing_id", msg, texts[first])


def _check_tree(entries: list[SessionEntry], lines: list[int], texts: list[str], report: Any) -> None:
    ids: dict[str, int] = {}
    for i, e in enumerate(entries):
        if isinstance(e, UnknownEntry) and not (e.id is None and e.entry_type in JSON_MODE_EVENTS):
            report(lines[i], "unknown_type", f"unknown entry type {e.entry_type!r}; kept", texts[i], e.id)
        if iso_to_ms(e.timestamp) is None and isinstance(e.id, str) and not isinstance(e, LeafEntry):
            report(lines[i], "bad_timestamp", f"timestamp {e.timestamp!r} is not an ISO-8601 date"
                   if e.timestamp is not None else "the entry has no timestamp", texts[i], _id_or_none(e.id))
        if not isinstance(e.id, str):  # absent, or not a string (a number, a list...)
            continue
        if e.id in ids:
            report(lines[i], "duplicate_id", f"id {e.id!r} already used on line {lines[ids[e.id]]}; "
                   "the later entry wins in id lookups", texts[i], e.id)
        ids[e.id] = i
    _report_missing_ids(entries, lines, texts, report)
    for i, e in enumerate(entries):
        if isinstance(e, LeafEntry):
            if e.target_id is not None and (not isinstance(e.target_id, str) or e.target_id not in ids):
                report(lines[i], "dangling_parent", f"leaf target {e.target_id!r} is not in the file; the leaf "
                       "falls back to the last entry (as pi's for an unknown leaf)", texts[i], e.id)
            continue
        if e.parent_id is not None and (not isinstance(e.parent_id, str) or e.parent_id not in ids):
            report(lines[i], "dangling_parent", f"parent {e.parent_id!r} is not in the file; "
                   "the entry is an orphan root", texts[i], e.id)
    # cycles: colour walk over id -> parent id (the last entry with an id wins, as in lookups)
    parent = {e.id: (e.parent_id if isinstance(e.parent_id, str) else None)
              for e in entries if isinstance(e.id, str) and not isinstance(e, LeafEntry)}
    state: dict[str, int] = {}
    for start in parent:
        if start in state:
            continue
        path: list[str] = []
        node: str | None = start
        while node is not None and node in parent and node not in state:
            state[node] = 1
            path.append(node)
            node = parent[node]
        if node is not None and state.get(node) == 1:  # closed a loop inside this walk
            loop_start = path.index(node)
            loop = path[loop_start:]
            i = ids[node]
            report(lines[i], "parent_cycle", f"parent chain loops: {' -> '.join(loop + [node])}; "
                   "the walk stops there (pi hangs)", texts[i], node)
        for n in path:
            state[n] = 2


def _id_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _handle_issues(sf: SessionFile, on_bad_lines: OnBadLines) -> None:
    report_issues(sf.path, sf.issues, on_bad_lines, stacklevel=3)
