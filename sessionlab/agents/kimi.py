"""Kimi CLI wire logs (``~/.kimi/sessions/<work dir md5>/<session id>/wire.jsonl``).

Recognised by the log's ``{"type": "metadata", "protocol_version"}`` first line (or a wire message
line). Read by :func:`sessionlab.agents._kimi_reader.read_kimi`; each ``StatusUpdate`` with
``token_usage`` is a call, priced from the price table.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._chain import files_below
from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "roots", "files"]

_WIRE = frozenset({"TurnBegin", "StepBegin", "ContentPart", "ToolCall", "ToolResult", "StatusUpdate", "TurnEnd"})


def _recognise(obj: dict) -> bool:
    if obj.get("type") == "metadata":
        return "protocol_version" in obj
    msg = obj.get("message")
    return isinstance(msg, dict) and msg.get("type") in _WIRE and "timestamp" in obj


def roots() -> list[Path]:
    """The ``sessions`` folder of each ``$KIMI_DATA_DIR`` folder (comma-separated), else of
    ``$KIMI_SHARE_DIR``, else of ``~/.kimi`` (Kimi CLI's share folder)."""
    env = os.environ.get("KIMI_DATA_DIR")
    if env is not None:
        return [home_path(p) / "sessions" for p in env.split(",") if p.strip()]
    share = os.environ.get("KIMI_SHARE_DIR", "").strip()
    return [(home_path(share) if share else Path.home() / ".kimi") / "sessions"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """``<work dir>/<session>/wire.jsonl`` below each folder (a deeper ``wire.jsonl`` is not a session's)."""
    return [f for folder in folders for f in files_below([folder], ("*/*/wire.jsonl",), errors)
            if _depth(f, os.path.join(str(folder), "")) == 2]


def _depth(path: str, prefix: str) -> int:
    """Folders between ``prefix`` (a folder, ending in the separator) and the file ``path`` below it."""
    rel = path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, prefix)
    return rel.count(os.sep)


SPEC = AgentSpec(
    name="kimi", title="Kimi CLI", recognise=_recognise, roots=roots, env=("KIMI_DATA_DIR", "KIMI_SHARE_DIR"),
    files=files, reader="sessionlab.agents._kimi_reader:read_kimi", calls_need_usage=True, priced=True,
    side_kinds=("wire messages other than turns, steps, content, tools and status",),
    folder_doc="`sessions/` of each `$KIMI_DATA_DIR` folder (comma-separated), else of `$KIMI_SHARE_DIR`, "
               "else of `~/.kimi` (`<work dir md5>/<session id>/wire.jsonl`)",
)
