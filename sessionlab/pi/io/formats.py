"""Reading a session file's lines without holding a huge one in memory, the columns an agent's
reader fills (:class:`AgentFile`), and pi's two dialects.

Which agent wrote a file is decided by :func:`sessionlab.agents.detect` (each agent declares how
its files look); :func:`detect_dialect` says whether a pi file uses pi's camelCase keys or the
seed's snake_case ones.

:func:`iter_lines` yields a file's lines from fixed-size reads; a line longer than ``max_line``
bytes (Claude Code's ``file-history-snapshot`` lines reach 700 MB) is streamed past, keeping only
its start for the report.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from ..rules import CHARS_PER_TOKEN
from .issues import LineIssue

__all__ = ["iter_lines", "AgentFile", "row_columns", "HEAD_BYTES", "MAX_LINE", "Dialect", "detect_dialect",
           "HEAD_LINES"]

HEAD_BYTES = 1 << 16  # what detection reads (:func:`sessionlab.agents.detect`)
MAX_LINE = 64 << 20  # a longer line is skipped (streamed past), not parsed
_READ = 1 << 20


def iter_lines(fh: IO[bytes], *, max_line: int | None = None) -> Iterator[tuple[int, bytes | None, bytes]]:
    """``(line_no, line, start)`` for each line of a binary file, read in 1 MB pieces.

    ``line`` is the line without its newline, or ``None`` for a line longer than ``max_line`` bytes,
    which is skipped without being held in memory; ``start`` is then its first 200 bytes (else
    ``b""``). Blank lines are yielded too (the caller skips them). ``max_line`` defaults to
    :data:`MAX_LINE`.
    """
    if max_line is None:
        max_line = MAX_LINE
    carry = bytearray()
    skipping = False
    start = b""
    line_no = 0
    while True:
        chunk = fh.read(_READ)
        if not chunk:
            break
        pos = 0
        while True:
            nl = chunk.find(b"\n", pos)
            if nl < 0:
                rest = chunk[pos:]
                if skipping:
                    pass
                elif len(carry) + len(rest) > max_line:
                    start = bytes(carry[:200] + rest[:200])[:200]
                    carry, skipping = bytearray(), True
                else:
                    carry += rest
                break
            line_no += 1
            if skipping:
                yield line_no, None, start
                skipping, start = False, b""
            else:
                piece = chunk[pos:nl]
                if len(carry) + len(piece) > max_line:
                    yield line_no, None, bytes(carry[:200] + piece[:200])[:200]
                else:
                    yield line_no, (bytes(carry + piece) if carry else piece), b""
                carry = bytearray()
            pos = nl + 1
    if skipping:
        yield line_no + 1, None, start
    elif carry:
        yield line_no + 1, bytes(carry), b""


@dataclass
class AgentFile:
    """One Claude Code or Codex file read into table columns (names of the entries schema).

    ``columns`` maps entry column names to lists (missing columns are null), or, when ``rows`` is
    set, the rows are tuples of the columns ``row_names`` (a batch of such files is turned into
    columns at once: :meth:`column_lists` for one file); ``blocks`` holds block rows (the block
    columns after ``session_id``), ``session`` the session row's own facts (totals come from the
    entries), ``issues`` the line issues.
    """

    path: str
    agent: str
    columns: dict[str, list] = field(default_factory=dict)
    n: int = 0
    rows: list[tuple] | None = None
    row_names: tuple[str, ...] = ()
    blocks: list[tuple] = field(default_factory=list)
    session: dict[str, Any] = field(default_factory=dict)
    issues: list[LineIssue] = field(default_factory=list)
    # what the agent's own pass over a load needs of this file (AgentSpec.finish), e.g. the totals of
    # every token_count of a Codex file (fork replays are matched against them)
    extra: Any = None
    # what the reader needs to go on reading the file's later lines alone (JSON; None: it cannot)
    state: Any = None

    def column_lists(self) -> dict[str, list]:
        """The file's columns (from its ``rows`` when it has them)."""
        return self.columns if self.rows is None else row_columns(self.row_names, self.rows)


def row_columns(names: tuple[str, ...], rows: list[tuple]) -> dict[str, list]:
    """Rows (tuples of the columns ``names``) as columns; a column ``est_chars`` (characters)
    becomes ``est_tokens`` (pi's estimate, ``ceil(chars / 4)``)."""
    cols = dict(zip(names, map(list, zip(*rows)))) if rows else {n: [] for n in names}
    if "est_chars" in cols:
        cols["est_tokens"] = [None if v is None else -(-v // CHARS_PER_TOKEN) for v in cols.pop("est_chars")]
    return cols


# -- pi's two dialects: pi's camelCase keys or the seed's snake_case ones (see .dialects) ------------

Dialect = Literal["pi", "seed"]

_SEED_MARKERS = frozenset({"parent_id", "parent_session", "metadata", "model_id", "thinking_level",
                           "first_kept_entry_id", "tokens_before", "from_id", "target_id",
                           "custom_type", "active_tool_names", "retained_tail"})
_PI_MARKERS = frozenset({"parentId", "parentSession", "modelId", "thinkingLevel",
                         "firstKeptEntryId", "firstKeptEntryIndex", "tokensBefore", "fromId",
                         "targetId", "customType", "branchedFrom"})


#: the lines at the head of a file whose objects :func:`detect_dialect` looks at (the header and 20
#: entries); the C scanner's ``HEAD_LINES`` must agree (checked by ``tests/test_tokens.py``)
HEAD_LINES = 21


def detect_dialect(objects: list[dict]) -> Dialect:
    """``"seed"`` if the objects use the seed's snake_case keys, else ``"pi"``.

    The entries' parent key decides (``parent_id`` vs ``parentId``); failing that, the count of
    dialect-specific keys over the objects given (pi's default when tied).
    """
    seed = pi = 0
    for d in objects:
        if "parent_id" in d:
            return "seed"
        if "parentId" in d:
            return "pi"
        keys = d.keys()
        seed += len(_SEED_MARKERS.intersection(keys))
        pi += len(_PI_MARKERS.intersection(keys))
    return "seed" if seed > pi else "pi"
