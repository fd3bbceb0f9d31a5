"""Vectorised analysis over the entries table: contexts and token accounting."""

from .contexts import CONTEXT_COLUMNS, MEMBER_COLUMNS, context_members, context_messages, contexts
from .usage import USAGE_GROUPS, branch_costs, cache_efficiency, current_branch_mask, usage_by

__all__ = [
    "CONTEXT_COLUMNS",
    "MEMBER_COLUMNS",
    "context_members",
    "context_messages",
    "contexts",
    "USAGE_GROUPS",
    "branch_costs",
    "cache_efficiency",
    "current_branch_mask",
    "usage_by",
]
