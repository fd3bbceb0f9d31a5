"""pi's token accounting, the one place its rules live.

- :func:`estimate_tokens` is pi's ``estimateTokens(message)``: ``ceil(chars / 4)`` with
  JavaScript string lengths (UTF-16 code units) and pi's per-role rules (4800 chars per image in
  tool results and custom messages, and in user messages from pi 1.6 on; tool calls counted as
  ``name`` + ``JSON.stringify(arguments)``; pi 1.6's system messages as content + sections +
  ``JSON.stringify(toolsAdded)``).
- :data:`ROLE_CHARS` states the per-role rule as data (with :data:`CHARS_PER_TOKEN` and
  :data:`IMAGE_CHARS` it is defined in :mod:`sessionlab.pi.rules`, which imports no object model,
  and re-exported here): the loaders' fast paths (the C scanner
  ``sessionlab._scan``, built with a header generated from that table, and
  :mod:`sessionlab.tables._fast`) apply it without building messages, and the tests check that
  they agree with this module (``tests/test_tokens.py``, ``tests/test_token_rule.py``).
- :func:`estimate_context_tokens` is pi's ``estimateContextTokens(messages)``;
  :func:`estimate_projected_context_tokens` is pi 1.6's ``estimateProjectedContextTokens``.

Every function takes ``rules=`` (``"pi-1.6"`` by default, or ``"pi-0.58"``: see
:mod:`sessionlab.pi.rules`).

Example:
    >>> from sessionlab.pi.model import UserMessage
    >>> estimate_tokens(UserMessage(content="hello world"))
    3
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._jsjson import js_len, js_stringify, js_to_string
from .model import messages as M
from .model.content import ImageContent, TextContent, ThinkingContent, ToolCall
from .rules import CHARS_PER_TOKEN, DEFAULT_RULES, IMAGE_CHARS, ROLE_CHARS, Rules, pi_rules

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_CHARS",
    "estimate_tokens",
    "ROLE_CHARS",
    "estimate_chars",
    "ContextEstimate",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "current_system_message",
    "calculate_context_tokens",
    "is_usage_source",
]

def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _s(v: Any) -> int:
    return js_len(v) if isinstance(v, str) else 0


class _Parts:
    """A role's parts (:data:`ROLE_CHARS`) as flags, so a message is counted in one pass."""

    __slots__ = ("string", "text", "images", "thinking", "calls", "fields", "sections", "tools")

    def __init__(self, parts: Sequence[str]) -> None:
        self.string = "content" in parts  # a string content
        self.text = "content" in parts or "text" in parts  # text blocks
        self.images, self.thinking, self.calls = "images" in parts, "thinking" in parts, "toolCall" in parts
        self.fields = tuple(f for f in ("command", "output", "summary") if f in parts)
        self.sections, self.tools = "sections" in parts, "toolsAdded" in parts


_ROLE_PARTS = {role: _Parts(parts) for role, parts in ROLE_CHARS.items()}


def _content_chars(content: Any, p: _Parts, images: bool) -> int:
    if isinstance(content, str):
        return js_len(content) if p.string else 0
    chars = 0
    for b in content or ():
        if isinstance(b, TextContent):
            chars += _s(b.text) if p.text else 0
        elif isinstance(b, ImageContent):
            chars += IMAGE_CHARS if images else 0
        elif isinstance(b, ThinkingContent):
            chars += _s(b.thinking) if p.thinking else 0
        elif isinstance(b, ToolCall):
            chars += _s(b.name) + _json_len(b.arguments) if p.calls else 0
    return chars


def estimate_chars(message: M.Message, *, rules: Rules = DEFAULT_RULES) -> int:
    """The character count pi divides by :data:`CHARS_PER_TOKEN`: the parts :data:`ROLE_CHARS`
    names for the message's role (see module doc); 0 for a role it does not name."""
    r = pi_rules(rules)
    if isinstance(message, M.UnknownMessage):
        return 0
    role = message.role
    p = _ROLE_PARTS.get(role)
    if p is None or (role == "system" and not r.system_role):
        return 0
    chars = _content_chars(getattr(message, "content", None), p, p.images and (r.user_images or role != "user"))
    for f in p.fields:
        chars += _s(getattr(message, f, None))
    if p.sections and isinstance(sections := getattr(message, "sections", None), dict):
        chars += sum(_s(v) for v in sections.values())
    if p.tools and (tools := getattr(message, "tools_added", None)):
        chars += _tools_len(tools)
    return chars


def _tools_len(tools: Any) -> int:
    """``JSON.stringify(toolsAdded).length``: the same large tool list comes back in every system
    message and every compaction that replays it, so its length is kept by its JSON text."""
    try:
        key = json.dumps(tools, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # not plain JSON (built by hand): measure it as it is
        return _json_len(tools)
    return _json_text_len(key)


@lru_cache(maxsize=64)
def _json_text_len(text: str) -> int:
    return _json_len(json.loads(text))


def _json_len(v: Any) -> int:
    if v is None:
        return 0  # JSON.stringify(undefined) has no length; pi would throw
    return js_len(js_stringify(v))


def estimate_tokens(message: M.Message, *, rules: Rules = DEFAULT_RULES) -> int:
    """pi's ``estimateTokens``: ``ceil(chars / 4)``."""
    return _tokens(estimate_chars(message, rules=rules))


def calculate_context_tokens(usage: M.Usage) -> int:
    """pi's ``calculateContextTokens``: ``totalTokens`` if truthy, else the sum of the four parts
    (the rule itself: :func:`sessionlab.pi.model.messages.context_token_count`)."""
    return usage.context_tokens()


def is_usage_source(message: M.Message, *, rules: Rules = DEFAULT_RULES) -> bool:
    """Whether pi takes this message's usage as the context size: an assistant message with usage
    whose stop reason is neither ``aborted`` nor ``error`` (and, from pi 1.6 on, whose usage does
    not total 0)."""
    return (
        isinstance(message, M.AssistantMessage)
        and message.usage is not None
        and message.stop_reason not in ("aborted", "error")
        and (not pi_rules(rules).skip_zero_usage or message.usage.context_tokens() > 0)
    )


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    """pi's ``estimateContextTokens`` result: ``tokens = usage_tokens + trailing_tokens``."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def estimate_context_tokens(messages: Sequence[M.Message], per_message: Iterable[int] | None = None, *,
                            rules: Rules = DEFAULT_RULES) -> ContextEstimate:
    """pi's ``estimateContextTokens``: usage of the last valid assistant message plus the estimates
    of every message after it (all messages when there is none).

    ``per_message`` may pass precomputed :func:`estimate_tokens` values.
    """
    est = list(per_message) if per_message is not None else None
    last = None
    for i in range(len(messages) - 1, -1, -1):
        if is_usage_source(messages[i], rules=rules):
            last = i
            break
    start = 0 if last is None else last + 1
    trailing = (sum(est[start:]) if est is not None
                else sum(estimate_tokens(m, rules=rules) for m in messages[start:]))
    if last is None:
        return ContextEstimate(trailing, 0, trailing, None)
    usage_tokens = calculate_context_tokens(messages[last].usage)  # type: ignore[union-attr,arg-type]
    return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, last)


def estimate_projected_context_tokens(messages: Sequence[M.Message], usage_is_current: bool, *,
                                      rules: Rules = DEFAULT_RULES) -> ContextEstimate:
    """pi 1.6's ``estimateProjectedContextTokens``: :func:`estimate_context_tokens` when its usage
    is still current, else the plain sum of the estimates of the current system message
    (:func:`current_system_message`) and of every non-system message.

    ``usage_is_current`` is the branch-level fact pi checks: the entry that gives the usage comes
    after the latest ``context_edit`` or ``compaction`` on the branch
    (:func:`sessionlab.pi.context.projected_context_estimate` works it out from a path).
    """
    est = estimate_context_tokens(messages, rules=rules)
    if est.last_usage_index is not None and usage_is_current:
        return est
    system = current_system_message(messages)
    tokens = estimate_tokens(system, rules=rules) if system is not None else 0
    tokens += sum(estimate_tokens(m, rules=rules) for m in messages if not isinstance(m, M.SystemMessage))
    return ContextEstimate(tokens, 0, tokens, None)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    # (JavaScript's join writes a text that is no string, as a damaged file may hold, as String() does)
    return "\n".join(js_to_string(b.text) for b in content or () if isinstance(b, TextContent))


def current_system_message(messages: Sequence[M.Message]) -> M.SystemMessage | None:
    """pi-ai's ``getCurrentSystemMessage``: every system message replayed into one (contents joined
    by a blank line, ``sections`` patched by name, a ``None`` section deleted, tools added and
    removed by name); ``None`` when there is no system message."""
    parts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp = None
    seen = False
    for m in messages:
        if not isinstance(m, M.SystemMessage):
            continue
        seen = True
        if timestamp is None:
            timestamp = m.timestamp
        text = _content_text(m.content)
        if text:
            parts.append(text)
        for name, value in (m.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for t in m.tools_removed or ():
            tools.pop(t.get("name") if isinstance(t, dict) else None, None)
        for t in m.tools_added or ():
            tools[t.get("name") if isinstance(t, dict) else None] = t
    if not seen or (timestamp is None and not tools):
        return None
    return M.SystemMessage(content="\n\n".join(parts), sections=sections or None,
                           tools_added=list(tools.values()) or None, timestamp=timestamp or 0)
