"""Compaction: pi's cut points, compacting a session, and what-if policy simulation."""

from .compact import compact, format_file_operations
from .prepare import CompactionPreparation, CutPoint, file_lists, find_cut_point, prepare_compaction
from .rules import is_cut_point, is_turn_start

__all__ = [
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
