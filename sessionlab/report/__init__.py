"""A shareable report: one self-contained, offline HTML file about a folder of sessions.

:func:`write_report` (``sessionlab report SOURCE -o report.html`` on the command line) loads the
sessions once and writes a single page: usage by day and model (spend outside calls named by its
``usage_kind``), the sessions list (names, days, projects, agents, costs, branches, compactions,
issues; sortable, searchable, filtered by project, agent and dates), a section per session with its
context per call on the current branch and its tree, and the data-quality issues, all linked.

The page needs nothing from the network: its style and script are inline and allowed by a
Content-Security-Policy through their SHA-256 hashes, which also forbids remote loads, inline
event handlers and ``eval``. Session text is escaped in the HTML and shown as text by the script.
Session sections are built by the script from the page's data block, in the table's order and
filters, 20 at a time (or the one a link opens), and their charts are drawn when they scroll into
view, so a page of 1,000 sessions opens in about a second (``benchmarks/bench_views.py``,
``tests/browser/test_report_scale.py``).

Example:
    >>> from sessionlab.report import write_report  # doctest: +SKIP
    >>> write_report("data/", "report.html")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import ArgumentValueError
from ..pi.io.writer import atomic_write_bytes
from ._data import collect
from ._html import render

__all__ = ["build_report", "write_report"]


def build_report(source: Any, *, tz: str = "UTC", title: str | None = None) -> str:
    """The report of ``source`` (a folder, file or list of them, as for ``entries_table``) as HTML.

    Args:
        source: Session files or folders.
        tz: IANA time zone of the usage days.
        title: Page title (default ``sessionlab report``).
    """
    from zoneinfo import ZoneInfo

    ZoneInfo(tz)  # an unknown zone fails here, before any work
    page = render(collect(source, tz=tz), title=title or "sessionlab report")
    # half a surrogate pair (what JavaScript writes for half an emoji) cannot be UTF-8: shown as U+FFFD
    return _LONE_SURROGATE.sub("\ufffd", page)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def write_report(source: Any, path: str | os.PathLike[str], *, tz: str = "UTC", title: str | None = None) -> Path:
    """Write :func:`build_report` to ``path`` (UTF-8): into a new temporary file of a random name
    beside it (created exclusively, so a planted symlink is never followed), then moved into
    place; on any failure (an interrupt included) the temporary file is removed."""
    out = Path(path)
    if out.is_dir():
        raise ArgumentValueError("path", f"{out} is a folder: give the report's file name (e.g. {out / 'report.html'})")
    data = build_report(source, tz=tz, title=title).encode("utf-8")
    atomic_write_bytes(out, data)
    return out
