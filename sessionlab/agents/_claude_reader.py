"""Claude Code transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``) to entry rows.

Every line with a ``uuid`` is an entry: ``entry_id``/``parent_id`` are ``uuid``/``parentUuid``
(a ``compact_boundary``, whose ``parentUuid`` is null, hangs from its ``logicalParentUuid``).
``user`` and ``assistant`` lines are ``message`` entries (role ``user``; ``toolResult`` when the
content holds tool results; ``assistant``); a ``compact_boundary`` is a ``compaction`` entry with
the agent's ``preTokens``/``postTokens``; every other line type (``progress``, ``attachment``,
other ``system`` subtypes...) keeps its on-disk type and is a side node (``side_node``), kept in
the tree but never a leaf. Lines without a ``uuid`` are not tree nodes: the title lines
(``custom-title``, the user's own name for the session, over ``ai-title`` over the older
``summary``) name the session, the bookkeeping
lines Claude Code writes (``last-prompt``, ``permission-mode``, ``mode``, ``file-history-snapshot``,
``queue-operation``...) are skipped (a ``file-history-snapshot`` line of hundreds of MB is streamed
past unread); only a conversation line type without a ``uuid`` is a ``missing_id`` issue.

Usage is read per line (``input_tokens`` is uncached input; cache writes with their 1-hour part);
duplicate usage (streaming lines of one response, sidechain replays) is removed across all loaded
files by :func:`._claude_dedupe.dedupe_usage`, as ccusage does.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import numpy as np

from .._arrow import const_strings, utf8
from .._jsjson import js_len
from ..pi.io import formats
from ..pi.io.formats import AgentFile, iter_lines
from ..pi.io.reader import LineIssue
from ..pi.rules import CHARS_PER_TOKEN, IMAGE_CHARS, ROLE_CHARS
from ._claude_dedupe import claude_dedupe
from ._spec import NeedsOldLines, ToolNames

_SPAWN_TOOLS = frozenset({"Task", "Agent"})  # the tools that run a subagent

__all__ = ["finish", "read_claude", "resume_claude", "CLAUDE_NODE_LESS"]

CLAUDE_NODE_LESS = frozenset({"summary", "file-history-snapshot", "file-history-delta", "queue-operation", "ai-title",
                              "custom-title", "agent-name", "agent-color", "agent-setting", "last-prompt",
                              "permission-mode", "mode", "pr-link", "cost-state", "atis-latch"})
"""Bookkeeping line types Claude Code writes without a ``uuid`` (not tree nodes)."""

_NODE_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
"""Line types that are always tree nodes: without a ``uuid`` they are a ``missing_id`` issue."""


class _CacheCreation(msgspec.Struct):
    ephemeral_5m_input_tokens: int | None = None
    ephemeral_1h_input_tokens: int | None = None


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation: _CacheCreation | None = None
    speed: str | None = None


class _Inner(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    name: str | None = None
    id: str | None = None
    input: msgspec.Raw = msgspec.Raw()
    tool_use_id: str | None = None
    content: str | list[_Inner] | None = None
    is_error: bool | None = None


class _Message(msgspec.Struct):
    id: str | None = None
    role: str | None = None
    model: str | None = None
    content: str | list[_Block] | None = None
    stop_reason: str | None = None
    usage: _Usage | None = None


class _Compact(msgspec.Struct):
    trigger: str | None = None
    preTokens: int | None = None
    postTokens: int | None = None


class _Data(msgspec.Struct):
    type: str | None = None


class _Line(msgspec.Struct):
    type: str | None = None
    uuid: str | None = None
    parentUuid: str | None = None
    logicalParentUuid: str | None = None
    sessionId: str | None = None
    timestamp: str | None = None
    isSidechain: bool | None = None
    agentId: str | None = None
    version: str | None = None
    cwd: str | None = None
    message: _Message | None = None
    requestId: str | None = None
    costUSD: float | None = None
    subtype: str | None = None
    compactMetadata: _Compact | None = None
    isCompactSummary: bool | None = None
    summary: str | None = None
    title: str | None = None
    aiTitle: str | None = None
    customTitle: str | None = None
    data: _Data | None = None
    error: Any = None
    isApiErrorMessage: bool | None = None
    forkedFrom: Any = None
    toolUseResult: msgspec.Raw = msgspec.Raw()


_DECODE = msgspec.json.Decoder(_Line).decode
_DECODE_ANY = msgspec.json.Decoder().decode

# entry columns this reader fills (the others are null)
_COLS = ("line_no", "entry_id", "parent_id", "type", "timestamps", "role", "provider", "model", "stop_reason",
         "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
         "context_tokens", "cost_usd", "est_tokens", "tool_name", "tool_call_count", "is_error",
         "error_message", "tokens_before", "custom_type", "response_model", "cache_write_1h_tokens",
         "usage_kind", "cost_source", "side_node", "is_sidechain", "message_id", "request_id", "tokens_after",
         "image_count")


def _lenient(raw: bytes) -> _Line:
    """A line whose fields have unexpected JSON types: the envelope fields that are strings."""
    obj = _DECODE_ANY(raw)
    if not isinstance(obj, dict):
        raise msgspec.ValidationError("not a JSON object")

    def s(k: str) -> str | None:
        v = obj.get(k)
        return v if isinstance(v, str) else None

    return _Line(type=s("type"), uuid=s("uuid"), parentUuid=s("parentUuid"),
                 logicalParentUuid=s("logicalParentUuid"), sessionId=s("sessionId"), timestamp=s("timestamp"),
                 version=s("version"), cwd=s("cwd"), agentId=s("agentId"), subtype=s("subtype"))


class _Rows:
    """Rows being gathered as dicts of every column in :data:`_COLS` order (a copy of a template of
    nulls, updated with the values a line sets); :attr:`cols` transposes them once, in C."""

    _TEMPLATE = dict.fromkeys(_COLS)

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []

    def add(self, **values: Any) -> None:
        row = self._TEMPLATE.copy()
        row.update(values)
        assert len(row) == len(_COLS), f"not columns of this reader: {sorted(set(row) - set(_COLS))}"
        self._rows.append(row)

    @property
    def n(self) -> int:
        return len(self._rows)

    @property
    def cols(self) -> dict[str, list]:
        if not self._rows:
            return {c: [] for c in _COLS}
        return dict(zip(_COLS, map(list, zip(*(r.values() for r in self._rows)))))


def _parts(role: str) -> tuple[bool, bool, bool, bool, bool]:
    """Which of a message's parts pi's rule counts for ``role`` (:data:`sessionlab.pi.rules.ROLE_CHARS`):
    its text (the assistant's ``text`` part, any other role's ``content``), tool-result content,
    images, thinking and tool calls."""
    parts = ROLE_CHARS.get(role, ())
    return (("text" if role == "assistant" else "content") in parts, "content" in parts, "images" in parts,
            "thinking" in parts, "toolCall" in parts)


def _content(m: _Message, role: str, eid: str, blocks: list[tuple], tool_names: dict[str, str]) -> tuple:
    """(chars, tool calls, role, tool name, is_error, image blocks) of a message, its blocks appended."""
    content = m.content
    if content is None:
        return 0, None, role, None, None, 0
    if isinstance(content, str):
        n = js_len(content) if _parts(role)[0] else 0
        blocks.append((eid, role, 0, "text", None, None, n))
        return n, None, role, None, None, 0
    chars = calls = images = 0
    has_result = any(b.type == "tool_result" for b in content)
    if role == "user" and has_result:
        role = "toolResult"
    text_ok, result_ok, images_ok, thinking_ok, calls_ok = _parts(role)
    tool_name = is_error = None
    for j, b in enumerate(content):
        bt = b.type
        name = call_id = None
        if bt == "text":
            nc, kind = (js_len(b.text) if text_ok else 0), "text"
        elif bt == "thinking":
            nc, kind = (js_len(b.thinking) if thinking_ok else 0), "thinking"
        elif bt == "redacted_thinking":
            nc, kind = 0, "thinking"
        elif bt == "tool_use":
            calls += 1
            name, call_id = b.name, b.id
            if isinstance(b.id, str) and isinstance(b.name, str):
                tool_names[b.id] = b.name
            raw = bytes(b.input)  # (JSON as written: its length in UTF-16 units, as JSON.stringify's)
            args = len(raw) if raw.isascii() else js_len(raw.decode("utf-8", "replace"))
            nc, kind = ((js_len(b.name) + args) if calls_ok else 0), "toolCall"
        elif bt == "tool_result":
            call_id = b.tool_use_id
            name = tool_names.get(call_id) if isinstance(call_id, str) else None
            tool_name = tool_name or name
            is_error = bool(is_error) or bool(b.is_error)
            c = b.content
            if isinstance(c, str):
                nc = js_len(c) if result_ok else 0
            elif c:
                nc = sum(js_len(x.text) if x.type == "text" and result_ok else
                         IMAGE_CHARS if x.type == "image" and images_ok else 0 for x in c)
            else:
                nc = 0
            kind = "toolResult"
        elif bt == "image":
            images += 1
            nc, kind = (IMAGE_CHARS if images_ok else 0), "image"
        else:
            nc, kind = 0, bt or "unknown"
        chars += nc
        blocks.append((eid, role, j, kind, name, call_id, nc))
    return chars, (calls if m.role == "assistant" else None), role, tool_name, is_error, images


def _decode_line(path: str, line_no: int, raw: bytes, issues: list[LineIssue]) -> _Line | None:
    """One line's envelope, or ``None`` (with its issue) when it is no entry."""
    try:
        try:
            return _DECODE(raw)
        except msgspec.ValidationError as exc:
            ln = _lenient(raw)  # one issue per line: the entry keeps its envelope, or is lost with it
            issues.append(LineIssue(path, line_no, "bad_field", f"unexpected field type: {exc}"
                                    + ("" if ln.uuid is not None else "; the line is not an entry"),
                                    raw[:80].decode("utf-8", "replace"), ln.uuid))
            return ln if ln.uuid is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        issues.append(LineIssue(path, line_no, "invalid_json", str(exc), raw[:80].decode("utf-8", "replace")))
        return None


def _assistant_values(ln: _Line, m: _Message) -> dict[str, Any]:
    """An assistant row's model, stop reason, ids, error, tokens and recorded cost."""
    u = m.usage
    model = m.model if m.model != "<synthetic>" else None
    vals: dict[str, Any] = dict(
        provider="anthropic" if model else None, model=m.model, stop_reason=m.stop_reason, message_id=m.id,
        request_id=ln.requestId, error_message=str(ln.error) if ln.isApiErrorMessage and ln.error is not None else None)
    if u is not None:
        inp, out_, cw, cr = (u.input_tokens or 0, u.output_tokens or 0,
                             u.cache_creation_input_tokens or 0, u.cache_read_input_tokens or 0)
        cc = u.cache_creation
        vals.update(input_tokens=inp, output_tokens=out_, cache_write_tokens=cw, cache_read_tokens=cr,
                    total_tokens=inp + out_ + cw + cr, context_tokens=inp + out_ + cw + cr,
                    cache_write_1h_tokens=cc.ephemeral_1h_input_tokens if cc is not None else None,
                    usage_kind="message")
        if ln.costUSD is not None:
            vals.update(cost_usd=ln.costUSD, cost_source="recorded")
    return vals


_STATE_FIELDS = ("session_id", "agent_id", "version", "cwd", "name", "custom_title", "spawn", "spawned",
                 "task_types")


class _Reader:
    """One transcript being read: its rows, blocks and what its lines say of the session (from
    ``state`` when the reader goes on after the lines an earlier reader read)."""

    def __init__(self, path: str, state: dict | None = None) -> None:
        self.out = AgentFile(path=path, agent="claude-code")
        self.rows = _Rows()
        self.blocks: list[tuple] = []
        self.tool_names = ToolNames((state or {}).get("pending"), resumed=state is not None)
        self.session_id: str | None = None
        self.agent_id: str | None = None
        self.version: str | None = None
        self.cwd: str | None = None
        self.name: str | None = None
        self.custom_title: str | None = None  # the user's /rename (wins over generated titles)
        self.spawn: Any = None  # forkedFrom of a /branch session
        self.spawned: dict[str, str] = {}  # subagent id -> the tool call that ran it
        self.task_types: dict[str, str] = {}  # Task/Agent call id -> the subagent_type it asked for
        for k in _STATE_FIELDS if state is not None else ():
            setattr(self, k, state[k])

    def line(self, line_no: int, raw: bytes) -> None:
        ln = _decode_line(self.out.path, line_no, raw, self.out.issues)
        if ln is None:
            return
        typ = ln.type
        if typ in ("summary", "ai-title", "custom-title"):
            if typ == "custom-title":
                self.custom_title = ln.customTitle or ln.title or self.custom_title
            else:
                self.name = ln.summary or ln.title or ln.aiTitle or self.name
            return
        if ln.uuid is None:
            if typ in _NODE_TYPES or typ is None:
                self.out.issues.append(LineIssue(self.out.path, line_no, "missing_id", f"{typ!r} line without uuid",
                                                 raw[:80].decode("utf-8", "replace")))
            return
        self.session_id = self.session_id or ln.sessionId
        self.agent_id = self.agent_id or ln.agentId
        self.version = ln.version or self.version
        self.cwd = self.cwd or ln.cwd
        if self.spawn is None and ln.forkedFrom is not None:
            self.spawn = ln.forkedFrom
        common = dict(line_no=line_no, entry_id=ln.uuid, parent_id=ln.parentUuid, timestamps=ln.timestamp,
                      is_sidechain=ln.isSidechain, side_node=False)
        m = ln.message
        if typ in ("user", "assistant") and m is not None:
            self.rows.add(**common, **self._message(ln, m))
        elif typ == "system" and ln.subtype == "compact_boundary":
            meta = ln.compactMetadata
            common["parent_id"] = ln.parentUuid or ln.logicalParentUuid
            self.rows.add(**common, type="compaction", est_tokens=0, custom_type=meta.trigger if meta else None,
                          tokens_before=meta.preTokens if meta else None,
                          tokens_after=meta.postTokens if meta else None)
        else:
            sub = ln.subtype if typ == "system" else (ln.data.type if typ == "progress" and ln.data else None)
            common["side_node"] = True
            self.rows.add(**common, type=typ or "unknown", custom_type=sub)

    def _message(self, ln: _Line, m: _Message) -> dict[str, Any]:
        """A user or assistant row's values (a Task/Agent call's result also names its subagent)."""
        role = "assistant" if ln.type == "assistant" else "user"
        chars, calls, role, tool_name, is_error, images = _content(m, role, ln.uuid, self.blocks,  # type: ignore[arg-type]
                                                                   self.tool_names)
        if role == "assistant" and isinstance(m.content, list):
            self._task_types(m.content)
        tr = bytes(ln.toolUseResult)
        if tr and b'"agentId"' in tr and isinstance(m.content, list):  # a Task/Agent call's result
            res = _DECODE_ANY(tr)
            call = next((b.tool_use_id for b in m.content if b.type == "tool_result"), None)
            if isinstance(res, dict) and isinstance(res.get("agentId"), str) and call:
                self.spawned[res["agentId"]] = call
        vals: dict[str, Any] = dict(type="message", role=role, est_tokens=-(-chars // CHARS_PER_TOKEN),
                                    tool_call_count=calls, tool_name=tool_name, is_error=is_error)
        if images:  # (what tables/_pi16.apply_rules takes out of a user message under pi 0.58's rule)
            vals["image_count"] = images
        if role == "assistant":
            vals.update(_assistant_values(ln, m))
        return vals

    def _task_types(self, content: list) -> None:
        """The ``subagent_type`` of each Task/Agent call (what a subagent file's type is)."""
        for b in content:
            if b.type == "tool_use" and b.name in _SPAWN_TOOLS and isinstance(b.id, str):
                raw = bytes(b.input)
                if b'"subagent_type"' in raw:
                    args = _DECODE_ANY(raw)
                    if isinstance(args, dict) and isinstance(args.get("subagent_type"), str):
                        self.task_types[b.id] = args["subagent_type"]

    def finish(self) -> AgentFile:
        """The file's columns, blocks and session row (a subagent's or a /branch session's parent)."""
        out, path, session_id = self.out, self.out.path, self.session_id
        out.columns, out.n, out.blocks = self.rows.cols, self.rows.n, self.blocks
        is_sub = self.agent_id is not None or os.sep + "subagents" + os.sep in path
        sid = session_id
        parent = None
        spawn = self.spawn
        if is_sub:
            stem = os.path.basename(path)[:-6] if path.endswith(".jsonl") else os.path.basename(path)
            sid, parent = (f"{session_id}/{stem}" if session_id else stem), session_id
        elif isinstance(spawn, dict) and isinstance(spawn.get("sessionId"), str) and spawn["sessionId"] != session_id:
            parent = spawn["sessionId"]
        elif isinstance(spawn, str) and spawn != session_id:
            parent = spawn
        out.session = {"session_id": sid, "agent": "claude-code", "agent_version": self.version, "cwd": self.cwd,
                       "name": self.custom_title or self.name, "parent_session_id": parent,
                       "root_session_id": session_id if is_sub else sid,
                       "agent_id": self.agent_id if is_sub else None, "spawned": self.spawned}
        out.extra = (self.agent_id if is_sub else None, self.spawned, self.task_types)
        names = self.tool_names
        out.state = {**{k: getattr(self, k) for k in _STATE_FIELDS},
                     "pending": names.pending()}
        return out


def read_claude(path: str, fh: Any, *, max_line: int | None = None) -> AgentFile:
    """Read one Claude Code transcript from a binary file object ``fh``.

    Example:
        >>> with open("tests/data/claude/real/apanloco-random-session.jsonl", "rb") as fh:  # doctest: +SKIP
        ...     af = read_claude("x.jsonl", fh)
    """
    return _read(_Reader(path), fh, 0, formats.MAX_LINE if max_line is None else max_line)


def resume_claude(path: str, fh: Any, state: dict, lines_before: int) -> AgentFile | None:
    """The lines of a transcript after its first ``lines_before``, read alone from ``fh`` with the
    ``state`` a reader of those lines left (see :attr:`AgentFile.state`): their rows, and the
    session's facts over the whole file; None when a new line answers a tool call of the old lines
    whose name the state does not hold (the file is then read whole)."""
    try:
        return _read(_Reader(path, state), fh, lines_before, formats.MAX_LINE)
    except NeedsOldLines:
        return None


def _read(reader: _Reader, fh: Any, lines_before: int, max_line: int) -> AgentFile:
    path = reader.out.path
    for line_no, raw, start in iter_lines(fh, max_line=max_line):
        line_no += lines_before
        if raw is None:
            if b"file-history-snapshot" not in start:
                reader.out.issues.append(LineIssue(path, line_no, "line_too_long",
                                                   f"line longer than {max_line} bytes skipped",
                                                   start[:80].decode("utf-8", "replace")))
        elif raw.strip():
            reader.line(line_no, raw)
    return reader.finish()


def _claude_spawns(results: list) -> None:
    """A subagent session's ``parent_tool_call_id`` (the Task/Agent call whose result names it) and
    its ``subagent_type`` column (the type that call asked for)."""
    claude = [r for r in results if r.session is not None and r.session.get("agent") == "claude-code"]
    spawned: dict[tuple, str] = {}
    types: dict[tuple, str] = {}
    for r in claude:
        _, calls, asked = r.agent_extra or (None, {}, {})
        for agent_id, call in calls.items():
            spawned[(r.session["session_id"], agent_id)] = call
        for call, kind in asked.items():
            types[(r.session["session_id"], call)] = kind
    for r in claude:
        agent_id = (r.agent_extra or (None, {}, {}))[0]
        if agent_id is None:
            continue
        parent = r.session.get("parent_session_id")
        call = r.session["parent_tool_call_id"] = spawned.get((parent, agent_id))
        kind = types.get((parent, call))
        if kind is not None and r.entries is not None:
            i = r.entries.schema.get_field_index("subagent_type")
            column = const_strings(utf8(kind), np.ones(r.entries.num_rows, np.bool_))
            r.entries = r.entries.set_column(i, "subagent_type", column)


def finish(results: list) -> None:
    """Claude Code's pass over a load: subagents' spawning calls, then usage counted once."""
    _claude_spawns(results)
    claude_dedupe(results)
