"""sessionlab: study AI coding-agent sessions (pi JSONL trees) in Jupyter.

The public surface is re-exported here; implementation modules are private to the package.

Every public name but the error classes is imported on first use (``sessionlab.entries_table``
imports the loader, not the analysis, compaction, plotting or widget modules), so ``import
sessionlab`` stays cheap. ``from sessionlab import X`` and ``sessionlab.X`` work as usual.
"""

import importlib

from .errors import (
    AmbiguousSessionError,
    ArgumentTypeError,
    ArgumentValueError,
    BadInputError,
    BadLinesWarning,
    CacheError,
    CacheWarning,
    CycleError,
    EntryNotFoundError,
    InvalidEntryError,
    InvalidForkTargetError,
    NativeLoaderWarning,
    OptionError,
    ReadOnlyFormatError,
    RulesMismatchError,
    SessionDeletedError,
    SessionError,
    SessionLabError,
    SessionLabWarning,
    SessionNotFoundError,
    StaleSessionError,
    UnsafePathError,
    UnstorableValueError,
)

__version__ = "0.1.0"

_MODULES: dict[str, tuple[str, ...]] = {
    "sessionlab.analysis": (
        "branch_calls", "branch_calls_df", "branch_costs", "branch_costs_df", "cache_efficiency",
        "cache_efficiency_df", "context_members", "context_members_df", "context_messages", "contexts",
        "contexts_df", "usage_by", "usage_by_df",
    ),
    "sessionlab.compaction": (
        "CompactionPolicy", "CompactionPreparation", "FractionPolicy", "KeepLastTurnsPolicy", "NeverCompact",
        "PiThresholdPolicy", "RetainedTailPolicy", "SimulationResult", "SummarySize", "compact",
        "find_cut_points", "find_cut_points_df", "fit_prices", "prepare_compaction", "simulate_compaction",
    ),
    "sessionlab.context": (
        "ModelRef", "SessionContext", "SessionContextBuildOptions", "build_session_context",
        "merge_context_build_options",
    ),
    "sessionlab.io": (
        "LineIssue", "SessionFile", "SessionWriter", "entry_from_dict", "entry_to_dict", "header_from_dict",
        "header_to_dict", "message_from_dict", "message_to_dict", "read_session", "write_session",
    ),
    "sessionlab.model": (
        "ActiveToolsChangeEntry", "AssistantMessage", "BashExecutionMessage", "BranchSummaryEntry",
        "BranchSummaryMessage", "CompactionEntry", "CompactionSummaryMessage", "ContextEditEntry", "Cost",
        "CustomEntry", "CustomMessage", "CustomMessageEntry", "ImageContent", "LabelEntry", "LeafEntry",
        "MessageEntry", "ModelChangeEntry", "SessionHeader", "SessionInfoEntry", "SystemMessage",
        "TextContent", "ThinkingContent", "ThinkingLevelChangeEntry", "ToolCall", "ToolResultMessage",
        "UnknownContent", "UnknownEntry", "UnknownMessage", "Usage", "UsageEntry", "UserMessage",
    ),
    "sessionlab.repo": (
        "InMemorySessionRepo", "JsonlSessionRepo", "SessionInfo", "get_entries_to_fork",
    ),
    "sessionlab.session": (
        "Session", "open_session",
    ),
    "sessionlab.storage": (
        "InMemorySessionStorage", "JsonlSessionStorage", "SessionStats", "SessionStorage",
        "new_session_header",
    ),
    "sessionlab.synth": (
        "SynthConfig", "generate_corpus", "generate_session",
    ),
    "sessionlab.tables": (
        "Corpus", "blocks_df", "blocks_table", "entries_df", "entries_table", "issues_df", "issues_table",
        "load", "sessions_df", "sessions_table", "table_rules", "to_parquet",
    ),
    "sessionlab.tokens": (
        "ContextEstimate", "estimate_context_tokens", "estimate_projected_context_tokens", "estimate_tokens",
    ),
    "sessionlab.tree": (
        "children", "current_branch", "depths", "fork_points", "leaves", "roots", "session_tree",
    ),
    # the notebook face: plotting needs the ``viz`` extra (matplotlib, imported when a plot is drawn),
    # the widgets the ``notebook`` extra
    "sessionlab.plotting": ("plot_context_timeline", "plot_usage", "plot_tree", "tree_layout", "tree_layout_df"),
    "sessionlab.widgets": ("BranchExplorer", "UsageDashboard", "CompactionLab", "SessionTree"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}
_EXTRAS = ("sessionlab.plotting", "sessionlab.widgets")


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sessionlab' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as exc:  # an extra is missing: fail when used, with the way to fix it
        if module not in _EXTRAS:
            raise
        message = str(exc)

        def missing(*args, **kwargs):
            raise ImportError(message)

        missing.__name__ = name
        return missing
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    # errors
    "AmbiguousSessionError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "InvalidEntryError",
    "SessionDeletedError",
    "SessionNotFoundError",
    "StaleSessionError",
    "UnstorableValueError",
    "BadInputError",
    "BadLinesWarning",
    "CacheError",
    "CacheWarning",
    "CycleError",
    "EntryNotFoundError",
    "InvalidForkTargetError",
    "OptionError",
    "RulesMismatchError",
    "ReadOnlyFormatError",
    "NativeLoaderWarning",
    "SessionError",
    "SessionLabError",
    "SessionLabWarning",
    "UnsafePathError",
    # io
    "LineIssue",
    "SessionFile",
    "SessionWriter",
    "entry_from_dict",
    "entry_to_dict",
    "header_from_dict",
    "header_to_dict",
    "message_from_dict",
    "message_to_dict",
    "read_session",
    "write_session",
    # model
    "ActiveToolsChangeEntry",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "ContextEditEntry",
    "Cost",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "ImageContent",
    "LabelEntry",
    "LeafEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevelChangeEntry",
    "ToolCall",
    "ToolResultMessage",
    "UnknownContent",
    "UnknownEntry",
    "UnknownMessage",
    "Usage",
    "UsageEntry",
    "UserMessage",
    # tokens
    "ContextEstimate",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "estimate_tokens",
    # session system
    "ModelRef",
    "SessionContext",
    "SessionContextBuildOptions",
    "build_session_context",
    "merge_context_build_options",
    "InMemorySessionStorage",
    "JsonlSessionStorage",
    "SessionStats",
    "SessionStorage",
    "new_session_header",
    "Session",
    "open_session",
    "InMemorySessionRepo",
    "JsonlSessionRepo",
    "SessionInfo",
    "get_entries_to_fork",
    # compaction
    "CompactionPolicy",
    "CompactionPreparation",
    "FractionPolicy",
    "KeepLastTurnsPolicy",
    "NeverCompact",
    "PiThresholdPolicy",
    "RetainedTailPolicy",
    "SimulationResult",
    "SummarySize",
    "compact",
    "find_cut_points",
    "find_cut_points_df",
    "fit_prices",
    "prepare_compaction",
    "simulate_compaction",
    # tables and tree
    "load",
    "Corpus",
    "blocks_df",
    "blocks_table",
    "entries_df",
    "entries_table",
    "issues_df",
    "issues_table",
    "sessions_df",
    "sessions_table",
    "table_rules",
    "to_parquet",
    "children",
    "current_branch",
    "depths",
    "fork_points",
    "leaves",
    "roots",
    "session_tree",
    # vectorised analysis
    "branch_calls",
    "branch_calls_df",
    "branch_costs",
    "branch_costs_df",
    "cache_efficiency",
    "cache_efficiency_df",
    "context_members",
    "context_members_df",
    "context_messages",
    "contexts",
    "contexts_df",
    "usage_by",
    "usage_by_df",
    # synthetic data
    "SynthConfig",
    "generate_corpus",
    "generate_session",
    # notebook face (loaded on first use)
    "plot_context_timeline",
    "plot_usage",
    "plot_tree",
    "tree_layout",
    "tree_layout_df",
    "BranchExplorer",
    "UsageDashboard",
    "CompactionLab",
    "SessionTree",
]
