"""``sessionlab usage blocks --live``: the active billing block, redrawn as the session files change.

The view shows the active 5-hour block (start, time left, calls, tokens, cost, models), its burn
rate and projection (and, with ``--token-limit``, the share of the limit they take), and today's
cost in ``--tz``. It is drawn again when a session file changes (:meth:`sessionlab.Corpus.follow`:
only what changed is read) and once a minute for the clock (time left, the projection). In a
terminal it is one ``rich`` live display that redraws in place; otherwise each change prints a new
copy. Ctrl-C ends it with exit code 0. While nothing changes it uses no CPU.

Example:
    >>> from sessionlab.cli import main
    >>> main(["usage", "blocks", "~/.claude", "--live"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from typing import Any, Literal

__all__ = ["live_view", "run_live", "TICK_SECONDS"]

TICK_SECONDS = 60.0
"""Seconds between two redraws while no file changes (the time left and the projection move)."""


def _today_cost(corpus: Any, tz: str, now: _dt.datetime) -> float:
    from zoneinfo import ZoneInfo

    from ..analysis import usage_by

    if corpus.entries.num_rows == 0:
        return 0.0
    today = now.astimezone(ZoneInfo(tz)).date()
    days = usage_by(corpus, by="day", tz=tz).to_pylist()
    return float(sum(r["cost_usd"] or 0.0 for r in days if r["day"] == today))


def _active_block(corpus: Any, *, token_limit: int | Literal["max"] | None, hours: float,
                  now: _dt.datetime) -> dict[str, Any] | None:
    from ..analysis import billing_blocks

    if corpus.entries.num_rows == 0:
        return None
    # (every block, so that a 'max' limit has finished blocks to take its value from)
    rows = billing_blocks(corpus, token_limit=token_limit, now=now, hours=hours).to_pylist()
    return next((r for r in rows if r["is_active"]), None)


def _block_lines(b: dict[str, Any], tz: str, now: _dt.datetime) -> list[tuple[str, str]]:
    from zoneinfo import ZoneInfo

    zone = ZoneInfo(tz)
    left = max(int((b["end_time"] - now).total_seconds() // 60), 0)
    lines = [
        ("Active block", f"{b['start_time'].astimezone(zone):%Y-%m-%d %H:%M} to "
                         f"{b['end_time'].astimezone(zone):%H:%M} ({tz}), {left // 60}h {left % 60:02d}m left"),
        ("Calls", f"{b['calls']:,}"),
        ("Tokens", f"{b['total_tokens']:,}"),
        ("Cost", f"${b['cost_usd']:,.2f}"),
        ("Models", ", ".join(b["models"]) or "-"),
    ]
    if b["tokens_per_minute"] is not None:
        lines.append(("Burn rate", f"{b['tokens_per_minute']:,.0f} tokens/min, ${b['cost_per_hour']:,.2f}/hour"))
        lines.append(("Projection", f"{b['projected_total_tokens']:,} tokens, ${b['projected_cost_usd']:,.2f} "
                                    "by the block's end"))
    else:
        lines.append(("Burn rate", "- (one call so far)"))
    if b["token_limit"]:
        share = b["projected_percent"] if b["projected_percent"] is not None else b["limit_percent"]
        status = f" ({b['limit_status']})" if b["limit_status"] else ""
        lines.append(("Token limit", f"{b['token_limit']:,}: {b['limit_percent']:.1f}% used, "
                                     f"{share:.1f}% projected{status}"))
    return lines


def live_view(corpus: Any, *, tz: str = "UTC", token_limit: int | Literal["max"] | None = None, hours: float = 5,
              now: _dt.datetime | None = None, error: BaseException | None = None) -> Any:
    """The ``rich`` renderable of the live view of ``corpus`` at ``now`` (default: now)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    now = now or _dt.datetime.now(_dt.UTC)
    block = _active_block(corpus, token_limit=token_limit, hours=hours, now=now)
    title = Text(f"sessionlab usage blocks --live · {now.astimezone(_zone(tz)):%H:%M:%S} ({tz}) · Ctrl-C to quit",
                 style="bold")
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    for k, v in _block_lines(block, tz, now) if block is not None else [("Active block", "none (no call in the "
                                                                                          f"last {hours:g} hours)")]:
        t.add_row(k, v)
    t.add_row("Today", f"${_today_cost(corpus, tz, now):,.2f} ({now.astimezone(_zone(tz)):%Y-%m-%d}, {tz})")
    t.add_row("Session files", f"{len(corpus.files):,}")
    if error is not None:
        t.add_row("Reload failed", f"{type(error).__name__}: {error} (waiting for the next change)")
    return Group(title, t)


def _zone(tz: str) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(tz)


def run_live(args: argparse.Namespace, token_limit: int | Literal["max"] | None) -> int:
    """Load, show, and redraw on every change until Ctrl-C (exit code 0)."""
    from rich.console import Console
    from rich.live import Live

    from ..tables import load

    corpus = load(args.paths or None, on_bad_lines="skip", progress=False, agents=args.agent)
    console = Console(highlight=False)
    follower = corpus.follow()

    def view() -> Any:
        return live_view(follower.corpus, tz=args.tz, token_limit=token_limit, hours=args.session_length,
                         error=follower.error)

    try:
        if console.is_terminal:  # (auto_refresh off: no redraw thread, nothing runs between changes)
            with Live(view(), console=console, auto_refresh=False, redirect_stdout=False) as live:
                seen = 0
                while True:
                    follower.wait(TICK_SECONDS, since=seen)
                    seen = follower.updates
                    live.update(view(), refresh=True)
        else:  # a pipe or a file: a new copy per change
            console = Console(file=sys.stdout, highlight=False, width=200, no_color=True)
            console.print(view())
            sys.stdout.flush()
            seen = 0
            while True:
                if follower.wait(TICK_SECONDS, since=seen):
                    seen = follower.updates
                    console.print(view())
                    sys.stdout.flush()
    except KeyboardInterrupt:
        return 0
    finally:
        follower.stop()
