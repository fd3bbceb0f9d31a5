"""Which sessions a command reads: the paths given (else the agents' default folders), ``--agent``
and ``--project``; and the one line a command prints when it finds none.

``--project`` keeps the session files whose working directory (the sessions table's ``cwd``)
contains the text given, or, when it holds a glob character (``*``, ``?``, ``[``), matches it as a
whole (``*/webapp``). The files are loaded once to learn their folders, and the matching ones
again (from the loaders' cache), so every table of the result is the one ``load`` gives for exactly
those files.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from .. import agents as _agents
from .. import tables
from ..tables import Corpus, load

__all__ = ["NO_SESSIONS", "load_selected", "matches_project", "no_sessions", "project_files", "searched"]

NO_SESSIONS = 1
"""The exit code of a command that found no sessions (2 is a bad argument or a missing path)."""


def matches_project(cwd: str | None, project: str) -> bool:
    """Whether a session's working directory ``cwd`` matches ``--project`` (a substring, or a glob
    matched against the whole path when ``project`` holds ``*``, ``?`` or ``[``)."""
    if cwd is None:
        return False
    if any(ch in project for ch in "*?["):
        return fnmatch.fnmatchcase(cwd, project)
    return project in cwd


def _matching(corpus: Corpus, project: str) -> list[str]:
    s = corpus.sessions
    return [f for f, cwd in zip(s["file"].to_pylist(), s["cwd"].to_pylist()) if matches_project(cwd, project)]


def load_selected(paths: Sequence[str] | None, *, project: str | None = None,
                  agents: Sequence[str] | None = None, spend_only: bool = False) -> Corpus:
    """The corpus of ``paths`` (None or empty: the agents' default folders), only ``agents``' files,
    only the sessions whose folder matches ``project`` (see :func:`matches_project`); ``spend_only``:
    for a usage report, see :func:`~sessionlab.tables._load.load_files`."""
    source = list(paths) if paths else None
    corpus = _loaded(source, agents, spend_only)
    if project is None:
        return corpus
    keep = _matching(corpus, project)
    if len(keep) == corpus.sessions.num_rows:
        return corpus
    if not keep:  # nothing to read again
        return Corpus([], rules=corpus.rules, agents=agents)
    return _loaded(keep, agents, spend_only)


def _loaded(source: Sequence[str] | None, agents: Sequence[str] | None, spend_only: bool) -> Corpus:
    if not spend_only:
        return load(source, on_bad_lines="skip", progress=False, agents=agents)
    res = tables.load_files(source, on_bad_lines="skip", progress=False, agents=agents, spend_only=True)
    return Corpus(res.results, loaded=res, agents=agents)


def project_files(paths: Sequence[str] | None, *, project: str, agents: Sequence[str] | None = None) -> list[str]:
    """The session files of ``paths`` (None or empty: the default folders) whose folder matches
    ``project``."""
    return _matching(load(list(paths) if paths else None, on_bad_lines="skip", progress=False, agents=agents),
                     project)


def searched(paths: Sequence[str] | None, agents: Sequence[str] | None = None) -> str:
    """The folders and files a command looked in: ``paths``, else each agent's default folders
    (``(missing)`` after those that do not exist)."""
    if paths:
        return ", ".join(map(str, paths))
    roots: dict[str, list[Path]] = _agents.default_roots()
    chosen = list(agents) if agents else list(roots)
    return ", ".join(f"{p}{'' if p.exists() else ' (missing)'}" for a in chosen for p in roots[a])


def no_sessions(command: str, paths: Sequence[str] | None, *, project: str | None = None,
                agents: Sequence[str] | None = None, since: str | None = None, until: str | None = None,
                what: str = "sessions") -> str:
    """The line a command prints (to stderr, exit code :data:`NO_SESSIONS`) when it found nothing."""
    where = []
    if project is not None:
        where.append(f"whose folder matches --project {project!r}")
    if since or until:
        where.append(f"from {since or 'the start'} to {until or 'the end'}")
    if agents:
        where.append(f"of {', '.join(agents)}")
    qual = (" " + " ".join(where)) if where else ""
    return f"sessionlab {command}: no {what}{qual} in: {searched(paths, agents) or 'no folders'}"
