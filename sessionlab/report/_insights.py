"""The report's insight sections: compactions, estimate accuracy, cache misses, tools, subagents.

:func:`collect_insights` computes the five tables once from the report's entries (plain data: rows
of numbers and raw session text); :func:`insights_html` lays them out as escaped HTML tables (the
page's sortable tables, no inline style: the page's Content-Security-Policy allows none). An agent
that does not record what a table needs is said so in a note under the table, not hidden.
"""

from __future__ import annotations

import html
import warnings
from typing import Any

import pyarrow as pa

from ..analysis import cache_misses, cache_ttl_whatif, compaction_diff, estimate_accuracy, subagent_costs, tool_stats
from ..errors import UnrecordedDataWarning

__all__ = ["collect_insights", "insights_html", "SECTIONS"]

SECTIONS = (("insights-compactions", "What each compaction dropped"),
            ("insights-estimate", "Token estimate vs recorded"),
            ("insights-cache", "Why the cache missed"), ("insights-tools", "What each tool costs"),
            ("insights-subagents", "What subagents cost"))
_MAX_ROWS = 200


def _esc(value: Any) -> str:
    return "" if value is None else html.escape(str(value), quote=True)


def _pd(table: pa.Table):
    return table.to_pandas() if table.num_rows else None


def collect_insights(entries: pa.Table | None) -> dict[str, Any]:
    """The five insight summaries of ``entries`` (None: no entries), as rows of plain values."""
    if entries is None or entries.num_rows == 0:
        return {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnrecordedDataWarning)
        out = {
            "compactions": _compactions(compaction_diff(entries)),
            "estimate": _estimate(estimate_accuracy(entries)),
            "cache": _cache(cache_misses(entries), cache_ttl_whatif(entries)),
            "tools": _tools(tool_stats(entries)),
            "subagents": _subagents(subagent_costs(entries)),
        }
    out["notes"] = {key: [str(w.message) for w in caught if str(w.message).startswith(fn)]
                    for key, fn in (("cache", "cache_"), ("tools", "tool_stats"), ("subagents", "subagent_costs"))}
    return out


def _compactions(diff: pa.Table) -> list[dict[str, Any]]:
    d = _pd(diff)
    if d is None:
        return []
    dropped = d[d["status"] == "dropped"]
    g = d.groupby("compaction_id", sort=False).agg(
        session_id=("session_id", "first"), kind=("compaction_kind", "first"), summary=("summary_tokens", "first"),
        before=("tokens_before", "first"), est_before=("est_tokens_before", "first"),
        est_after=("est_tokens_after", "first"))
    gone = dropped.groupby("compaction_id").agg(messages=("entry_id", "size"), tokens=("est_tokens", "sum"))
    tools = dropped[dropped["role"] == "toolResult"].groupby("compaction_id")["est_tokens"].sum()
    g = g.join(gone).join(tools.rename("tool_tokens")).fillna({"messages": 0, "tokens": 0, "tool_tokens": 0})
    return [{"id": cid, **{k: (None if v != v else v) for k, v in row.items()}} for cid, row in
            g.sort_values("tokens", ascending=False).head(_MAX_ROWS).iterrows()]  # (a few hundred rows at most)


def _estimate(acc: pa.Table) -> list[dict[str, Any]]:
    a = _pd(acc)
    if a is None:
        return []
    a["abs_error"] = a["error"].abs()
    a["abs_cal"] = a["calibrated_error"].abs()
    rows = []
    for (agent, model), g in a.groupby(["agent", "model"], dropna=False):  # a loop over models
        held = g[g["held_out"]]
        rows.append({"agent": agent, "model": model, "calls": len(g), "recorded": float(g["recorded_tokens"].mean()),
                     "mean_error": float(g["error"].mean()), "mae": float(g["abs_error"].mean()),
                     "mae_held": float(held["abs_error"].mean()) if len(held) else None,
                     "mae_cal_held": float(held["abs_cal"].mean()) if len(held) else None,
                     "held": len(held)})
    return rows


def _cache(misses: pa.Table, whatif: pa.Table) -> dict[str, Any]:
    m = _pd(misses)
    causes = []
    if m is not None:
        g = m.groupby("cause").agg(misses=("at_id", "size"), tokens=("rewritten_tokens", "sum"),
                                   cost=("cost_usd", "sum")).sort_values("cost", ascending=False)
        causes = [{"cause": c, **row.to_dict()} for c, row in g.iterrows()]
    w = _pd(whatif)
    total = {} if w is None else {k: float(w[k].sum()) for k in ("saved_usd", "extra_write_usd", "net_saving_usd",
                                                                   "misses_saved", "saved_tokens")}
    return {"causes": causes, "whatif": total}


def _tools(stats: pa.Table) -> list[dict[str, Any]]:
    s = _pd(stats)
    if s is None:
        return []
    s = s.sort_values("cost_usd", ascending=False).head(_MAX_ROWS)
    return [{k: (None if v is None or v != v else v) for k, v in r.items()} for r in s.to_dict("records")]


def _subagents(costs: pa.Table) -> list[dict[str, Any]]:
    c = _pd(costs)
    if c is None:
        return []
    c = c[c["runs"] > 0].sort_values("subagent_cost_usd", ascending=False).head(_MAX_ROWS)
    return [{k: (None if v is None or v != v else v) for k, v in r.items()} for r in c.to_dict("records")]


def _money(v: Any) -> str:
    if v is None:
        return ""
    return "&lt;$0.01" if 0 < abs(v) < 0.005 else ("-" if v < 0 else "") + f"${abs(v):,.2f}"


def _int(v: Any) -> str:
    return "" if v is None else f"{int(round(v)):,}"


def _table(head: list[tuple[str, bool]], rows: list[list[str]], values: list[list[Any]] | None = None) -> str:
    """A sortable table: ``head`` (name, is a number), cells already escaped, ``values`` to sort by."""
    th = "".join(f"<th class='num'>{_esc(h)}</th>" if num else f"<th>{_esc(h)}</th>" for h, num in head)
    body = []
    for i, row in enumerate(rows):
        cells = []
        for j, (cell, (_, num)) in enumerate(zip(row, head)):
            v = values[i][j] if values else None
            sort = f" data-v='{_esc(v)}'" if num and v is not None else ""
            cells.append(f"<td class='num'{sort}>{cell}</td>" if num else f"<td>{cell}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class='scroll'><table class='data sortable'><thead><tr>{th}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _notes(notes: list[str]) -> str:
    return "".join(f"<p class='note'>{_esc(n)}</p>" for n in notes)


def _session_link(sid: Any, index_of: dict[str, int]) -> str:
    i = index_of.get(sid)
    short = _esc(str(sid)[:8])
    return f"<a href='#s-{i}'>{short}</a>" if i is not None else short


def insights_html(ins: dict[str, Any], index_of: dict[str, int]) -> str:
    """The five sections (``index_of``: session id -> its section's index in the page)."""
    if not ins:
        return "<p class='note'>No entries: nothing to analyse.</p>"
    notes = ins.get("notes", {})
    parts = [_compaction_part(ins["compactions"], index_of), _estimate_part(ins["estimate"]),
             _cache_part(ins["cache"], notes.get("cache", [])), _tools_part(ins["tools"], notes.get("tools", [])),
             _subagent_part(ins["subagents"], index_of, notes.get("subagents", []))]
    return "".join(f"<section class='insight' id='{sid}'><h3>{_esc(title)}</h3>{body}</section>"
                   for (sid, title), body in zip(SECTIONS, parts))


def _compaction_part(rows: list[dict[str, Any]], index_of: dict[str, int]) -> str:
    if not rows:
        return "<p class='note'>No compaction or branch summary in these sessions.</p>"
    head = [("compaction", False), ("kind", False), ("session", False), ("messages dropped", True),
            ("tokens dropped", True), ("of them tool results", True), ("summary tokens", True),
            ("tokens before (recorded)", True), ("estimated after", True)]
    cells = [[f"<code>{_esc(r['id'])}</code>", _esc(r["kind"]), _session_link(r["session_id"], index_of),
              _int(r["messages"]), _int(r["tokens"]), _int(r["tool_tokens"]), _int(r["summary"]), _int(r["before"]),
              _int(r["est_after"])] for r in rows]
    vals = [[None, None, None, r["messages"], r["tokens"], r["tool_tokens"], r["summary"], r["before"], r["est_after"]]
            for r in rows]
    return ("<p class='sub'>Estimated tokens (pi's rule) of the messages each compaction removed from the context; "
            "largest first.</p>" + _table(head, cells, vals))


def _estimate_part(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p class='note'>No call records a prompt total.</p>"
    head = [("agent", False), ("model", False), ("calls", True), ("mean recorded prompt", True),
            ("mean error (estimate - recorded)", True), ("mean |error|", True), ("held-out calls", True),
            ("held out: pi's rule", True), ("held out: calibrated", True)]
    cells = [[_esc(r["agent"]), _esc(r["model"]), _int(r["calls"]), _int(r["recorded"]), _int(r["mean_error"]),
              _int(r["mae"]), _int(r["held"]), _int(r["mae_held"]), _int(r["mae_cal_held"])] for r in rows]
    vals = [[None, None, r["calls"], r["recorded"], r["mean_error"], r["mae"], r["held"], r["mae_held"],
             r["mae_cal_held"]] for r in rows]
    return ("<p class='sub'>pi's estimate misses the system prompt and tool definitions; the calibrated estimator "
            "(ratios fitted on 80% of the sessions) is measured on the other 20%.</p>" + _table(head, cells, vals))


def _cache_part(cache: dict[str, Any], notes: list[str]) -> str:
    rows = cache["causes"]
    if not rows:
        return "<p class='note'>No call wrote the cache again.</p>" + _notes(notes)
    head = [("cause", False), ("misses", True), ("tokens written again", True), ("cost over reading", True)]
    cells = [[_esc(r["cause"]), _int(r["misses"]), _int(r["tokens"]), _money(r["cost"])] for r in rows]
    vals = [[None, r["misses"], r["tokens"], r["cost"]] for r in rows]
    w = cache["whatif"]
    what = ""
    if w:
        what = (f"<p>With 1-hour cache writes: {_int(w['misses_saved'])} idle-gap misses would have been reads "
                f"(saving {_money(w['saved_usd'])}), every remaining write would cost {_money(w['extra_write_usd'])} "
                f"more: net {_money(w['net_saving_usd'])}.</p>")
    return _table(head, cells, vals) + what + _notes(notes)


def _tools_part(rows: list[dict[str, Any]], notes: list[str]) -> str:
    if not rows:
        return "<p class='note'>No tool results.</p>" + _notes(notes)
    head = [("tool", False), ("calls", True), ("failures", True), ("retries", True), ("result tokens", True),
            ("share of later prompts", True), ("cost of carrying", True), ("mean seconds", True),
            ("largest result", False)]
    cells = [[_esc(r["tool_name"]), _int(r["calls"]), _int(r["failures"]), _int(r["retries"]),
              _int(r["result_tokens"]), "" if r["context_share"] is None else f"{r['context_share']:.1%}",
              _money(r["cost_usd"]), "" if r["mean_seconds"] is None else f"{r['mean_seconds']:,.1f}",
              f"<code>{_esc(r['largest_result_id'])}</code> ({_int(r['largest_result_tokens'])})"] for r in rows]
    vals = [[None, r["calls"], r["failures"], r["retries"], r["result_tokens"], r["context_share"], r["cost_usd"],
             r["mean_seconds"], None] for r in rows]
    return _table(head, cells, vals) + _notes(notes)


def _subagent_part(rows: list[dict[str, Any]], index_of: dict[str, int], notes: list[str]) -> str:
    if not rows:
        return "<p class='note'>No subagent runs in these sessions.</p>"
    head = [("session", False), ("agent", False), ("runs", True), ("subagent calls", True),
            ("subagent cost", True), ("session cost", True), ("subagent share", True)]
    cells = [[_session_link(r["session_id"], index_of), _esc(r["agent"]), _int(r["runs"]), _int(r["subagent_calls"]),
              _money(r["subagent_cost_usd"]), _money(r["cost_usd"]),
              "" if r["subagent_share"] is None else f"{r['subagent_share']:.1%}"] for r in rows]
    vals = [[None, None, r["runs"], r["subagent_calls"], r["subagent_cost_usd"], r["cost_usd"], r["subagent_share"]]
            for r in rows]
    return _table(head, cells, vals) + _notes(notes)
