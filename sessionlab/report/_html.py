"""The report page: escaped HTML for the lists, a JSON data block, one hashed style and script.

The Content-Security-Policy allows only the page's own style and script (by SHA-256 hash) and
``data:`` images: no remote load of any kind, no inline event handler, no ``eval``. Session text
enters the HTML only through :func:`esc`; the JSON block is escaped so that no ``</script>`` (or
any ``<``) can end it early, and the script reads it with ``JSON.parse`` and shows text with
``textContent`` only.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import json
from importlib import resources
from typing import Any

from ._data import ReportData, SessionInfo
from ._insights import insights_html

__all__ = ["render", "esc", "csp"]


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
    head = ("<tr><th>session</th><th>day</th><th>folder</th><th class='num'>entries</th><th class='num'>calls</th>"
            "<th class='num'>tokens</th><th class='num'>cost</th><th class='num'>leaves</th>"
            "<th class='num'>compactions</th><th class='num'>issues</th></tr>")
    rows = []
    for s in sessions:  # one row per session
        rows.append(
            f"<tr><td><a href='#s-{s.index}'>{esc(s.title)}</a></td><td class='nowrap'>{esc(s.day)}</td>"
            f"<td>{esc(s.folder)}</td>"
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


def _usage_table(data: ReportData) -> str:
    u = data.usage
    if u.num_rows == 0:
        return "<p class='note'>No assistant calls: no usage to show.</p>"
    d = u.to_pydict()
    rows = []
    for i in range(u.num_rows):  # one row per day and model
        tok = sum(d[k][i] or 0 for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
        rows.append(f"<tr><td class='nowrap'>{esc(d['day'][i])}</td><td>{esc(d['model'][i] or '(none)')}</td>"
                    f"<td class='num'>{_num(d['calls'][i])}</td><td class='num'>{_num(tok)}</td>"
                    f"<td class='num'>{_money(d['cost_usd'][i] or 0.0)}</td></tr>")
    return ("<div class='scroll'><table class='data'><thead><tr><th>day</th><th>model</th><th class='num'>calls</th>"
            "<th class='num'>tokens</th><th class='num'>cost</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _session_section(s: SessionInfo, issues: list[dict[str, Any]]) -> str:
    models = ", ".join(s.models) or "none"
    prompt = s.prompt if s.prompt is None or len(s.prompt) <= 400 else s.prompt[:399] + "…"
    name = f"<div class='sub'>first prompt: {esc(prompt)}</div>" if prompt else ""
    mine = [i for i in issues if i["session"] == s.index]
    issue_html = ""
    if mine:
        items = "".join(f"<li>line {i['line']}: {esc(i['kind'])}: {esc(i['message'])}</li>" for i in mine[:20])
        more = f"<li>… {len(mine) - 20:,} more in the issues list</li>" if len(mine) > 20 else ""
        issue_html = (f"<div class='issues' id='issues-{s.index}'><b>{len(mine):,} data-quality "
                      f"issue{'s' if len(mine) != 1 else ''}</b> (<a href='#issues'>all issues</a>)"
                      f"<ul>{items}{more}</ul></div>")
    return (
        f"<section class='session' id='s-{s.index}' data-i='{s.index}'>"
        f"<h3>{esc(s.name or s.title)}</h3>{name}"
        f"<div class='facts'><span>{esc(s.day)}</span><span>folder {esc(s.folder)}</span>"
        f"<span>{_num(s.entries)} entries</span><span>{_num(s.calls)} calls</span><span>{_money(s.cost_usd)}</span>"
        f"<span>{_num(s.leaves)} {'leaf' if s.leaves == 1 else 'leaves'} · {_num(s.forks)} fork "
        f"point{'' if s.forks == 1 else 's'}</span>"
        f"<span>{_num(s.compactions)} compactions</span></div>"
        f"<div class='facts small'><span>id <code>{esc(s.session_id)}</code></span><span>{esc(s.first)} – "
        f"{esc(s.last)}</span><span>models {esc(models)}</span><span>file <code>{esc(s.file)}</code></span></div>"
        f"{issue_html}"
        "<div class='charts'><figure><figcaption>Context per call on the current branch (tokens)</figcaption>"
        "<div class='timeline'></div></figure>"
        "<figure><figcaption>Tree (current branch highlighted)</figcaption><div class='tree'></div></figure></div>"
        "<p><a href='#sessions'>back to the sessions</a></p></section>")


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


def render(data: ReportData, *, title: str = "sessionlab report") -> str:
    """The whole page as one string."""
    script, style = _static("report.js"), _static("report.css")
    sessions = data.sessions
    total_cost = sum(s.cost_usd for s in sessions)
    total_calls = sum(s.calls for s in sessions)
    payload = {
        "tz": data.tz,
        "kinds": data.kinds,
        "usage": [[str(d), m or "(none)", c] for d, m, c in zip(
            data.usage["day"].to_pylist(), data.usage["model"].to_pylist(), data.usage["cost_usd"].to_pylist())]
        if data.usage.num_rows else [],
        "sessions": [s.detail for s in sessions],
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
<noscript><p class="note">The charts need JavaScript (this page's own script; nothing is loaded).</p></noscript>
</header>
<main>
<section id="usage"><h2>Usage by day and model</h2><div id="usage-chart"></div>{_usage_table(data)}</section>
<section id="sessions"><h2>Sessions</h2><p class="sub">Click a column header to sort; a name opens the session.</p>
<div class="scroll tall">{_sessions_table(sessions)}</div></section>
<section id="details"><h2>Session details</h2>
{''.join(_session_section(s, data.issues) for s in sessions)}</section>
<section id="insights"><h2>Insights</h2>{insights_html(data.insights, {s.session_id: s.index for s in sessions})}
</section>
<section id="issues"><h2>Data quality</h2>{_issues_section(data.issues, sessions)}</section>
</main>
<script type="application/json" id="sessionlab-data">{_json_block(payload)}</script>
<script>{script}</script>
</body></html>
"""
