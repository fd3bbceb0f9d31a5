"""sessionlab: study AI coding-agent sessions (pi JSONL trees) in Jupyter.

The public surface is re-exported here; implementation modules are private to the package.

Every public name but the error classes is imported on first use (``sessionlab.entries_table``
imports the loader, not the analysis, compaction, plotting or widget modules), so ``import
sessionlab`` stays cheap. ``from sessionlab import X`` and ``sessionlab.X`` work as usual.
"""

import importlib
import sys

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
    MissingColumnError,
    MissingDependencyError,
    NativeLoaderWarning,
    NativeUnavailableError,
    OptionError,
    ReadOnlyFormatError,
    RulesMismatchError,
    SessionDeletedError,
    SessionError,
    SessionLabError,
    SessionLabWarning,
    SessionNotFoundError,
    SourceNotFoundError,
    StaleSessionError,
    TableFreedError,
    UnrecordedDataWarning,
    UnsafePathError,
    UnstorableValueError,
    WriterClosedError,
)

__version__ = "0.1.0"

_MODULES: dict[str, tuple[str, ...]] = {
    "sessionlab.analysis": (
        "branch_calls", "branch_calls_df", "branch_costs", "branch_costs_df", "cache_efficiency",
        "cache_efficiency_df", "context_members", "context_members_df", "context_messages", "contexts",
        "contexts_df", "usage_by", "usage_by_df", "compaction_diff", "compaction_diff_df", "estimate_accuracy",
        "estimate_accuracy_df", "calibrate_estimate", "EstimateCalibration", "cache_misses", "cache_misses_df",
        "cache_ttl_whatif", "cache_ttl_whatif_df", "tool_stats", "tool_stats_df", "subagent_costs",
        "subagent_costs_df", "billing_blocks", "billing_blocks_df",
    ),
    "sessionlab.compaction": (
        "CompactionPolicy", "CompactionPreparation", "FractionPolicy", "KeepLastTurnsPolicy", "NeverCompact",
        "PiThresholdPolicy", "RetainedTailPolicy", "SimulationResult", "SummarySize", "compact",
        "find_cut_points", "find_cut_points_df", "fit_prices", "prepare_compaction", "simulate_compaction",
    ),
    "sessionlab.pi.context": (
        "ModelRef", "SessionContext", "SessionContextBuildOptions", "build_session_context",
        "merge_context_build_options",
    ),
    "sessionlab.pi.io": (
        "LineIssue", "SessionFile", "SessionWriter", "entry_from_dict", "entry_to_dict", "header_from_dict",
        "header_to_dict", "message_from_dict", "message_to_dict", "read_session", "write_session",
    ),
    "sessionlab.pi.model": (
        "ActiveToolsChangeEntry", "AssistantMessage", "BashExecutionMessage", "BranchSummaryEntry",
        "BranchSummaryMessage", "CompactionEntry", "CompactionSummaryMessage", "ContextEditEntry", "Cost",
        "CustomEntry", "CustomMessage", "CustomMessageEntry", "ImageContent", "LabelEntry", "LeafEntry",
        "MessageEntry", "ModelChangeEntry", "SessionHeader", "SessionInfoEntry", "SystemMessage",
        "TextContent", "ThinkingContent", "ThinkingLevelChangeEntry", "ToolCall", "ToolResultMessage",
        "UnknownContent", "UnknownEntry", "UnknownMessage", "Usage", "UsageEntry", "UserMessage",
    ),
    "sessionlab.pi.repo": (
        "InMemorySessionRepo", "JsonlSessionRepo", "SessionInfo", "get_entries_to_fork",
    ),
    "sessionlab.pi.session": (
        "Session", "open_session",
    ),
    "sessionlab.pi.storage": (
        "InMemorySessionStorage", "JsonlSessionStorage", "SessionStats", "SessionStorage",
        "new_session_header",
    ),
    "sessionlab.redaction": (
        "export_sessions", "redact",
    ),
    "sessionlab.synth": (
        "SynthConfig", "generate_corpus", "generate_session",
    ),
    "sessionlab.tables": (
        "Corpus", "blocks_df", "blocks_table", "entries_df", "entries_table", "issues_df", "issues_table",
        "load", "sessions_df", "sessions_table", "table_rules", "to_parquet", "watch", "Follower",
    ),
    "sessionlab.pi.tokens": (
        "ContextEstimate", "estimate_context_tokens", "estimate_projected_context_tokens", "estimate_tokens",
    ),
    "sessionlab.tree": (
        "children", "current_branch", "depths", "fork_points", "leaves", "roots", "session_tree",
    ),
    # the notebook face: plotting needs the ``viz`` extra (matplotlib, imported when a plot is drawn),
    # the widgets the ``notebook`` extra
    "sessionlab.plotting": ("plot_context_timeline", "plot_usage", "plot_tree", "tree_layout", "tree_layout_df",
                            "plot_compaction_diff", "plot_estimate_accuracy", "plot_cache_misses", "plot_tool_stats",
                            "plot_subagent_costs"),
    "sessionlab.widgets": ("BranchExplorer", "UsageDashboard", "CompactionLab", "CompactionDiffView", "SessionTree"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}
_EXTRAS = ("sessionlab.plotting", "sessionlab.widgets")


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None and _moved_name(f"sessionlab.{name}") is not None:  # an old module path
        return importlib.import_module(f"sessionlab.{name}")
    if module is None:
        raise AttributeError(f"module 'sessionlab' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as exc:  # an extra is missing: fail when used, with the way to fix it
        if module not in _EXTRAS:
            raise
        message = str(exc)

        def missing(*args, **kwargs):
            raise MissingDependencyError(message)

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
    "SourceNotFoundError",
    "WriterClosedError",
    "TableFreedError",
    "MissingDependencyError",
    "NativeUnavailableError",
    "MissingColumnError",
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
    "UnrecordedDataWarning",
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
    "watch",
    "Follower",
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
    "billing_blocks",
    "billing_blocks_df",
    # insights
    "compaction_diff",
    "compaction_diff_df",
    "estimate_accuracy",
    "estimate_accuracy_df",
    "calibrate_estimate",
    "EstimateCalibration",
    "cache_misses",
    "cache_misses_df",
    "cache_ttl_whatif",
    "cache_ttl_whatif_df",
    "tool_stats",
    "tool_stats_df",
    "subagent_costs",
    "subagent_costs_df",
    # synthetic data
    "SynthConfig",
    "generate_corpus",
    "generate_session",
    # redaction
    "export_sessions",
    "redact",
    # notebook face (loaded on first use)
    "plot_context_timeline",
    "plot_usage",
    "plot_tree",
    "tree_layout",
    "tree_layout_df",
    "plot_compaction_diff",
    "plot_estimate_accuracy",
    "plot_cache_misses",
    "plot_tool_stats",
    "plot_subagent_costs",
    "BranchExplorer",
    "UsageDashboard",
    "CompactionLab",
    "CompactionDiffView",
    "SessionTree",
]


# -- old import paths, kept for one release -------------------------------------------------------
# The package's modules moved into its wings (pi/, agents/, tables/, cli/, synth/); code that imports
# them by their old paths gets the same module objects. To be removed in the next release.
_MOVED = {
    "sessionlab.model": "sessionlab.pi.model",
    "sessionlab.io.claude": "sessionlab.agents._claude_reader",
    "sessionlab.io.codex": "sessionlab.agents._codex_reader",
    "sessionlab.io": "sessionlab.pi.io",
    "sessionlab.context": "sessionlab.pi.context",
    "sessionlab.tokens": "sessionlab.pi.tokens",
    "sessionlab.storage": "sessionlab.pi.storage",
    "sessionlab.session": "sessionlab.pi.session",
    "sessionlab.repo": "sessionlab.pi.repo",
    "sessionlab.compaction.prepare": "sessionlab.pi.compaction.prepare",
    "sessionlab.compaction.compact": "sessionlab.pi.compaction.compact",
    "sessionlab.compaction.rules": "sessionlab.pi.compaction.rules",
    "sessionlab.forest": "sessionlab.tables.forest",
}


def _moved_name(name: str) -> str | None:
    for old, new in _MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _MovedFinder:
    """Finds a module by its old path and hands back the module at its new one."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None):
        new = _moved_name(name) if name.startswith("sessionlab.") else None
        if new is None:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, _MovedFinder, is_package=True)  # type: ignore[arg-type]

    @staticmethod
    def create_module(spec):
        module = importlib.import_module(_moved_name(spec.name))
        _REAL_SPECS[spec.name] = (module.__spec__, module.__loader__)
        return module

    @staticmethod
    def exec_module(module) -> None:
        # the import system set the old name's spec on the module: give it its own back (relative
        # imports inside it read its spec)
        for old, (spec, loader) in list(_REAL_SPECS.items()):
            if spec is not None and spec.name == module.__name__:
                module.__spec__, module.__loader__ = spec, loader
                del _REAL_SPECS[old]


_REAL_SPECS: dict[str, tuple] = {}


sys.meta_path.insert(0, _MovedFinder)  # type: ignore[arg-type]
