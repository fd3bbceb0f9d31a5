"""Line issues: the record of one problem in one file, and what ``on_bad_lines=`` does with them.

A module of its own (no object model) so that a load, which reports issues but may never parse an
entry into an object, imports only this.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Literal, get_args

from ...errors import BadInputError, BadLinesWarning, check_option

__all__ = ["LineIssue", "OnBadLines", "check_on_bad_lines", "report_issues"]

OnBadLines = Literal["raise", "warn", "skip"]


def check_on_bad_lines(on_bad_lines: object) -> None:
    """Raise :class:`~sessionlab.errors.OptionError` unless ``on_bad_lines`` is one of
    :data:`OnBadLines`' values (as ``rules=`` does: :func:`sessionlab.errors.check_option`)."""
    check_option("on_bad_lines", on_bad_lines, get_args(OnBadLines))


@dataclass(frozen=True, slots=True)
class LineIssue:
    """One problem in one file: 1-based ``line``, a ``kind`` (see :mod:`sessionlab.pi.io.reader`) and a
    message."""

    path: str
    line: int
    kind: str
    message: str
    excerpt: str = ""
    entry_id: str | None = None


def report_issues(path: str | None, issues: list[LineIssue], on_bad_lines: OnBadLines, *, stacklevel: int = 2) -> None:
    """Act on one file's issues: ``"raise"`` a :class:`BadInputError`, ``"warn"`` once with the
    counts by kind, ``"skip"`` nothing."""
    if not issues or on_bad_lines == "skip":
        return
    counts = Counter(i.kind for i in issues)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    first = issues[0]
    msg = f"{path}: {summary} (first: line {first.line}, {first.message})"
    if on_bad_lines == "raise":
        raise BadInputError(msg, issues)
    warnings.warn(msg, BadLinesWarning, stacklevel=stacklevel + 1)
