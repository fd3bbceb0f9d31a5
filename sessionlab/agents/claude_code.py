"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl`` and their subagent
files).

Recognised by a line of one of Claude Code's line types carrying ``uuid``, ``sessionId``,
``leafUuid`` or ``messageId`` (or the ``summary`` / ``file-history-snapshot`` lines such files
start with). Read by :func:`sessionlab.agents._claude_reader.read_claude`; a call is an assistant line that
carries usage (a response's streamed lines and sidechain replays are counted once, across the
load's files); calls are priced from the price table.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "LINE_TYPES", "roots"]

LINE_TYPES = frozenset({
    "user", "assistant", "system", "progress", "attachment", "summary", "file-history-snapshot",
    "queue-operation", "ai-title", "custom-title", "agent-name", "agent-color", "last-prompt",
    "permission-mode", "mode", "pr-link", "agent-setting"})

_TYPE_RE = re.compile(rb'"type"\s*:\s*"([A-Za-z_-]+)"')


def _recognise(obj: dict) -> bool:
    typ = obj.get("type")
    return typ in LINE_TYPES and ("uuid" in obj or "sessionId" in obj or "leafUuid" in obj or "messageId" in obj
                                  or typ in ("summary", "file-history-snapshot"))


def _recognise_start(start: bytes) -> bool:
    m = _TYPE_RE.search(start)
    return m is not None and (m.group(1).decode() in LINE_TYPES or b'"parentUuid"' in start)


def roots() -> list[Path]:
    """``<dir>/projects`` for each ``<dir>`` of ``$CLAUDE_CONFIG_DIR`` (comma-separated; a
    ``.../projects`` folder itself is accepted), else ``$XDG_CONFIG_HOME/claude/projects``
    (``~/.config/claude/projects``) and ``~/.claude/projects``."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        out = []
        for raw in env.split(","):
            if raw.strip():
                p = home_path(raw)
                out.append(p if p.name == "projects" else p / "projects")
        return out
    xdg = os.environ.get("XDG_CONFIG_HOME")
    config = Path(xdg) if xdg else Path.home() / ".config"
    return [config / "claude" / "projects", Path.home() / ".claude" / "projects"]


def _together(path: str, head: bytes) -> tuple[tuple[str, str], None]:
    """A project folder's sessions and their subagent files dedupe against one another."""
    parts = path.replace("\\", "/").split("/")
    cut = parts.index("subagents") - 1 if "subagents" in parts[:-1] else len(parts) - 1
    return ("claude-code", "/".join(parts[:cut])), None


SPEC = AgentSpec(
    name="claude-code", title="Claude Code", recognise=_recognise, recognise_start=_recognise_start, roots=roots,
    env=("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"), reader="sessionlab.agents._claude_reader:read_claude",
    resume="sessionlab.agents._claude_reader:resume_claude",
    finish="sessionlab.agents._claude_reader:finish", calls_need_usage=True, priced=True,
    side_kinds=("progress", "attachment", "system (other than compact_boundary)"),
    folder_doc="`<dir>/projects` of each `$CLAUDE_CONFIG_DIR` entry, else `~/.config/claude/projects` and "
               "`~/.claude/projects` (`<project>/<session>.jsonl`, subagents in `<session>/subagents/`)",
    together=_together,
)
