"""Messages (pi's ``AgentMessage``): what ``message`` entries hold and what contexts are made of.

``UserMessage``, ``AssistantMessage``, ``ToolResultMessage``, ``BashExecutionMessage`` and pi 1.6's
``SystemMessage`` are stored in files; ``CustomMessage`` comes from ``custom_message`` entries (or a migrated v2
``hookMessage``); ``CompactionSummaryMessage`` and ``BranchSummaryMessage`` are synthesized when a
context is built and never stored. ``timestamp`` of a message is Unix milliseconds.
A field that is ``None`` was absent in the file; unknown fields live in ``extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from .content import ContentBlock

__all__ = [
    "Cost",
    "Usage",
    "UserMessage",
    "AssistantMessage",
    "SystemMessage",
    "ToolResultMessage",
    "BashExecutionMessage",
    "CustomMessage",
    "CompactionSummaryMessage",
    "BranchSummaryMessage",
    "UnknownMessage",
    "Message",
]

Content = Union[str, tuple[ContentBlock, ...]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """Cost in USD, by token bucket."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    total: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage of one assistant call. ``total_tokens`` is missing in old pi files."""

    input: int | float | None = None
    output: int | float | None = None
    cache_read: int | float | None = None
    cache_write: int | float | None = None
    total_tokens: int | float | None = None
    cost: Cost | None = None
    cache_write_1h: int | float | None = None
    reasoning: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def context_tokens(self) -> int:
        """pi's ``calculateContextTokens`` (see :func:`context_token_count`)."""
        return int(context_token_count(self.total_tokens, self.input, self.output, self.cache_read, self.cache_write))


def context_token_count(total: Any, input: Any, output: Any, cache_read: Any, cache_write: Any) -> Any:
    """pi's ``calculateContextTokens`` on a usage's raw values: ``totalTokens`` if truthy, else the
    sum of the four parts (a missing part counts 0). The one statement of the rule in Python: the
    object model and the msgspec path call it; the C scanner's copy (``context_tokens`` in
    ``_scan.c``) is checked against it by ``tests/test_tokens.py``."""
    return total or (input or 0) + (output or 0) + (cache_read or 0) + (cache_write or 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    role: ClassVar[str] = "user"
    content: Content | None = None
    timestamp: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    role: ClassVar[str] = "assistant"
    content: tuple[ContentBlock, ...] | None = None
    api: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    timestamp: int | float | None = None
    error_message: str | None = None
    response_model: str | None = None
    response_id: str | None = None
    thinking_level: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemMessage:
    """pi 1.6's system prompt message (role ``system``): ``content`` plus named ``sections`` and the
    tools it adds or removes. A compaction carries the one in effect as ``system_message``."""

    role: ClassVar[str] = "system"
    content: Content | None = None
    sections: dict[str, Any] | None = None
    tools_added: Any = None
    tools_removed: Any = None
    timestamp: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultMessage:
    role: ClassVar[str] = "toolResult"
    tool_call_id: str | None = None
    tool_name: str | None = None
    content: Content | None = None
    details: Any = None
    is_error: bool | None = None
    timestamp: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class BashExecutionMessage:
    role: ClassVar[str] = "bashExecution"
    command: str | None = None
    output: str | None = None
    exit_code: int | None = None
    cancelled: bool | None = None
    truncated: bool | None = None
    full_output_path: str | None = None
    timestamp: int | float | None = None
    exclude_from_context: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomMessage:
    """An extension message (role ``custom``)."""

    role: ClassVar[str] = "custom"
    custom_type: str | None = None
    content: Content | None = None
    display: bool | None = None
    details: Any = None
    timestamp: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSummaryMessage:
    """Synthesized from the compaction in effect when a context is built."""

    role: ClassVar[str] = "compactionSummary"
    summary: str = ""
    tokens_before: int | None = None
    timestamp: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchSummaryMessage:
    """Synthesized from a ``branch_summary`` entry when a context is built."""

    role: ClassVar[str] = "branchSummary"
    summary: str = ""
    from_id: str | None = None
    timestamp: int | float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownMessage:
    """A message whose role sessionlab does not know; ``raw`` is the object as read."""

    message_role: str | None
    raw: Any = None

    @property
    def role(self) -> str | None:
        return self.message_role


Message = Union[
    UserMessage,
    AssistantMessage,
    SystemMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    CompactionSummaryMessage,
    BranchSummaryMessage,
    UnknownMessage,
]
