"""Plots of sessions with matplotlib (the ``viz`` extra), imported only when a plot is drawn.

Every function draws on the ``ax`` given (or on a new figure) and returns the ``Axes``, so the
result can be restyled; none calls ``plt.show()``. Text that comes from sessions (labels, model
names, ids) is drawn literally: ``$`` is escaped so matplotlib never reads it as mathtext.

:func:`tree_layout` (Arrow) and :func:`tree_layout_df` (pandas) need no matplotlib.
"""

from ._common import session_rows as session_rows
from ._common import to_np as to_np
from ._insights import (
    plot_cache_misses,
    plot_compaction_diff,
    plot_estimate_accuracy,
    plot_subagent_costs,
    plot_tool_stats,
)
from ._layout import LAYOUT_COLUMNS, tree_layout, tree_layout_df
from ._layout import compute_layout as compute_layout
from ._timeline import plot_context_timeline

# the package's own interface for the other packages (not sessionlab's public API)
from ._tree import NODE_KINDS as NODE_KINDS
from ._tree import current_labels as current_labels
from ._tree import node_kinds as node_kinds
from ._tree import plot_tree
from ._usage import plot_usage

__all__ = ["LAYOUT_COLUMNS", "plot_context_timeline", "plot_tree", "plot_usage", "tree_layout", "tree_layout_df",
           "plot_compaction_diff", "plot_estimate_accuracy", "plot_cache_misses", "plot_tool_stats",
           "plot_subagent_costs"]
