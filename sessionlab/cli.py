"""The ``sessionlab`` command line.

``sessionlab summary PATH [PATH...]`` prints one row per session file (a folder is searched
recursively for ``*.jsonl``) and a grand total, then the calls' usage by model and by day
(``usage_by`` on the entries table; ``--tz`` picks the time zone of the days). :func:`summarize_sessions`
computes the rows as plain dicts; :func:`format_summary` turns them into the aligned text table.

Example:
    >>> from sessionlab.cli import main
    >>> main(["summary", "data/"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .io import read_session
from .model import AssistantMessage, CompactionEntry, CustomMessageEntry, LeafEntry, MessageEntry, SessionInfoEntry

__all__ = ["find_session_files", "format_summary", "format_usage", "main", "summarize_session",
           "summarize_sessions", "usage_views"]

ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom")
"""Message roles with their own column; any other role is counted under ``other``."""

UNKNOWN_DAY = "unknown day"
"""The day of calls whose entry has no readable timestamp, in the usage-by-day view."""

_TOKEN_KEYS = ("input", "output", "cache_read", "cache_write", "total_tokens")


def find_session_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The files named in ``paths``, folders replaced by their ``*.jsonl`` files (recursive, sorted).

    Raises:
        FileNotFoundError: A path does not exist.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.jsonl") if f.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or folder: {p}")
    return out


def summarize_session(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One session's summary row.

    Keys: ``session_id``, ``name`` (latest non-empty ``session_info`` name), ``cwd``, ``file``,
    ``version`` (as written, 1 when absent; ``None`` without a valid header), ``entries``,
    ``messages`` (a dict role -> count), ``custom_messages`` (``custom_message`` entries: extension
    messages that enter the context),
    ``leaves`` (entries that are no entry's parent; seed ``leaf`` records and entries without an id
    are not nodes),
    ``fork_points`` (entries with two or more children), ``compactions``, the token sums over all
    assistant messages of all branches ``input``, ``output``, ``cache_read``, ``cache_write``,
    ``total_tokens`` (each message's ``totalTokens``, or the sum of its four parts when missing),
    ``cost`` (sum of ``cost.total``, USD) and ``issues`` (line issues the reader reported).

    Example:
        >>> row = summarize_session("data/pi/large-session.jsonl")  # doctest: +SKIP
        >>> row["messages"]["user"]
        88
    """
    sf = read_session(path, on_bad_lines="skip")
    entries = [e for e in sf.entries if not isinstance(e, LeafEntry)]
    nodes = [e for e in entries if isinstance(e.id, str)]  # (entries without an id are not tree nodes)
    custom_messages = sum(1 for e in entries if isinstance(e, CustomMessageEntry))
    children = Counter(e.parent_id for e in nodes if e.parent_id is not None)
    roles: Counter[str] = Counter()
    tokens: dict[str, int | float] = dict.fromkeys(_TOKEN_KEYS, 0)
    cost = 0.0
    name = None
    compactions = 0
    for e in entries:  # one pass over the entries of one file
        if isinstance(e, MessageEntry) and e.message is not None:
            m = e.message
            roles[m.role or "unknown"] += 1
            if isinstance(m, AssistantMessage) and m.usage is not None:
                u = m.usage
                tokens["input"] += u.input or 0
                tokens["output"] += u.output or 0
                tokens["cache_read"] += u.cache_read or 0
                tokens["cache_write"] += u.cache_write or 0
                tokens["total_tokens"] += u.context_tokens()
                if u.cost is not None and u.cost.total:
                    cost += u.cost.total
        elif isinstance(e, SessionInfoEntry) and e.name:
            name = e.name
        elif isinstance(e, CompactionEntry):
            compactions += 1
    h = sf.header
    return {
        "session_id": h.id if h else None,
        "name": name,
        "cwd": h.cwd if h else None,
        "file": str(path),
        "version": sf.version if h else None,
        "entries": len(sf.entries),
        "messages": dict(roles),
        "custom_messages": custom_messages,
        "leaves": sum(1 for e in nodes if children.get(e.id or "", 0) == 0),
        "fork_points": sum(1 for n in children.values() if n >= 2),
        "compactions": compactions,
        **tokens,
        "cost": cost,
        "issues": len(sf.issues),
    }


def summarize_sessions(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """:func:`summarize_session` for every session file in ``paths`` (files or folders)."""
    return [summarize_session(p) for p in find_session_files(paths)]


_COLUMNS: tuple[tuple[str, str], ...] = (
    ("session", "<"), ("name", "<"), ("cwd", "<"), ("file", "<"), ("ver", ">"), ("entries", ">"),
    *((r, ">") for r in ROLES), ("other", ">"), ("custom_message", ">"), ("leaves", ">"), ("forks", ">"),
    ("compactions", ">"),
    ("input", ">"), ("output", ">"), ("cache_read", ">"), ("cache_write", ">"), ("total", ">"),
    ("cost_usd", ">"), ("issues", ">"),
)


def _cells(row: dict[str, Any], *, total: bool = False) -> list[str]:
    msgs = row["messages"]
    other = sum(n for r, n in msgs.items() if r not in ROLES)
    head = [f"TOTAL ({row['sessions']} sessions)", "", "", "", ""] if total else [
        row["session_id"] or "-", row["name"] or "-", row["cwd"] or "-", row["file"], str(row["version"] or "-")]
    return head + [
        f"{row['entries']:,}", *(f"{msgs.get(r, 0):,}" for r in ROLES), f"{other:,}", f"{row['custom_messages']:,}",
        f"{row['leaves']:,}", f"{row['fork_points']:,}", f"{row['compactions']:,}",
        *(f"{row[k]:,}" for k in _TOKEN_KEYS), f"{row['cost']:.4f}", f"{row['issues']:,}",
    ]


def total_row(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The grand total of summary rows (numbers and role counts summed; ``sessions`` = row count)."""
    roles: Counter[str] = Counter()
    for r in rows:
        roles.update(r["messages"])
    out: dict[str, Any] = {"sessions": len(rows), "messages": dict(roles)}
    for k in ("entries", "custom_messages", "leaves", "fork_points", "compactions", *_TOKEN_KEYS, "cost", "issues"):
        out[k] = sum(r[k] for r in rows)
    return out


def format_summary(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`summarize_sessions` as an aligned text table with a grand-total line."""
    body = [_cells(r) for r in rows]
    tot = _cells(total_row(rows), total=True)
    header = [c for c, _ in _COLUMNS]
    widths = [max(len(x[i]) for x in [header, *body, tot]) for i in range(len(header))]
    # the total's label may span the empty text columns after it
    label_span = sum(widths[:5]) + 2 * 4

    def fmt(cells: list[str], *, label: bool = False) -> str:
        parts = []
        for i, (c, (_, align)) in enumerate(zip(cells, _COLUMNS)):
            if label and i < 5:
                if i == 0:
                    parts.append(c.ljust(label_span))
                continue
            parts.append(c.ljust(widths[i]) if align == "<" else c.rjust(widths[i]))
        return "  ".join(parts).rstrip()

    lines = [fmt(header), "  ".join("-" * w for w in widths)]
    lines += [fmt(c) for c in body]
    lines += ["  ".join("-" * w for w in widths), fmt(tot, label=True)]
    return "\n".join(lines)


def usage_views(paths: Iterable[str | os.PathLike[str]], *, by: Sequence[str] = ("model", "day"),
                tz: str = "UTC") -> dict[str, list[dict[str, Any]]]:
    """``usage_by`` over the files' entries table, one list of rows per grouping in ``by``."""
    from .analysis import usage_by
    from .tables import entries_table

    files = find_session_files(paths)
    if not files:
        return {b: [] for b in by}
    table = entries_table(files, on_bad_lines="skip")
    out = {}
    for b in by:
        rows = usage_by(table, by=b, tz=tz).to_pylist()
        for r in rows:
            if b == "day":  # calls whose entry has no readable timestamp (a bad_timestamp issue)
                r["day"] = r["day"].isoformat() if r["day"] is not None else UNKNOWN_DAY
        out[b] = rows
    return out


def format_usage(title: str, key: str, rows: Sequence[dict[str, Any]]) -> str:
    """A ``usage_by`` view as an aligned text table."""
    cols = [key, "calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
            "total_tokens", "cost_usd"]
    head = [key, "calls", "input", "output", "cache_read", "cache_write", "total", "cost_usd"]
    body = [[str(r[key]) if r[key] is not None else "-"]
            + [f"{r[c]:,}" for c in cols[1:-1]] + [f"{r['cost_usd']:.4f}"] for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([title, fmt(head), "  ".join("-" * w for w in widths), *map(fmt, body)])


def _cmd_summary(args: argparse.Namespace) -> int:
    try:
        rows = summarize_sessions(args.paths)
        views = usage_views(args.paths, tz=args.tz) if args.usage else {}
    except FileNotFoundError as exc:
        print(f"sessionlab summary: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # e.g. an unknown time zone
        print(f"sessionlab summary: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps({"sessions": rows, "total": total_row(rows), "usage": views}, indent=2,
                         ensure_ascii=False))
    else:
        print(format_summary(rows))
        if views:
            print()
            print(format_usage("Usage by model (all branches)", "model", views["model"]))
            print()
            print(format_usage(f"Usage by day ({args.tz})", "day", views["day"]))
    return 0


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="sessionlab", description="Study pi coding-agent sessions (JSONL trees).")
    sub = ap.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("summary", help="one line per session file: entries, roles, tree shape, tokens, cost",
                        description="Summarize session files; folders are searched recursively for *.jsonl.")
    sp.add_argument("paths", nargs="+", metavar="PATH", help="a session file or a folder")
    sp.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    sp.add_argument("--tz", default="UTC", help="time zone for the usage-by-day view (default: UTC)")
    sp.add_argument("--no-usage", dest="usage", action="store_false", help="leave out the usage views")
    sp.set_defaults(func=_cmd_summary)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    args = _parser().parse_args(argv)
    return int(args.func(args))
