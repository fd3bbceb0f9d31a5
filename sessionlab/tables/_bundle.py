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

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import Any

from .. import agents as registry
from .._rowsof import RowsOf, joined_tables, row_count
from ._file import FileResult
from ._members import Members
from ._values import has_bad_values

__all__ = ["bundled", "expanded", "read_spend"]


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


def read_spend(paths: list[str], load: Callable[[list[str]], list[FileResult]], *,
               price: bool = True) -> list[FileResult]:
    """A usage report's task: the runs of ``paths`` that are sessions of one store of an agent that
    reads a store's sessions together each read so, and consecutive sessions of one agent read by
    its reader (a store's by its joint read, :attr:`~sessionlab.agents.AgentSpec.members`: Copilot's
    many exports; files each by itself, :func:`_read_files`) as one bundle; the other paths by
    ``load`` (the loader's chunk); in ``paths``' order. A store that fails so, or holds a number no
    column takes, is read by ``load``, whose reads report it."""
    joint = _Joint(load, price)
    with registry.sharing_stores(paths):
        for (agent, store), run in _spend_runs(paths):
            if agent is None:  # (files, or sessions of stores not read together)
                _read_files(run, joint)
            elif registry.spec(agent).spend_members is not None:
                got = _store_rows(run, agent, store)
                if got is None:  # (a read that failed: the sessions' own reads say what failed)
                    joint.own(load(run))
                else:
                    joint.add_rows(agent, run, got)
            else:
                afs = _member_files(run, agent, store)
                if afs is None:  # (a joint read that failed)
                    joint.own(load(run))
                else:
                    for p, af in zip(run, afs):
                        joint.add(agent, p, af)
        joint.flush()
    return joint.out


class _Joint:
    """A task's results (``out``), the consecutive sessions of one agent read by its reader gathered
    into one bundle (:func:`_files_bundle`), or those whose agent read their stores' spend rows
    together (:meth:`add_rows`, :func:`_spend_bundle`: a task's hundreds of Copilot exports of a
    session or two each), until another agent's sessions, the other kind, or results of their own
    (:meth:`own`) come between."""

    def __init__(self, load: Callable[[list[str]], list[FileResult]], price: bool) -> None:
        self.out: list[FileResult] = []
        self.load, self.price = load, price
        self.agent: str | None = None
        self.paths: list[str] = []
        self.afs: list = []
        self.sizes: list[int] = []  # (each session's bytes read and stat as opened: a store's none)
        self.stats: list = []
        self.rows: list = []  # (the SpendRows of the stores gathered, when they are read so)

    def add(self, agent: str, path: str, af: Any, size: int = 0, stat: Any = None) -> None:
        if agent != self.agent or self.rows:
            self.flush()
            self.agent = agent
        self.paths.append(path)
        self.afs.append(af)
        self.sizes.append(size)
        self.stats.append(stat)

    def add_rows(self, agent: str, paths: list[str], got: Any) -> None:
        """A store's sessions ``paths`` and their spend rows (a :class:`~sessionlab.agents._rows.SpendRows`)."""
        if agent != self.agent or self.afs or self.rows and self.rows[0].row_names != got.row_names:
            self.flush()
            self.agent = agent
        self.paths += paths
        self.rows.append(got)

    def own(self, results: list[FileResult]) -> None:
        """Results of their own, after the bundle of the sessions before them."""
        self.flush()
        self.out += results

    def flush(self) -> None:
        if self.rows:
            made = partial(_spend_bundle, self.paths, self.agent, _joined_rows(self.rows), self.price)
            self.out += _checked(self.paths, made, self.load)  # type: ignore[arg-type]
        elif self.paths:
            made = partial(_files_bundle, self.paths, self.agent, self.afs, self.price, self.sizes, self.stats)
            self.out += _checked(self.paths, made, self.load)  # type: ignore[arg-type]
        self.paths, self.afs, self.sizes, self.stats, self.rows = [], [], [], [], []


def _checked(run: list[str], bundle: Callable[[], FileResult], load: Callable[[list[str]], list[FileResult]]
             ) -> list[FileResult]:
    """The bundle of the sessions ``run``, else (when it cannot be made, or holds a number no column
    takes) their own reads, which report what is wrong where (a damaged store, a value nulled)."""
    try:
        made = bundle()
    except Exception:
        return load(run)
    return load(run) if has_bad_values(made.entries) else [made]


def _spend_runs(paths: list[str]) -> list[tuple[tuple[str | None, str], list[str]]]:
    """``paths`` cut into runs of one store's sessions of an agent that reads a store's sessions
    together and allows bundles (agent, store) and runs of the others ((None, "")), in order (each
    path's store and agent as :func:`~sessionlab.agents.openers` tells them)."""
    runs: list[tuple[tuple[str | None, str], list[str]]] = []
    reads: dict[str | None, bool] = {None: False}
    for p, (store, k, agent) in zip(paths, registry.openers(paths, files=False)):
        key: tuple[str | None, str] = (None, "")
        if k is not None:
            if agent not in reads:
                spec = registry.spec(agent)
                reads[agent] = spec.bundles and (spec.spend_members or spec.members) is not None
            if reads[agent]:
                key = (agent, store)
        if runs and runs[-1][0] == key:
            runs[-1][1].append(p)
        else:
            runs.append((key, [p]))
    return runs


def _store_rows(paths: list[str], agent: str, store: str) -> Any:
    """The spend rows of the sessions ``paths`` of ``store``, read together
    (:attr:`~sessionlab.agents.AgentSpec.spend_members`); None when the read fails."""
    try:
        got = registry.spec(agent).read_spend(store, [p.rpartition("#")[2] for p in paths])
    except Exception:  # (a damaged store: its sessions' own reads say what failed)
        return None
    return got if len(got.counts) == len(paths) else None


def _joined_rows(parts: list) -> Any:
    """Stores' :class:`~sessionlab.agents._rows.SpendRows` (of the same columns), one after the other."""
    if len(parts) == 1:
        return parts[0]
    n = [len(p.counts) for p in parts]
    keys = dict.fromkeys(k for p in parts for k in p.sessions)
    return replace(parts[0], rows=[r for p in parts for r in p.rows], counts=[c for p in parts for c in p.counts],
                   sessions={k: [v for p, m in zip(parts, n) for v in p.sessions.get(k, [None] * m)] for k in keys},
                   issues=[i for p in parts for i in p.issues])


def _member_files(paths: list[str], agent: str, store: str) -> list | None:
    """The sessions ``paths`` of ``store`` as the agent's joint read gives them
    (:attr:`~sessionlab.agents.AgentSpec.members`, their spend rows alone); None when the read fails
    or a session holds what a later pass needs (``extra``): then each is read alone."""
    try:
        with registry.reading_spend_only(True):
            afs = registry.spec(agent).read_members(store, [p.rpartition("#")[2] for p in paths])
    except Exception:  # (a damaged store: its sessions' own reads say what failed)
        return None
    if len(afs) != len(paths) or any(af.extra is not None for af in afs):
        return None
    return afs


def _files_bundle(paths: list[str], agent: str, afs: list, price: bool, nbytes: list[int] | None = None,
                  stats: list | None = None) -> FileResult:
    """One bundle of sessions read by their agent's reader: a store's by its joint read
    (:func:`_member_files`), files each by itself (:func:`_read_files`: with their sizes and stats
    as read)."""
    from ._agents import files_table

    facts = {k: [af.session.get(k) for af in afs] for k in ("session_id", "cwd", "name", "agent_version",
                                                            "parent_session_id")}
    return _made(paths, agent, files_table([(af, af.session) for af in afs]), [af.n for af in afs], facts,
                 [len(af.issues) for af in afs], [i for af in afs for i in af.issues], price, nbytes, stats)


def _read_files(paths: list[str], joint: _Joint) -> None:
    """Files (no store's sessions, see :func:`read_spend`): each of an agent that allows bundles read
    by its reader straight into ``joint`` (a result of each file's own, built and then bundled, cost
    more than a small file's read); from the first file of any other agent (pi's, whose files a
    chunk reads together) the rest by the task's ``load``. A file whose read fails, or that holds
    what a later pass needs (``extra``), is read again by ``load``, which reports it as its own read
    does; a run whose bundle cannot be made, by ``load`` too (:func:`_checked`)."""
    from ._file import paused_collector, read_agent_file

    can: dict[str, bool] = {}

    def wanted(agent: str) -> bool:
        if agent not in can:
            can[agent] = registry.spec(agent).bundles
        return can[agent]

    # (readers make millions of short-lived dicts, none cyclic)
    with paused_collector(), registry.reading_spend_only(True):
        for k, p in enumerate(paths):
            try:
                got = read_agent_file(p, wanted)
            except Exception:
                got = ()
            if got is None:
                joint.own(joint.load(paths[k:]))
                return
            if not got or got[1].extra is not None:
                joint.own(joint.load([p]))
                continue
            agent, af, stat, size = got
            joint.add(agent, p, af, size, stat)


def _spend_bundle(paths: list[str], agent: str, got: Any, price: bool) -> FileResult:
    """One bundle of a store's sessions from their spend rows (:class:`~sessionlab.agents._rows.SpendRows`)."""
    from ..pi.io.formats import row_columns
    from ._agents import rows_table

    facts, n = got.sessions, len(paths)
    per_file = {"session_id": facts["session_id"], "root_session_id": facts.get("root_session_id", [None] * n),
                "file": paths, "agent": [agent] * n}
    table = rows_table(row_columns(got.row_names, got.rows), got.counts, per_file)
    counts = [0] * n
    at = {p: k for k, p in enumerate(paths)}
    for i in got.issues:
        if i.path in at:
            counts[at[i.path]] += 1
    return _made(paths, agent, table, got.counts, facts, counts, got.issues, price)


def _made(paths: list[str], agent: str, table: Any, counts: list[int], facts: dict[str, list], issue_counts: list[int],
          issues: list, price: bool, nbytes: list[int] | None = None, stats: list | None = None) -> FileResult:
    """The bundle of sessions ``paths``: their rows (``table``, ``counts`` each; priced unless the
    caller prices them), session rows (from ``facts``), issues, and sizes and stats as read (none
    for a store's sessions)."""
    from ._agents import agent_sessions, price_rows

    n = len(paths)
    sizes = [0] * n if nbytes is None else list(nbytes)
    out = FileResult(path=paths[0], issues=list(issues), loader="agent", nbytes=sum(sizes))
    out.entries = price_rows(table) if price else table
    sessions = agent_sessions(paths, agent, facts, issue_counts)
    out.members = Members(paths=list(paths), counts=list(counts), sessions=sessions, nbytes=sizes,
                          stats=[None] * n if stats is None else list(stats))
    return out
