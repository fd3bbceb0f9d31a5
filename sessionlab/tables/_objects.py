"""Table rows from the object model: the tolerant path, used for every file the fast path refuses.

Files with line issues, v1/v2 files (which need migration), seed-dialect files and anything odd go
through :func:`sessionlab.pi.io.parse_session_bytes` and the entry objects it returns. This path loops
over entries in Python; it is the readable reference the fast path (:mod:`._fast`) must agree with.
"""

from __future__ import annotations

import re
from typing import Any

from .._jsjson import js_len
from ..pi.io.reader import SessionFile
from ..pi.model import content as C
from ..pi.model import entries as E
from ..pi.model import messages as M
from ..pi.tokens import estimate_chars, estimate_context_tokens, estimate_tokens
from ._arrays import parse_timestamps, with_pi_defaults

__all__ = ["entry_rows", "block_rows", "parse_timestamps", "declared_facts", "with_pi_defaults", "tail_columns"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def _str(v: Any) -> str | None:
    """A string value for an Arrow column: a lone surrogate (valid in pi's JavaScript strings, not
    in UTF-8) becomes U+FFFD, as Arrow cannot hold it."""
    if not isinstance(v, str):
        return None
    return v if v.isascii() or not _SURROGATE.search(v) else _SURROGATE.sub("\ufffd", v)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else None
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
        return int(v)
    return None


def _float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return None


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _usage_row(u: M.Usage | None, kind: str, row: dict[str, Any]) -> None:
    """The token and cost columns of one usage (a call, or spend that is not a message)."""
    if u is None:
        return
    row["usage_kind"] = kind
    raw = (("input", u.input), ("output", u.output), ("cacheRead", u.cache_read), ("cacheWrite", u.cache_write),
           ("totalTokens", u.total_tokens), ("reasoning", u.reasoning), ("cacheWrite1h", u.cache_write_1h))
    odd = [(name, v) for name, v in raw if v is not None and _int(v) is None]
    if odd:  # present, but no whole number a total can use: a bad_value issue (see ._values)
        row["bad_values"] = odd
    row["input_tokens"] = _int(u.input)
    row["output_tokens"] = _int(u.output)
    row["cache_read_tokens"] = _int(u.cache_read)
    row["cache_write_tokens"] = _int(u.cache_write)
    row["total_tokens"] = _int(u.total_tokens)
    row["reasoning_tokens"] = _int(u.reasoning)
    row["cache_write_1h_tokens"] = _int(u.cache_write_1h)
    parts = (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens)
    if all(v is None or _float(v) is not None for v in parts):
        row["context_tokens"] = _int(u.context_tokens())
    row["cost_usd"] = _float(u.cost.total) if u.cost is not None else None


def _images(content: Any) -> int | None:
    if isinstance(content, str):
        return 0
    if isinstance(content, tuple):
        return sum(isinstance(b, C.ImageContent) for b in content)
    return None


def _message_row(m: M.Message, row: dict[str, Any]) -> None:
    row["role"] = _str(m.role)
    if isinstance(m, M.AssistantMessage):
        row["provider"] = _str(m.provider)
        row["model"] = _str(m.model)
        row["api"] = _str(m.api)
        row["stop_reason"] = _str(m.stop_reason)
        row["error_message"] = _str(m.error_message)
        row["response_model"] = _str(m.response_model)
        row["tool_call_count"] = sum(isinstance(b, C.ToolCall) for b in m.content or ())
        _usage_row(m.usage, "message", row)
    elif isinstance(m, M.ToolResultMessage):
        row["tool_name"] = _str(m.tool_name)
        row["is_error"] = _bool(m.is_error)
    elif isinstance(m, M.CustomMessage):
        row["custom_type"] = _str(m.custom_type)
    row["image_count"] = _images(getattr(m, "content", None))
    row["est_tokens"] = estimate_tokens(m)


def _harness_kept(m: M.Message) -> bool:
    """pi's v4 harness never sends an assistant message that ended in error, aborted or deferred."""
    from ..pi.v4_context import DROPPED_STOP_REASONS

    return not (isinstance(m, M.AssistantMessage) and m.stop_reason in DROPPED_STOP_REASONS)


def tail_columns(tail: list[M.Message]) -> dict[str, Any]:
    """The ``retained_tail_*`` columns of the messages a compaction carries (also those of an edit
    that replaces their content, see :mod:`._pi16`)."""
    est = estimate_context_tokens(tail)
    return {"retained_tail_messages": len(tail),
            "retained_tail_est_tokens": sum(estimate_tokens(m) for m in tail),
            "retained_tail_context_tokens": est.tokens if est.last_usage_index is not None else None}


def entry_row(e: E.SessionEntry, *, harness: bool = False) -> dict[str, Any]:
    """The type-specific column values of one entry (all but session, file, line, timestamp)."""
    row: dict[str, Any] = {"entry_id": _str(e.id), "parent_id": _str(e.parent_id), "type": _str(e.type)}
    if isinstance(e, E.MessageEntry):
        if e.message is not None:
            _message_row(e.message, row)
    elif isinstance(e, E.ModelChangeEntry):
        row["provider"] = _str(e.provider)
        row["model"] = _str(e.model_id)
    elif isinstance(e, E.ThinkingLevelChangeEntry):
        row["thinking_level"] = _str(e.thinking_level)
    elif isinstance(e, E.CompactionEntry):
        row["first_kept_entry_id"] = _str(e.first_kept_entry_id)
        row["tokens_before"] = _int(e.tokens_before)
        _usage_row(e.usage, "compaction", row)
        if e.retained_tail is not None:
            row.update(tail_columns([m for m in e.retained_tail if not harness or _harness_kept(m)]))
        if isinstance(e.summary, str):
            row["summary_chars"] = js_len(e.summary)
            row["est_tokens"] = estimate_tokens(M.CompactionSummaryMessage(summary=e.summary))
    elif isinstance(e, E.BranchSummaryEntry):
        row["from_id"] = _str(e.from_id)
        _usage_row(e.usage, "branch_summary", row)
        if isinstance(e.summary, str):
            row["summary_chars"] = js_len(e.summary)
            row["est_tokens"] = estimate_tokens(M.BranchSummaryMessage(summary=e.summary))
    elif isinstance(e, E.CustomEntry):
        row["custom_type"] = _str(e.custom_type)
    elif isinstance(e, E.CustomMessageEntry):
        row["custom_type"] = _str(e.custom_type)
        row["image_count"] = _images(e.content)
        row["est_tokens"] = estimate_tokens(M.CustomMessage(content=e.content))
    elif isinstance(e, E.LabelEntry):
        row["target_id"] = _str(e.target_id)
        row["label"] = _str(e.label)
    elif isinstance(e, E.LeafEntry):
        row["target_id"] = _str(e.target_id)
    elif isinstance(e, E.SessionInfoEntry):
        row["name"] = _str(e.name)
    elif isinstance(e, E.UsageEntry):
        row["provider"] = _str(e.provider)
        row["model"] = _str(e.model)
        _usage_row(e.usage, _str(e.kind) or "usage", row)
    elif isinstance(e, E.ContextEditEntry):
        row["target_id"] = _str(e.target_id)  # edit_action and est_tokens: see _pi16.resolve
    return row


def entry_rows(sf: SessionFile) -> list[dict[str, Any]]:
    """One dict per entry of ``sf`` (Python loop: this is the tolerant path, not the hot one)."""
    if sf.version != 4:
        return [entry_row(e) for e in sf.entries]
    rows = []
    for e in sf.entries:
        row = entry_row(e, harness=True)
        if isinstance(e, E.MessageEntry) and e.message is not None and not _harness_kept(e.message):
            row["never_in_context"] = True
        rows.append(row)
    return rows


def _block_chars(block: C.ContentBlock, role_message: type) -> int:
    # the block's share of pi's estimate, by the one rule in sessionlab.pi.tokens
    if role_message is M.AssistantMessage:
        return estimate_chars(M.AssistantMessage(content=(block,)))
    return estimate_chars(role_message(content=(block,)))


_CONTENT_ROLES: dict[type, type] = {
    M.UserMessage: M.UserMessage,
    M.AssistantMessage: M.AssistantMessage,
    M.ToolResultMessage: M.ToolResultMessage,
    M.CustomMessage: M.CustomMessage,
}


def block_rows(sf: SessionFile) -> list[dict[str, Any]]:
    """One dict per content block of the message and custom_message entries of ``sf``."""
    out: list[dict[str, Any]] = []
    for e in sf.entries:
        if isinstance(e, E.MessageEntry) and type(e.message) in _CONTENT_ROLES:
            msg_cls = type(e.message)
            role = e.message.role  # type: ignore[union-attr]
            content = e.message.content  # type: ignore[union-attr]
        elif isinstance(e, E.CustomMessageEntry):
            msg_cls, role, content = M.CustomMessage, "custom", e.content
        else:
            continue
        if isinstance(content, str):
            if msg_cls is M.AssistantMessage:
                continue  # pi ignores a string as assistant content
            out.append({"entry_id": e.id, "role": role, "block_index": 0, "block_type": "text",
                        "tool_name": None, "tool_call_id": None, "chars": js_len(content)})
            continue
        for i, b in enumerate(content or ()):
            is_call = isinstance(b, C.ToolCall)
            out.append({
                "entry_id": e.id, "role": role, "block_index": i, "block_type": _str(b.type),
                "tool_name": _str(b.name) if is_call else None,  # type: ignore[union-attr]
                "tool_call_id": _str(b.id) if is_call else None,  # type: ignore[union-attr]
                "chars": _block_chars(b, msg_cls),
            })
    return out


def declared_facts(sf: SessionFile) -> dict[str, Any]:
    """What a v4 file declares as values instead of rows: the name (``pi.session.name``), the leaf
    (``main``'s tip, else the tip set last; see :attr:`SessionFile.leaf_id`) and the leaf count
    (distinct tips). Other files declare nothing: their facts come from their rows."""
    if sf.version != 4:
        return {}
    return {"name": sf.name or None, "leaf_id": _str(sf.leaf_id), "leaf_count": len(set(sf.branch_tips.values()))}
