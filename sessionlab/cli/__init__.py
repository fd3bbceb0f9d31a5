"""The ``sessionlab`` command line.

``sessionlab summary [PATH...]`` prints one row per session file (a folder is searched
recursively for ``*.jsonl``; no PATH: the agents' default folders) and a grand total, then the
calls' usage by model and by day (``usage_by`` on the entries table; ``--tz`` picks the time zone
of the days). The files are read once, by :func:`sessionlab.load`; :func:`summarize_corpus` turns
the :class:`~sessionlab.Corpus` into rows of plain dicts, which ``cli._summary`` lays out as a
table fitted to the terminal (``--wide``: every column; ``--json``/``--csv``: every field).
``usage`` (``cli._usage``) and ``report`` take the same ``--project``; a command that finds no
sessions says which folders it searched and exits with code 1 (2: a bad argument or path).

Example:
    >>> from sessionlab.cli import main
    >>> main(["summary", "data/"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import scalar
from ..errors import OptionError
from ..tables import Corpus, load

__all__ = ["format_summary", "format_usage", "main", "run", "summarize_corpus", "summarize_session",
           "summarize_sessions", "synth_main", "time_zone", "unreadable", "unreadable_line", "usage_views"]

ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom")
"""Message roles with their own column; any other role is counted under ``other``."""

UNKNOWN_DAY = "unknown day"
"""The day of calls whose entry has no readable timestamp, in the usage-by-day view."""

_TOKEN_KEYS = ("input", "output", "cache_read", "cache_write", "total_tokens")
# summary key -> sessions-table column
_FROM_SESSIONS = {"session_id": "session_id", "agent": "agent", "name": "name", "cwd": "cwd", "file": "file",
                  "version": "version", "entries": "entry_count", "compactions": "compaction_count",
                  "input": "input_tokens", "output": "output_tokens", "cache_read": "cache_read_tokens",
                  "cache_write": "cache_write_tokens", "total_tokens": "total_tokens", "cost": "cost_usd",
                  "issues": "issue_count", "calls": "call_count"}


def _mask(expr) -> np.ndarray:
    return np.asarray(pc.fill_null(expr, False).to_numpy(zero_copy_only=False), bool)


def _roles_by_file(entries: pa.Table) -> dict[str, dict[str, int]]:
    """file -> {role: message count}, roles in order of first appearance (``unknown`` for a message
    without a role); a message entry without a message object counts nowhere."""
    has_msg = _mask(pc.and_(pc.equal(entries["type"], "message"), pc.is_valid(entries["est_tokens"])))
    rows = np.nonzero(has_msg)[0]
    msgs = entries.select(["file", "role"]).take(pa.array(rows, pa.int64()))
    role = msgs["role"]
    named = pc.fill_null(pc.greater(pc.utf8_length(role), 0), False)
    t = pa.table({"file": msgs["file"], "role": pc.if_else(named, role, "unknown"),
                  "row": pa.array(np.arange(len(rows)), pa.int64())})
    g = t.group_by(["file", "role"], use_threads=False).aggregate([("row", "count"), ("row", "min")])
    g = g.sort_by("row_min")
    out: dict[str, dict[str, int]] = {}
    for f, r, n in zip(g["file"].to_pylist(), g["role"].to_pylist(), g["row_count"].to_pylist()):
        out.setdefault(f, {})[r] = n
    return out


def _count_by_file(entries: pa.Table, entry_type: str) -> dict[str, int]:
    """file -> number of entries of type ``entry_type``."""
    t = entries.select(["file"]).filter(pc.fill_null(pc.equal(entries["type"], entry_type), False))
    g = t.group_by("file", use_threads=False).aggregate([([], "count_all")])
    return dict(zip(g["file"].to_pylist(), g["count_all"].to_pylist()))


_ROW_KEYS = ("session_id", "agent", "name", "cwd", "file", "version", "first_timestamp", "last_timestamp", "entries",
             "calls", "messages", "custom_messages", "leaves", "fork_points", "compactions", *_TOKEN_KEYS, "cost",
             "issues")


def _iso(t: Any) -> str | None:
    return None if t is None else t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def summarize_corpus(corpus: Corpus) -> list[dict[str, Any]]:
    """One summary row per session file of a loaded :class:`~sessionlab.Corpus`.

    Keys: ``session_id``, ``agent`` (``pi``, ``claude-code`` or ``codex``), ``name`` (latest
    non-empty ``session_info`` name), ``cwd``, ``file``,
    ``version`` (as written, 1 when absent; ``None`` without a valid header), ``first_timestamp`` and
    ``last_timestamp`` (ISO-8601 UTC, the sessions table's), ``entries``, ``calls`` (the sessions
    table's ``call_count``),
    ``messages`` (a dict role -> count), ``custom_messages`` (``custom_message`` entries: extension
    messages that enter the context),
    ``leaves`` and ``fork_points`` (the sessions table's ``leaf_count`` and ``fork_count``: side nodes,
    seed ``leaf`` records and entries without an id are not nodes), ``compactions``, the token sums over all
    assistant messages of all branches ``input``, ``output``, ``cache_read``, ``cache_write``,
    ``total_tokens`` (each message's ``totalTokens``, or the sum of its four parts when missing),
    ``cost`` (sum of ``cost.total``, USD) and ``issues`` (line issues the reader reported).
    """
    sessions = corpus.sessions.to_pydict()
    roles = _roles_by_file(corpus.entries)
    customs = _count_by_file(corpus.entries, "custom_message")
    rows = []
    for i, f in enumerate(sessions["file"]):  # one row per session file
        row: dict[str, Any] = {k: sessions[c][i] for k, c in _FROM_SESSIONS.items()}
        if row["session_id"] is None:
            row["version"] = None
        row["messages"] = roles.get(f, {})
        row["custom_messages"] = customs.get(f, 0)
        row["leaves"] = sessions["leaf_count"][i] or 0  # (the facts module's, as every face shows them)
        row["fork_points"] = sessions["fork_count"][i] or 0
        for k in _TOKEN_KEYS:  # a file without entries has no sums
            row[k] = row[k] or 0
        row["cost"] = row["cost"] or 0.0
        row["calls"] = row["calls"] or 0
        row["first_timestamp"] = _iso(sessions["first_timestamp"][i])
        row["last_timestamp"] = _iso(sessions["last_timestamp"][i])
        rows.append({k: row[k] for k in _ROW_KEYS})
    return rows


def summarize_sessions(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """:func:`summarize_corpus` of the session files in ``paths`` (files, folders or globs).

    Example:
        >>> rows = summarize_sessions(["data/pi/large-session.jsonl"])  # doctest: +SKIP
        >>> rows[0]["messages"]["user"]
        88
    """
    return summarize_corpus(load(list(paths), on_bad_lines="skip", progress=False))


def summarize_session(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One session file's summary row (see :func:`summarize_corpus`)."""
    return summarize_sessions([path])[0]


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
    for k in ("entries", "calls", "custom_messages", "leaves", "fork_points", "compactions", *_TOKEN_KEYS, "cost",
              "issues"):
        out[k] = sum(r[k] for r in rows)
    return out


def format_summary(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`summarize_sessions` as an aligned plain-text table of every column with a
    grand-total line (for logs; the command line prints a table fitted to the terminal)."""
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


def usage_views(source: Corpus | Iterable[str | os.PathLike[str]], *, by: Sequence[str] = ("model", "day"),
                tz: str = "UTC") -> dict[str, list[dict[str, Any]]]:
    """``usage_by`` over a corpus's entries table (or that of the files in ``source``), one list
    of rows per grouping in ``by``."""
    from ..analysis import usage_by

    corpus = source if isinstance(source, Corpus) else load(list(source), on_bad_lines="skip", progress=False)
    if corpus.entries.num_rows == 0:
        return {b: [] for b in by}
    out = {}
    for b in by:
        rows = usage_by(corpus, by=b, tz=tz).to_pylist()
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


def unreadable(corpus: Corpus) -> list[dict[str, str]]:
    """The files and folders a load could not read (``read_error`` issues): ``file`` and ``error``."""
    t = corpus.issues
    t = t.filter(pc.equal(t["kind"], scalar("read_error"))) if t.num_rows else t
    return [{"file": f, "error": m} for f, m in zip(t["file"].to_pylist(), t["message"].to_pylist())]


def unreadable_line(items: Sequence[dict[str, str]]) -> str:
    """The line printed under a table when files or folders could not be read."""
    first = items[0]
    return (f"{len(items)} files or folders could not be read and are not counted (first: {first['file']}: "
            f"{first['error']}); all are in the issues table")


def time_zone(value: str) -> str:
    """``value`` when it is an IANA time zone name (``UTC``, ``Europe/Vienna``), else
    :class:`~sessionlab.errors.OptionError` (an empty ``--tz`` included)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    message = f"--tz {value!r} is not a time zone (an IANA name such as UTC or Europe/Vienna)"
    if not value.strip():
        raise OptionError(message)
    try:
        ZoneInfo(value)
    except (ValueError, ZoneInfoNotFoundError, OSError):
        raise OptionError(message) from None
    return value


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="sessionlab", description="Study pi coding-agent sessions (JSONL trees).")
    sub = ap.add_subparsers(dest="command", required=True)
    from ._summary import add_summary_parser
    from ._usage import add_selection_options, add_usage_parser

    add_summary_parser(sub)
    cp = sub.add_parser("cache", help="the loaders' cache: 'clear' empties it",
                        description="The loaders keep parsed files in $SESSIONLAB_CACHE_DIR, "
                                    "else the user's cache folder.")
    cp.add_argument("action", choices=("clear",))
    cp.set_defaults(func=_cmd_cache, user_errors=(OSError,), error_code=1)  # (a symlinked or read-only folder)
    rp = sub.add_parser("report", help="one self-contained offline HTML report: usage, sessions, trees, issues",
                        description="Write a single HTML file about the sessions in SOURCE (see sessionlab.report).")
    rp.add_argument("source", nargs="*", metavar="SOURCE",
                    help="a session file or a folder (default: the agents' folders)")
    rp.add_argument("-o", "--output", default="report.html", help="the HTML file to write (default: report.html)")
    rp.add_argument("--tz", default="UTC", help="time zone of the usage days (default: UTC)")
    add_selection_options(rp)
    rp.set_defaults(func=_cmd_report)  # (any error: a missing folder, an unknown time zone, an unwritable output)
    from ._export import add_export_parser, add_report_redaction

    add_usage_parser(sub)
    add_report_redaction(rp)
    add_export_parser(sub)
    return ap


def _cmd_cache(args: argparse.Namespace) -> int:
    from ..tables import clear_cache

    where, n, size = clear_cache()
    print(f"sessionlab cache: removed {n} files ({size / 1e6:.1f} MB) from {where}" if where else
          "sessionlab cache: off (SESSIONLAB_CACHE_DIR is empty)")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report import write_report
    from ..tables import find_files
    from ._select import NO_SESSIONS, no_sessions, project_files

    files = project_files(args.source, project=args.project) if args.project is not None else \
        find_files(list(args.source) or None)
    if not files:
        print(no_sessions("report", args.source, project=args.project, what="session files"), file=sys.stderr)
        return NO_SESSIONS
    source: Any = args.source or None
    if args.project is not None:
        source = files
    elif source is not None and len(source) == 1:
        source = source[0]
    out = write_report(source, args.output, tz=args.tz)
    print(f"wrote {out}")
    return 0


def synth_main(argv: Sequence[str] | None = None) -> int:
    """``python -m sessionlab.synth``: write generated pi, Claude Code or Codex sessions (see
    :mod:`sessionlab.synth`); returns the exit code."""
    from ._synth import main as run

    return run(argv)


def run() -> None:
    """The ``sessionlab`` command (and ``python -m sessionlab``): :func:`main`, then the process
    ends at once, its output flushed and its exit handlers run. Freeing a large load's millions of
    objects one by one, as the interpreter's own exit does, only delays the shell; a process with
    another thread still running ends as usual (the interpreter waits for that thread)."""
    code = main(ending=True)
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # (None: started without that stream)
                stream.flush()
    except OSError:  # (a closed pipe: the interpreter's exit reports it as it would)
        sys.exit(code)
    import atexit

    getattr(atexit, "_run_exitfuncs", lambda: None)()
    os._exit(code)


def main(argv: Sequence[str] | None = None, *, ending: bool = False) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit code.
    ``ending``: the process ends after the command (:func:`run`), which may then leave what it made
    for the exit to free."""
    args = _parser().parse_args(argv)
    args.ending = ending
    try:
        if getattr(args, "tz", None) is not None:
            time_zone(args.tz)  # (before any file is read)
        return int(args.func(args))
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's code for SIGINT (writes clean up after themselves)
        print(f"sessionlab {args.command}: interrupted", file=sys.stderr)
        return 130
    except getattr(args, "user_errors", Exception) as exc:  # the one place a command's failure is reported
        print(f"sessionlab {args.command}: {exc}", file=sys.stderr)
        return getattr(args, "error_code", 2)
