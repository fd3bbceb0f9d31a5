"""Kimi CLI wire logs (``~/.kimi/sessions/<work dir md5>/<session id>/wire.jsonl``).

Recognised by the log's ``{"type": "metadata", "protocol_version"}`` first line (or a wire message
line). Read by :func:`sessionlab.agents._kimi_reader.read_kimi`; each ``StatusUpdate`` with
``token_usage`` is a call, priced from the price table.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    """``<work dir>/<session>/wire.jsonl`` below each folder (a deeper ``wire.jsonl`` is not a
    session's), sorted per folder; symbolic links to folders are not followed."""
    out: list[str] = []
    for folder in folders:
        if not Path(folder).is_dir():
            continue
        found = [f for work in _subfolders(str(folder), errors) for session in _subfolders(work, errors)
                 if os.path.isfile(f := os.path.join(session, "wire.jsonl"))]  # (one stat per session)
        out += sorted(found)
    return out


def _subfolders(folder: str, errors: list[tuple[str, str]] | None) -> list[str]:
    """The folders in ``folder`` (not symbolic links to folders); one that cannot be listed goes to ``errors``."""
    try:
        with os.scandir(folder) as it:
            return [e.path for e in it if _is_folder(e)]
    except OSError as exc:
        if errors is not None:
            errors.append((exc.filename or folder, f"{type(exc).__name__}: {exc.strerror or exc}"))
        return []


def _is_folder(e: os.DirEntry) -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


SPEC = AgentSpec(
    name="kimi", title="Kimi CLI", recognise=_recognise, roots=roots, env=("KIMI_DATA_DIR", "KIMI_SHARE_DIR"),
    files=files, reader="sessionlab.agents._kimi_reader:read_kimi", calls_need_usage=True, priced=True,
    side_kinds=("wire messages other than turns, steps, content, tools and status",),
    folder_doc="`sessions/` of each `$KIMI_DATA_DIR` folder (comma-separated), else of `$KIMI_SHARE_DIR`, "
               "else of `~/.kimi` (`<work dir md5>/<session id>/wire.jsonl`)",
)
