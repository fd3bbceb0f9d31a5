"""Which agent wrote a session file, and reading its lines without holding a huge one in memory.

Every file is one of: a pi session (v1-v4, or the seed's snake_case dialect: a ``session``
header first), a Claude Code transcript (``~/.claude/projects/**.jsonl``: lines with
``uuid``/``parentUuid``/``sessionId``, or the ``summary`` / ``file-history-snapshot`` lines such
files start with), or a Codex rollout (``{"timestamp", "type", "payload"}`` lines, ``session_meta``
first). :func:`detect_agent` decides from the first bytes of the file, and
:func:`detect_dialect` whether a pi file uses pi's camelCase keys or the seed's snake_case ones.

:func:`iter_lines` yields a file's lines from fixed-size reads; a line longer than ``max_line``
bytes (Claude Code's ``file-history-snapshot`` lines reach 700 MB) is streamed past, keeping only
its start for the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from .issues import LineIssue

__all__ = ["Agent", "AGENTS", "detect_agent", "iter_lines", "AgentFile", "HEAD_BYTES", "MAX_LINE", "Dialect",
           "detect_dialect", "HEAD_LINES"]

Agent = Literal["pi", "claude-code", "codex"]
AGENTS: tuple[Agent, ...] = ("pi", "claude-code", "codex")

HEAD_BYTES = 1 << 16  # what detection reads
MAX_LINE = 64 << 20  # a longer line is skipped (streamed past), not parsed
_READ = 1 << 20

CLAUDE_TYPES = frozenset({
    "user", "assistant", "system", "progress", "attachment", "summary", "file-history-snapshot",
    "queue-operation", "ai-title", "custom-title", "agent-name", "agent-color", "last-prompt",
    "permission-mode", "mode", "pr-link", "agent-setting"})
CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})

_TYPE_RE = re.compile(rb'"type"\s*:\s*"([A-Za-z_-]+)"')


def _classify(obj: Any) -> Agent | None:
    if not isinstance(obj, dict):
        return None
    typ = obj.get("type")
    if typ == "session":
        return "pi"
    if "payload" in obj and typ in CODEX_TYPES:
        return "codex"
    if typ in CLAUDE_TYPES and ("uuid" in obj or "sessionId" in obj or "leafUuid" in obj
                                or "messageId" in obj or typ in ("summary", "file-history-snapshot")):
        return "claude-code"
    return None


def _complete_lines(head: bytes, most: int) -> Iterator[bytes]:
    """The first ``most`` lines of ``head`` that end with a newline (found one at a time: the
    first line decides for almost every file)."""
    pos = 0
    for _ in range(most):
        end = head.find(b"\n", pos)
        if end < 0:
            return
        yield head[pos:end]
        pos = end + 1


def detect_agent(head: bytes) -> Agent:
    """The agent of a file from its first bytes (:data:`HEAD_BYTES` are enough).

    The first complete lines that are JSON objects decide; a first line longer than ``head`` is
    recognised by its start (a Claude Code ``file-history-snapshot``, a Codex envelope). Anything
    else is ``"pi"``: pi's tolerant reader reports what is wrong with it.

    Example:
        >>> detect_agent(b'{"type":"session","version":3,"id":"s"}\\n')
        'pi'
        >>> detect_agent(b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{}}\\n')
        'codex'
    """
    for ln in _complete_lines(head, 20):
        s = ln.strip()
        if not s:
            continue
        try:
            obj = json.loads(s)
        except ValueError:
            continue
        agent = _classify(obj)
        if agent is not None:
            return agent
        if isinstance(obj, dict):
            break  # an object of no known agent: pi's reader reports it
    start = head if b"\n" not in head else b""
    if head.lstrip()[:1] == b"{" and head.lstrip().split(b"\n", 1)[0].strip() == b"{":
        start = head  # pretty-printed: one object over several lines (its start decides)
    if start:  # a first line longer than the head: its start
        m = _TYPE_RE.search(start[:4096])
        if m is not None:
            t = m.group(1).decode()
            if t in CODEX_TYPES and b'"payload"' in start[:4096]:
                return "codex"
            if t in CLAUDE_TYPES or b'"parentUuid"' in start[:4096]:
                return "claude-code"
    return "pi"


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

    ``columns`` maps entry column names to lists (missing columns are null), ``blocks`` holds
    block rows (the block columns after ``session_id``), ``session`` the session row's own facts
    (totals come from the entries), ``issues`` the line issues.
    """

    path: str
    agent: Agent
    columns: dict[str, list] = field(default_factory=dict)
    n: int = 0
    blocks: list[tuple] = field(default_factory=list)
    session: dict[str, Any] = field(default_factory=dict)
    issues: list[LineIssue] = field(default_factory=list)
    # the totals of every token_count of a Codex file (fork replays are matched against them)
    codex_totals: list[tuple] = field(default_factory=list)


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
