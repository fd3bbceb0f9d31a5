"""``sessionlab usage daily|weekly|monthly|session``: ccusage's reports over pi, Claude Code and Codex
files.

The numbers come from :func:`sessionlab.analysis.usage_by` (``by="day"``, ``"week"``, ``"month"``,
``"session"``, each with its per-model breakdown); this module only shapes them: a ``rich`` table
for people (it fits the terminal width, shortens long cells, and has no colours or box lines when
the output is not a terminal), ``--json`` in ccusage's field names (``inputTokens``,
``cacheCreationTokens``, ``totalCost``, ``modelBreakdowns``...) and ``--csv`` for machines.
``usage blocks`` (billing blocks) is :mod:`._blocks`.

Example:
    >>> from sessionlab.cli import main
    >>> main(["usage", "daily", "data/", "--json"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from typing import Any

from .. import agents
from ..errors import check_option

__all__ = ["add_usage_parser", "usage_report"]

_REPORTS = {"daily": ("day", "date"), "weekly": ("week", "week"), "monthly": ("month", "month"),
            "session": ("session", "sessionId")}
_LISTS = {"daily": "daily", "weekly": "weekly", "monthly": "monthly", "session": "sessions"}  # the JSON's row list
_FIELDS = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
           ("cacheCreationTokens", "cache_write_tokens"), ("cacheReadTokens", "cache_read_tokens"),
           ("reasoningOutputTokens", "reasoning_tokens"))


def _load(paths: Sequence[str] | None, agents: Sequence[str] | None):
    from ..tables import load

    return load(list(paths) if paths else None, on_bad_lines="skip", progress=False, agents=agents)


def _totals(r: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: int(r.get(c) or 0) for k, c in _FIELDS}
    out["totalTokens"] = out["inputTokens"] + out["outputTokens"] + out["cacheCreationTokens"] + out["cacheReadTokens"]
    out["totalCost"] = round(float(r["cost_usd"] or 0.0), 8)
    return out


def usage_report(report: str, paths: Sequence[str] | None = None, *, tz: str = "UTC", since: str | None = None,
                 until: str | None = None, agents: Sequence[str] | None = None,
                 week_start: str = "sunday") -> dict[str, Any]:
    """A ccusage-shaped report (``daily``, ``weekly``, ``monthly`` or ``session``) as a JSON-ready
    dict (weeks start on ``week_start``).

    Rows carry ccusage's fields (``inputTokens``, ``outputTokens``, ``cacheCreationTokens``,
    ``cacheReadTokens``, ``totalTokens``, ``totalCost``, ``modelsUsed``, ``modelBreakdowns``), plus
    ``reasoningOutputTokens``, ``agents`` and, for sessions, ``lastActivity`` and ``cwd``;
    ``totals`` sums them. ``unpricedModels`` lists models without a price (their cost is left out);
    ``fallbackModelCalls`` counts the Codex calls of rollouts that name no model, priced as
    ``gpt-5`` (``cost_source = 'fallback'``, ccusage's ``isFallback``).
    """
    import pyarrow.compute as pc

    from .._arrow import scalar
    from ..analysis import usage_by

    check_option("report", report, sorted(_REPORTS))
    by, key = _REPORTS[report]
    corpus = _load(paths, agents)
    entries = corpus.entries
    opts: dict[str, Any] = dict(tz=tz, since=since, until=until, week_start=week_start)
    main = usage_by(entries, by=by, **opts).to_pylist()
    models = usage_by(entries, by=[by, "model"], **opts).to_pylist()
    agent_rows = usage_by(entries, by=[by, "agent"], **opts).to_pylist()
    rows = []
    for r in main:
        k = r[by]
        row: dict[str, Any] = {key: k.isoformat() if hasattr(k, "isoformat") else k}
        row.update(_totals(r))
        ms = [m for m in models if m[by] == k]
        row["modelsUsed"] = [m["model"] for m in ms if m["model"]]
        row["modelBreakdowns"] = [{"modelName": m["model"], **_totals(m)} for m in ms]
        row["agents"] = sorted({a["agent"] for a in agent_rows if a[by] == k and a["agent"]})
        rows.append(row)
    if report == "session":
        _session_facts(rows, entries, corpus.sessions.to_pylist(), tz)
        rows.sort(key=lambda r: r.get("lastActivity") or "")
    totals = {k: sum(r[k] for r in rows) for k in ("inputTokens", "outputTokens", "cacheCreationTokens",
                                                   "cacheReadTokens", "reasoningOutputTokens", "totalTokens")}
    totals["totalCost"] = round(sum(r["totalCost"] for r in rows), 8)
    issues = corpus.issues.filter(pc.equal(corpus.issues["kind"], scalar("unknown_model")))
    unpriced = sorted({m.split("'")[1] for m in issues["message"].to_pylist()})
    name = _LISTS[report]
    fallback = int(pc.sum(pc.equal(entries["cost_source"], scalar("fallback"))).as_py() or 0)
    from . import unreadable

    missed = unreadable(corpus)  # (only when there are: the JSON otherwise keeps ccusage's fields alone)
    return {name: rows, "totals": totals, "unpricedModels": unpriced, "fallbackModelCalls": fallback,
            **({"unreadable": missed} if missed else {})}


def _session_facts(rows: list[dict], entries, sessions: list[dict], tz: str) -> None:
    import pyarrow.compute as pc

    cwd = {s["session_id"]: s.get("cwd") for s in sessions}
    root = pc.coalesce(entries["root_session_id"], entries["session_id"])
    for row in rows:
        ts = entries["timestamp"].filter(pc.equal(root, row["sessionId"]))
        last = pc.max(ts).as_py() if len(ts) else None
        row["lastActivity"] = last.isoformat().replace("+00:00", "Z") if last is not None else None
        row["cwd"] = cwd.get(row["sessionId"])


def _fmt_int(n: int) -> str:
    return f"{n:,}"


def _columns(report: str, rows: list[dict], tot: dict[str, Any]) -> list[tuple]:
    """(header, footer, cells, options, drop order) per column; columns with a drop order are left
    out, lowest first, when the table would not fit the terminal."""
    _, key = _REPORTS[report]
    first = {"daily": "Date", "weekly": "Week", "monthly": "Month", "session": "Session"}[report]
    cols: list[tuple] = [(first, "Total", [str(r[key]) for r in rows],
                          dict(overflow="ellipsis", min_width=7 if report == "monthly" else 10,
                               max_width=24 if report == "session" else None), None)]
    if report == "session":
        cols.append(("Last activity", "", [(r.get("lastActivity") or "")[:10] for r in rows],
                     dict(no_wrap=True, min_width=10), 2))
    cols.append(("Models", "", ["\n".join(r["modelsUsed"]) for r in rows],
                 dict(overflow="ellipsis", min_width=8), 4))
    for label, field, drop in (("Input", "inputTokens", None), ("Output", "outputTokens", None),
                               ("Cache create", "cacheCreationTokens", 1), ("Cache read", "cacheReadTokens", 3),
                               ("Total tokens", "totalTokens", None)):
        foot = _fmt_int(tot[field])
        cols.append((label, foot, [_fmt_int(r[field]) for r in rows],
                     dict(justify="right", no_wrap=True, min_width=len(foot)), drop))
    foot = f"${tot['totalCost']:,.2f}"
    cols.append(("Cost (USD)", foot, [f"${r['totalCost']:,.2f}" for r in rows],
                 dict(justify="right", no_wrap=True, min_width=len(foot)), None))
    return cols


def render_table(report: str, data: dict[str, Any], *, file: Any = None) -> None:
    """Print a report as a ``rich`` table: fitted to the terminal (the least needed columns left out
    when it is narrow), or whole and without colours when ``file`` is not a terminal."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file or sys.stdout, highlight=False)
    plain = not console.is_terminal
    if plain:  # nothing to fit: print every cell whole, without colours
        console = Console(file=file or sys.stdout, highlight=False, width=400, no_color=True)
    rows = data[_LISTS[report]]
    title = {"daily": "Token usage and cost by day", "weekly": "Token usage and cost by week",
             "monthly": "Token usage and cost by month",
             "session": "Token usage and cost by session"}[report]
    cols = _columns(report, rows, data["totals"])

    def build(cols: list[tuple]) -> Table:
        t = Table(title=title, box=box.SIMPLE if plain else box.ROUNDED, show_footer=True,
                  header_style="" if plain else "bold cyan", title_style="" if plain else "bold")
        for head, foot, _, opts, _ in cols:
            t.add_column(head, footer=foot, **opts)
        for i in range(len(rows)):
            t.add_row(*[c[2][i] for c in cols])
        return t

    def needed(cols: list[tuple]) -> int:  # the narrowest the table can be: shortened cells at their minimum
        width = 1
        for head, foot, cells, opts, _ in cols:
            full = max([len(head), len(foot)] + [len(x) for c in cells for x in c.split("\n")])
            width += (opts["min_width"] if opts.get("overflow") == "ellipsis" else full) + 3
        return width

    drops = sorted((c[4], c[0]) for c in cols if c[4] is not None)
    while drops and not plain and needed(cols) > console.width:
        gone = drops.pop(0)[1]
        cols = [c for c in cols if c[0] != gone]
    console.print(build(cols))
    if data["unpricedModels"]:
        console.print(f"No price for: {', '.join(data['unpricedModels'])} (their cost is not included)")
    if data.get("fallbackModelCalls"):
        console.print(f"{data['fallbackModelCalls']:,} Codex calls name no model (older rollouts): priced as "
                      "gpt-5, those releases' default, as ccusage does")
    if data.get("unreadable"):
        from . import unreadable_line

        console.print(unreadable_line(data["unreadable"]))


def to_csv(report: str, data: dict[str, Any]) -> str:
    """The report's rows as CSV (one row per period or session; models joined with ``;``)."""
    _, key = _REPORTS[report]
    rows = data[_LISTS[report]]
    out = io.StringIO()
    fields = [key, "agents", "modelsUsed", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens",
              "reasoningOutputTokens", "totalTokens", "totalCost"]
    w = csv.writer(out, lineterminator="\n")
    w.writerow(fields)
    for r in rows:
        w.writerow([";".join(r[f]) if isinstance(r[f], list) else r[f] for f in fields])
    return out.getvalue()


def _cmd_usage(args: argparse.Namespace) -> int:
    # (an error, e.g. a missing path or a bad date or time zone, is one line and exit code 2: cli.main)
    if args.report == "blocks":
        from ._blocks import cmd_blocks

        return cmd_blocks(args)
    data = usage_report(args.report, args.paths or None, tz=args.tz, since=args.since, until=args.until,
                        agents=args.agent, week_start=args.start_of_week)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    elif args.csv:
        sys.stdout.write(to_csv(args.report, data))
    else:
        render_table(args.report, data)
    return 0


def add_usage_parser(sub: Any) -> None:
    """Add ``usage`` to the command line's subcommands."""
    from ..analysis import WEEK_DAYS
    from ._blocks import add_blocks_arguments

    up = sub.add_parser("usage", help="token usage and cost by day, week, month, session or billing block (as "
                                      "ccusage reports it)",
                        description="Token usage and cost of pi, Claude Code and Codex sessions by day, week, month, "
                                    "session or 5-hour billing block. Without PATH, every default session folder "
                                    "that exists is read.")
    up.add_argument("report", choices=(*_REPORTS, "blocks"), help="daily, weekly, monthly, session or blocks")
    up.add_argument("paths", nargs="*", metavar="PATH", help="session files or folders (default: the agents' folders)")
    up.add_argument("--since", help="first date to include (YYYY-MM-DD or YYYYMMDD, in --tz)")
    up.add_argument("--until", help="last date to include (YYYY-MM-DD or YYYYMMDD, in --tz)")
    up.add_argument("--tz", default="UTC", help="time zone of the days (default: UTC)")
    up.add_argument("--agent", action="append", choices=agents.names(),
                    help="only this agent's files (repeatable)")
    up.add_argument("--start-of-week", choices=WEEK_DAYS, default="sunday",
                    help="the day weeks start on, for weekly (default: sunday)")
    add_blocks_arguments(up)
    fmt = up.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON with ccusage's field names")
    fmt.add_argument("--csv", action="store_true", help="CSV, one row per period or session (not for blocks)")
    up.set_defaults(func=_cmd_usage)
