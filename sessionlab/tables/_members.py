"""What a result that stands for many sessions holds (:class:`Members`, a usage report's bundle:
:mod:`._bundle`), and what a load asks of any result, a bundle or not, without building one per
session: the files they stand for, their agents, an issue counted on the session of a row."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Members", "add_issue", "add_issue_count", "file_count", "file_paths", "member_agents"]


@dataclass
class Members:
    """The sessions a bundled result stands for, in order: each one's path, its rows of the bundle's
    entries (``counts``), its session row (``sessions``: the rows' columns), its size as read and its
    stat as opened (None when it had none)."""

    paths: list[str]
    counts: list[int]
    sessions: dict[str, list]
    nbytes: list[int]
    stats: list[Any]


def file_paths(results: Iterable[Any]) -> list[str]:
    """The paths of the files (sessions) ``results`` stand for, a bundle's members' in order."""
    return [p for r in results for p in ([r.path] if r.members is None else r.members.paths)]


def file_count(results: Iterable[Any]) -> int:
    """How many files (sessions) ``results`` stand for, a bundle counting its members."""
    return sum(1 if r.members is None else len(r.members.paths) for r in results)


def member_agents(results: Iterable[Any]) -> set[str | None]:
    """The agents of ``results``' sessions (a bundle's members' included; None for a result with no
    session, pi's when a session names none)."""
    out: set[str | None] = set()
    for r in results:
        if r.members is not None:
            out.update(r.members.sessions.get("agent", ()))
        else:
            out.add((r.session or {}).get("agent", "pi") if r.session is not None else None)
    return out


def add_issue_count(r: Any, row: int, n: int = 1) -> str:
    """Count ``n`` more issues on the session that row ``row`` of ``r``'s entries is of; its path."""
    if r.members is None:
        if r.session is not None:
            r.session["issue_count"] = (r.session.get("issue_count") or 0) + n
        return r.path
    m = r.members
    start = 0
    for k, count in enumerate(m.counts):
        if row < start + count:
            counts = m.sessions.setdefault("issue_count", [0] * len(m.paths))
            counts[k] = (counts[k] or 0) + n
            return m.paths[k]
        start += count
    return r.path


def add_issue(r: Any, issue: Any) -> None:
    """``issue`` added to ``r``'s issues after those of its file: a bundle's issues stay in the order
    of its members' own results, one after the other (:func:`._bundle.expanded`)."""
    if r.members is None:
        r.issues.append(issue)
        return
    at = {p: k for k, p in enumerate(r.members.paths)}
    k = at.get(issue.path, len(at))
    pos = len(r.issues)
    while pos and at.get(r.issues[pos - 1].path, len(at)) > k:
        pos -= 1
    r.issues.insert(pos, issue)
