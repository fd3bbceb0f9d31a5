"""The command line's tables: fitted to the terminal, and saying what they leave out.

A table is a list of :class:`Col` (header, cells, footer, and how the column may give way when the
terminal is narrow). :func:`print_table` prints it as a ``rich`` table: whole when ``--wide`` is
given or when the output goes to a file or a pipe; in a terminal it makes the table fit its width
(``$COLUMNS`` when set), in this order: columns with shorter cells use them (model names without their date
suffix, session ids to their first 8 characters), then the columns that have a drop order are left
out, lowest first, and finally the columns that may be cut share what is left (a long path keeps
its end: ``…/dev/shop``). Each of these steps adds a line under the table that says what it did.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["Col", "day", "fit", "print_table", "short_model", "target_width"]

_DATE_SUFFIX = re.compile(r"[-@](\d{8})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Col:
    """One column of a command-line table.

    Attributes:
        head: Header text.
        cells: One text per row (lines separated by ``\\n``).
        foot: Footer text (the totals).
        right: Right-aligned (numbers).
        drop: None: always shown; else left out, lowest first, when the table is too wide.
        short: Narrower cells, used (before any column is left out) when the table is too wide.
        short_note: What the short cells leave out (said under the table when they are used).
        cut: The narrowest the column may become: longer lines are cut, from the left (``…`` + their
            end: a path) or, with ``keep_end=False``, from the right (their start + ``…``: a name).
        keep_end: Where a cut line is shortened (see ``cut``).
        counted: Its numbers are part of another column's (Total tokens), said when it is left out.
        wide: Shown only with ``--wide``.
    """

    head: str
    cells: list[str]
    foot: str = ""
    right: bool = False
    drop: int | None = None
    short: list[str] | None = None
    short_note: str = ""
    cut: int | None = None
    keep_end: bool = True
    counted: bool = False
    wide: bool = False


def short_model(name: str) -> str:
    """A model id without its date suffix (``claude-opus-4-5-20251101`` -> ``claude-opus-4-5``;
    Vertex's ``@20251101`` too); the name itself stays whole."""
    return _DATE_SUFFIX.sub("", name)


def day(iso: str | None, tz: str) -> str:
    """The date (``YYYY-MM-DD``) in time zone ``tz`` of an ISO timestamp (``-`` for None)."""
    if not iso:
        return "-"
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(tz)).date().isoformat()


def _full(c: Col) -> int:
    return max(len(x) for text in [c.head, c.foot, *c.cells] for x in (text.split("\n") or [""]))


def _needed(cols: list[Col]) -> int:
    """The table's width with every cut column at its narrowest (a border, then per column its
    text, two spaces of padding and a border)."""
    return 1 + sum(min(_full(c), c.cut if c.cut is not None else _full(c)) + 3 for c in cols)


def _cut_line(line: str, width: int, keep_end: bool = True) -> str:
    if len(line) <= width:
        return line
    return "…" + line[len(line) - width + 1:] if keep_end else line[:width - 1] + "…"


def fit(cols: list[Col], width: int | None) -> tuple[list[Col], list[str]]:
    """The columns to print in ``width`` characters (None: every column, whole) and the notes that
    say what was shortened or left out."""
    if width is None:
        return cols, []
    notes: list[str] = []
    if _needed(cols) > width:
        short = [replace(c, cells=c.short) if c.short is not None else c for c in cols]
        notes += [c.short_note for c, s in zip(cols, short) if s.cells != c.cells and c.short_note]
        cols = short
    order = sorted((c.drop, i) for i, c in enumerate(cols) if c.drop is not None)
    dropped: set[int] = set()
    while order and _needed([c for i, c in enumerate(cols) if i not in dropped]) > width:
        dropped.add(order.pop(0)[1])
    if dropped:
        gone = [c.head.replace("\n", " ") for i, c in enumerate(cols) if i in dropped]
        counted = any(c.counted for i, c in enumerate(cols) if i in dropped)
        notes.append(f"Left out to fit {width} columns: {', '.join(gone)}"
                     f"{' (the total tokens still count them)' if counted else ''}; --wide shows every column, "
                     "--json and --csv every field.")
        cols = [c for i, c in enumerate(cols) if i not in dropped]
    return _share(cols, max(0, width - _needed(cols))), notes


def _share(cols: list[Col], spare: int) -> list[Col]:
    """The cut columns widened by an equal share of ``spare`` (each up to its whole text), then cut."""
    want = {i: _full(c) - c.cut for i, c in enumerate(cols) if c.cut is not None and _full(c) > c.cut}
    extra = dict.fromkeys(want, 0)
    while spare > 0 and any(extra[i] < want[i] for i in want):
        open_ = [i for i in want if extra[i] < want[i]]
        each = max(1, spare // len(open_))
        for i in open_:
            give = min(each, want[i] - extra[i], spare)
            extra[i] += give
            spare -= give
    out = []
    for i, c in enumerate(cols):
        if i in want:
            w = c.cut + extra[i]  # type: ignore[operator]
            c = replace(c, cells=["\n".join(_cut_line(x, w, c.keep_end) for x in t.split("\n")) for t in c.cells],
                        foot=_cut_line(c.foot, w, c.keep_end))
        out.append(c)
    return out


def target_width(console: Any, *, wide: bool) -> int | None:
    """The width to fit: the terminal's (``$COLUMNS`` when set, as ``rich`` reads it); None with
    ``--wide`` or when the output is a file or a pipe (printed whole, for ``less -S`` or ``grep``)."""
    return int(console.width) if console.is_terminal and not wide else None


def print_table(title: str, cols: list[Col], *, wide: bool = False, notes: tuple[str, ...] = (),
                file: Any = None) -> None:
    """Print ``cols`` as a ``rich`` table fitted to the terminal (see the module docstring), then
    the notes: what fitting left out or shortened, and ``notes``."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    out = file or sys.stdout
    console = Console(file=out, highlight=False)
    plain = not console.is_terminal
    width = target_width(console, wide=wide)
    cols = [c for c in cols if wide or not c.wide]
    cols, said = fit(cols, width)
    n_rows = len(cols[0].cells) if cols else 0
    whole = 1 + sum(_full(c) + 3 for c in cols)
    console = Console(file=out, highlight=False, no_color=plain, width=width or max(400, whole))
    # (piped: no box and no margin, each line starts with its first cell, for grep and cut)
    t = Table(title=title, box=box.SIMPLE if plain else box.ROUNDED, show_footer=any(c.foot for c in cols),
              header_style="" if plain else "bold cyan", title_style="" if plain else "bold",
              show_edge=not plain, pad_edge=not plain)
    for c in cols:
        t.add_column(c.head, footer=c.foot, justify="right" if c.right else "left", no_wrap=True,
                     overflow="ellipsis")
    for i in range(n_rows):
        t.add_row(*[c.cells[i] for c in cols])
    console.print(t)
    for line in (*said, *notes):
        console.print(line, soft_wrap=False, overflow="fold")
