"""``sessionlab summary``: one row per session file, fitted to the terminal.

The rows are :func:`sessionlab.cli.summarize_corpus`'s (the sessions table's numbers) and the usage
views :func:`sessionlab.cli.usage_views`' (``usage_by``); this module only lays them out. The table
shows the session, its last day and folder, agent, name, calls, tree shape, tokens, cost and
issues, leaving out (and naming under the table) what does not fit; ``--wide`` adds the file path,
the format version and the message counts by role; ``--json`` and ``--csv`` carry every field.

Example:
    >>> from sessionlab.cli import main
    >>> main(["summary", "data/", "--csv"])  # doctest: +SKIP
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

from ._select import NO_SESSIONS, load_selected, no_sessions
from ._table import Col, day, print_table

__all__ = ["cmd_summary", "summary_columns", "summary_csv"]


_TOKEN_PARTS = ("input", "output", "cache_read", "cache_write")


def _n(x: int) -> str:
    return f"{x:,}"


def summary_columns(rows: Sequence[dict[str, Any]], total: dict[str, Any], *, tz: str = "UTC") -> list[Col]:
    """The summary table's columns (see the module docstring); the footer is ``total``."""
    from . import ROLES

    ids = [r["session_id"] or "-" for r in rows]
    cols = [Col(head="Session", foot="Total", cells=ids, short=[i[:8] for i in ids],
                short_note="Session ids shortened to their first 8 characters (--json and --csv have them whole)."),
            Col(head="Last used", cells=[day(r["last_timestamp"], tz) for r in rows]),
            Col(head="Project", cells=[r["cwd"] or "-" for r in rows], cut=12),
            Col(head="Agent", cells=[r["agent"] or "-" for r in rows], drop=11),
            Col(head="Name", cells=[r["name"] or "-" for r in rows], cut=12, keep_end=False, drop=10),
            Col(head="File", cells=[r["file"] for r in rows], wide=True),
            Col(head="Ver", cells=[str(r["version"] or "-") for r in rows], right=True, wide=True),
            Col(head="Calls", foot=_n(total["calls"]), cells=[_n(r["calls"]) for r in rows], right=True, drop=9),
            Col(head="Entries", foot=_n(total["entries"]), cells=[_n(r["entries"]) for r in rows], right=True, drop=7)]
    others = [sum(n for k, n in r["messages"].items() if k not in ROLES) for r in rows]
    for role in ROLES:
        cols.append(Col(head=role, foot=_n(total["messages"].get(role, 0)), right=True, wide=True,
                        cells=[_n(r["messages"].get(role, 0)) for r in rows]))
    cols += [Col(head="other", foot=_n(sum(others)), cells=list(map(_n, others)), right=True, wide=True),
             Col(head="custom_message", foot=_n(total["custom_messages"]), right=True, wide=True,
                 cells=[_n(r["custom_messages"]) for r in rows])]
    for head, key, drop in (("Leaves", "leaves", 6), ("Forks", "fork_points", 5), ("Compactions", "compactions", 8),
                            ("Input", "input", 3), ("Output", "output", 4), ("Cache read", "cache_read", 2),
                            ("Cache write", "cache_write", 1), ("Total tokens", "total_tokens", None)):
        cols.append(Col(head=head, foot=_n(total[key]), cells=[_n(r[key]) for r in rows], right=True, drop=drop,
                        counted=key in _TOKEN_PARTS))
    cols += [Col(head="Cost (USD)", foot=f"{total['cost']:,.4f}", cells=[f"{r['cost']:,.4f}" for r in rows],
                 right=True),
             Col(head="Issues", foot=_n(total["issues"]), cells=[_n(r["issues"]) for r in rows], right=True)]
    return cols


def usage_columns(key: str, rows: Sequence[dict[str, Any]]) -> list[Col]:
    """A ``usage_by`` view's columns (model names and days whole; cache columns left out first)."""
    cols = [Col(head=key, cells=[str(r[key]) if r[key] is not None else "-" for r in rows]),
            Col(head="calls", cells=[_n(r["calls"]) for r in rows], right=True)]
    for head, c, drop in (("input", "input_tokens", 3), ("output", "output_tokens", 4),
                          ("cache_read", "cache_read_tokens", 2), ("cache_write", "cache_write_tokens", 1),
                          ("total", "total_tokens", None)):
        cols.append(Col(head=head, cells=[_n(r[c]) for r in rows], right=True, drop=drop,
                        counted=drop is not None))
    cols.append(Col(head="cost_usd", cells=[f"{r['cost_usd']:.4f}" for r in rows], right=True))
    return cols


def summary_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Every field of the summary rows as CSV, one row per session file (messages by role as
    ``messages_<role>`` columns, roles outside the usual ones summed in ``messages_other``)."""
    from . import ROLES

    fields = ["session_id", "agent", "name", "cwd", "file", "version", "first_timestamp", "last_timestamp",
              "entries", "calls", *(f"messages_{r}" for r in ROLES), "messages_other", "custom_messages", "leaves",
              "fork_points", "compactions", "input", "output", "cache_read", "cache_write", "total_tokens", "cost",
              "issues"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(fields)
    for r in rows:
        msgs = r["messages"]
        flat = {**r, **{f"messages_{k}": msgs.get(k, 0) for k in ROLES},
                "messages_other": sum(n for k, n in msgs.items() if k not in ROLES)}
        w.writerow(["" if flat[f] is None else flat[f] for f in fields])
    return out.getvalue()


def _issues_line(rows: Sequence[dict[str, Any]]) -> str:
    """The line under the table naming the files with damaged lines ("" when there are none)."""
    bad = [r for r in rows if r["issues"]]
    if not bad:
        return ""
    first = bad[0]
    return (f"{len(bad):,} file{'s' if len(bad) != 1 else ''} with line issues (first: {first['file']}: "
            f"{first['issues']:,}); the issues table and the report list each")


def cmd_summary(args: argparse.Namespace) -> int:
    """Run ``sessionlab summary``."""
    from . import summarize_corpus, total_row, unreadable, unreadable_line, usage_views

    corpus = load_selected(args.paths, project=args.project)
    rows = summarize_corpus(corpus)
    missed = unreadable(corpus)
    if not rows:
        print(no_sessions("summary", args.paths, project=args.project, what="session files"), file=sys.stderr)
        if missed:
            print(unreadable_line(missed), file=sys.stderr)
        return NO_SESSIONS
    fmt = "json" if args.json else "csv" if args.csv else args.format
    views = usage_views(corpus, tz=args.tz) if args.usage and fmt != "csv" else {}
    if fmt == "json":
        print(json.dumps({"sessions": rows, "total": total_row(rows), "usage": views,
                          **({"unreadable": missed} if missed else {})}, indent=2, ensure_ascii=False))
        return 0
    if fmt == "csv":
        sys.stdout.write(summary_csv(rows))
        return 0
    total = total_row(rows)
    notes = tuple(x for x in (_issues_line(rows), unreadable_line(missed) if missed else "") if x)
    title = f"{len(rows):,} session file{'s' if len(rows) != 1 else ''}"
    print_table(title, summary_columns(rows, total, tz=args.tz), wide=args.wide, notes=notes)
    if views:
        print()
        print_table("Usage by model (all branches)", usage_columns("model", views["model"]), wide=args.wide)
        print()
        print_table(f"Usage by day ({args.tz})", usage_columns("day", views["day"]), wide=args.wide)
    return 0


def add_summary_parser(sub: Any) -> None:
    """Add ``summary`` to the command line's subcommands."""
    from ..errors import OptionError
    from ._usage import add_selection_options

    sp = sub.add_parser("summary", help="one line per session file: calls, tree shape, tokens, cost",
                        description="Summarize session files; folders are searched recursively for *.jsonl. "
                                    "Without PATH, every default session folder that exists is read.")
    sp.add_argument("paths", nargs="*", metavar="PATH",
                    help="a session file or a folder (default: the agents' folders)")
    sp.add_argument("--format", choices=("table", "json", "csv"), default="table",
                    help="output format (default: table)")
    sp.add_argument("--tz", default="UTC", help="time zone of the days (default: UTC)")
    sp.add_argument("--no-usage", dest="usage", action="store_false", help="leave out the usage views")
    add_selection_options(sp)
    fmt = sp.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="every field as JSON (as --format json)")
    fmt.add_argument("--csv", action="store_true", help="every field as CSV, one row per session file")
    fmt.add_argument("--wide", action="store_true", help="every column (file path, version, messages by role), whole")
    # (user_errors: what a command reports in one line with exit code 2, see main)
    sp.set_defaults(func=cmd_summary, user_errors=(OSError, ValueError, OptionError))
