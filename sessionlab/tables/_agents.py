"""Files of the registry's agents (Claude Code, Codex...) to tables, and what a load does across them.

:func:`load_agent_file` reads one file with its agent's reader (:mod:`sessionlab.agents`;
streaming it: a huge line is skipped, never held), builds its entries and blocks tables from
buffers and prices its calls that carry no recorded cost (``cost_source``), so the cache keeps the
prices too. :func:`finish_agents` runs once over all files of a load, in load order: usage that
another row already counts (Claude Code streaming lines of one response, sidechain replays, Codex
forks and sub-agent threads replaying their parent) is nulled on the repeat with its cost, and a
model without a price becomes one ``unknown_model`` issue for the whole load.
"""

from __future__ import annotations

import io
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import agents as registry
from .._arrow import arrow_indices, from_numpy, scalar, strings, to_numpy, valid_mask
from .._rowsof import RowsOf, batch_tables, joined_tables, rebatched, row_count
from ..pi.io.formats import AgentFile, row_columns
from ..pi.io.issues import LineIssue
from ..pricing import price_array, price_totals
from ._arrays import parse_timestamps
from ._members import add_issue, add_issue_count, member_agents
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA

__all__ = ["load_agent_file", "finish_agents"]


def _parent_index(ids: pa.Array, parents: pa.Array, counts: np.ndarray) -> np.ndarray:
    """Each row's parent's row within its file (-1 for none), files one after the other (``counts``
    rows each): per file, an id's last position (as pi's index). ``ids`` and ``parents``: Arrow
    string arrays. One dictionary for both, each (file, id) a number: a sort finds every id's last
    row, a search each parent's, for the whole batch at once (a dictionary per file cost thousands
    of small files more than their rows)."""
    n = len(ids)
    if n == 0:
        return np.zeros(0, np.int32)
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    enc = pc.dictionary_encode(pa.concat_arrays([ids, parents]))
    codes = to_numpy(enc.indices, -1).astype(np.int64)
    # (an id's code in 0..d-2; a null id's -1 makes a number no parent's is)
    d = len(enc.dictionary) + 1
    key = owner * d + codes[:n]
    order = np.argsort(key, kind="stable")
    sorted_keys = key[order]
    last = np.r_[sorted_keys[1:] != sorted_keys[:-1], True]  # (the last row of each (file, id))
    known, rows = sorted_keys[last], order[last]
    wanted = owner * d + codes[n:]
    j = np.minimum(np.searchsorted(known, wanted), len(known) - 1)
    hit = (codes[n:] >= 0) & (known[j] == wanted)
    return np.where(hit, rows[j] - starts[owner], -1).astype(np.int32)


def _columns(files: list[tuple[AgentFile, dict[str, Any]]]) -> dict[str, list]:
    """The batch's columns, each one list over its files' rows: consecutive files that hold rows
    (:attr:`AgentFile.rows`, of the same columns) turned into columns at once, the others' columns
    joined to them (a column a file lacks is null on its rows)."""
    names = files[0][0].row_names if files else None
    if names is not None and all(af.rows is not None and (af.row_names is names or af.row_names == names)
                                 for af, _ in files):  # (the usual batch: one reader's rows)
        return row_columns(names, [r for af, _ in files for r in af.rows])  # type: ignore[union-attr]
    runs: list[tuple[dict[str, list], int]] = []
    i = 0
    while i < len(files):
        af = files[i][0]
        if af.rows is None:
            runs.append((af.columns, af.n))
            i += 1
            continue
        j = i + 1
        while j < len(files) and files[j][0].rows is not None and files[j][0].row_names == af.row_names:
            j += 1
        run = [f[0] for f in files[i:j]]
        runs.append((row_columns(af.row_names, list(chain.from_iterable(f.rows for f in run))),
                     sum(f.n for f in run)))
        i = j
    if len(runs) == 1:
        return runs[0][0]
    out: dict[str, list] = {}
    for name in set().union(*(cols for cols, _ in runs)):
        joined: list = []
        for cols, n in runs:
            c = cols.get(name)
            joined.extend(c if c is not None else [None] * n)
        out[name] = joined
    return out


def files_table(files: list[tuple[AgentFile, dict[str, Any]]]) -> pa.Table:
    """One entries table for a batch of read files (their rows one after the other): one Arrow
    array per column for the batch, as the pi loader's :func:`._file.materialize` builds them."""
    counts = np.fromiter((af.n for af, _ in files), np.int64, len(files))
    # (a value per file, repeated over its rows)
    per_file = dict(zip(_PER_FILE, zip(
        *[(s.get("session_id"), s.get("root_session_id"), af.path, af.agent) for af, s in files]))) if files else {}
    return rows_table(_columns(files), counts, per_file)


_PER_FILE = ("session_id", "root_session_id", "file", "agent")


def rows_table(cols: dict[str, list], counts: Any, per_file: dict[str, Any]) -> pa.Table:
    """The entries table of files' rows one after the other: ``cols`` (entry column names, and
    ``timestamps`` as ISO text; a column missing is null), each file's row count (``counts``) and
    each file's ``session_id``, ``root_session_id``, ``file`` and ``agent`` (``per_file``: lists),
    repeated over its rows; each row's index and its parent's within its file."""
    counts = np.asarray(counts, np.int64)
    n = int(counts.sum())
    owner = from_numpy(np.repeat(np.arange(len(counts)), counts))

    def repeated(name: str) -> pa.Array:
        return pc.take(pa.array(per_file[name], pa.string()), owner) if n else pa.nulls(0, pa.string())

    ids = pa.array(cols.get("entry_id") or [None] * n, pa.string())
    parents = pa.array(cols.get("parent_id") or [None] * n, pa.string())
    arrays = []
    for f in ENTRY_SCHEMA:
        name = f.name
        if name in ("session_id", "root_session_id", "file", "agent"):
            arrays.append(repeated(name))
        elif name == "entry_id":
            arrays.append(ids)
        elif name == "parent_id":
            arrays.append(parents)
        elif name == "timestamp":
            arrays.append(parse_timestamps(pa.array(cols.get("timestamps") or [None] * n, pa.string())))
        elif name == "entry_index":
            arrays.append(from_numpy((np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)).astype(np.int32)))
        elif name == "parent_index":
            idx = _parent_index(ids, parents, counts)
            arrays.append(from_numpy(idx, mask=idx < 0, type=pa.int32()))
        elif name in cols:  # (pa.array: C, where a loop per value would not be)
            arrays.append(pa.array(cols[name], f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=ENTRY_SCHEMA)


def load_agent_file(res: Any, agent: str, fh: Any, want_blocks: bool, *, defer: bool = False) -> Any:
    """Fill ``res`` (a :class:`._file.FileResult`) from an open binary file of an agent's session,
    read by the agent's own reader (:mod:`sessionlab.agents`). With ``defer`` its entries table is
    left for :func:`materialize_agents` to build with the rest of its batch."""
    if fh is None:  # (a source the reader opens itself, such as a session in a database: no bytes of
        af, res.nbytes = registry.read_source(agent, res.path), 0  # its own, never cached)
    else:
        af, res.nbytes = read_agent(res.path, agent, fh)
    return _fill(res, agent, af, want_blocks, defer=defer)


def read_agent(path: str, agent: str, fh: Any) -> tuple[AgentFile, int]:
    """A file of ``agent`` read from the binary file object ``fh`` by the agent's reader, and the
    bytes read (the cache keeps a file only if it is still this size)."""
    af = registry.spec(agent).read(path, fh)
    return af, fh.tell()


def materialize_agents(results: list, *, price: bool = True) -> list[tuple[Any, Exception]]:
    """Build the entries tables of a batch's agent files at once (one array per column, priced
    once unless ``price`` is false: see :func:`price_rows`), sliced back per file (zero-copy).
    Returns the files whose table could not be built (a value no column takes: a damaged file),
    each with its error; the batch's others are built."""
    pend = [r for r in results if r.agent_pending is not None]
    if not pend:
        return []
    files = [r.agent_pending for r in pend]

    def built(items: list) -> pa.Table:
        t = files_table(items)
        return price_rows(t) if price else t

    try:
        t = built(files)
    except Exception:  # each file alone: only the bad one fails
        failed = []
        for r, item in zip(pend, files):
            r.agent_pending = None
            try:
                r.entries = built([item])
            except Exception as exc:
                failed.append((r, exc))
        return failed
    start = 0
    for r, (af, _) in zip(pend, files):
        r.entries, r.agent_pending = RowsOf(t, start, af.n), None
        start += af.n
    return []


# a session row's keys: from the reader's session facts (True), else what every agent file has
_SESSION_KEYS: dict[str, Any] = {"session_id": True, "file": None, "version": None, "dialect": None, "cwd": True,
                                 "parent_session": None, "header_timestamp": None, "name": True, "issue_count": None,
                                 "agent": None, "agent_version": True, "parent_session_id": True,
                                 "parent_tool_call_id": None, "loader": "agent"}


def agent_session(path: str, agent: str, facts: dict[str, Any], issues: int) -> dict[str, Any]:
    """The session row of an agent file: its reader's session ``facts`` (``session_id``, ``cwd``,
    ``name``...), its path, agent and count of issues."""
    row = {k: facts.get(k) if v is True else v for k, v in _SESSION_KEYS.items()}
    row.update(file=path, issue_count=issues, agent=agent)
    return row


def agent_sessions(paths: list[str], agent: str, facts: dict[str, list], issues: list[int]) -> dict[str, list]:
    """:func:`agent_session` of many files at once, as columns (``facts``: each fact's column)."""
    n = len(paths)
    cols = {k: list(facts[k]) if v is True and k in facts else [None if v is True else v] * n
            for k, v in _SESSION_KEYS.items()}
    cols.update(file=list(paths), issue_count=list(issues), agent=[agent] * n)
    return cols


def _fill(res: Any, agent: str, af: AgentFile, want_blocks: bool, *, defer: bool = False) -> Any:
    s = dict(af.session)
    res.session = agent_session(res.path, agent, s, len(af.issues))
    res.loader = "agent"
    if defer:
        res.agent_pending = (af, s)
    else:
        res.entries = _priced(files_table([(af, s)]), np.full(af.n, registry.spec(agent).priced))
    if want_blocks:
        rows = af.blocks
        cols = list(zip(*rows)) if rows else [()] * (len(BLOCK_SCHEMA) - 1)
        arrays = [pa.array([s["session_id"]] * len(rows), pa.string())]
        arrays += [pa.array(list(c), f.type) for c, f in zip(cols, list(BLOCK_SCHEMA)[1:])]
        res.blocks = pa.Table.from_arrays(arrays, schema=BLOCK_SCHEMA)
    res.issues = af.issues
    res.agent_extra = af.extra  # (for the agent's own pass over the load: AgentSpec.finish)
    res.agent_state = af.state  # (what the reader needs to read the file's new lines alone)
    return res


def extend_agent_file(res: Any, agent: str, fh: Any, state: Any, lines_before: int, kept: pa.Table,
                      kept_issues: list, kept_extra: Any = None) -> Any | None:
    """``res`` filled with a grown file's rows: ``kept`` (its first ``lines_before`` lines, as
    loaded before) and its new lines, read alone from ``fh`` by the agent's reader with the
    ``state`` it left (:meth:`AgentSpec.resume_read`); None when they cannot be read alone.
    A reader's ``extra`` that is a list (per-row facts, as Codex's token totals) goes on after the
    old lines' (``kept_extra``); any other is the whole file's already."""
    af = registry.spec(agent).resume_read(res.path, fh, state, lines_before)
    if af is None:
        return None
    _fill(res, agent, af, False)
    if isinstance(res.agent_extra, list):
        res.agent_extra = list(kept_extra or []) + res.agent_extra
    new = res.entries
    ids, parents = (pa.chunked_array([*kept[c].chunks, *new[c].chunks], pa.string()).combine_chunks()
                    for c in ("entry_id", "parent_id"))  # (a column of no chunk too)
    n = len(ids)
    idx = _parent_index(ids, parents, np.array([n]))  # over the whole file: an id used again moves its lookups
    t = pa.concat_tables([kept, new]).combine_chunks()
    i = t.schema.get_field_index("entry_index")
    t = t.set_column(i, "entry_index", from_numpy(np.arange(n, dtype=np.int32)))
    i = t.schema.get_field_index("parent_index")
    res.entries = t.set_column(i, "parent_index", from_numpy(idx, mask=idx < 0, type=pa.int32()))
    res.issues = list(kept_issues) + res.issues
    res.session["issue_count"] = len(res.issues)
    return res


def load_agent_bytes(res: Any, agent: str, data: bytes, want_blocks: bool) -> Any:
    return load_agent_file(res, agent, io.BytesIO(data), want_blocks)


def price_rows(t: pa.Table) -> pa.Table:
    """An entries table's calls with no recorded cost priced (:func:`_priced`), on the rows of the
    agents whose calls are priced (:func:`sessionlab.agents.priced_agents`): a batch's, as its
    files are read, or a worker's whole chunk, where the worker left them to the loading process."""
    if not t.num_rows:
        return t
    return _priced(t, _of_priced_agents(t))


def _of_priced_agents(t: pa.Table) -> np.ndarray:
    """Which rows of ``t`` are of an agent whose calls are priced
    (:func:`sessionlab.agents.priced_agents`; a null agent's are not), from each agent named once."""
    agents = pc.dictionary_encode(t["agent"]).combine_chunks()
    priced = registry.priced_agents()
    known = np.array([a in priced for a in agents.dictionary.to_pylist()], np.bool_)
    if not len(known):  # (no row names its agent)
        return np.zeros(t.num_rows, np.bool_)
    return known[to_numpy(agents.indices)] & valid_mask(agents.indices)


def _priced(t: pa.Table, priced: np.ndarray) -> pa.Table:
    """``t`` with its calls that carry usage but no recorded cost priced, where ``priced`` (rows of
    agents whose calls are priced), from the price table (``cost_source`` "priced", or "unknown"
    when the model has none; a fallback model stays flagged), a session's running totals
    (``usage_kind = 'session_total'``) at the model's base rates. Done as files are read, so the
    cache keeps the prices: a row whose usage another row repeats is nulled later with its cost
    (:func:`finish_agents`)."""
    if not t.num_rows:
        return t
    rows = np.flatnonzero(_unpriced(t) & np.asarray(priced, np.bool_))
    if not len(rows):
        return t
    take = arrow_indices(rows)

    def col(name: str) -> np.ndarray:
        return to_numpy(t[name].take(take), 0)

    models = t["model"].take(take)  # (an Arrow array: grouped by model in C, see pricing._positions)
    counts = [col(c) for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")]
    costs, _ = price_array(models, *counts, col("cache_write_1h_tokens"))
    totals = to_numpy(pc.equal(t["usage_kind"].take(take), scalar("session_total")), False).astype(np.bool_)
    if totals.any():
        at = np.flatnonzero(totals)
        costs[at] = price_totals(models.take(arrow_indices(at)), *(c[at] for c in counts))
    cost = to_numpy(t["cost_usd"], np.nan).astype(np.float64)
    cost[rows] = costs
    # (a fallback model that has a price stays flagged; the other rows' sources are left as they are)
    kept = to_numpy(pc.equal(t["cost_source"].take(take), scalar("fallback")), False).astype(np.bool_)
    # (each priced row's source by its code, the strings made in C)
    codes = np.where(np.isnan(costs), 0, np.where(kept, 1, 2)).astype(np.int8)
    new = _SOURCES.take(from_numpy(codes))
    at = np.zeros(t.num_rows, np.bool_)
    at[rows] = True
    src = pc.replace_with_mask(t["cost_source"].combine_chunks(), from_numpy(at), new)
    i = t.schema.get_field_index("cost_usd")
    t = t.set_column(i, "cost_usd", from_numpy(np.nan_to_num(cost), mask=np.isnan(cost), type=pa.float64()))
    i = t.schema.get_field_index("cost_source")
    return t.set_column(i, "cost_source", src)


_SOURCES = strings(["unknown", "fallback", "priced"])  # (not pa.array: its first use would import pandas)


def _unpriced(t: pa.Table) -> np.ndarray:
    """Which rows of ``t`` are calls with usage and no cost, not yet found to have no price."""
    need = pc.and_(pc.is_valid(t["input_tokens"]), pc.is_null(t["cost_usd"]))
    # (a call already found to have no price keeps its "unknown")
    need = pc.and_(need, pc.fill_null(pc.not_equal(t["cost_source"], scalar("unknown")), scalar(True)))
    return to_numpy(need, False).astype(np.bool_)


def _unknown_models(results: list) -> None:
    """One ``unknown_model`` issue per model without a price over the load, on its first counted call
    (in load order), with the count of its counted calls."""
    def unknown_rows(t: pa.Table) -> pa.Array:
        return pc.and_(pc.is_valid(t["input_tokens"]), pc.equal(t["cost_source"], scalar("unknown")))

    helds = [r.raw_table("entries") for r in results]
    if not any(pc.any(unknown_rows(t)).as_py() for t in batch_tables(helds) if t.num_rows):
        return  # (no call of the load lacks a price: the usual case, asked once per batch)
    # (the files' rows one after the other, each row's file by its place: no pass per file but one count)
    sizes = np.fromiter(map(row_count, helds), np.int64, len(helds))
    offsets = np.r_[0, np.cumsum(sizes)]
    parts = joined_tables(helds)
    if not parts:
        return
    t = pa.concat_tables([x.select(["input_tokens", "cost_source", "model", "agent"]) for x in parts])
    rows = np.flatnonzero(to_numpy(unknown_rows(t), False) & _of_priced_agents(t))
    if not len(rows):
        return
    names = pc.fill_null(t["model"].take(arrow_indices(rows)), scalar("")).combine_chunks()  # unpriced calls only
    enc = pc.dictionary_encode(names)
    codes = to_numpy(enc.indices)
    _, at, n = np.unique(codes, return_index=True, return_counts=True)  # (each model's first call, its calls)
    models = [m or "(none)" for m in enc.dictionary.take(from_numpy(codes[at])).to_pylist()]  # (none: no model named)
    first = dict(sorted(zip(models, rows[at].tolist()), key=lambda mr: mr[1]))  # (in load order)
    counts = dict(zip(models, n.tolist()))
    for model, row in first.items():
        fi = int(np.searchsorted(offsets, row, side="right")) - 1
        r, local = results[fi], row - int(offsets[fi])
        e = r.entries
        path = add_issue_count(r, local)  # (the file of that row: a bundle's member's)
        add_issue(r, LineIssue(path, int(e["line_no"][local].as_py() or 0), "unknown_model",
                               f"no price for model {model!r} ({counts[model]} calls in this load): their "
                               "cost_usd is null", "", e["entry_id"][local].as_py()))


def finish_agents(results: list) -> None:
    """Cross-file work of a load over its files of the registry's agents, in load order: each
    agent's own pass (:attr:`~sessionlab.agents.AgentSpec.finish`), then the pricing."""
    present = member_agents(results)
    for spec in registry.specs():
        if spec.name in present:
            spec.finish_load(results)
    price_pi_format(results)  # (those a worker priced have nothing left to price)
    _unknown_models(results)


def price_pi_format(results: list) -> None:
    """The calls of the files pi's loader read for another agent (OpenClaw's pi files) priced, all
    at once (their workers do it as they read; the load once more, for what the cache grew)."""
    priced = registry.priced_agents()
    todo = [r for r in results if r.loader != "agent" and (r.session or {}).get("agent", "pi") in priced]
    if todo and any(_unpriced(t).any() for t in joined_tables([r.raw_table("entries") for r in todo])):
        rebatched(todo, lambda t, _counts: _priced(t, np.ones(t.num_rows, np.bool_)))
