"""Old home of :mod:`sessionlab.forest`, kept only for the modules that still import from here.

This shim goes away: import from :mod:`sessionlab.forest` (public names) instead.
"""

from __future__ import annotations

from ..forest import Forest, as_table, clear_caches, doubling_nearest, doubling_sum, forest_of, per_table

_doubling_sum = doubling_sum
_doubling_nearest = doubling_nearest

__all__ = ["Forest", "as_table", "per_table", "clear_caches", "forest_of"]
