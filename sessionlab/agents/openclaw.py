"""OpenClaw sessions (``~/.openclaw/agents/<agent>/sessions/<session>.jsonl``).

OpenClaw runs pi's agent and writes pi's session files (version 3: a ``session`` header, ``message``
entries whose assistant messages carry ``usage`` with ``cost.total``, ``model_change``,
``compaction``, ``custom`` entries such as ``model-snapshot``). They are read by pi's loader and
labelled ``openclaw``; what tells them apart is where they live: ``agents/<agent>/sessions/``
below ``$OPENCLAW_DIR`` (comma-separated) or, without it, below ``~/.openclaw`` and the folders of
its former names (``~/.clawdbot``, ``~/.moltbot``, ``~/.moldbot``). A session OpenClaw deleted or
reset is kept beside it as ``<session>.jsonl.deleted.<time>`` or ``.jsonl.reset.<time>``; both are
read. Calls without a recorded cost are priced.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "roots", "files"]

_NAME = re.compile(r"\.jsonl(\.deleted\..+|\.reset\..+)?$")


def roots() -> list[Path]:
    """The folders of ``$OPENCLAW_DIR`` (comma-separated), else ``~/.openclaw``, ``~/.clawdbot``,
    ``~/.moltbot`` and ``~/.moldbot``."""
    env = os.environ.get("OPENCLAW_DIR")
    if env and env.strip():
        return [home_path(p) for p in env.split(",") if p.strip()]
    home = Path.home()
    return [home / ".openclaw", home / ".clawdbot", home / ".moltbot", home / ".moldbot"]


def _sessions_folder_parts(rel: tuple[str, ...]) -> bool:
    """``agents/<agent>/sessions``."""
    return len(rel) == 3 and rel[0] == "agents" and rel[2] == "sessions"


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """The session files of every agent below each folder (symlinks are not followed), sorted."""
    out: list[str] = []
    for root in dict.fromkeys(folders):
        agents = Path(root) / "agents"
        if not agents.is_dir():
            continue
        try:
            for agent in sorted(agents.iterdir()):
                folder = agent / "sessions"
                if agent.is_symlink() or not folder.is_dir() or folder.is_symlink():
                    continue
                with os.scandir(folder) as it:  # (an entry knows its kind: no stat per file)
                    out += sorted(e.path for e in it
                                  if _NAME.search(e.name) and e.is_file(follow_symlinks=False))
        except OSError as exc:
            if errors is not None:
                errors.append((exc.filename or str(agents), f"{type(exc).__name__}: {exc.strerror or exc}"))
    return out


@lru_cache(maxsize=8)
def _root_prefixes(env: str | None, home: str, cwd: str) -> tuple[str, ...]:
    """Each root as an absolute path ending in the separator (kept per environment, home and working
    folder: a load asks for every file it read)."""
    return tuple(os.path.join(os.path.abspath(r), "") for r in roots())


def _recognise_file(path: str, head: bytes) -> bool:
    if f"{os.sep}sessions{os.sep}" not in path or f"{os.sep}agents{os.sep}" not in path:
        return False  # (most files: no path arithmetic, no environment)
    folder, _, name = path.rpartition(os.sep)
    return _NAME.search(name) is not None and _sessions_folder(folder, os.environ.get("OPENCLAW_DIR"),
                                                               os.environ.get("HOME", ""), os.getcwd())


@lru_cache(maxsize=1024)
def _sessions_folder(folder: str, env: str | None, home: str, cwd: str) -> bool:
    """Whether ``folder`` is ``agents/<agent>/sessions`` below a root (kept per folder, environment,
    home and working folder: a load asks for every file it read, a folder holds many)."""
    p = os.path.join(os.path.abspath(folder or os.sep), "")
    for r in _root_prefixes(env, home, cwd):
        if p.startswith(r) and _sessions_folder_parts(tuple(p[len(r):-1].split(os.sep))):
            return True
    return False


SPEC = AgentSpec(
    name="openclaw", title="OpenClaw", recognise=lambda obj: False, recognise_file=_recognise_file, roots=roots,
    env=("OPENCLAW_DIR",), files=files, reader=None, calls_need_usage=False, priced=True,
    folder_doc="`agents/<agent>/sessions/` below `$OPENCLAW_DIR` (comma-separated), else below `~/.openclaw` "
               "(and `~/.clawdbot`, `~/.moltbot`, `~/.moldbot`): pi session files, with `.jsonl.deleted.<time>` "
               "and `.jsonl.reset.<time>` copies",
)
