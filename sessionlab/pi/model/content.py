"""Content blocks inside messages: text, thinking, image and tool call.

Every block keeps fields it does not know in ``extra`` (for example a stray ``partialJson`` on a
tool call in real pi files), so converting back to a dict loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

__all__ = [
    "TextContent",
    "ThinkingContent",
    "ImageContent",
    "ToolCall",
    "UnknownContent",
    "ContentBlock",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TextContent:
    """A text block. ``text_signature`` is provider metadata."""

    type: ClassVar[str] = "text"
    text: str = ""
    text_signature: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingContent:
    """A reasoning block of an assistant message."""

    type: ClassVar[str] = "thinking"
    thinking: str = ""
    thinking_signature: str | None = None
    redacted: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageContent:
    """An image, base64 ``data`` with its ``mime_type``."""

    type: ClassVar[str] = "image"
    data: str = ""
    mime_type: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A tool call made by the assistant (block type ``toolCall``)."""

    type: ClassVar[str] = "toolCall"
    id: str | None = None
    name: str = ""
    arguments: Any = None
    thought_signature: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownContent:
    """A block of a type sessionlab does not know; ``raw`` is the object as read."""

    block_type: str | None
    raw: Any = None

    @property
    def type(self) -> str | None:
        return self.block_type


ContentBlock = Union[TextContent, ThinkingContent, ImageContent, ToolCall, UnknownContent]
