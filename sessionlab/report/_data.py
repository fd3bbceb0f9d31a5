"""What the report shows, computed from one load: usage, sessions, per-session timeline and tree, issues.

Everything here is plain data (numbers, and session text kept raw); :mod:`._html` escapes the text
where it becomes HTML and the report's script only ever sets text with ``textContent``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._session_labels import session_labels
from ..analysis import usage_by
from ..plotting._common import to_np
from ..plotting._layout import compute_layout
from ..plotting._tree import NODE_KINDS, current_labels, node_kinds
from ..tables._load import load_files

__all__ = ["ReportData", "SessionInfo", "collect"]


@dataclass
class SessionInfo:
    """One session's row in the list and the arrays of its section."""

    index: int
    session_id: str
    file: str
    title: str
    name: str | None
    prompt: str | None  # the first prompt, whole
    day: str | None
    folder: str | None
    first: str | None  # ISO time of the first entry (UTC)
    last: str | None
    entries: int
    calls: int
    cost_usd: float
    tokens: int  # sum of the calls' input, output, cache read and cache write
    leaves: int
    forks: int
    compactions: int
    models: list[str]
    issues: int = 0
    detail: dict[str, Any] = field(default_factory=dict)  # timeline and tree arrays (JSON-ready)


@dataclass
class ReportData:
    source: str
    tz: str
    usage: pa.Table  # usage_by(..., by=["day", "model"])
    sessions: list[SessionInfo]
    issues: list[dict[str, Any]]  # file, line, kind, message, excerpt, session index (or None)
    kinds: list[list[str]]  # [name, colour] of the tree's node kinds
    insights: dict[str, Any] = field(default_factory=dict)  # report._insights.collect_insights


def _iso(ts: Any) -> str | None:
    return None if ts is None else ts.strftime("%Y-%m-%d %H:%M UTC")


def _detail(table: pa.Table) -> tuple[dict[str, Any], dict[str, int]]:
    """Timeline (context per call on the current branch, compactions) and tree arrays of one file."""
    lay = compute_layout(table)
    nodes, n = lay.nodes, lay.nodes.num_rows
    if n == 0:
        return {"calls": [], "compactions": [], "tree": None}, {"leaves": 0, "forks": 0}
    types = to_np(nodes["type"], "").astype(object)
    roles = to_np(nodes["role"], "").astype(object)
    kinds = node_kinds(types, roles)
    kind_index = {k: i for i, k in enumerate(NODE_KINDS)}
    kind = np.fromiter((kind_index[k] for k in kinds), np.int64, n)
    n_child = np.bincount(lay.parent[lay.parent >= 0], minlength=n)
    # the current branch from the root down: its calls' context and where compactions fall
    on = np.nonzero(lay.on_branch)[0]
    on = on[np.argsort(lay.y[on], kind="stable")]
    ctx = to_np(nodes["context_tokens"], 0).astype(np.int64)
    is_call = (types == "message") & (roles == "assistant")
    call_rows = on[is_call[on]]
    comp_rows = on[types[on] == "compaction"]
    calls_before = np.searchsorted(lay.y[call_rows], lay.y[comp_rows])  # calls above each compaction
    tb = to_np(nodes["tokens_before"], 0).astype(np.int64)
    ids = nodes["entry_id"].to_pylist()
    row_of = {e: i for i, e in enumerate(ids)}
    labels = current_labels(table)
    tree = {
        "x": np.round(lay.x, 2).tolist(),
        "y": lay.y.astype(np.int64).tolist(),
        "p": lay.parent.astype(np.int64).tolist(),
        "k": kind.tolist(),
        "b": np.nonzero(lay.on_branch)[0].tolist(),
        "labels": [[row_of[t], str(v)] for t, v in zip(labels["target_id"], labels["label"]) if t in row_of],
    }
    detail = {
        "calls": ctx[call_rows].tolist(),
        "compactions": [[int(c), int(t)] for c, t in zip(calls_before, tb[comp_rows])],
        "tree": tree,
    }
    return detail, {"leaves": int((n_child == 0).sum()), "forks": int((n_child >= 2).sum())}


def collect(source: Any, *, tz: str = "UTC") -> ReportData:
    """Load ``source`` once (bad lines kept as issues) and compute everything the report shows."""
    res = load_files(source, on_bad_lines="skip", progress=False)
    tables = [r.entries for r in res.files if r.entries is not None and r.entries.num_rows]
    entries = pa.concat_tables(tables) if tables else None
    usage = usage_by(entries, by=["day", "model"], tz=tz) if entries is not None else pa.table({})
    sessions: list[SessionInfo] = []
    index_of_file: dict[str, int] = {}
    for r in res.files:  # one section per session file
        t = r.entries
        if t is None or t.num_rows == 0 or r.session is None:
            continue
        sid = r.session.get("session_id") or t["session_id"][0].as_py()
        label = session_labels(t).get(sid)
        detail, shape = _detail(t)
        calls = pc.and_(pc.equal(t["type"], "message"), pc.equal(t["role"], "assistant"))
        calls = pc.fill_null(calls, False)
        c = t.filter(calls)
        tok = sum(int(pc.sum(c[k]).as_py() or 0)
                  for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
        ts = pc.min_max(t["timestamp"])
        models = [m for m in pc.unique(c["model"]).to_pylist() if m]
        info = SessionInfo(
            index=len(sessions), session_id=sid, file=r.path, title=label.title if label else "(no prompt)",
            name=label.name if label else None, prompt=label.first_prompt if label else None,
            day=label.day if label else None,
            folder=label.folder if label else None, first=_iso(ts["min"].as_py()), last=_iso(ts["max"].as_py()),
            entries=t.num_rows, calls=c.num_rows, cost_usd=float(pc.sum(c["cost_usd"]).as_py() or 0.0), tokens=tok,
            leaves=shape["leaves"], forks=shape["forks"],
            compactions=int(pc.sum(pc.cast(pc.equal(t["type"], "compaction"), pa.int64())).as_py() or 0),
            models=models, detail=detail)
        index_of_file[r.path] = info.index
        sessions.append(info)
    issues = []
    for i in res.issues:  # a handful per bad file
        at = index_of_file.get(i.path)
        issues.append({"file": i.path, "line": i.line, "kind": i.kind, "message": i.message,
                       "excerpt": i.excerpt, "session": at})
        if at is not None:
            sessions[at].issues += 1
    shown = ", ".join(map(str, source)) if isinstance(source, (list, tuple)) else str(source)
    from ._insights import collect_insights

    return ReportData(source=shown, tz=tz, usage=usage, sessions=sessions, issues=issues,
                      kinds=[[k, v[0]] for k, v in NODE_KINDS.items()], insights=collect_insights(entries))
