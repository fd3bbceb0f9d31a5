"""Many sessions' results carried as one (a usage report's load).

A load keeps one :class:`._file.FileResult` per session: its rows, its session row, its issues.
For a usage report of thousands of small sessions that object costs more than the session does: a
worker pickles it, the loading process unpickles it, slices its rows and asks each of its fields in
every pass over the load. :func:`bundled` turns a task's consecutive results of the agents that
allow it (:attr:`~sessionlab.agents.AgentSpec.bundles`) into one result that stands for all of
them: their rows one table (each row's ``file`` its session's path), their session rows as columns
(:class:`Members`), their issues one list (each issue names its file). :func:`expanded` gives the
results back one per session, exactly as they were, for whatever asks a session's own result (the
sessions table, the files of a load, a warning per file).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import agents as registry
from .._rowsof import RowsOf, joined_tables, row_count
from ._file import FileResult

__all__ = ["Members", "bundled", "expanded", "file_count", "file_paths", "member_agents", "add_issue_count"]


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


def _bundles(r: FileResult, can: dict[str, bool]) -> bool:
    """Whether ``r`` may go into a bundle: an agent reader's result, built, without blocks, nothing
    left for a later pass (``agent_extra``), of an agent that allows it."""
    if r.loader != "agent" or r.members is not None or r.agent_pending is not None or r.session is None:
        return False
    if r.agent_extra is not None or r.native_error is not None or row_count(r.raw_table("blocks")):
        return False
    agent = r.session.get("agent")
    if agent not in can:
        can[agent] = agent in registry.names() and registry.spec(agent).bundles
    return can[agent]


def bundled(results: list[FileResult]) -> list[FileResult]:
    """``results`` with each run of consecutive results that may be bundled (of agents that allow it,
    :attr:`~sessionlab.agents.AgentSpec.bundles`) as one result; the others as they are. What a
    cache keeps (a reader's state to resume a grown file) is not carried: a bundle is never cached."""
    can: dict[str, bool] = {}
    out: list[FileResult] = []
    run: list[FileResult] = []
    for r in results:
        if _bundles(r, can):
            run.append(r)
            continue
        if run:
            out.append(_bundle(run))
            run = []
        out.append(r)
    if run:
        out.append(_bundle(run))
    return out


def _bundle(run: list[FileResult]) -> FileResult:
    if len(run) == 1:
        return run[0]
    helds = [r.raw_table("entries") for r in run]
    tables = joined_tables(helds)
    keys: dict[str, None] = {}
    for r in run:
        keys.update(dict.fromkeys(r.session))  # type: ignore[arg-type]
    sessions = {k: [r.session.get(k) for r in run] for k in keys}  # type: ignore[union-attr]
    members = Members(paths=[r.path for r in run], counts=[row_count(h) for h in helds], sessions=sessions,
                      nbytes=[r.nbytes for r in run], stats=[r.stat for r in run])
    out = FileResult(path=run[0].path, issues=[i for r in run for i in r.issues], loader="agent",
                     nbytes=sum(members.nbytes))
    if len(tables) == 1:
        out.entries = tables[0]
    elif tables:
        import pyarrow as pa

        out.entries = pa.concat_tables(tables).combine_chunks()
    out.members = members
    return out


def expanded(results: Iterable[FileResult]) -> list[FileResult]:
    """``results`` with each bundle (:func:`bundled`) given back as its sessions' own results: their
    rows (slices of the bundle's table), session rows, issues, sizes and stats as read."""
    out: list[FileResult] = []
    for r in results:
        if r.members is None:
            out.append(r)
        else:
            out.extend(_members(r))
    return out


def _members(r: FileResult) -> list[FileResult]:
    m: Members = r.members
    held = r.raw_table("entries")
    table, start = (held.table, held.start) if type(held) is RowsOf else (held, 0)
    issues: dict[str, list] = {}
    for i in r.issues:
        issues.setdefault(i.path, []).append(i)
    names = list(m.sessions)
    out = []
    for k, (path, n) in enumerate(zip(m.paths, m.counts, strict=True)):
        res = FileResult(path=path, session={c: m.sessions[c][k] for c in names}, issues=issues.get(path, []),
                         loader="agent", nbytes=m.nbytes[k])
        res.entries = RowsOf(table, start, n) if table is not None else None
        res.stat = m.stats[k]
        start += n
        out.append(res)
    return out


def file_paths(results: Iterable[FileResult]) -> list[str]:
    """The paths of the files (sessions) ``results`` stand for, a bundle's members' in order."""
    return [p for r in results for p in ([r.path] if r.members is None else r.members.paths)]


def file_count(results: Iterable[FileResult]) -> int:
    """How many files (sessions) ``results`` stand for, a bundle counting its members."""
    return sum(1 if r.members is None else len(r.members.paths) for r in results)


def member_agents(results: Iterable[FileResult]) -> set[str | None]:
    """The agents of ``results``' sessions (a bundle's members' included; None for a result with no
    session, pi's when a session names none)."""
    out: set[str | None] = set()
    for r in results:
        if r.members is not None:
            out.update(r.members.sessions.get("agent", ()))
        else:
            out.add((r.session or {}).get("agent", "pi") if r.session is not None else None)
    return out


def add_issue_count(r: FileResult, row: int, n: int = 1) -> str:
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
