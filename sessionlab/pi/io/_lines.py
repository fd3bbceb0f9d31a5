"""What pi's readers share (:mod:`.reader` for v1-v3 and the seed's dialect, :mod:`.v4`): the
:class:`SessionFile` they return, decoding a file's lines and its JSON values, and the checks of
the entries' tree (ids, parents, cycles, timestamps) that become line issues."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..._jsjson import raw_decode
from ..._time import iso_to_ms
from ...errors import CycleError, EntryNotFoundError
from ..model import SessionEntry, SessionHeader, UnknownEntry
from ..model.entries import LeafEntry
from .dialects import Dialect
from .issues import LineIssue
from .migrate import CURRENT_VERSION

__all__ = ["SessionFile", "last_node_id", "decoded_lines", "line_values", "JSON_MODE_EVENTS"]


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
    # v4 files only (sessionlab.pi.io.v4; version 4): each entry's write seq, the branch tips
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

