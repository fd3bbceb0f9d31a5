"""Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions``).

Recognised by ``{"timestamp", "type", "payload"}`` lines of Codex's line types. Read by
:func:`sessionlab.agents._codex_reader.read_codex`; a call is an assistant message carrying usage (Codex's
``token_count`` differences); a fork or sub-agent thread's replay of its parent is counted once;
calls are priced from the price table.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._spec import AgentSpec, home_path, jsonl_below

__all__ = ["SPEC", "LINE_TYPES", "roots", "files"]

LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})


def _recognise(obj: dict) -> bool:
    return "payload" in obj and obj.get("type") in LINE_TYPES


_TYPE_RE = re.compile(rb'"type"\s*:\s*"([A-Za-z_-]+)"')


def _recognise_start(start: bytes) -> bool:
    m = _TYPE_RE.search(start)
    return m is not None and m.group(1).decode() in LINE_TYPES and b'"payload"' in start


def roots() -> list[Path]:
    """``sessions`` and ``archived_sessions`` of ``$CODEX_HOME``, else of ``~/.codex``."""
    env = os.environ.get("CODEX_HOME")
    home = home_path(env) if env else Path.home() / ".codex"
    return [home / "sessions", home / "archived_sessions"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Both folders' files; a file of ``archived_sessions`` whose relative path is also in
    ``sessions`` is left out (the active copy wins)."""
    sessions, archived = folders
    active = jsonl_below([sessions], errors)
    rel = {os.path.relpath(f, sessions) for f in active}
    return active + [f for f in jsonl_below([archived], errors) if os.path.relpath(f, archived) not in rel]


def _together(path: str, head: bytes) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """A fork or spawned thread goes with its parent thread (its replayed usage is matched there)."""
    import json

    from ._codex_reader import _parent_thread

    try:
        meta = json.loads(head.split(b"\n", 1)[0]).get("payload") or {}
    except (ValueError, AttributeError):
        return None, None
    tid, parent = meta.get("id"), meta.get("forked_from_id") or _parent_thread(meta.get("source"))
    return (("codex", tid) if isinstance(tid, str) else None), (("codex", parent) if isinstance(parent, str) else None)


SPEC = AgentSpec(
    name="codex", title="Codex", recognise=_recognise, recognise_start=_recognise_start, roots=roots,
    env=("CODEX_HOME",), files=files, reader="sessionlab.agents._codex_reader:read_codex",
    resume="sessionlab.agents._codex_reader:resume_codex",
    finish="sessionlab.agents._codex_reader:finish", calls_need_usage=True, priced=True,
    side_kinds=("turn_context",),
    folder_doc="`sessions/` and `archived_sessions/` of `$CODEX_HOME`, else of `~/.codex` "
               "(`YYYY/MM/DD/rollout-<time>-<id>.jsonl`)",
    together=_together,
)
