"""Qwen Code chat records (``~/.qwen/projects/<project>/chats/<session id>.jsonl``).

Recognised by Gemini-style ``message.parts`` (or ``usageMetadata``, ``systemPayload``) on lines
that otherwise look like Claude Code's. Read by :func:`sessionlab.agents._qwen_reader.read_qwen`;
an assistant record with ``usageMetadata`` is a call, priced from the price table.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._chain import files_below
from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "roots", "files"]


def _recognise(obj: dict) -> bool:
    msg = obj.get("message")
    return "sessionId" in obj and (isinstance(msg, dict) and "parts" in msg or "usageMetadata" in obj
                                   or "systemPayload" in obj)


def roots() -> list[Path]:
    """The ``projects`` folder of each ``$QWEN_DATA_DIR`` folder (comma-separated), else of ``~/.qwen``."""
    env = os.environ.get("QWEN_DATA_DIR")
    if env is not None:
        return [home_path(p) / "projects" for p in env.split(",") if p.strip()]
    return [Path.home() / ".qwen" / "projects"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """``<project>/chats/*.jsonl`` below each folder."""
    return [f for f in files_below(folders, ("*/chats/*.jsonl",), errors)
            if f.rsplit(os.sep, 3)[-3] != "chats"]  # (the project's folder: none below a chats/)


SPEC = AgentSpec(
    name="qwen", title="Qwen Code", recognise=_recognise, roots=roots, env=("QWEN_DATA_DIR",), files=files,
    reader="sessionlab.agents._qwen_reader:read_qwen", calls_need_usage=True, priced=True,
    side_kinds=("system (other than chat_compression)",),
    folder_doc="`projects/` of each `$QWEN_DATA_DIR` folder (comma-separated), else of `~/.qwen` "
               "(`<project>/chats/<session id>.jsonl`)",
)
