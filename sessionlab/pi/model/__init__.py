"""The entry model: frozen dataclasses for headers, entries, messages and content blocks."""

from .content import (
    ContentBlock,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    UnknownContent,
)
from .entries import (
    ENTRY_TYPES,
    ActiveToolsChangeEntry,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    LeafEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    UsageEntry,
)
from .messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    Cost,
    CustomMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UnknownMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "ContentBlock", "ImageContent", "TextContent", "ThinkingContent", "ToolCall", "UnknownContent",
    "ENTRY_TYPES", "ActiveToolsChangeEntry", "BranchSummaryEntry", "CompactionEntry", "CustomEntry",
    "CustomMessageEntry", "LabelEntry", "LeafEntry", "MessageEntry", "ModelChangeEntry",
    "SessionEntry", "SessionHeader", "SessionInfoEntry", "ThinkingLevelChangeEntry", "UnknownEntry",
    "UsageEntry", "ContextEditEntry", "SystemMessage",
    "AssistantMessage", "BashExecutionMessage", "BranchSummaryMessage", "CompactionSummaryMessage",
    "Cost", "CustomMessage", "Message", "ToolResultMessage", "UnknownMessage", "Usage", "UserMessage",
]
