"""``sessionlab usage daily|weekly|monthly|session``: ccusage's reports over the sessions of every
agent sessionlab reads (pi, Claude Code, Codex and the others of :mod:`sessionlab.agents`).

The numbers come from :func:`sessionlab.analysis.usage_by` (``by="day"``, ``"week"``, ``"month"``,
``"session"``, each with its per-model breakdown); this module only shapes them: a ``rich`` table
for people (fitted to the terminal by ``cli._table``: model names stay whole, sessions show their
last day and project, and what does not fit is named under the table; whole with ``--wide`` or
when piped, without colours), ``--json`` in ccusage's field names (``inputTokens``,
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
import gc
import io
import json
import sys
from collections.abc import Sequence
from typing import Any

from .. import agents
from ..errors import check_option
from ._select import NO_SESSIONS, load_selected, no_sessions
from ._table import Col, day, print_table, short_model

__all__ = ["add_selection_options", "add_usage_parser", "render_table", "to_csv", "usage_report"]

_REPORTS = {"daily": ("day", "date"), "weekly": ("week", "week"), "monthly": ("month", "month"),
            "session": ("session", "sessionId")}
_LISTS = {"daily": "daily", "weekly": "weekly", "monthly": "monthly", "session": "sessions"}  # the JSON's row list
_FIELDS = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
           ("cacheCreationTokens", "cache_write_tokens"), ("cacheReadTokens", "cache_read_tokens"),
           ("reasoningOutputTokens", "reasoning_tokens"))


def _totals(r: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: int(r.get(c) or 0) for k, c in _FIELDS}
    out["totalTokens"] = out["inputTokens"] + out["outputTokens"] + out["cacheCreationTokens"] + out["cacheReadTokens"]
    out["totalCost"] = round(float(r["cost_usd"] or 0.0), 8)
    return out


def usage_report(report: str, paths: Sequence[str] | None = None, *, tz: str = "UTC", since: str | None = None,
                 until: str | None = None, agents: Sequence[str] | None = None,
                 week_start: str = "sunday", project: str | None = None) -> dict[str, Any]:
    """A ccusage-shaped report (``daily``, ``weekly``, ``monthly`` or ``session``) as a JSON-ready
    dict (weeks start on ``week_start``; ``project`` keeps the sessions whose folder matches).

    Rows carry ccusage's fields (``inputTokens``, ``outputTokens``, ``cacheCreationTokens``,
    ``cacheReadTokens``, ``totalTokens``, ``totalCost``, ``modelsUsed``, ``modelBreakdowns``), plus
    ``reasoningOutputTokens``, ``agents`` and, for sessions, ``lastActivity`` and ``cwd``;
    ``totals`` sums them. ``unpricedModels`` lists models without a price (their cost is left out);
    ``fallbackModelCalls`` counts the Codex calls of rollouts that name no model, priced as
    ``gpt-5`` (``cost_source = 'fallback'``, ccusage's ``isFallback``). ``project`` keeps the
    sessions whose folder (``cwd``) contains it, or matches it as a glob (``*/webapp``).
    """
    import pyarrow.compute as pc

    from .._arrow import scalar
    from ..analysis import usage_by

    check_option("report", report, sorted(_REPORTS))
    by, key = _REPORTS[report]
    corpus = load_selected(paths, project=project, agents=agents, spend_only=True)
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
    """Each session row's ``lastActivity`` (the time of its last spend: what a report without the
    cache reads, see ``reading_spend_only``) and ``cwd``."""
    import pyarrow.compute as pc

    from .._arrow import from_numpy
    from ..analysis.usage import spend_mask

    entries = entries.filter(from_numpy(spend_mask(entries)))
    cwd = {s["session_id"]: s.get("cwd") for s in sessions}
    root = pc.coalesce(entries["root_session_id"], entries["session_id"])
    for row in rows:
        ts = entries["timestamp"].filter(pc.equal(root, row["sessionId"]))
        last = pc.max(ts).as_py() if len(ts) else None
        row["lastActivity"] = last.isoformat().replace("+00:00", "Z") if last is not None else None
        row["cwd"] = cwd.get(row["sessionId"])


def _fmt_int(n: int) -> str:
    return f"{n:,}"


def _models(names: list[str], *, short: bool) -> str:
    seen = dict.fromkeys(short_model(m) if short else m for m in names)  # (each name once, in order)
    return "\n".join(seen)


def _columns(report: str, rows: list[dict], tot: dict[str, Any], tz: str) -> list[Col]:
    """The table's columns: the first and the token and cost columns always, the cache columns
    left out first when the terminal is narrow (Total tokens still counts them)."""
    _, key = _REPORTS[report]
    first = {"daily": "Date", "weekly": "Week", "monthly": "Month", "session": "Session"}[report]
    keys = [str(r[key]) for r in rows]
    cols = [Col(head=first, foot="Total", cells=keys,
                short=[k[:8] for k in keys] if report == "session" else None,
                short_note="Session ids shortened to their first 8 characters (--json and --csv have them whole).")]
    if report == "session":
        cells = [f"{day(r.get('lastActivity'), tz)}\n{r.get('cwd') or '-'}" for r in rows]
        cols.append(Col(head="Last active\nProject", cells=cells, cut=10))
    cols.append(Col(head="Models", cells=[_models(r["modelsUsed"], short=False) for r in rows],
                    short=[_models(r["modelsUsed"], short=True) for r in rows],
                    short_note="Model names without their date suffix (e.g. -20251101)."))
    for label, field, drop in (("Input", "inputTokens", 3), ("Output", "outputTokens", 4),
                               ("Cache create", "cacheCreationTokens", 1), ("Cache read", "cacheReadTokens", 2),
                               ("Total tokens", "totalTokens", None)):
        cols.append(Col(head=label, foot=_fmt_int(tot[field]), cells=[_fmt_int(r[field]) for r in rows], right=True,
                        drop=drop, counted=drop is not None))
    cols.append(Col(head="Cost (USD)", foot=f"${tot['totalCost']:,.2f}", right=True,
                    cells=[f"${r['totalCost']:,.2f}" for r in rows]))
    return cols


def render_table(report: str, data: dict[str, Any], *, file: Any = None, wide: bool = False,
                 tz: str = "UTC") -> None:
    """Print a report as a ``rich`` table: fitted to the terminal (model names without their date
    suffix, then the cache columns, Input and Output left out, each said under the table), or
    whole with ``wide`` or when ``file`` is not a terminal (without colours)."""
    from . import unreadable_line

    rows = data[_LISTS[report]]
    title = {"daily": "Token usage and cost by day", "weekly": "Token usage and cost by week",
             "monthly": "Token usage and cost by month",
             "session": "Token usage and cost by session"}[report]
    notes = []
    if data["unpricedModels"]:
        notes.append(f"No price for: {', '.join(data['unpricedModels'])} (their cost is not included)")
    if data.get("fallbackModelCalls"):
        notes.append(f"{data['fallbackModelCalls']:,} Codex calls name no model (older rollouts): priced as "
                     "gpt-5, those releases' default, as ccusage does")
    if data.get("unreadable"):
        notes.append(unreadable_line(data["unreadable"]))
    print_table(title, _columns(report, rows, data["totals"], tz), wide=wide, notes=tuple(notes), file=file)


def to_csv(report: str, data: dict[str, Any]) -> str:
    """The report's rows as CSV (one row per period or session, with ``lastActivity`` and ``cwd``
    for sessions; models joined with ``;``)."""
    _, key = _REPORTS[report]
    rows = data[_LISTS[report]]
    out = io.StringIO()
    fields = [key, *(["lastActivity", "cwd"] if report == "session" else []), "agents", "modelsUsed", "inputTokens",
              "outputTokens", "cacheCreationTokens", "cacheReadTokens", "reasoningOutputTokens", "totalTokens",
              "totalCost"]
    w = csv.writer(out, lineterminator="\n")
    w.writerow(fields)
    for r in rows:
        w.writerow([";".join(r[f]) if isinstance(r[f], list) else r[f] for f in fields])
    return out.getvalue()


def _cmd_usage(args: argparse.Namespace) -> int:
    # (an error, e.g. a missing path or a bad date or time zone, is one line and exit code 2: cli.main)
    if getattr(args, "ending", False):  # (the process ends after the report: the cyclic collector,
        gc.disable()  # which the load pauses, would walk its objects once more on resuming, to free none)
    if args.report == "blocks":
        from ._blocks import cmd_blocks

        return cmd_blocks(args)
    data = usage_report(args.report, args.paths or None, tz=args.tz, since=args.since, until=args.until,
                        agents=args.agent, week_start=args.start_of_week, project=args.project)
    rows = data[_LISTS[args.report]]
    if not rows:  # (an all-zero table would look like a measurement)
        print(no_sessions("usage", args.paths, project=args.project, agents=args.agent, since=args.since,
                          until=args.until, what="sessions with usage"), file=sys.stderr)
        if data.get("unreadable"):
            from . import unreadable_line

            print(unreadable_line(data["unreadable"]), file=sys.stderr)
        return NO_SESSIONS
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    elif args.csv:
        sys.stdout.write(to_csv(args.report, data))
    else:
        render_table(args.report, data, wide=args.wide, tz=args.tz)
    return 0


def add_selection_options(p: argparse.ArgumentParser) -> None:
    """``--project``, shared by ``usage``, ``summary`` and ``report``."""
    p.add_argument("--project", metavar="TEXT", help="only sessions whose folder (cwd) contains TEXT, or matches "
                   "it as a glob when it holds * ? or [ (e.g. '*/webapp')")


def add_usage_parser(sub: Any) -> None:
    """Add ``usage`` to the command line's subcommands."""
    from ..analysis import WEEK_DAYS
    from ._blocks import add_blocks_arguments

    up = sub.add_parser("usage", help="token usage and cost by day, week, month, session or billing block (as "
                                      "ccusage reports it)",
                        description="Token usage and cost of the agents' sessions (pi, Claude Code, Codex and the "
                                    "others --agent names) by day, week, month, session or 5-hour billing block. "
                                    "Without PATH, every default session folder that exists is read.")
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
    add_selection_options(up)
    fmt = up.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON with ccusage's field names")
    fmt.add_argument("--csv", action="store_true", help="CSV, one row per period or session (not for blocks)")
    fmt.add_argument("--wide", action="store_true", help="every column, whole, however wide the terminal")
    up.set_defaults(func=_cmd_usage)
