"""pi (``@earendil-works/pi-coding-agent``): session files of v1-v3, the seed's snake_case dialect
and pi-agent-core's v4 harness files.

Recognised by a ``{"type": "session", ...}`` header line. Read by the pi loader's own paths (the C
scanner, the msgspec path, the object model), not through a reader of this registry; every
assistant message is a call and its cost is the one pi recorded.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "sessions_dir"]


def sessions_dir() -> Path:
    """pi's sessions folder: ``$PI_CODING_AGENT_DIR/sessions`` (``~`` expanded), else
    ``~/.pi/agent/sessions``."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return (home_path(env) if env else Path.home() / ".pi" / "agent") / "sessions"


def _recognise(obj: dict) -> bool:
    return obj.get("type") == "session"


SPEC = AgentSpec(
    name="pi", title="pi", recognise=_recognise, roots=lambda: [sessions_dir()], env=("PI_CODING_AGENT_DIR",),
    reader=None, calls_need_usage=False, priced=False,
    folder_doc="`$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions` (`--<cwd>--/<time>_<id>.jsonl`)",
)
