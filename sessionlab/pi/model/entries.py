"""Session entries: the header, the eleven entry types of the seed and pi 1.6's ``usage`` and
``context_edit``, plus unknown entries.

Every entry has ``id``, ``parent_id`` (``None`` for a root) and ``timestamp`` (ISO-8601 text as
written). ``type`` is a class attribute with the on-disk spelling. Fields that are ``None`` were
absent in the file; fields sessionlab does not know are kept in ``extra``. An entry whose type is
unknown is an :class:`UnknownEntry` holding the object as read, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from .content import ContentBlock
from .messages import Message, Usage

__all__ = [
    "SessionHeader",
    "MessageEntry",
    "ThinkingLevelChangeEntry",
    "ModelChangeEntry",
    "ActiveToolsChangeEntry",
    "CompactionEntry",
    "BranchSummaryEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "SessionInfoEntry",
    "LeafEntry",
    "UsageEntry",
    "ContextEditEntry",
    "UnknownEntry",
    "SessionEntry",
    "ENTRY_TYPES",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionHeader:
    """Line 1 of a session file (``type: "session"``).

    ``parent_session`` is the parent file's path (pi) after a fork. ``metadata`` is the seed's
    free-form metadata. Legacy pi fields (``branchedFrom``, ``provider``...) stay in ``extra``.
    """

    type: ClassVar[str] = "session"
    version: int | None = None
    id: str = ""
    timestamp: str | None = None
    cwd: str | None = None
    parent_session: str | None = None
    metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Base:
    id: str | None = None
    parent_id: str | None = None
    timestamp: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageEntry(_Base):
    """A user, assistant, tool result or bash execution message."""

    type: ClassVar[str] = "message"
    message: Message | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingLevelChangeEntry(_Base):
    type: ClassVar[str] = "thinking_level_change"
    thinking_level: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChangeEntry(_Base):
    type: ClassVar[str] = "model_change"
    provider: str | None = None
    model_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveToolsChangeEntry(_Base):
    """The seed's change of active tools (not written by pi)."""

    type: ClassVar[str] = "active_tools_change"
    active_tool_names: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionEntry(_Base):
    """Older history replaced by ``summary``.

    pi keeps the messages from ``first_kept_entry_id`` on; the seed's ``retained_tail`` instead
    carries the kept messages inside the entry. pi 1.6 adds the summarisation call's ``usage`` and
    the ``system_message`` in effect, which the compaction replays before its summary.
    """

    type: ClassVar[str] = "compaction"
    summary: str = ""
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None
    details: Any = None
    from_hook: bool | None = None
    usage: Usage | None = None
    retained_tail: tuple[Message, ...] | None = None
    system_message: Message | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchSummaryEntry(_Base):
    """Summary of a branch left behind; ``from_id`` is where it is attached (pi: the new position)."""

    type: ClassVar[str] = "branch_summary"
    from_id: str | None = None
    summary: str = ""
    details: Any = None
    from_hook: bool | None = None
    usage: Usage | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomEntry(_Base):
    """Extension data; never part of the LLM context unless a projector maps it."""

    type: ClassVar[str] = "custom"
    custom_type: str | None = None
    data: Any = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomMessageEntry(_Base):
    """An extension message that enters the context as role ``custom``."""

    type: ClassVar[str] = "custom_message"
    custom_type: str | None = None
    content: str | tuple[ContentBlock, ...] | None = None
    display: bool | None = None
    details: Any = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelEntry(_Base):
    """Sets (or, with ``label`` ``None`` or empty, clears) the label of ``target_id``."""

    type: ClassVar[str] = "label"
    target_id: str | None = None
    label: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfoEntry(_Base):
    """Session metadata; ``name`` is the display name."""

    type: ClassVar[str] = "session_info"
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class LeafEntry(_Base):
    """The seed's leaf pointer: moves the current leaf to ``target_id`` (``None`` = before the root).

    Not a conversation node: it never appears on a branch or in a context.
    """

    type: ClassVar[str] = "leaf"
    target_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageEntry(_Base):
    """pi 1.6: spend that is not a conversation message (a title, a summary, an import...).

    ``kind`` says what the call was for; ``usage`` holds its tokens and cost. Never in a context.
    """

    type: ClassVar[str] = "usage"
    kind: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEditEntry(_Base):
    """pi 1.6: replaces (``replacement = {"content": ...}``) or removes (``replacement`` ``None``) the
    content its ``target_id`` entry gives the context. The last edit of a target in the context wins."""

    type: ClassVar[str] = "context_edit"
    target_id: str | None = None
    replacement: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownEntry(_Base):
    """An entry of a type sessionlab does not know, kept with the object as read in ``raw``."""

    entry_type: str | None = None
    raw: Any = None

    @property
    def type(self) -> str | None:  # type: ignore[override]
        return self.entry_type


SessionEntry = Union[
    MessageEntry,
    ThinkingLevelChangeEntry,
    ModelChangeEntry,
    ActiveToolsChangeEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
    LeafEntry,
    UsageEntry,
    ContextEditEntry,
    UnknownEntry,
]

ENTRY_TYPES: dict[str, type] = {
    cls.type: cls  # type: ignore[misc]
    for cls in (
        MessageEntry,
        ThinkingLevelChangeEntry,
        ModelChangeEntry,
        ActiveToolsChangeEntry,
        CompactionEntry,
        BranchSummaryEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        SessionInfoEntry,
        LeafEntry,
        UsageEntry,
        ContextEditEntry,
    )
}
