"""The agents whose session files sessionlab reads, as a seam: one module per agent, one registry.

Each agent module (:mod:`.pi`, :mod:`.claude_code`, :mod:`.codex`) declares an
:class:`~._spec.AgentSpec`: how to recognise its files, its default folders and the environment
variables they follow, its reader into the common columns, its is-a-call rule and its side-node
kinds. This registry drives everything that depends on the agent:

- format detection, once per file (:func:`detect`), from the file's first bytes;
- ``load(agents=...)`` and ``load()``'s default folders (:func:`default_roots`, :func:`default_files`);
- the CLI's ``--agent`` choices and the docs (:func:`names`);
- the facts module's call rule (:func:`calls_need_usage`) and the pricing of unpriced calls.

Adding an agent is one module with its ``SPEC`` and a :func:`register` call (a test adds a toy
agent this way and gets every table and report).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ArgumentTypeError, ArgumentValueError, check_option
from ..pi.io.formats import AgentFile
from . import (
    amp,
    claude_code,
    codex,
    copilot,
    droid,
    gemini,
    goose,
    grok,
    hermes,
    kilo,
    kimi,
    openclaw,
    opencode,
    pi,
    qwen,
)
from ._chain import sharing_stores
from ._spec import (
    BATCH,
    USAGE_COLUMNS,
    AgentSpec,
    home_path,
    jsonl_below,
    member_path,
    name_listed,
    null_usage,
    reading_spend_only,
    split_member,
    split_members,
    store_memo,
)

__all__ = ["AgentSpec", "AgentFile", "register", "unregister", "spec", "specs", "names", "detect", "check_agents",
           "default_roots", "default_files", "calls_need_usage", "priced_agents", "home_path", "jsonl_below",
           "markdown", "USAGE_COLUMNS", "null_usage", "agent_messages", "opener", "opener_key", "openers",
           "member_path", "split_member", "split_members", "name_listed", "pi_format", "label_pi_format",
           "sharing_stores", "reading_spend_only", "read_source"]

_REGISTRY: dict[str, AgentSpec] = {}
_OPENERS: list[AgentSpec] = []  # (the registry's agents with ``opens``, in order: asked of every file)


def register(agent: AgentSpec) -> AgentSpec:
    """Add (or replace) an agent; returns it. Detection asks agents in registration order, pi first."""
    if not isinstance(agent, AgentSpec):
        raise ArgumentTypeError("agent", f"agent must be an AgentSpec, not {type(agent).__name__}")
    _REGISTRY[agent.name] = agent
    _OPENERS[:] = [a for a in _REGISTRY.values() if a.opens is not None]
    return agent


def unregister(name: str) -> None:
    """Remove an agent added with :func:`register` (pi cannot be removed)."""
    if name == "pi":
        raise ArgumentValueError("name", "pi cannot be unregistered")
    _REGISTRY.pop(name, None)
    _OPENERS[:] = [a for a in _REGISTRY.values() if a.opens is not None]


# agents whose files a looser rule of an earlier agent would also take come first (a Gemini CLI
# recording and a Qwen Code file start with a `"type": "user"` message, as Claude Code lines do)
for _module in (pi, codex, gemini, qwen, claude_code, opencode, kimi, amp, droid, kilo, hermes, openclaw, grok, copilot,
                goose):
    register(_module.SPEC)


def pi_format(name: str) -> bool:
    """Whether ``name``'s files are pi session files (read by pi's loader, then labelled ``name``)."""
    a = _REGISTRY.get(name)
    return a is not None and a.reader is None and name != "pi"


def label_pi_format(results: list) -> list[tuple[Any, str]]:
    """A load's files that pi's loader read for an agent whose sessions are pi session files
    (OpenClaw's): their sessions labelled with that agent (its ``recognise_file`` claims them by
    path). Returns each such file with its agent, for the loader to label its entries too."""
    claim = [a for a in _REGISTRY.values() if pi_format(a.name) and a.recognise_file is not None]
    out: list[tuple[Any, str]] = []
    for r in results if claim else ():
        if r.session is None or r.session.get("agent", "pi") != "pi":
            continue
        a = next((a for a in claim if a.recognise_file(r.path, b"")), None)  # type: ignore[misc]
        if a is not None:
            r.session["agent"] = a.name
            out.append((r, a.name))
    return out


def specs() -> tuple[AgentSpec, ...]:
    """Every registered agent, in registration order."""
    return tuple(_REGISTRY.values())


def names() -> tuple[str, ...]:
    """The registered agents' names (the ``agent`` column's values, ``agents=`` and ``--agent``)."""
    return tuple(_REGISTRY)


def spec(name: str) -> AgentSpec:
    """The agent called ``name``."""
    found = _REGISTRY.get(name) if type(name) is str else None  # (asked once per file read)
    if found is not None:
        return found
    check_option("agent", name, _REGISTRY)
    return _REGISTRY[name]


def check_agents(agents: object) -> list[str]:
    """``agents=`` checked: None (every agent), one name or a list of names."""
    if agents is None:
        return list(_REGISTRY)
    chosen = [agents] if isinstance(agents, str) else list(agents)  # type: ignore[call-overload]
    for a in chosen:
        check_option("agents", a, _REGISTRY)
    return chosen


def calls_need_usage() -> frozenset[str]:
    """The agents whose calls are the assistant lines that carry usage."""
    return frozenset(a.name for a in _REGISTRY.values() if a.calls_need_usage)


def priced_agents() -> frozenset[str]:
    """The agents whose calls without a recorded cost are priced."""
    return frozenset(a.name for a in _REGISTRY.values() if a.priced)


def default_roots() -> dict[str, list[Path]]:
    """Each agent's default session folders (existing or not)."""
    return {a.name: a.roots() for a in _REGISTRY.values()}


def default_files(agents: object = None, *, errors: list[tuple[str, str]] | None = None) -> list[str]:
    """The session files in the default folders of ``agents`` (all by default), each once; a
    folder that cannot be listed goes to ``errors``."""
    seen: dict[str, None] = {}
    for name in check_agents(agents):
        a = _REGISTRY[name]
        for f in a.files(a.roots(), errors if errors is not None else []):
            seen.setdefault(f, None)
    return list(seen)


def opener(path: str) -> str | None:
    """The agent whose reader opens the source ``path`` itself (:attr:`AgentSpec.opens`: a session
    in a database, a folder), else None (a file: detected from its first bytes).

    While a batch shares its stores, a store's session (``<store>#<key>``) is answered once per
    store and shape of key: every agent's ``opens`` asks no more of a member path (a test holds
    each agent's answers equal either way)."""
    if "#" in path and getattr(BATCH, "memo", None) is not None:
        store, key = split_member(path)
        if key is not None:
            return store_memo(opener_key(store, key), lambda: _opener(path))
    return _opener(path)


def opener_key(store: str, key: str) -> tuple:
    """What :func:`opener`'s answer of a store's session (``<store>#<key>``) depends on: its store
    and the shape of its key."""
    return ("opener", store, "/" in key or os.sep in key, key == "")


def openers(paths: Sequence[str], *, files: bool = True) -> list[tuple[str, str | None, str | None]]:
    """Each path's store and key (:func:`split_members`) and :func:`opener`, asked once per store and
    shape of key (:func:`opener_key`) of a store's thousands of sessions; a path that is no store's
    session asked each (``files``), else None."""
    answered: dict[tuple, str | None] = {}
    out = []
    for p, (store, key) in zip(paths, split_members(paths), strict=True):
        if key is None:
            out.append((store, key, opener(p) if files else None))
            continue
        shape = opener_key(store, key)
        agent = answered[shape] if shape in answered else answered.setdefault(shape, opener(p))
        out.append((store, key, agent))
    return out


def read_source(agent: str, path: str) -> AgentFile:
    """A source the agent's reader opens itself (:attr:`AgentSpec.opens`) read. While a batch shares
    its stores, a store's session comes from one read of all the batch's sessions of that store
    (:attr:`AgentSpec.members`), each handed out once; a store whose joint read fails, and a
    session asked again, are read alone (each then reports its own failure)."""
    spec = _REGISTRY[agent]
    members = getattr(BATCH, "members", None)
    if spec.members is None or members is None or "#" not in path:
        return spec.read(path, None)
    store, key = split_member(path)
    if key is None:  # (a file whose name holds a ``#``)
        return spec.read(path, None)
    read = store_memo(("members read", store), lambda: _read_members(spec, store, list(members.get(store, ()))))
    af = read.pop(key, None) if read is not None else None
    return af if af is not None else spec.read(path, None)


def _read_members(spec: AgentSpec, store: str, keys: list[str]) -> dict[str, AgentFile] | None:
    try:
        return dict(zip(keys, spec.read_members(store, keys), strict=True))
    except Exception:  # (each session then read alone: only a bad one fails)
        return None


def _opener(path: str) -> str | None:
    for a in _OPENERS:
        if a.opens(path):  # type: ignore[misc]
            return a.name
    return None


_TYPE_RE = re.compile(rb'"type"\s*:\s*"')


def _first_line_loads() -> Any:
    """The JSON decoder :func:`detect` parses a first line with: the stdlib's, so that a first pi
    table imports no other, unless msgspec is loaded already (another agent's reader loaded it),
    then :func:`._chain.loads` (msgspec's, twice as fast; what it refuses goes to the stdlib's)."""
    if "msgspec" in sys.modules:
        from ._chain import loads

        return loads
    return json.loads


def detect(head: bytes, path: str | None = None) -> str:
    """The agent of a file from its first bytes (64 KB are enough), and its path when given.

    An agent that knows its files by name and first bytes (``recognise_file``: a SQLite store,
    a JSON document per session) is asked first, when ``path`` is given.
    The first complete lines that are JSON objects decide (every agent is asked, in registry
    order); a first line longer than ``head`` is recognised by its start. Anything else is
    ``"pi"``: pi's tolerant reader reports what is wrong with it.

    Example:
        >>> detect(b'{"type":"session","version":3,"id":"s"}\\n')
        'pi'
        >>> detect(b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{}}\\n')
        'codex'
    """
    agents = tuple(_REGISTRY.values())
    if path is not None:
        for a in agents:
            if a.recognise_file is not None and a.recognise_file(path, head):
                return a.name
    pos = 0
    for _ in range(20):  # (the first complete lines; a loop, not a generator: every file passes here)
        end = head.find(b"\n", pos)
        if end < 0:
            break
        s = head[pos:end].strip()
        pos = end + 1
        if s[:1] != b"{" or s[-1:] != b"}":  # (no object: a pretty document's lines need no parse)
            continue
        try:
            obj = _first_line_loads()(s)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        for a in agents:
            if a.recognise(obj):
                return a.name
        break  # an object of no known agent: pi's reader reports it
    first = head.lstrip()
    nl = first.find(b"\n")  # (its first line, not split off the rest: a copy of the head per file)
    pretty = first[:1] == b"{" and (first if nl < 0 else first[:nl]).strip() == b"{"  # one object over several lines
    start = head[:4096]
    if (b"\n" not in head or pretty) and _TYPE_RE.search(start):  # a first line longer than the head: its start
        for a in agents:
            if a.recognise_start is not None and a.recognise_start(start):
                return a.name
    return "pi"


def agent_messages(path: str, agent: str, ids: set) -> dict:
    """The messages of some entries of an agent's file, read back from it (``context_messages``)."""
    from ._messages import agent_messages as read

    return read(path, agent, ids)


def markdown() -> str:
    """The registry as the Markdown table of ``docs/agents.md`` (a test keeps the two equal)."""
    rows = ["| agent (`agents=`, `--agent`) | name | default folders | environment | a call is | side nodes |",
            "|---|---|---|---|---|---|"]
    for a in _REGISTRY.values():
        call = "an assistant line that carries usage" if a.calls_need_usage else "every assistant message"
        env = ", ".join(f"`{e}`" for e in a.env) or "-"
        side = ", ".join(a.side_kinds) or "-"
        rows.append(f"| `{a.name}` | {a.title} | {a.folder_doc or '-'} | {env} | {call} | {side} |")
    return "\n".join(rows) + "\n"
