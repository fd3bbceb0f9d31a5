"""The two JSONL dialects and the one place their field maps live.

- ``"pi"``: pi's camelCase files (``parentId``, ``stopReason``, ``cacheRead``...). Entry types
  only the seed has (``leaf``, ``active_tools_change``) and the compaction's ``retainedTail`` are
  written in the same camelCase style; pi keeps such entries and fields as they are and ignores
  them.
- ``"seed"``: the seed's snake_case files (``parent_id``, ``stop_reason``, ``cache_read``...).

Both dialects spell ``type`` and ``role`` values the same way (``toolResult``, ``toolCall``).
Each class has one field table below: (pi key, attribute, kind); the seed key is the attribute
name. Values of a field whose kind is ``v`` (tool arguments, ``details``, ``data``...) are copied
as they are, in both dialects. Unknown keys are kept in ``extra`` and written back after the known
ones; a known key whose value is ``null`` (pi writes absent ones by omitting them) is kept there too.
"""

from __future__ import annotations

from typing import Any

from ..model import content as C
from ..model import entries as E
from ..model import messages as M
from .formats import HEAD_LINES, Dialect, detect_dialect

__all__ = [
    "Dialect",
    "entry_from_dict",
    "entry_to_dict",
    "header_from_dict",
    "header_to_dict",
    "message_from_dict",
    "message_to_dict",
    "detect_dialect",
    "HEAD_LINES",
]


# kinds: v (value as is), null (value as is, None written as null), blocks, content (str or blocks),
# usage, cost, message, messages, strs
_BASE = [("id", "id", "v"), ("parentId", "parent_id", "null"), ("timestamp", "timestamp", "v")]

_BLOCKS: dict[str, tuple[type, list[tuple[str, str, str]]]] = {
    "text": (C.TextContent, [("text", "text", "v"), ("textSignature", "text_signature", "v")]),
    "thinking": (
        C.ThinkingContent,
        [("thinking", "thinking", "v"), ("thinkingSignature", "thinking_signature", "v"),
         ("redacted", "redacted", "v")],
    ),
    "image": (C.ImageContent, [("data", "data", "v"), ("mimeType", "mime_type", "v")]),
    "toolCall": (
        C.ToolCall,
        [("id", "id", "v"), ("name", "name", "v"), ("arguments", "arguments", "v"),
         ("thoughtSignature", "thought_signature", "v")],
    ),
}

_COST = [("input", "input", "v"), ("output", "output", "v"), ("cacheRead", "cache_read", "v"),
         ("cacheWrite", "cache_write", "v"), ("total", "total", "v")]
_USAGE = [("input", "input", "v"), ("output", "output", "v"), ("cacheRead", "cache_read", "v"),
          ("cacheWrite", "cache_write", "v"), ("totalTokens", "total_tokens", "v"),
          ("cost", "cost", "cost"), ("cacheWrite1h", "cache_write_1h", "v"), ("reasoning", "reasoning", "v")]

_MESSAGES: dict[str, tuple[type, list[tuple[str, str, str]]]] = {
    "user": (M.UserMessage, [("content", "content", "content"), ("timestamp", "timestamp", "v")]),
    "assistant": (
        M.AssistantMessage,
        # key order of new lines: pi's (a line read keeps its own text, whatever its order)
        [("content", "content", "blocks"), ("api", "api", "v"), ("provider", "provider", "v"),
         ("model", "model", "v"), ("responseModel", "response_model", "v"), ("responseId", "response_id", "v"),
         ("thinkingLevel", "thinking_level", "v"), ("usage", "usage", "usage"),
         ("stopReason", "stop_reason", "v"), ("errorMessage", "error_message", "v"),
         ("timestamp", "timestamp", "v")],
    ),
    "system": (
        M.SystemMessage,
        [("content", "content", "content"), ("sections", "sections", "v"),
         ("toolsAdded", "tools_added", "v"), ("toolsRemoved", "tools_removed", "v"),
         ("timestamp", "timestamp", "v")],
    ),
    "toolResult": (
        M.ToolResultMessage,
        [("toolCallId", "tool_call_id", "v"), ("toolName", "tool_name", "v"),
         ("content", "content", "content"), ("details", "details", "v"),
         ("isError", "is_error", "v"), ("timestamp", "timestamp", "v")],
    ),
    "bashExecution": (
        M.BashExecutionMessage,
        [("command", "command", "v"), ("output", "output", "v"), ("exitCode", "exit_code", "v"),
         ("cancelled", "cancelled", "v"), ("truncated", "truncated", "v"),
         ("fullOutputPath", "full_output_path", "v"), ("timestamp", "timestamp", "v"),
         ("excludeFromContext", "exclude_from_context", "v")],
    ),
    "custom": (
        M.CustomMessage,
        [("customType", "custom_type", "v"), ("content", "content", "content"),
         ("display", "display", "v"), ("details", "details", "v"), ("timestamp", "timestamp", "v")],
    ),
    "compactionSummary": (
        M.CompactionSummaryMessage,
        [("summary", "summary", "v"), ("tokensBefore", "tokens_before", "v"),
         ("timestamp", "timestamp", "v")],
    ),
    "branchSummary": (
        M.BranchSummaryMessage,
        [("summary", "summary", "v"), ("fromId", "from_id", "v"), ("timestamp", "timestamp", "v")],
    ),
}

_ENTRIES: dict[str, tuple[type, list[tuple[str, str, str]]]] = {
    "message": (E.MessageEntry, _BASE + [("message", "message", "message")]),
    "thinking_level_change": (
        E.ThinkingLevelChangeEntry, _BASE + [("thinkingLevel", "thinking_level", "v")]),
    "model_change": (
        E.ModelChangeEntry, _BASE + [("provider", "provider", "v"), ("modelId", "model_id", "v")]),
    "active_tools_change": (
        E.ActiveToolsChangeEntry, _BASE + [("activeToolNames", "active_tool_names", "strs")]),
    "compaction": (
        E.CompactionEntry,
        _BASE + [("summary", "summary", "v"), ("firstKeptEntryId", "first_kept_entry_id", "v"),
                 ("tokensBefore", "tokens_before", "v"), ("details", "details", "v"),
                 ("usage", "usage", "usage"), ("fromHook", "from_hook", "v"),
                 ("systemMessage", "system_message", "message"),
                 ("retainedTail", "retained_tail", "messages")],
    ),
    "branch_summary": (
        E.BranchSummaryEntry,
        _BASE + [("fromId", "from_id", "v"), ("summary", "summary", "v"),
                 ("details", "details", "v"), ("usage", "usage", "usage"),
                 ("fromHook", "from_hook", "v")],
    ),
    "custom": (
        E.CustomEntry, [("customType", "custom_type", "v"), ("data", "data", "v")] + _BASE),
    "custom_message": (
        E.CustomMessageEntry,
        [("customType", "custom_type", "v"), ("content", "content", "content"),
         ("display", "display", "v"), ("details", "details", "v")] + _BASE,
    ),
    "label": (E.LabelEntry, _BASE + [("targetId", "target_id", "v"), ("label", "label", "v")]),
    "session_info": (E.SessionInfoEntry, _BASE + [("name", "name", "v")]),
    "leaf": (E.LeafEntry, _BASE + [("targetId", "target_id", "v")]),
    "usage": (
        E.UsageEntry,
        _BASE + [("kind", "kind", "v"), ("provider", "provider", "v"), ("model", "model", "v"),
                 ("usage", "usage", "usage"), ("note", "note", "v")],
    ),
    "context_edit": (
        E.ContextEditEntry, _BASE + [("targetId", "target_id", "v"), ("replacement", "replacement", "null")]),
}

_HEADER = [("version", "version", "v"), ("id", "id", "v"), ("timestamp", "timestamp", "v"),
           ("cwd", "cwd", "v"), ("parentSession", "parent_session", "v"),
           ("metadata", "metadata", "v")]


def _keymap(spec: list[tuple[str, str, str]], dialect: Dialect) -> dict[str, tuple[str, str]]:
    i = 0 if dialect == "pi" else 1
    return {row[i]: (row[1], row[2]) for row in spec}


_MAPS: dict[tuple[int, str], dict[str, tuple[str, str]]] = {}


def _map_for(spec: list[tuple[str, str, str]], dialect: Dialect) -> dict[str, tuple[str, str]]:
    key = (id(spec), dialect)
    m = _MAPS.get(key)
    if m is None:
        m = _MAPS[key] = _keymap(spec, dialect)
    return m


# ---------------------------------------------------------------------------------------------
# dict -> objects


def _parse_fields(d: dict, spec: list, dialect: Dialect, tag: str | None) -> tuple[dict, dict]:
    fields = _map_for(spec, dialect)
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for k, v in d.items():
        if k == tag:
            continue
        f = fields.get(k)
        if f is not None and v is None and f[1] == "null":
            continue
        if f is None or v is None:
            extra[k] = v
            continue
        attr, kind = f
        conv = _convert(v, kind, dialect)
        if conv is _BAD:
            extra[k] = v
        else:
            kwargs[attr] = conv
    return kwargs, extra


_BAD = object()


def _convert(v: Any, kind: str, dialect: Dialect) -> Any:
    if kind == "v" or kind == "null":
        return v
    if kind == "content":
        if isinstance(v, str):
            return v
        if isinstance(v, list):
            return tuple(block_from_dict(b, dialect) for b in v)
        return _BAD
    if kind == "blocks":
        if isinstance(v, list):
            return tuple(block_from_dict(b, dialect) for b in v)
        return _BAD
    if kind == "usage":
        return _usage_from_dict(v, dialect) if isinstance(v, dict) else _BAD
    if kind == "cost":
        if not isinstance(v, dict):
            return _BAD
        kw, extra = _parse_fields(v, _COST, dialect, None)
        return M.Cost(**kw, extra=extra)
    if kind == "message":
        return message_from_dict(v, dialect) if isinstance(v, dict) else _BAD
    if kind == "messages":
        if isinstance(v, list) and all(isinstance(m, dict) for m in v):
            return tuple(message_from_dict(m, dialect) for m in v)
        return _BAD
    if kind == "strs":
        if isinstance(v, list) and all(isinstance(s, str) for s in v):
            return tuple(v)
        return _BAD
    raise AssertionError(kind)


def _usage_from_dict(v: dict, dialect: Dialect) -> M.Usage:
    kw, extra = _parse_fields(v, _USAGE, dialect, None)
    return M.Usage(**kw, extra=extra)


def block_from_dict(b: Any, dialect: Dialect = "pi") -> C.ContentBlock:
    """A content block from its dict form."""
    if not isinstance(b, dict):
        return C.UnknownContent(block_type=None, raw=b)
    t = b.get("type")
    known = _BLOCKS.get(t) if isinstance(t, str) else None
    if known is None:
        return C.UnknownContent(block_type=t if isinstance(t, str) else None, raw=b)
    cls, spec = known
    kw, extra = _parse_fields(b, spec, dialect, "type")
    return cls(**kw, extra=extra)


def message_from_dict(d: dict, dialect: Dialect = "pi") -> M.Message:
    """A message from its dict form (any role; unknown roles become :class:`UnknownMessage`)."""
    role = d.get("role")
    known = _MESSAGES.get(role) if isinstance(role, str) else None
    if known is None:
        return M.UnknownMessage(message_role=role if isinstance(role, str) else None, raw=d)
    cls, spec = known
    kw, extra = _parse_fields(d, spec, dialect, "role")
    return cls(**kw, extra=extra)


def entry_from_dict(d: dict, dialect: Dialect = "pi") -> E.SessionEntry:
    """An entry from its dict form. Unknown types become :class:`UnknownEntry` (kept as read)."""
    t = d.get("type")
    known = _ENTRIES.get(t) if isinstance(t, str) else None
    if known is None:
        pid_key = "parentId" if dialect == "pi" else "parent_id"
        return E.UnknownEntry(
            entry_type=t if isinstance(t, str) else None,
            id=_str_or_none(d.get("id")),
            parent_id=_str_or_none(d.get(pid_key)),
            timestamp=_str_or_none(d.get("timestamp")),
            raw=d,
        )
    cls, spec = known
    kw, extra = _parse_fields(d, spec, dialect, "type")
    return cls(**kw, extra=extra)


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def header_from_dict(d: dict, dialect: Dialect = "pi") -> E.SessionHeader:
    """The session header from its dict form."""
    kw, extra = _parse_fields(d, _HEADER, dialect, "type")
    return E.SessionHeader(**kw, extra=extra)


# ---------------------------------------------------------------------------------------------
# objects -> dict


def _build(obj: Any, spec: list, dialect: Dialect, tag: tuple[str, Any] | None) -> dict:
    out: dict[str, Any] = {}
    i = 0 if dialect == "pi" else 1
    extra = obj.extra
    if tag is not None:
        out[tag[0]] = tag[1]
    for row in spec:
        key = row[i]
        if key in extra:  # a value in extra shadows (kept from the file), in the known key's place
            out[key] = extra[key]
            continue
        v = getattr(obj, row[1])
        if v is None and row[2] != "null":
            continue
        out[key] = _unconvert(v, row[2], dialect)
    for k, v in extra.items():
        if k not in out:
            out[k] = v
    return out


def _unconvert(v: Any, kind: str, dialect: Dialect) -> Any:
    if kind == "v" or kind == "null":
        return v
    if kind in ("content", "blocks"):
        if isinstance(v, str):
            return v
        return [block_to_dict(b, dialect) for b in v]  # type: ignore[arg-type]
    if kind == "usage":
        return _build(v, _USAGE, dialect, None)
    if kind == "cost":
        return _build(v, _COST, dialect, None)
    if kind == "message":
        return message_to_dict(v, dialect)  # type: ignore[arg-type]
    if kind == "messages":
        return [message_to_dict(m, dialect) for m in v]  # type: ignore[arg-type]
    if kind == "strs":
        return list(v)
    raise AssertionError(kind)


def block_to_dict(b: C.ContentBlock, dialect: Dialect = "pi") -> Any:
    if isinstance(b, C.UnknownContent):
        return b.raw
    _, spec = _BLOCKS[b.type]
    return _build(b, spec, dialect, ("type", b.type))


def message_to_dict(m: M.Message, dialect: Dialect = "pi") -> dict:
    """A message as a dict in ``dialect`` (pi: exactly the object pi holds)."""
    if isinstance(m, M.UnknownMessage):
        return m.raw
    _, spec = _MESSAGES[m.role]
    return _build(m, spec, dialect, ("role", m.role))


def entry_to_dict(e: E.SessionEntry, dialect: Dialect = "pi") -> dict:
    """An entry as a dict in ``dialect``, keys in pi's order for pi-written types."""
    if isinstance(e, E.UnknownEntry):
        if not isinstance(e.raw, dict):
            return {"type": e.entry_type}
        # the parent key is the one field of an unknown entry whose spelling depends on the dialect
        src, dst = ("parent_id", "parentId") if dialect == "pi" else ("parentId", "parent_id")
        if src in e.raw and dst not in e.raw:
            return {(dst if k == src else k): v for k, v in e.raw.items()}
        return e.raw
    _, spec = _ENTRIES[e.type]
    return _build(e, spec, dialect, ("type", e.type))


def header_to_dict(h: E.SessionHeader, dialect: Dialect = "pi") -> dict:
    return _build(h, _HEADER, dialect, ("type", "session"))
