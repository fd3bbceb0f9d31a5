"""Stores whose sessions are known only by reading them (:attr:`~sessionlab.agents.AgentSpec.stores`:
Copilot's exports, the parts of Goose's database). A load of the default folders lists such stores
alone; the worker given a store lists its sessions and reads them, so that each store is parsed
once, in parallel, rather than all of them by the loading process before any worker starts."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import agents as registry
from ..pi.io.issues import LineIssue
from ._file import FileResult

__all__ = ["listed_stores", "load_stores"]


def listed_stores(agents: Sequence[str] | None, errors: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The stores of the chosen agents whose sessions are listed by reading them, by agent, in the
    agents' default folders (a folder that cannot be listed goes to ``errors``)."""
    out: dict[str, list[str]] = {}
    for name in registry.check_agents(agents):
        spec = registry.spec(name)
        if spec.stores is not None:
            out[name] = spec.stores(spec.roots(), errors)
    return out


def load_stores(stores: list[str], agent: str, load: Callable[[list[str]], list[FileResult]]) -> list[FileResult]:
    """The sessions of ``agent``'s ``stores`` listed, then loaded by ``load`` (the task's loader:
    :func:`._file.load_chunk`, or a usage report's :func:`._bundle.read_spend`), in the stores'
    order; a store that cannot be read is a ``read_error`` result of its own, after them."""
    import sqlite3  # (a database's part that cannot be read: see sessionlab.agents._parts)

    spec = registry.spec(agent)
    paths: list[str] = []
    failed: list[FileResult] = []
    for s in stores:
        try:
            paths += spec.sessions_of(s)
        except (OSError, sqlite3.Error) as exc:
            msg = f"cannot list its sessions: {type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
            failed.append(FileResult(path=s, issues=[LineIssue(s, 0, "read_error", msg)]))
    try:
        return load(paths) + failed
    finally:
        spec.finish_load([])  # (what listing parsed, let go: the reads are done)
