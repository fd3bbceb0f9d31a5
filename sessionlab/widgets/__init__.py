"""Jupyter widgets over the tables: thin views, no analysis of their own.

Every widget takes a :class:`~sessionlab.Corpus` (or an entries table) and ``session_id=``.
Every number a widget shows comes from a table function (:func:`~sessionlab.contexts`,
:func:`~sessionlab.usage_by`, :func:`~sessionlab.simulate_compaction`...) and every drawing from
:mod:`sessionlab.plotting`; the widgets only pick arguments and lay the results out. Each is an
``ipywidgets.VBox`` whose controls are named attributes, so a test (or a notebook) drives it by
setting trait values:

- :class:`BranchExplorer`: a session's tree, its leaves and fork points, the branch and the context
  at the one picked;
- :class:`UsageDashboard`: :func:`~sessionlab.usage_by` over a date range, grouped by day, model
  or session, in a time zone;
- :class:`CompactionLab`: :func:`~sessionlab.simulate_compaction` of one session under policies set
  with sliders;
- :class:`CompactionDiffView`: :func:`~sessionlab.compaction_diff`, one compaction's dropped and
  kept messages side by side;
- :class:`SessionTree`: a session's tree on a canvas (an ``anywidget``; pan, zoom, hover, click to
  select an entry), fast enough for 20,000 entries; give it to ``BranchExplorer(session_tree=...)``.

Session text (message text, labels, names, ids, paths) is HTML-escaped before it reaches an HTML
widget. Needs the ``notebook`` and ``viz`` extras (``pip install "sessionlab[all]"``).

Example:
    >>> from sessionlab import load  # doctest: +SKIP
    >>> from sessionlab.widgets import BranchExplorer  # doctest: +SKIP
    >>> BranchExplorer(load("data/"))  # doctest: +SKIP
"""

from __future__ import annotations

from ..errors import MissingDependencyError

try:
    import ipywidgets  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise MissingDependencyError('sessionlab.widgets needs ipywidgets: pip install "sessionlab[notebook]"') from e

from .branches import BranchExplorer
from .compaction import CompactionLab
from .compaction_diff import CompactionDiffView
from .tree import SessionTree
from .usage import UsageDashboard

__all__ = ["BranchExplorer", "CompactionLab", "CompactionDiffView", "SessionTree", "UsageDashboard"]
