"""The report page: escaped HTML for the lists, a JSON data block, one hashed style and script.

The Content-Security-Policy allows only the page's own style and script (by SHA-256 hash) and
``data:`` images: no remote load of any kind, no inline event handler, no ``eval``. Session text
enters the HTML only through :func:`esc`; the JSON block is escaped so that no ``</script>`` (or
any ``<``) can end it early, and the script reads it with ``JSON.parse`` and shows text with
``textContent`` only. The session sections travel in that block as *cards* (their strings, numbers
formatted here) and are built by the script when wanted, so 1,000 sessions add no markup to parse.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import json
from importlib import resources
from typing import Any

from ._data import ReportData, SessionInfo, spend_label
from ._insights import insights_html

__all__ = ["render", "esc", "csp", "usage_series"]


def esc(value: Any) -> str:
    return "" if value is None else html.escape(str(value), quote=True)


def _static(name: str) -> str:
    return resources.files("sessionlab.report").joinpath("_static", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def csp(script: str, style: str) -> str:
    """The policy: nothing from anywhere, except this page's script and style (by hash) and data: images."""
    return (f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; img-src data:; "
            "base-uri 'none'; form-action 'none'")


def _json_block(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _money(v: float) -> str:
    if 0 < abs(v) < 0.005:
        return "&lt;$0.01"
    return f"${v:,.2f}"


def _num(v: int) -> str:
    return f"{v:,}"


def _sessions_table(sessions: list[SessionInfo]) -> str:
    head = ("<tr><th>session</th><th>day</th><th>project</th><th>agent</th><th class='num'>entries</th>"
            "<th class='num'>calls</th><th class='num'>tokens</th><th class='num'>cost</th><th class='num'>leaves</th>"
            "<th class='num'>compactions</th><th class='num'>issues</th></tr>")
    rows = []
    for s in sessions:  # one row per session
        rows.append(
            f"<tr data-i='{s.index}'><td><a href='#s-{s.index}'>{esc(s.title)}</a></td>"
            f"<td class='nowrap'>{esc(s.day)}</td><td title='{esc(s.cwd)}'>{esc(s.folder)}</td><td>{esc(s.agent)}</td>"
            f"<td class='num' data-v='{s.entries}'>{_num(s.entries)}</td>"
            f"<td class='num' data-v='{s.calls}'>{_num(s.calls)}</td>"
            f"<td class='num' data-v='{s.tokens}'>{_num(s.tokens)}</td>"
            f"<td class='num' data-v='{s.cost_usd:.6f}'>{_money(s.cost_usd)}</td>"
            f"<td class='num' data-v='{s.leaves}'>{_num(s.leaves)}</td>"
            f"<td class='num' data-v='{s.compactions}'>{_num(s.compactions)}</td>"
            f"<td class='num' data-v='{s.issues}'>"
            + (f"<a href='#issues-{s.index}'>{_num(s.issues)}</a>" if s.issues else "0") + "</td></tr>")
    return (f"<table class='data sortable' id='sessions-table'><thead>{head}</thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _options(values: list[str | None], every: str) -> str:
    """``<option>`` elements of a filter: ``every`` (value '') then each distinct value with its count."""
    counts: dict[str, int] = {}
    for v in values:
        if v:
            counts[v] = counts.get(v, 0) + 1
    opts = [f"<option value=''>{esc(every)}</option>"]
    opts += [f"<option value='{esc(v)}'>{esc(v)} ({n:,})</option>" for v, n in sorted(counts.items())]
    return "".join(opts)


def _filters(sessions: list[SessionInfo]) -> str:
    """Search box and project, agent and date filters over the sessions table (the page's script applies them)."""
    days = sorted(s.day for s in sessions if s.day)
    lo, hi = (days[0], days[-1]) if days else ("", "")
    return (
        "<div class='filters' id='filters'>"
        "<input type='search' id='f-search' placeholder='search id, name or project' "
        "aria-label='search sessions by id, name or project'>"
        f"<select id='f-project' aria-label='project'>{_options([s.cwd for s in sessions], 'all projects')}</select>"
        f"<select id='f-agent' aria-label='agent'>{_options([s.agent for s in sessions], 'all agents')}</select>"
        f"<label>from <input type='date' id='f-from' min='{esc(lo)}' max='{esc(hi)}'></label>"
        f"<label>to <input type='date' id='f-to' min='{esc(lo)}' max='{esc(hi)}'></label>"
        "<button type='button' id='f-clear'>clear</button>"
        f"<span id='f-count' class='sub'>{len(sessions):,} of {len(sessions):,} sessions</span></div>")


def _usage_table(data: ReportData) -> str:
    u = data.usage
    if u.num_rows == 0:
        return "<p class='note'>No assistant calls: no usage to show.</p>"
    d = u.to_pydict()
    rows = []
    for i in range(u.num_rows):  # one row per day, model and what the spend paid for
        tok = sum(d[k][i] or 0 for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
        what = spend_label(d["usage_kind"][i])
        if what == "calls":
            model, calls = esc(d["model"][i] or "(none)"), _num(d["calls"][i])
            spent = "calls"
        else:  # spend outside calls: no call to count, and the model only when the entry names one
            model, calls = esc(d["model"][i] or "(not recorded)"), "–"
            spent = f"<span class='outside'>{esc(what)} (outside calls)</span>"
        rows.append(f"<tr><td class='nowrap'>{esc(d['day'][i])}</td><td>{model}</td><td>{spent}</td>"
                    f"<td class='num'>{calls}</td><td class='num'>{_num(tok)}</td>"
                    f"<td class='num'>{_money(d['cost_usd'][i] or 0.0)}</td></tr>")
    return ("<div class='scroll'><table class='data' id='usage-table'><thead><tr><th>day</th><th>model</th>"
            "<th>spent on</th><th class='num'>calls</th><th class='num'>tokens</th><th class='num'>cost</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>")


def usage_series(model: str | None, kind: str | None) -> str:
    """The usage chart's series of a row: its model for calls; what the spend paid for otherwise."""
    what = spend_label(kind)
    if what == "calls":
        return model or "(none)"
    return f"{what} ({model})" if model else what


def _session_card(s: SessionInfo, mine: list[dict[str, Any]]) -> dict[str, Any]:
    """What a session's section shows, as plain strings (numbers formatted here, once): the page's script
    builds the section from it when it is opened or scrolled to, setting every string as text."""
    models = ", ".join(s.models) or "none"
    prompt = s.prompt if s.prompt is None or len(s.prompt) <= 400 else s.prompt[:399] + "…"
    facts = [s.day or "", ["project ", s.cwd or ""], s.agent or "", f"{_num(s.entries)} entries",
             f"{_num(s.calls)} calls", html.unescape(_money(s.cost_usd)),
             f"{_num(s.leaves)} {'leaf' if s.leaves == 1 else 'leaves'} · {_num(s.forks)} fork "
             f"point{'' if s.forks == 1 else 's'}", f"{_num(s.compactions)} compactions"]
    small = [["id ", s.session_id], f"{s.first or ''} – {s.last or ''}", f"models {models}", ["file ", s.file]]
    card: dict[str, Any] = {"h": s.name or s.title, "prompt": prompt, "facts": facts, "small": small}
    if mine:
        card["issues"] = [f"{len(mine):,} data-quality issue{'s' if len(mine) != 1 else ''}",
                          [f"line {i['line']}: {i['kind']}: {i['message']}" for i in mine[:20]]
                          + ([f"… {len(mine) - 20:,} more in the issues list"] if len(mine) > 20 else [])]
    return card


def _cards(sessions: list[SessionInfo], issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    mine: dict[int, list[dict[str, Any]]] = {}
    for i in issues:  # each session's issues, in file order
        if i["session"] is not None:
            mine.setdefault(i["session"], []).append(i)
    return [_session_card(s, mine.get(s.index, [])) for s in sessions]


def _issues_section(issues: list[dict[str, Any]], sessions: list[SessionInfo]) -> str:
    if not issues:
        return "<p class='note'>No data-quality issues: every line of every file was read.</p>"
    rows = []
    for i in issues:  # one row per issue
        where = (f"<a href='#s-{i['session']}'>{esc(sessions[i['session']].title)}</a>" if i["session"] is not None
                 else "(file not loaded)")
        rows.append(f"<tr><td>{where}</td><td><code>{esc(i['file'])}</code></td><td class='num'>{i['line']}</td>"
                    f"<td>{esc(i['kind'])}</td><td>{esc(i['message'])}</td><td><code>{esc(i['excerpt'])}</code></td></tr>")
    return ("<div class='scroll'><table class='data'><thead><tr><th>session</th><th>file</th><th class='num'>line</th>"
            "<th>kind</th><th>message</th><th>excerpt</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


_DETAILS_PAGE = 20  # session sections drawn at a time (report.js reads data-page)


def render(data: ReportData, *, title: str = "sessionlab report") -> str:
    """The whole page as one string."""
    script, style = _static("report.js"), _static("report.css")
    sessions = data.sessions
    total_cost = sum(s.cost_usd for s in sessions)
    total_calls = sum(s.calls for s in sessions)
    payload = {
        "tz": data.tz,
        "kinds": data.kinds,
        "usage": [[str(d), usage_series(m, k), c] for d, m, k, c in zip(
            *(data.usage[c].to_pylist() for c in ("day", "model", "usage_kind", "cost_usd")))]
        if data.usage.num_rows else [],
        "find": [[s.session_id, s.name or "", s.title, s.cwd or "", s.agent or "", s.day or ""] for s in sessions],
        "sessions": [s.detail for s in sessions],
        "cards": _cards(sessions, data.issues),
    }
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(csp(script, style))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{esc(title)}</title>
<style>{style}</style></head>
<body>
<header><h1>{esc(title)}</h1>
<div class="facts"><span>{len(sessions):,} sessions</span><span>{total_calls:,} calls</span>
<span>{_money(total_cost)}</span><span>{len(data.issues):,} data-quality issues</span>
<span>days in {esc(data.tz)}</span><span>made {now} from <code>{esc(data.source)}</code></span></div>
<nav><a href="#usage">usage</a><a href="#sessions">sessions</a><a href="#details">session details</a>
<a href="#insights">insights</a><a href="#issues">data quality</a></nav>
<noscript><p class="note">The charts, filters and session details need JavaScript (this page's own script;
nothing is loaded).</p></noscript>
</header>
<main>
<section id="usage"><h2>Usage by day and model</h2><p class="sub">Cost per day (days without usage keep their
place); hover a day for its costs. Spend outside calls (titles, summaries, usage entries) is named as such.</p>
<div id="usage-chart"></div>{_usage_table(data)}</section>
<section id="sessions"><h2>Sessions</h2><p class="sub">Search and filter; click a column header to sort; a name
opens the session.</p>{_filters(sessions)}
<div class="scroll tall">{_sessions_table(sessions)}</div></section>
<section id="details" data-page="{_DETAILS_PAGE}"><h2>Session details</h2>
<p class="sub">The sessions of the table, in its order and filter, {_DETAILS_PAGE} at a time (more as you scroll).</p>
<div id="details-list"></div>
<button type="button" id="details-more" hidden>show more</button></section>
<section id="insights"><h2>Insights</h2>{insights_html(data.insights, {s.session_id: s.index for s in sessions})}
</section>
<section id="issues"><h2>Data quality</h2>{_issues_section(data.issues, sessions)}</section>
</main>
<script type="application/json" id="sessionlab-data">{_json_block(payload)}</script>
<script>{script}</script>
</body></html>
"""
