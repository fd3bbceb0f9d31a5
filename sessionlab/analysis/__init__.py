"""Vectorised analysis over the entries table: contexts, token accounting, billing blocks and the
insight tables (compaction diff, estimate accuracy, cache misses, tool and subagent costs)."""

from ._blocks import BILLING_BLOCK_COLUMNS, BLOCK_WARNING_SHARE, billing_blocks, billing_blocks_df
from ._branch_calls import BRANCH_CALL_COLUMNS, branch_calls, branch_calls_df, branch_mask
from ._cache_misses import (
    CACHE_MISS_COLUMNS,
    CACHE_WHATIF_COLUMNS,
    cache_misses,
    cache_misses_df,
    cache_ttl_whatif,
    cache_ttl_whatif_df,
)
from ._compaction_diff import COMPACTION_DIFF_COLUMNS, compaction_diff, compaction_diff_df
from ._edits import ListView as ListView
from ._edits import context_rows as context_rows
from ._edits import edit_pairs as edit_pairs
from ._edits import member as member
from ._estimate import (
    CALIBRATION_COLUMNS,
    ESTIMATE_COLUMNS,
    EstimateCalibration,
    calibrate_estimate,
    estimate_accuracy,
    estimate_accuracy_df,
)

# the package's own interface for the other packages (not sessionlab's public API)
from ._estimate import calibrated_entries as calibrated_entries
from ._prices import fit_prices as fit_prices
from ._prices import prices_from as prices_from
from ._prices import string_codes as string_codes
from ._subagents import (
    SUBAGENT_RUN_COLUMNS,
    SUBAGENT_SESSION_COLUMNS,
    SUBAGENT_TYPE_COLUMNS,
    subagent_costs,
    subagent_costs_df,
)
from ._tools import TOOL_COLUMNS, TOOL_GROUPS, TOOL_KEY_COLUMNS, tool_stats, tool_stats_df
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
    WEEK_DAYS,
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
    "WEEK_DAYS",
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
    "COMPACTION_DIFF_COLUMNS",
    "compaction_diff",
    "compaction_diff_df",
    "ESTIMATE_COLUMNS",
    "CALIBRATION_COLUMNS",
    "EstimateCalibration",
    "calibrate_estimate",
    "estimate_accuracy",
    "estimate_accuracy_df",
    "CACHE_MISS_COLUMNS",
    "CACHE_WHATIF_COLUMNS",
    "cache_misses",
    "cache_misses_df",
    "cache_ttl_whatif",
    "cache_ttl_whatif_df",
    "TOOL_GROUPS",
    "TOOL_KEY_COLUMNS",
    "TOOL_COLUMNS",
    "tool_stats",
    "tool_stats_df",
    "SUBAGENT_SESSION_COLUMNS",
    "SUBAGENT_RUN_COLUMNS",
    "SUBAGENT_TYPE_COLUMNS",
    "subagent_costs",
    "subagent_costs_df",
    "BILLING_BLOCK_COLUMNS",
    "BLOCK_WARNING_SHARE",
    "billing_blocks",
    "billing_blocks_df",
]
