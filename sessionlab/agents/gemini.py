"""Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/session-*.json`` and ``.jsonl``).

Recognised by the session's ``sessionId`` and ``projectHash`` (a JSONL recording's first line, or
the start of a JSON one). Read by :func:`sessionlab.agents._gemini_reader.read_gemini`; every
``gemini`` message that carries ``tokens`` is a call, priced from the price table.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._chain import files_below
from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "roots", "files"]


def _recognise(obj: dict) -> bool:
    return "sessionId" in obj and "projectHash" in obj


def _recognise_start(start: bytes) -> bool:
    return b'"sessionId"' in start and b'"projectHash"' in start


def _recognise_file(path: str, head: bytes) -> bool:
    """A JSON recording by where it is (``chats/*.json``) and its start: known before detection walks
    the lines of a pretty document."""
    return (path.endswith(".json") and "chats" in path  # (most files: no path arithmetic)
            and os.path.basename(os.path.dirname(path)) == "chats" and _recognise_start(head[:4096]))


def roots() -> list[Path]:
    """Each folder of ``$GEMINI_DATA_DIR`` (comma-separated), else ``~/.gemini/tmp``."""
    env = os.environ.get("GEMINI_DATA_DIR")
    if env is not None:
        return [home_path(p) for p in env.split(",") if p.strip()]
    return [Path.home() / ".gemini" / "tmp"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """The chat recordings: ``chats/*.json`` and ``chats/*.jsonl`` below the folders."""
    return files_below(folders, ("*chats/*.json", "*chats/*.jsonl"), errors)


SPEC = AgentSpec(
    name="gemini", title="Gemini CLI", recognise=_recognise, recognise_start=_recognise_start,
    recognise_file=_recognise_file, roots=roots,
    env=("GEMINI_DATA_DIR",), files=files, reader="sessionlab.agents._gemini_reader:read_gemini",
    calls_need_usage=True, priced=True, side_kinds=("info", "error", "warning"),
    folder_doc="`$GEMINI_DATA_DIR` (comma-separated), else `~/.gemini/tmp` "
               "(`<project>/chats/session-<time>-<id>.json` or `.jsonl`)",
)
