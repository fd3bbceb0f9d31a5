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
:mod:`sessionlab.pi.io.v4` into the same :class:`SessionFile` (``version`` 4; issue kinds there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ._lines import _WS, MAX_DEPTH, SessionFile, _check_tree, _excerpt, decoded_lines, last_node_id, line_values
from .dialects import HEAD_LINES, detect_dialect, entry_from_dict, header_from_dict
from .issues import LineIssue, OnBadLines, check_on_bad_lines, report_issues
from .migrate import CURRENT_VERSION, migrate_objects

__all__ = ["LineIssue", "SessionFile", "read_session", "parse_session_bytes", "OnBadLines", "check_on_bad_lines",
           "last_node_id", "report_issues", "MAX_DEPTH"]



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


def _handle_issues(sf: SessionFile, on_bad_lines: OnBadLines) -> None:
    report_issues(sf.path, sf.issues, on_bad_lines, stacklevel=3)
