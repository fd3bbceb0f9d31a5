"""pi's token accounting, the one place its rules live.

- :func:`estimate_tokens` is pi's ``estimateTokens(message)``: ``ceil(chars / 4)`` with
  JavaScript string lengths (UTF-16 code units) and pi's per-role rules (images ignored in user
  messages, 4800 chars per image in tool results and custom messages, tool calls counted as
  ``name`` + ``JSON.stringify(arguments)``).
- :func:`estimate_tokens_dict` is the same rule on a message in pi's dict form (for loaders that
  never build objects); a test keeps the two equal on every sample file.
- :func:`estimate_context_tokens` is pi's ``estimateContextTokens(messages)``.

Example:
    >>> from sessionlab.model import UserMessage
    >>> estimate_tokens(UserMessage(content="hello world"))
    3
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._jsjson import js_len, js_stringify
from .model import messages as M
from .model.content import ImageContent, TextContent, ThinkingContent, ToolCall

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_CHARS",
    "estimate_tokens",
    "estimate_tokens_dict",
    "estimate_chars",
    "ContextEstimate",
    "estimate_context_tokens",
    "calculate_context_tokens",
    "is_usage_source",
]

CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800  # what pi counts for an image block in tool results and custom messages


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _s(v: Any) -> int:
    return js_len(v) if isinstance(v, str) else 0


def _content_chars(content: Any, images: bool) -> int:
    if isinstance(content, str):
        return js_len(content)
    if not content:
        return 0
    chars = 0
    for b in content:
        if isinstance(b, TextContent):
            chars += _s(b.text)
        elif images and isinstance(b, ImageContent):
            chars += IMAGE_CHARS
    return chars


def estimate_chars(message: M.Message) -> int:
    """The character count pi divides by 4 (see module doc)."""
    if isinstance(message, M.UserMessage):
        return _content_chars(message.content, images=False)
    if isinstance(message, M.AssistantMessage):
        chars = 0
        for b in message.content or ():
            if isinstance(b, TextContent):
                chars += _s(b.text)
            elif isinstance(b, ThinkingContent):
                chars += _s(b.thinking)
            elif isinstance(b, ToolCall):
                chars += _s(b.name) + _json_len(b.arguments)
        return chars
    if isinstance(message, (M.CustomMessage, M.ToolResultMessage)):
        return _content_chars(message.content, images=True)
    if isinstance(message, M.BashExecutionMessage):
        return _s(message.command) + _s(message.output)
    if isinstance(message, (M.BranchSummaryMessage, M.CompactionSummaryMessage)):
        return _s(message.summary)
    return 0


def _json_len(v: Any) -> int:
    if v is None:
        return 0  # JSON.stringify(undefined) has no length; pi would throw
    return js_len(js_stringify(v))


def estimate_tokens(message: M.Message) -> int:
    """pi's ``estimateTokens``: ``ceil(chars / 4)``."""
    return _tokens(estimate_chars(message))


def _dict_content_chars(content: Any, images: bool) -> int:
    if isinstance(content, str):
        return js_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for b in content:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            chars += _s(b.get("text"))
        elif images and t == "image":
            chars += IMAGE_CHARS
    return chars


def estimate_tokens_dict(message: dict) -> int:
    """:func:`estimate_tokens` on a message in pi's dict form, after migration (a v2 ``hookMessage``
    is ``custom`` by then; in a v3 file it is an unknown role and counts 0, as in pi)."""
    role = message.get("role")
    if role == "user":
        chars = _dict_content_chars(message.get("content"), images=False)
    elif role == "assistant":
        chars = 0
        content = message.get("content")
        for b in content if isinstance(content, list) else ():
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "text":
                chars += _s(b.get("text"))
            elif t == "thinking":
                chars += _s(b.get("thinking"))
            elif t == "toolCall":
                chars += _s(b.get("name")) + _json_len(b.get("arguments"))
    elif role in ("custom", "toolResult"):
        chars = _dict_content_chars(message.get("content"), images=True)
    elif role == "bashExecution":
        chars = _s(message.get("command")) + _s(message.get("output"))
    elif role in ("branchSummary", "compactionSummary"):
        chars = _s(message.get("summary"))
    else:
        chars = 0
    return _tokens(chars)


def calculate_context_tokens(usage: M.Usage) -> int:
    """pi's ``calculateContextTokens``: ``totalTokens`` if truthy, else the sum of the four parts."""
    return usage.context_tokens()


def is_usage_source(message: M.Message) -> bool:
    """Whether pi takes this message's usage as the context size: an assistant message with usage
    whose stop reason is neither ``aborted`` nor ``error``."""
    return (
        isinstance(message, M.AssistantMessage)
        and message.usage is not None
        and message.stop_reason not in ("aborted", "error")
    )


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    """pi's ``estimateContextTokens`` result: ``tokens = usage_tokens + trailing_tokens``."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def estimate_context_tokens(messages: Sequence[M.Message], per_message: Iterable[int] | None = None) -> ContextEstimate:
    """pi's ``estimateContextTokens``: usage of the last valid assistant message plus the estimates
    of every message after it (all messages when there is none).

    ``per_message`` may pass precomputed :func:`estimate_tokens` values.
    """
    est = list(per_message) if per_message is not None else None
    last = None
    for i in range(len(messages) - 1, -1, -1):
        if is_usage_source(messages[i]):
            last = i
            break
    start = 0 if last is None else last + 1
    trailing = sum(est[start:]) if est is not None else sum(estimate_tokens(m) for m in messages[start:])
    if last is None:
        return ContextEstimate(trailing, 0, trailing, None)
    usage_tokens = calculate_context_tokens(messages[last].usage)  # type: ignore[union-attr,arg-type]
    return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, last)
