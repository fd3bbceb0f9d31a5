"""Vectorised analysis over the entries table: contexts and token accounting."""

from ._branch_calls import BRANCH_CALL_COLUMNS, branch_calls, branch_calls_df, branch_mask

# the package's own interface for the other packages (not sessionlab's public API)
from ._edits import ListView as ListView
from ._edits import context_rows as context_rows
from ._edits import edit_pairs as edit_pairs
from ._edits import member as member
from .contexts import (
    CONTEXT_COLUMNS,
    MEMBER_COLUMNS,
    context_members,
    context_members_df,
    context_messages,
    contexts,
    contexts_df,
)
from .contexts import PreparedContexts as PreparedContexts
from .usage import (
    BRANCH_COST_COLUMNS,
    CACHE_COLUMNS,
    USAGE_COLUMNS,
    USAGE_GROUPS,
    USAGE_KEY_COLUMNS,
    branch_costs,
    branch_costs_df,
    cache_efficiency,
    cache_efficiency_df,
    current_branch_mask,
    usage_by,
    usage_by_df,
)

__all__ = [
    "CONTEXT_COLUMNS",
    "MEMBER_COLUMNS",
    "context_members",
    "context_members_df",
    "context_messages",
    "contexts",
    "contexts_df",
    "USAGE_GROUPS",
    "USAGE_KEY_COLUMNS",
    "USAGE_COLUMNS",
    "BRANCH_CALL_COLUMNS",
    "BRANCH_COST_COLUMNS",
    "CACHE_COLUMNS",
    "branch_calls",
    "branch_calls_df",
    "branch_mask",
    "branch_costs",
    "branch_costs_df",
    "cache_efficiency",
    "cache_efficiency_df",
    "current_branch_mask",
    "usage_by",
    "usage_by_df",
]
