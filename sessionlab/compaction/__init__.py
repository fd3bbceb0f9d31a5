"""Compaction: pi's cut points, compacting a session, and what-if policy simulation."""

from ..pi.compaction.compact import compact, format_file_operations
from ..pi.compaction.prepare import CompactionPreparation, CutPoint, file_lists, find_cut_point, prepare_compaction
from ..pi.compaction.rules import is_cut_point, is_turn_start
from .cut_points import CUT_POINT_COLUMNS, find_cut_points, find_cut_points_df
from .policies import (
    CompactionPolicy,
    FractionPolicy,
    KeepLastTurnsPolicy,
    NeverCompact,
    PiThresholdPolicy,
    RetainedTailPolicy,
    SummarySize,
)
from .simulate import (
    SIMULATION_CALL_COLUMNS,
    SIMULATION_SESSION_COLUMNS,
    SimulationResult,
    fit_prices,
    simulate_compaction,
)

__all__ = [
    "CUT_POINT_COLUMNS",
    "find_cut_points",
    "find_cut_points_df",
    "CompactionPolicy",
    "FractionPolicy",
    "KeepLastTurnsPolicy",
    "NeverCompact",
    "PiThresholdPolicy",
    "RetainedTailPolicy",
    "SummarySize",
    "SIMULATION_CALL_COLUMNS",
    "SIMULATION_SESSION_COLUMNS",
    "SimulationResult",
    "fit_prices",
    "simulate_compaction",
    "compact",
    "format_file_operations",
    "CompactionPreparation",
    "CutPoint",
    "file_lists",
    "find_cut_point",
    "prepare_compaction",
    "is_cut_point",
    "is_turn_start",
]
