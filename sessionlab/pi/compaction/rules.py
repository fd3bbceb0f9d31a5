"""pi's compaction rules as data: what is a valid cut point, what starts a turn, and how an entry
becomes a message for summarizing. The object-model functions and the vectorised ones both take
their rules from here.
"""

from __future__ import annotations

from ..._time import iso_to_ms
from ..model import entries as E
from ..model import messages as M

__all__ = [
    "CUT_POINT_ROLES",
    "CUT_POINT_ENTRY_TYPES",
    "TURN_START_ROLES",
    "TURN_START_ENTRY_TYPES",
    "is_cut_point",
    "is_turn_start",
    "compaction_message",
]

# message roles that may be the first kept message (never a tool result)
CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
# non-message entry types that may be the first kept entry
CUT_POINT_ENTRY_TYPES = frozenset({"branch_summary", "custom_message"})
# what starts a turn (pi's findTurnStartIndex)
TURN_START_ROLES = frozenset({"user", "bashExecution"})
TURN_START_ENTRY_TYPES = frozenset({"branch_summary", "custom_message"})


def _role(entry: E.SessionEntry) -> str | None:
    if isinstance(entry, E.MessageEntry) and entry.message is not None:
        return entry.message.role
    return None


def is_cut_point(entry: E.SessionEntry) -> bool:
    """pi's ``findValidCutPoints`` test for one entry."""
    if entry.type == "message":
        return _role(entry) in CUT_POINT_ROLES
    return entry.type in CUT_POINT_ENTRY_TYPES


def is_turn_start(entry: E.SessionEntry) -> bool:
    """pi's ``findTurnStartIndex`` test for one entry."""
    if entry.type == "message":
        return _role(entry) in TURN_START_ROLES
    return entry.type in TURN_START_ENTRY_TYPES


def compaction_message(entry: E.SessionEntry) -> M.Message | None:
    """pi's ``getMessageFromEntry`` (compaction code): like context building, except that a branch
    summary gives a message even when its summary is empty, and any compaction gives its summary."""
    if isinstance(entry, E.MessageEntry):
        return entry.message
    if isinstance(entry, E.CustomMessageEntry):
        return M.CustomMessage(custom_type=entry.custom_type, content=entry.content, display=entry.display,
                               details=entry.details, timestamp=iso_to_ms(entry.timestamp))
    if isinstance(entry, E.BranchSummaryEntry):
        return M.BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id,
                                      timestamp=iso_to_ms(entry.timestamp))
    if isinstance(entry, E.CompactionEntry):
        return M.CompactionSummaryMessage(summary=entry.summary, tokens_before=entry.tokens_before,
                                          timestamp=iso_to_ms(entry.timestamp))
    return None
