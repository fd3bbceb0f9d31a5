"""Files of the registry's agents (Claude Code, Codex...) to tables, and what a load does across them.

:func:`load_agent_file` reads one file with its agent's reader (:mod:`sessionlab.agents`;
streaming it: a huge line is skipped, never held) and builds its entries and blocks tables.
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

from .. import agents as registry
from ..pi.io.formats import AgentFile
from ..pi.io.issues import LineIssue
from ..pricing import price_calls
from ._arrays import parse_timestamps
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA

__all__ = ["load_agent_file", "finish_agents"]


def _parent_index(ids: list, parents: list) -> list[int | None]:
    last: dict[Any, int] = {}
    for i, e in enumerate(ids):  # one pass: id -> its last position, as pi's index
        last[e] = i
    return [last.get(p) if p is not None else None for p in parents]


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
    """Fill ``res`` (a :class:`._file.FileResult`) from an open binary file of an agent's session,
    read by the agent's own reader (:mod:`sessionlab.agents`)."""
    af = registry.spec(agent).read(res.path, fh)
    s = dict(af.session)
    res.session = {"session_id": s["session_id"], "file": res.path, "version": None, "dialect": None,
                   "cwd": s.get("cwd"), "parent_session": None, "header_timestamp": None, "name": s.get("name"),
                   "issue_count": len(af.issues),
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
    res.agent_extra = af.extra  # (for the agent's own pass over the load: AgentSpec.finish)
    return res


def load_agent_bytes(res: Any, agent: str, data: bytes, want_blocks: bool) -> Any:
    return load_agent_file(res, agent, io.BytesIO(data), want_blocks)


def _price(results: list) -> None:
    todo = []
    priced = registry.priced_agents()
    for r in results:
        if r.entries is None or r.session is None or r.session.get("agent") not in priced:
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


def finish_agents(results: list) -> None:
    """Cross-file work of a load over its files of the registry's agents, in load order: each
    agent's own pass (:attr:`~sessionlab.agents.AgentSpec.finish`), then the pricing."""
    present = {(r.session or {}).get("agent") for r in results}
    for spec in registry.specs():
        if spec.name in present:
            spec.finish_load(results)
    _price(results)
