"""Helpers shared by the plots: the session's rows, lazy matplotlib, plain-text labels, formatters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

from ..errors import MissingDependencyError
from ..tables.corpus import one_session

__all__ = ["session_rows", "pyplot", "plain", "shorten", "thousands", "new_axes", "to_np"]


# the rows of one session (``session_id=None``: the table must hold exactly one session); written
# once, in sessionlab.tables.corpus, for the tree, the plots and the widgets
session_rows = one_session


def to_np(col, fill) -> np.ndarray:
    """A column as NumPy with nulls replaced by ``fill``."""
    return np.asarray(pc.fill_null(col, fill).to_numpy(zero_copy_only=False))


def pyplot():
    """``matplotlib.pyplot``, imported on first use (the ``viz`` extra)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("plotting needs matplotlib: pip install 'sessionlab[viz]'") from e
    return plt


def new_axes(ax, figsize: tuple[float, float]):
    """``ax`` itself, or the axes of a new figure of ``figsize`` inches."""
    if ax is not None:
        return ax
    fig, ax = pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def plain(text: Any) -> str:
    """Session-provided text as matplotlib shows it literally: ``$`` escaped so no mathtext runs.

    Example:
        >>> plain("$x^2$ costs $5")
        '\\\\$x^2\\\\$ costs \\\\$5'
    """
    return "" if text is None else str(text).replace("$", r"\$")


def shorten(text: Any, max_chars: int) -> str:
    """One line of at most ``max_chars`` characters (an ellipsis marks a cut), escaped by :func:`plain`."""
    s = " ".join(str("" if text is None else text).split())
    if max_chars > 0 and len(s) > max_chars:
        s = s[: max(max_chars - 1, 0)] + "…"
    return plain(s)


def thousands(axis, *, decimals: int = 0) -> None:
    """Tick labels with thousands separators on a matplotlib ``axis`` (``ax.yaxis``...)."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.{decimals}f}"))
