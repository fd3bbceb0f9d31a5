"""``sessionlab usage blocks``: the spend in 5-hour billing blocks, as ccusage's ``blocks`` report.

The numbers come from :func:`sessionlab.analysis.billing_blocks`; this module shapes them: a
``rich`` table for people (the active block with its projection and, with a token limit, what is
left) and ``--json`` in ccusage's shape (``blocks``: ``id``, ``startTime``, ``tokenCounts``,
``burnRate``, ``projection``, ``tokenLimitStatus``...). ``--live`` shows the active block and
today's cost and redraws them as the session files change (:mod:`._live`).

Example:
    >>> from sessionlab.cli import main
    >>> main(["usage", "blocks", "~/.claude", "--active", "--json"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from collections.abc import Sequence
from typing import Any, Literal

from ..errors import OptionError

__all__ = ["add_blocks_arguments", "blocks_report", "cmd_blocks", "render_blocks"]


def _token_limit(value: str | None) -> int | Literal["max"] | None:
    if value is None or value == "":
        return None
    if value == "max":
        return "max"
    if not value.isdigit() or int(value) <= 0:
        raise OptionError(f"--token-limit must be a number of tokens above 0 or 'max', not {value!r}", "token_limit")
    return int(value)


def _iso(t: _dt.datetime | None) -> str | None:
    """ccusage's time format: UTC, milliseconds, ``Z``."""
    if t is None:
        return None
    t = t.astimezone(_dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _block_json(r: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": r["block_id"], "startTime": _iso(r["start_time"]), "endTime": _iso(r["end_time"]),
        "actualEndTime": _iso(r["actual_end_time"]), "isActive": r["is_active"], "isGap": r["is_gap"],
        "entries": r["calls"],
        "tokenCounts": {"inputTokens": r["input_tokens"], "outputTokens": r["output_tokens"],
                        "cacheCreationInputTokens": r["cache_write_tokens"],
                        "cacheReadInputTokens": r["cache_read_tokens"]},
        "totalTokens": r["total_tokens"], "costUSD": round(r["cost_usd"], 8), "models": r["models"],
        "burnRate": None, "projection": None,
    }
    if r["tokens_per_minute"] is not None:
        out["burnRate"] = {"tokensPerMinute": r["tokens_per_minute"],
                           "tokensPerMinuteForIndicator": r["tokens_per_minute_for_indicator"],
                           "costPerHour": r["cost_per_hour"]}
        out["projection"] = {"totalTokens": r["projected_total_tokens"], "totalCost": r["projected_cost_usd"],
                             "remainingMinutes": r["remaining_minutes"]}
    if r["limit_status"] is not None:
        out["tokenLimitStatus"] = {"limit": r["token_limit"], "projectedUsage": r["projected_total_tokens"],
                                   "percentUsed": r["projected_percent"], "status": r["limit_status"]}
    return out


def blocks_report(paths: Sequence[str] | None = None, *, tz: str = "UTC", since: str | None = None,
                  until: str | None = None, agents: Sequence[str] | None = None,
                  token_limit: int | Literal["max"] | None = None, keep: Literal["all", "recent", "active"] = "all",
                  hours: float = 5, now: _dt.datetime | None = None) -> dict[str, Any]:
    """ccusage's ``blocks`` JSON (``{"blocks": [...]}``) of the files in ``paths``, and
    ``rows``: the :func:`~sessionlab.analysis.billing_blocks` rows behind it (for the table)."""
    from ..analysis import billing_blocks
    from . import unreadable
    from ._select import load_selected

    corpus = load_selected(paths, agents=agents, spend_only=True)
    rows = billing_blocks(corpus, token_limit=token_limit, now=now, tz=tz, hours=hours, since=since, until=until,
                          keep=keep).to_pylist()
    missed = unreadable(corpus)
    return {"blocks": [_block_json(r) for r in rows], "rows": rows, **({"unreadable": missed} if missed else {})}


def _duration(r: dict[str, Any]) -> str:
    if r["is_gap"]:
        return f"{int((r['end_time'] - r['start_time']).total_seconds() // 3600)}h gap"
    if r["is_active"]:
        return "ACTIVE"
    minutes = int((r["actual_end_time"] - r["start_time"]).total_seconds() // 60)
    return f"{minutes // 60}h {minutes % 60}m" if minutes >= 60 else f"{minutes}m"


def render_blocks(rows: list[dict[str, Any]], *, tz: str = "UTC", file: Any = None) -> None:
    """Print the blocks as a ``rich`` table (plain when ``file`` is not a terminal): start (in
    ``tz``), duration or status, models, tokens, share of the token limit, cost; under the active
    block what is left of the limit and the projection."""
    from zoneinfo import ZoneInfo

    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file or sys.stdout, highlight=False)
    plain = not console.is_terminal
    if plain:
        console = Console(file=file or sys.stdout, highlight=False, width=400, no_color=True)
    if not rows:
        console.print("No usage found.")
        return
    limit = next((r["token_limit"] for r in rows if r["token_limit"]), None)
    t = Table(title="Token usage and cost by billing block", box=box.SIMPLE if plain else box.ROUNDED,
              header_style="" if plain else "bold cyan", title_style="" if plain else "bold")
    heads = ("Block start", "Duration/Status", "Models", "Tokens", *(("% of limit",) if limit else ()), "Cost (USD)")
    for head in heads:
        t.add_column(head, justify="right" if head in ("Tokens", "% of limit", "Cost (USD)") else "left")
    zone = ZoneInfo(tz)
    for r in rows:
        start = r["start_time"].astimezone(zone).strftime("%Y-%m-%d %H:%M")
        if r["is_gap"]:
            t.add_row(start, _duration(r), "-", "-", *(("-",) if limit else ()), "-")
            continue
        share = (f"{r['limit_percent']:.1f}%",) if limit else ()
        t.add_row(start, _duration(r), "\n".join(r["models"]), f"{r['total_tokens']:,}", *share,
                  f"${r['cost_usd']:,.2f}")
        if r["is_active"] and limit:
            left = max(limit - r["total_tokens"], 0)
            t.add_row(f"(limit {limit:,} tokens)", "REMAINING", "", f"{left:,}", f"{left / limit * 100:.1f}%", "")
        if r["projected_total_tokens"] is not None:
            proj = (f"{r['projected_percent']:.1f}%",) if limit else ()
            t.add_row("(at the current rate)", "PROJECTED", "", f"{r['projected_total_tokens']:,}", *proj,
                      f"${r['projected_cost_usd']:,.2f}")
    console.print(t)


def cmd_blocks(args: argparse.Namespace) -> int:
    """``sessionlab usage blocks``: JSON or the table."""
    if args.csv:
        raise OptionError("usage blocks has no --csv: use --json", "csv")
    keep: Literal["all", "recent", "active"] = "active" if args.active else "recent" if args.recent else "all"
    limit = _token_limit(args.token_limit)
    if args.live:
        if args.json:
            raise OptionError("usage blocks --live draws in the terminal: leave out --json", "live")
        from ._live import run_live

        return run_live(args, limit)
    # the table shows the share of the largest finished block without --token-limit, as ccusage does
    data = blocks_report(args.paths or None, tz=args.tz, since=args.since, until=args.until, agents=args.agent,
                         token_limit=limit if args.json or limit is not None else "max", keep=keep,
                         hours=args.session_length)
    if args.json:
        data.pop("rows")
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    render_blocks(data["rows"], tz=args.tz)
    if data.get("unreadable"):
        from . import unreadable_line

        print(unreadable_line(data["unreadable"]))
    return 0


def add_blocks_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``usage blocks`` (the other reports ignore them)."""
    g = parser.add_argument_group("blocks")
    g.add_argument("--token-limit", metavar="N|max",
                   help="tokens a block may use, or 'max' (the largest finished block): the active block's projection "
                        "is judged against it")
    g.add_argument("--active", action="store_true", help="only the active block")
    g.add_argument("--recent", action="store_true", help="only blocks from the last 3 days (and the active one)")
    g.add_argument("--live", action="store_true",
                   help="show the active block, its burn rate and projection and today's cost, redrawn when the "
                        "session files change (Ctrl-C to quit)")
    g.add_argument("--session-length", type=float, default=5, metavar="HOURS",
                   help="block length in hours (default: 5)")
