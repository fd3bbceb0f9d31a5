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

from ..analysis import usage_by
from ..plotting import NODE_KINDS, compute_layout, current_labels, node_kinds, to_np
from ..tables import call_mask, load
from ..tables.labels import session_labels

__all__ = ["ReportData", "SessionInfo", "collect", "spend_label"]

# what a usage row paid for (its usage_kind), as the report names it; 'message' rows are the calls
_SPEND = {"message": "calls", "title": "titles", "summary": "summaries", "compaction": "compaction summaries",
          "branch_summary": "branch summaries", "usage": "usage entries", "import": "imports",
          "session_total": "session totals", "turn": "turn totals"}


def spend_label(kind: str | None) -> str:
    """What a usage row's spend paid for: 'calls' for assistant calls; otherwise the spend outside calls
    ('titles', 'branch summaries', 'usage entries'...; an unknown kind is named as recorded). Only calls
    have no kind (agents that record nothing but calls), so ``None`` is 'calls'."""
    if kind is None:
        return "calls"
    return _SPEND.get(kind, f"{kind} entries")


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
    cwd: str | None  # the project: the working directory the session ran in
    agent: str | None
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
    usage: pa.Table  # usage_by(..., by=["day", "model", "usage_kind"])
    sessions: list[SessionInfo]
    issues: list[dict[str, Any]]  # file, line, kind, message, excerpt, session index (or None)
    kinds: list[list[str]]  # [name, colour] of the tree's node kinds
    insights: dict[str, Any] = field(default_factory=dict)  # report._insights.collect_insights


def _iso(ts: Any) -> str | None:
    return None if ts is None else ts.strftime("%Y-%m-%d %H:%M UTC")


def _detail(table: pa.Table) -> dict[str, Any]:
    """Timeline (context per call on the current branch, compactions) and tree arrays of one file."""
    lay = compute_layout(table)
    nodes, n = lay.nodes, lay.nodes.num_rows
    if n == 0:
        return {"calls": [], "compactions": [], "tree": None}
    types = to_np(nodes["type"], "").astype(object)
    roles = to_np(nodes["role"], "").astype(object)
    kinds = node_kinds(types, roles)
    kind_index = {k: i for i, k in enumerate(NODE_KINDS)}
    kind = np.fromiter((kind_index[k] for k in kinds), np.int64, n)
    # the current branch from the root down: its calls' context and where compactions fall
    on = np.nonzero(lay.on_branch)[0]
    on = on[np.argsort(lay.y[on], kind="stable")]
    ctx = to_np(nodes["context_tokens"], 0).astype(np.int64)
    call_rows = on[call_mask(nodes)[on]]
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
    return detail


def _file_tables(entries: pa.Table) -> dict[str, pa.Table]:
    """Each file's rows of an entries table (a load keeps a file's rows together, in line order)."""
    if entries.num_rows == 0:
        return {}
    enc = pc.dictionary_encode(entries["file"].combine_chunks())
    codes = np.asarray(enc.indices, np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(enc.dictionary) + 1))
    contiguous = bool((np.diff(codes) >= 0).all())
    out = {}
    for k, f in enumerate(enc.dictionary.to_pylist()):  # one table per session file
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        out[f] = entries.slice(lo, hi - lo) if contiguous else entries.take(pa.array(order[lo:hi]))
    return out


def _session_info(index: int, row: dict[str, Any], t: pa.Table, label: Any) -> SessionInfo:
    """One session's list row and section: the numbers are the sessions table's (one owner)."""
    detail = _detail(t)
    models = [m for m in pc.unique(t.filter(pa.array(call_mask(t)))["model"]).to_pylist() if m]
    tokens = sum(int(row[k] or 0) for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
    return SessionInfo(
        index=index, session_id=row["session_id"], file=row["file"], title=label.title if label else "(no prompt)",
        name=row["name"], prompt=label.first_prompt if label else None, day=label.day if label else None,
        folder=label.folder if label else None, cwd=row["cwd"] or (label.cwd if label else None),
        agent=row["agent"], first=_iso(row["first_timestamp"]), last=_iso(row["last_timestamp"]),
        entries=int(row["entry_count"] or 0), calls=int(row["call_count"] or 0), cost_usd=float(row["cost_usd"] or 0.0),
        tokens=tokens, leaves=int(row["leaf_count"] or 0), forks=int(row["fork_count"] or 0),
        compactions=int(row["compaction_count"] or 0), models=models, detail=detail)


def collect(source: Any, *, tz: str = "UTC") -> ReportData:
    """Load ``source`` once (bad lines kept as issues) and compute everything the report shows.

    Every per-session number (calls, leaves, fork points, compactions, tokens, cost) is the sessions
    table's; the usage table is :func:`~sessionlab.usage_by`'s."""
    corpus = load(source, on_bad_lines="skip", progress=False)
    entries = corpus.entries
    usage = usage_by(entries, by=["day", "model", "usage_kind"], tz=tz) if entries.num_rows else pa.table({})
    per_file = _file_tables(entries)
    sessions: list[SessionInfo] = []
    index_of_file: dict[str, int] = {}
    for row in corpus.sessions.to_pylist():  # one section per session file with entries
        t = per_file.get(row["file"])
        if t is None or t.num_rows == 0:
            continue
        label = session_labels(t, names={row["session_id"]: row["name"]}).get(row["session_id"])
        info = _session_info(len(sessions), row, t, label)
        index_of_file[row["file"]] = info.index
        sessions.append(info)
    issues = []
    for i in corpus.issues.to_pylist():  # a handful per bad file
        at = index_of_file.get(i["file"])
        issues.append({"file": i["file"], "line": i["line"], "kind": i["kind"], "message": i["message"],
                       "excerpt": i["excerpt"], "session": at})
        if at is not None:
            sessions[at].issues += 1
    shown = ", ".join(map(str, source)) if isinstance(source, (list, tuple)) else str(source)
    from ._insights import collect_insights

    return ReportData(source=shown, tz=tz, usage=usage, sessions=sessions, issues=issues,
                      kinds=[[k, v[0]] for k, v in NODE_KINDS.items()], insights=collect_insights(entries))
