"""Claude Code and Codex files to tables, and what a load does across their files.

:func:`load_agent_file` reads one file with :mod:`sessionlab.io.claude` / :mod:`sessionlab.io.codex`
(streaming it: a huge line is skipped, never held) and builds its entries and blocks tables.
:func:`finish_agents` runs once over all files of a load, in load order: usage that another row
already counts (Claude Code streaming lines of one response, sidechain replays, Codex forks and
sub-agent threads replaying their parent) is nulled on the repeat, then every counted call without
a recorded cost is priced (``cost_source``), and a model without a price becomes one
``unknown_model`` issue for the whole load.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..io.claude import dedupe_usage, read_claude
from ..io.codex import read_codex, replayed_rows
from ..io.formats import AgentFile
from ..io.issues import LineIssue
from ..pricing import price_calls
from ._arrays import parse_timestamps
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA

__all__ = ["load_agent_file", "finish_agents", "USAGE_COLUMNS"]

USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
                 "context_tokens", "cost_usd", "reasoning_tokens", "cache_write_1h_tokens", "usage_kind",
                 "cost_source")


def _parent_index(ids: list, parents: list) -> list[int | None]:
    last: dict[Any, int] = {}
    for i, e in enumerate(ids):  # one pass: id -> its last position, as pi's index
        last[e] = i
    return [last.get(p) if p is not None else None for p in parents]


def _leaves(ids: list, parents: list, side: list) -> tuple[str | None, int]:
    """(leaf id, leaf count) counting conversation entries only: a side node is never a leaf, and
    an entry whose descendants are all side nodes is one."""
    parent_of = dict(zip(ids, parents))
    has_desc: set = set()
    for e, p, s in zip(ids, parents, side):  # each conversation entry marks its ancestors once
        if s:
            continue
        seen = {e}
        while p is not None and p not in has_desc and p not in seen:
            has_desc.add(p)
            seen.add(p)
            p = parent_of.get(p)
    conv = [e for e, s in zip(ids, side) if not s]
    return (conv[-1] if conv else None), sum(1 for e in conv if e not in has_desc)


def _table(af: AgentFile, session: dict[str, Any]) -> pa.Table:
    cols = af.columns
    n = af.n
    arrays = []
    for f in ENTRY_SCHEMA:
        name = f.name
        if name == "session_id":
            arrays.append(pa.array([session["session_id"]] * n, pa.string()))
        elif name == "file":
            arrays.append(pa.array([af.path] * n, pa.string()))
        elif name == "timestamp":
            arrays.append(parse_timestamps(cols["timestamps"]))
        elif name == "entry_index":
            arrays.append(pa.array(np.arange(n, dtype=np.int32)))
        elif name == "parent_index":
            arrays.append(pa.array(_parent_index(cols["entry_id"], cols["parent_id"]), pa.int32()))
        elif name == "agent":
            arrays.append(pa.array([af.agent] * n, pa.string()))
        elif name == "root_session_id":
            arrays.append(pa.array([session.get("root_session_id")] * n, pa.string()))
        elif name in cols:
            arrays.append(pa.array(cols[name], f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=ENTRY_SCHEMA)


def load_agent_file(res: Any, agent: str, fh: Any, want_blocks: bool) -> Any:
    """Fill ``res`` (a :class:`._file.FileResult`) from an open binary file of a Claude Code or
    Codex session."""
    af = read_claude(res.path, fh) if agent == "claude-code" else read_codex(res.path, fh)
    s = dict(af.session)
    leaf_id, leaf_count = _leaves(af.columns["entry_id"], af.columns["parent_id"], af.columns["side_node"])
    res.session = {"session_id": s["session_id"], "file": res.path, "version": None, "dialect": None,
                   "cwd": s.get("cwd"), "parent_session": None, "header_timestamp": None, "name": s.get("name"),
                   "leaf_id": leaf_id, "leaf_count": leaf_count, "issue_count": len(af.issues),
                   "agent": agent, "agent_version": s.get("agent_version"),
                   "parent_session_id": s.get("parent_session_id"), "parent_tool_call_id": None,
                   "loader": "agent"}
    res.loader = "agent"
    res.entries = _table(af, s)
    if want_blocks:
        rows = af.blocks
        cols = list(zip(*rows)) if rows else [()] * (len(BLOCK_SCHEMA) - 1)
        arrays = [pa.array([s["session_id"]] * len(rows), pa.string())]
        arrays += [pa.array(list(c), f.type) for c, f in zip(cols, list(BLOCK_SCHEMA)[1:])]
        res.blocks = pa.Table.from_arrays(arrays, schema=BLOCK_SCHEMA)
    res.issues = af.issues
    res.agent_extra = af.codex_totals if agent == "codex" else (s.get("agent_id"), s.get("spawned") or {})
    return res


def load_agent_bytes(res: Any, agent: str, data: bytes, want_blocks: bool) -> Any:
    return load_agent_file(res, agent, io.BytesIO(data), want_blocks)


def _null_rows(t: pa.Table, drop: np.ndarray, source: np.ndarray | None = None) -> pa.Table:
    """``t`` with the usage columns nulled on the rows of ``drop`` (a boolean mask), after each row
    took the usage of row ``source[row]`` (when given: an index array, ``arange`` for no move)."""
    mask = pa.array(drop)
    take = None if source is None else pa.array(source, pa.int64())
    for c in USAGE_COLUMNS:
        i = t.schema.get_field_index(c)
        col = t.column(i) if take is None else t.column(i).take(take)
        t = t.set_column(i, c, pc.if_else(mask, pa.scalar(None, col.type), col))
    return t


def _claude_dedupe(results: list) -> None:
    files, owners = [], []
    for r in results:
        if r.entries is None or (r.session or {}).get("agent") != "claude-code":
            continue
        t = r.entries
        has = np.asarray(pc.is_valid(t["input_tokens"]).to_numpy(zero_copy_only=False), bool)
        rows = np.flatnonzero(has)
        take = pa.array(rows, pa.int64())
        tot = sum(np.asarray(pc.fill_null(t[c].take(take), 0).to_numpy(zero_copy_only=False), np.int64)
                  for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
        files.append((t["message_id"].take(take).to_pylist(), t["request_id"].take(take).to_pylist(),
                      t["is_sidechain"].take(take).to_pylist(), list(np.asarray(tot).tolist()) if len(rows) else [],
                      rows))
        owners.append(r)
    if not files:
        return
    keep, moves = dedupe_usage(files)
    for r, f, k, mv in zip(owners, files, keep, moves):
        if all(k) and not mv:
            continue
        drop = np.zeros(r.entries.num_rows, bool)
        drop[f[4][~np.asarray(k, bool)]] = True
        source = None
        if mv:  # a response's usage moves to its first line (see dedupe_usage)
            source = np.arange(r.entries.num_rows)
            rows = f[4]
            for to, frm in mv.items():
                source[rows[to]] = rows[frm]
        r.entries = _null_rows(r.entries, drop, source)


def _codex_replays(results: list) -> None:
    by_id = {r.session["session_id"]: r for r in results
             if r.session is not None and r.session.get("agent") == "codex" and r.entries is not None}
    for r in by_id.values():
        parent = by_id.get(r.session.get("parent_session_id"))
        if parent is None or parent is r:
            continue
        rows = replayed_rows(r.agent_extra or [], parent.agent_extra or [])
        if rows:
            drop = np.zeros(r.entries.num_rows, bool)
            drop[sorted(rows)] = True
            r.entries = _null_rows(r.entries, drop)


def _price(results: list) -> None:
    todo = []
    for r in results:
        if r.entries is None or r.session is None or r.session.get("agent") not in ("claude-code", "codex"):
            continue
        t = r.entries
        need = pc.and_(pc.is_valid(t["input_tokens"]), pc.is_null(t["cost_usd"]))
        rows = np.flatnonzero(np.asarray(need.to_numpy(zero_copy_only=False), bool))
        if len(rows):
            todo.append((r, rows))
    if not todo:
        return
    take = [(r, pa.array(rows, pa.int64())) for r, rows in todo]

    def col(name: str, fill: Any) -> list:
        out: list = []
        for r, tk in take:
            c = r.entries[name].take(tk)
            out.extend((pc.fill_null(c, fill) if fill is not None else c).to_pylist())
        return out

    costs, unknown = price_calls(col("model", None), col("input_tokens", 0), col("output_tokens", 0),
                                 col("cache_read_tokens", 0), col("cache_write_tokens", 0),
                                 col("cache_write_1h_tokens", 0))
    pos = 0
    first_unknown: dict[int, tuple] = {}
    for model, where in unknown.items():
        first_unknown[where[0]] = (model, len(where))
    for r, rows in todo:
        k = len(rows)
        part = costs[pos:pos + k]
        t = r.entries
        full_cost = t["cost_usd"].to_pylist()
        full_src = t["cost_source"].to_pylist()
        for j, row in enumerate(rows):  # a loop over priced calls only
            full_cost[row] = part[j]
            if full_src[row] != "fallback" or part[j] is None:  # (a fallback model stays flagged)
                full_src[row] = "priced" if part[j] is not None else "unknown"
            if pos + j in first_unknown:
                model, count = first_unknown[pos + j]
                r.issues.append(LineIssue(r.path, int(t["line_no"][int(row)].as_py() or 0), "unknown_model",
                                          f"no price for model {model!r} ({count} calls in this load): their "
                                          "cost_usd is null", "", t["entry_id"][int(row)].as_py()))
                r.session["issue_count"] = r.session.get("issue_count", 0) + 1
        i = t.schema.get_field_index("cost_usd")
        t = t.set_column(i, "cost_usd", pa.array(full_cost, pa.float64()))
        i = t.schema.get_field_index("cost_source")
        r.entries = t.set_column(i, "cost_source", pa.array(full_src, pa.string()))
        pos += k


def _claude_spawns(results: list) -> None:
    """A subagent session's ``parent_tool_call_id``: the Task/Agent call whose result names it."""
    claude = [r for r in results if r.session is not None and r.session.get("agent") == "claude-code"]
    spawned: dict[tuple, str] = {}
    for r in claude:
        for agent_id, call in ((r.agent_extra or (None, {}))[1]).items():
            spawned[(r.session["session_id"], agent_id)] = call
    for r in claude:
        agent_id = (r.agent_extra or (None, {}))[0]
        if agent_id is not None:
            r.session["parent_tool_call_id"] = spawned.get((r.session.get("parent_session_id"), agent_id))


def finish_agents(results: list) -> None:
    """Cross-file work of a load over its Claude Code and Codex files, in load order."""
    _claude_spawns(results)
    _claude_dedupe(results)
    _codex_replays(results)
    _price(results)
