"""``sessionlab export`` and ``sessionlab report --redact``: sharing sessions without their secrets.

``export SOURCE -o DIR`` copies the session files (``--redact``: redacted line by line, each in its
agent's own format, still loadable) or, with ``--format parquet``, writes the entries, sessions and
issues tables as Parquet datasets (``--redact``: redacted, with the texts and redactions tables).
``report SOURCE -o FILE --redact`` builds the HTML report from redacted copies of the files, so no
text of the page (prompts, names, paths, issues' excerpts) comes from the originals.

Example:
    >>> from sessionlab.cli import main
    >>> main(["export", "data/", "-o", "/tmp/shared", "--redact"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ArgumentValueError, SourceNotFoundError

__all__ = ["add_export_parser", "add_report_redaction", "write_redacted_report"]

_PARQUET_TABLES = ("entries", "sessions", "issues")


def _source(args: argparse.Namespace) -> Any:
    """What the command reads: its paths (none: the agents' folders), only the sessions of
    ``--project`` when given."""
    if getattr(args, "project", None) is not None:
        from ._select import project_files

        return project_files(args.source, project=args.project)
    if not args.source:
        return None
    return args.source[0] if len(args.source) == 1 else list(args.source)


def write_redacted_report(source: Any, path: str | os.PathLike[str], *, tz: str = "UTC") -> Path:
    """The HTML report of redacted copies of ``source``'s files, written to ``path``.

    The copies live in a temporary folder for the time of the build; its path is taken out of the
    page (files are shown by their path below the sessions' common folder)."""
    from ..pi.io.writer import atomic_write_bytes
    from ..redaction import export_sessions
    from ..report import build_report

    out = Path(path)
    if out.is_dir():
        raise ArgumentValueError("path", f"{out} is a folder: give the report's file name (e.g. {out / 'report.html'})")
    with tempfile.TemporaryDirectory(prefix="sessionlab-redacted-") as tmp:
        if not export_sessions(source, tmp):
            raise SourceNotFoundError(f"no session files in {source}")
        page = build_report(tmp, tz=tz, title="sessionlab report (redacted)")
    page = page.replace(tmp + os.sep, "").replace(tmp, "redacted sessions")
    atomic_write_bytes(out, page.encode("utf-8"))
    return out


def _cmd_export(args: argparse.Namespace) -> int:
    from ..redaction import export_sessions, redact
    from ..tables import load, to_parquet

    source = _source(args)
    if args.format == "jsonl":
        files = export_sessions(source, args.output, redacted=args.redact)
        if not files:
            raise SourceNotFoundError(f"no session files in {source}")
        print(f"wrote {len(files)} {'redacted ' if args.redact else ''}session files to {args.output}")
        return 0
    corpus = load(source, on_bad_lines="skip", progress=False)
    if args.redact:
        r = redact(corpus)
        tables = {n: getattr(r, n) for n in (*_PARQUET_TABLES, "texts", "redactions")}
    else:
        tables = {n: getattr(corpus, n) for n in _PARQUET_TABLES}
    for name, table in tables.items():
        to_parquet(table, Path(args.output) / name)
    print(f"wrote {', '.join(tables)} as Parquet datasets to {args.output}")
    return 0


def add_export_parser(sub: Any) -> None:
    """Add ``export`` to the command line's subcommands."""
    ep = sub.add_parser("export", help="copy session files (or their tables as Parquet), redacted with --redact",
                        description="Copy the session files of SOURCE into DIR at their paths below the files' "
                                    "common folder, or write their tables as Parquet datasets.")
    ep.add_argument("source", nargs="+", metavar="SOURCE", help="a session file or a folder")
    ep.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write")
    ep.add_argument("--redact", action="store_true",
                    help="replace secrets, home paths, user names, emails and host names (docs/redaction.md)")
    ep.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl",
                    help="jsonl: the session files in their own format (default); parquet: the tables")
    ep.set_defaults(func=_cmd_export, user_errors=(OSError, ImportError))


def add_report_redaction(rp: argparse.ArgumentParser) -> None:
    """Give ``report`` its ``--redact`` option."""
    plain = rp.get_default("func")

    def run(args: argparse.Namespace) -> int:
        if not args.redact:
            return int(plain(args))
        out = write_redacted_report(_source(args), args.output, tz=args.tz)
        print(f"wrote {out} (redacted)")
        return 0

    rp.add_argument("--redact", action="store_true",
                    help="build the report from redacted copies of the files (docs/redaction.md)")
    rp.set_defaults(func=run)
