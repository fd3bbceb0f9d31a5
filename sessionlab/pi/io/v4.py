"""Reading pi's experimental v4 session files (pi-agent-core 0.84–0.99 harness), read-only.

A v4 file starts with ``{"v": 4, "kind": "header", "id", "storageVersion": 1, "createdAt": ms,
"cwd", ...}``. Every later line is one transaction: one write object, or a JSON array of writes.
Each write has a monotonic ``seq`` and a ``kind``:

- ``entry``: a tree entry (``id``, ``parentId``, ``timestamp`` in Unix ms, ``type`` one of
  ``message``, ``compaction``, ``branch_summary``, ``custom``) with its fields beside them, as in
  v3 (``message``; ``summary``, ``tokensBefore``, ``retainedTail`` for a compaction). Entries
  become the usual model objects through :func:`~sessionlab.pi.io.dialects.entry_from_dict`; the
  timestamp is turned into pi's ISO form (``2026-01-15T10:00:40.000Z``), and a compaction's
  ``retainedTail`` is the model's ``retained_tail``.
- ``value``: ``op`` ``set`` / ``delete`` of ``namespace[key]``. ``pi.branch.tip[branch]`` is a
  branch's tip entry (a leaf), ``pi.session.name[""]`` the session name and
  ``pi.entry.label[entryId]`` an entry's label; every namespace's final state is in
  :attr:`SessionFile.values`.
- ``usage`` (spend that is not a message) and ``list`` (``append`` / ``delete``): kept as read in
  :attr:`SessionFile.usage_writes` and :attr:`SessionFile.list_writes`.

Problems are :class:`~sessionlab.pi.io.LineIssue` records, as for v3 (``invalid_json``,
``truncated_last_line``, ``glued_objects``, ``not_an_object``, ``invalid_utf8``, ``missing_id``,
``duplicate_id``, ``dangling_parent``, ``parent_cycle``, ``unknown_type``), plus ``unknown_write``
(a write whose ``kind`` is not one of the four, or a value write without a string namespace and
key and op ``set``/``delete``; skipped) and ``bad_seq`` (a ``seq`` that is not a safe integer >= 1
greater than the one before; the write still loads). A last line without a newline is
``truncated_last_line`` and not loaded, even when it parses: the harness writes each transaction
with its newline, and on open drops such a line as never committed and rewrites the file;
sessionlab reports it and never modifies the file. Every other valid write loads (where the
harness refuses a file with one invalid line). The early 0.84 shape
(``{"kind": "header", "version": 4}``) gets one ``unsupported_version``
issue and nothing is loaded. Writing v4 is not supported (:func:`~sessionlab.pi.io.write_session`
raises :class:`~sessionlab.errors.ReadOnlyFormatError`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..._jsjson import js_stringify, raw_decode
from ..model import entries as E
from .dialects import entry_from_dict

if TYPE_CHECKING:
    from ._lines import SessionFile

__all__ = ["V4_ENTRY_TYPES", "is_v4_header", "sniff_v4", "parse_v4_bytes", "ms_to_iso"]

V4_ENTRY_TYPES = frozenset({"message", "compaction", "branch_summary", "custom"})
TIP_NAMESPACE = "pi.branch.tip"
NAME_NAMESPACE = "pi.session.name"
LABEL_NAMESPACE = "pi.entry.label"

_WS = " \t\r\n\ufeff"
_EXCERPT = 80
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_SAFE = 2**53 - 1


def is_v4_header(obj: Any) -> bool:
    """Whether ``obj`` is a v4 header in either shape (``kind: "header"`` with ``v`` or ``version`` 4)."""
    return isinstance(obj, dict) and obj.get("kind") == "header" and "type" not in obj


def sniff_v4(data: bytes) -> bool:
    """Whether the first non-blank line of ``data`` is a v4 header (cheap: reads that line only)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end].decode("utf-8", errors="replace")
        if line.strip(_WS):
            try:
                obj, _ = raw_decode(line, len(line) - len(line.lstrip(_WS)))
            except (ValueError, RecursionError):
                return False
            return is_v4_header(obj)
        pos = end + 1
    return False


def ms_to_iso(ms: Any) -> str | None:
    """JavaScript's ``new Date(ms).toISOString()`` (``None`` for a non-number or out of range)."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return None
    try:
        dt = _EPOCH + timedelta(milliseconds=int(ms))
    except (OverflowError, ValueError):
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z" if dt.year >= 1 else None


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def _split_values(data: bytes, report: Any) -> tuple[list[tuple[int, Any, str]], bool]:
    """Every JSON value of every line as ``(line, value, text)``; bad lines reported."""
    from ._lines import decoded_lines, line_values

    final_newline = data.endswith(b"\n") or not data
    raw_lines = data.split(b"\n")
    if final_newline and raw_lines:
        raw_lines.pop()
    out: list[tuple[int, Any, str]] = []
    last_idx = len(raw_lines) - 1
    for idx, lineno, text in decoded_lines(raw_lines, report):
        if not text.strip(_WS):
            continue
        if idx == last_idx and not final_newline and idx > 0:
            # the harness appends each transaction with its newline and drops a last line without
            # one on open, even when it parses: that transaction never committed
            report(lineno, "truncated_last_line", "the last line has no newline: the transaction never "
                   "completed (the harness drops it); its writes are not loaded", text)
            continue
        found, error = line_values(text)
        if error is not None and not found:
            report(lineno, "invalid_json", f"not valid JSON: {error}", text)
            continue
        if error is not None:
            report(lineno, "invalid_json", f"{len(found)} value(s) recovered, then not valid JSON: {error}", text)
        if len(found) > 1:
            report(lineno, "glued_objects", f"{len(found)} JSON values on one line; all loaded", text)
        out.extend((lineno, obj, otext) for obj, otext in found)
    return out, final_newline


def _entry(w: dict) -> E.SessionEntry:
    d = {k: v for k, v in w.items() if k not in ("kind", "seq")}
    iso = ms_to_iso(d.get("timestamp"))
    if iso is not None:
        d["timestamp"] = iso
    t = d.get("type")
    if t not in V4_ENTRY_TYPES:
        return E.UnknownEntry(entry_type=t if isinstance(t, str) else None, id=_str(d.get("id")),
                              parent_id=_str(d.get("parentId")), timestamp=_str(d.get("timestamp")), raw=w)
    return entry_from_dict(d, "pi")


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _header(obj: dict) -> E.SessionHeader:
    known = {"v", "kind", "id", "createdAt", "cwd"}
    return E.SessionHeader(
        version=4, id=obj["id"], timestamp=ms_to_iso(obj.get("createdAt")), cwd=_str(obj.get("cwd")),
        parent_session=_str(obj.get("legacyParentSessionPath")),
        extra={k: v for k, v in obj.items() if k not in known},
    )


def parse_v4_bytes(data: bytes, *, path: str | None = None) -> SessionFile:
    """Parse the bytes of a v4 file into a :class:`~sessionlab.pi.io.SessionFile` (``version=4``).

    Issues are recorded, never raised; the caller (:func:`~sessionlab.pi.io.parse_session_bytes`)
    acts on them.
    """
    from ._lines import SessionFile, _check_tree  # noqa: F811
    from .issues import LineIssue

    spath = path or "<bytes>"
    issues: list[LineIssue] = []

    def report(line: int, kind: str, message: str, text: str = "", entry_id: str | None = None) -> None:
        issues.append(LineIssue(spath, line, kind, message, _excerpt(text), entry_id))

    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    values, final_newline = _split_values(data, report)
    sf = SessionFile(path=path, header=None, entries=[], issues=issues, dialect="pi", version=4, bom=bom,
                     newline="\r\n" if b"\r\n" in data else "\n", final_newline=final_newline)
    if not values:
        report(1, "missing_header", "no v4 header", "")
        return sf
    hline, hobj, htext = values[0]
    if not is_v4_header(hobj):
        report(hline, "missing_header", "the first value is not a v4 header {\"v\": 4, \"kind\": \"header\", ...}",
               htext)
        return sf
    if hobj.get("v") != 4 or not isinstance(hobj.get("id"), str):
        what = ("an early v4 header (pi-agent-core 0.84's {\"kind\": \"header\", \"version\": 4})"
                if hobj.get("version") == 4 else f"a header of unknown shape (v={hobj.get('v')!r})")
        report(hline, "unsupported_version", what + '; only the {"v": 4, "kind": "header", "storageVersion": 1, '
               '"id": ...} shape is read; nothing loaded', htext)
        return sf
    if hobj.get("storageVersion") != 1:
        report(hline, "unsupported_version", f"v4 storageVersion {hobj.get('storageVersion')!r} is not 1; "
               "read as storageVersion 1", htext)
    sf.header = _header(hobj)
    texts = _load_writes(sf, values[1:], report)
    _derive(sf)
    _check_tree(sf.entries, sf.line_numbers, texts, report)
    issues.sort(key=lambda i: i.line)
    return sf


def _load_writes(sf: SessionFile, values: list[tuple[int, Any, str]], report: Any) -> list[str]:
    """Apply every write of every transaction to ``sf``; the entries' texts (for issue excerpts)."""
    texts: list[str] = []
    last_seq: int | None = None
    for lineno, obj, otext in values:
        writes = obj if isinstance(obj, list) else [obj]
        for w in writes:
            if not isinstance(w, dict):
                report(lineno, "not_an_object", f"a JSON {type(w).__name__}, not a write object", js_stringify(w))
                continue
            wtext = otext if w is obj else js_stringify(w)
            seq = w.get("seq")
            if not _is_seq(seq) or (last_seq is not None and seq <= last_seq):  # type: ignore[operator]
                report(lineno, "bad_seq", f"seq {seq!r} is not a safe integer >= 1 greater than the one before "
                       f"({last_seq!r})", wtext)
            else:
                last_seq = seq
            kind = w.get("kind")
            if kind == "entry":
                sf.entries.append(_entry(w))
                sf.entry_seqs.append(seq if _is_seq(seq) else None)
                sf.line_numbers.append(lineno)
                texts.append(wtext)
            elif kind == "value":
                _apply_value(sf, w, lineno, wtext, report)
            elif kind == "usage":
                sf.usage_writes.append(w)
            elif kind == "list":
                sf.list_writes.append(w)
            else:
                report(lineno, "unknown_write", f"unknown write kind {kind!r}; skipped", wtext)
    return texts


def _is_seq(v: Any) -> bool:
    """The harness's rule for ``seq``: a safe integer, at least 1."""
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= _MAX_SAFE


def _apply_value(sf: SessionFile, w: dict, lineno: int, text: str, report: Any) -> None:
    ns, key, op = w.get("namespace"), w.get("key"), w.get("op")
    if not isinstance(ns, str) or not isinstance(key, str) or op not in ("set", "delete"):
        report(lineno, "unknown_write", "a value write needs a string namespace and key and op set/delete; "
               "skipped", text)
        return
    space = sf.values.setdefault(ns, {})
    space.pop(key, None)  # re-inserted last: the dict order is the order of the last set
    if op == "set":
        space[key] = w.get("value")


def _derive(sf: SessionFile) -> None:
    """Branch tips, name and labels from the final values."""
    tips = sf.values.get(TIP_NAMESPACE, {})
    sf.branch_tips = {b: t for b, t in tips.items() if isinstance(t, str)}
    name = sf.values.get(NAME_NAMESPACE, {}).get("")
    sf.name = name if isinstance(name, str) else None
    labels = sf.values.get(LABEL_NAMESPACE, {})
    sf.labels = {k: v for k, v in labels.items() if isinstance(v, str)}  # (an empty label is set, as the harness)
