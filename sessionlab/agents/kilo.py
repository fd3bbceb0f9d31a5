"""Kilo sessions (Kilo's OpenCode-based CLI: ``~/.local/share/kilo/kilo.db``, SQLite).

Kilo keeps OpenCode's store: tables ``session`` (``id``, ``parent_id``, ``title``, ``directory``,
``version``, ``time_created``), ``message`` (``id``, ``session_id``, ``data``: the message as JSON
without its ids) and ``part`` (``message_id``, ``data``: text, reasoning, tool calls with their
state). An assistant message's ``data`` carries ``modelID``, ``providerID``, ``time.created`` (ms),
``parentID`` (the user message it answers), ``cost`` (USD, as Kilo computed it) and ``tokens``
(``input``, ``output``, ``reasoning``, ``cache.read``, ``cache.write``; ``total`` alone in some).
Each session of the store is one member path, ``kilo.db#<session id>``, read on its own; a child
session (a subagent's) names its parent. The store is opened read-only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from ..pi.rules import CHARS_PER_TOKEN
from ._chain import SqliteStore, as_dict, iso_ms, loads, parent_lookup, rows_by_key, rows_for_ids, store_connection
from ._rows import CallRows, SpendRows, agent_file, as_int, text
from ._spec import AgentSpec, home_path, member_path, one_member, spend_only

__all__ = ["SPEC", "roots", "files", "read", "message_rows", "spend_members"]

DB_NAME = "kilo.db"


def roots() -> list[Path]:
    """The folders of ``$KILO_DATA_DIR`` (comma-separated), else ``~/.local/share/kilo``."""
    env = os.environ.get("KILO_DATA_DIR")
    if env:
        return [home_path(p) for p in env.split(",") if p.strip()]
    return [Path.home() / ".local" / "share" / "kilo"]


def store_sessions(db: str, errors: list[tuple[str, str]] | None = None) -> list[str]:
    """The member paths of a store's sessions (``<db>#<id>``), by creation time."""
    import sqlite3

    try:
        with store_connection(db) as con:
            ids = [r[0] for r in con.execute("SELECT id FROM session ORDER BY time_created, id")]
    except sqlite3.Error as exc:
        if errors is not None:
            errors.append((db, f"{type(exc).__name__}: {exc}"))
        return []
    return [member_path(db, i) for i in ids]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every session of ``kilo.db`` in each folder (a folder named twice is read once)."""
    out: list[str] = []
    for folder in dict.fromkeys(folders):
        db = Path(folder) / DB_NAME
        if db.is_file():
            out += store_sessions(str(db), errors)
    return out




def _time_ms(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        return None
    return v * 1000 if v < 1_000_000_000_000 else v  # (seconds in some rows)


def _grouped(con, sql: str, ids: list[str]) -> dict:
    """The rows of ``sql`` (``... IN ({ids}) ...``; tuples, the first value the key they go under)
    for ``ids``, grouped by key, each group in the query's order."""
    cur = con.cursor()
    cur.row_factory = None  # (tuples: a batch reads thousands of sessions)
    out: dict = {}
    for r in rows_for_ids(cur, sql, ids):
        got = out.get(r[0])
        if got is None:
            out[r[0]] = [r]
        else:
            got.append(r)
    return out


def _sessions(con, ids: list[str]) -> dict:
    """The ``session`` rows of ``ids`` as dicts, by id (the first row of an id)."""
    return {k: rows[0] for k, rows in rows_by_key(con, "SELECT * FROM session WHERE id IN ({ids})", ids, "id").items()}


def _object(data: Any) -> dict | None:
    """A ``data`` column's JSON object; None for anything else (no JSON, another value)."""
    try:
        d = loads(data)
    except (TypeError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def _parts(con, ids: list[str]) -> dict:
    """The parts of the sessions' messages (in each message's order), by (session id, message id)."""
    out: dict = {}
    for sid, rows in _grouped(con, "SELECT m.session_id, p.message_id, p.data FROM part p JOIN message m "
                                   "ON p.message_id = m.id WHERE m.session_id IN ({ids}) "
                                   "ORDER BY p.time_created, p.id", ids).items():
        for _, mid, data in rows:
            d = _object(data)
            if d is not None:
                out.setdefault((sid, mid), []).append(d)
    return out


def _facts(d: dict, prev: str | None) -> tuple:
    """A message's own facts as its rows take them: role (user, assistant or None), time (ISO), its
    parent (``parentID``, else the message before), error (a non-empty object or None), finish,
    model and provider."""
    get = d.get  # (a store's every message passes here: each key asked once)
    role = get("role")
    if role != "user" and role != "assistant":
        role = None
    err = get("error")
    time = get("time")
    parent, finish, provider = get("parentID"), get("finish"), get("providerID")
    return (role, iso_ms(_time_ms(time.get("created"))) if isinstance(time, dict) else None,
            parent if isinstance(parent, str) else prev, err if isinstance(err, dict) and err else None,
            finish if isinstance(finish, str) else None, text(get("modelID")),
            provider if isinstance(provider, str) else None)


def _error_message(err: dict | None) -> str | None:
    return (as_dict(err.get("data")).get("message") or err.get("name")) if err else None


def _usage(d: dict, role: str | None, model: str | None, ts: str | None) -> tuple | None:
    """An assistant message's usage (input, output with reasoning, cache read, cache write,
    reasoning, cost or None); None without a model, a time or any count (an aborted request)."""
    tokens = d.get("tokens")
    if role != "assistant" or not isinstance(tokens, dict) or model is None or ts is None:
        return None
    cache = tokens.get("cache")
    if not isinstance(cache, dict):
        cache = {}
    inp, out, reason = as_int(tokens.get("input")), as_int(tokens.get("output")), as_int(tokens.get("reasoning"))
    cr, cw = as_int(cache.get("read")), as_int(cache.get("write"))
    missing = as_int(tokens.get("total")) - (inp + out + cr + cw + reason)
    if missing > 0:  # only a total: the rest is output (or, beside an output count, more reasoning)
        out, reason = (missing, reason) if out == 0 else (out, reason + missing)
    if inp + out + cr + cw + reason == 0:
        return None  # (an aborted or failed request: no usage)
    cost = d.get("cost")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    return inp, out + reason, cr, cw, reason, cost


def message_rows(msg_id: str, d: dict, parts: Any, prev: str | None) -> dict:
    """One message of OpenCode's format (Kilo's, OpenCode's own) as a row (``parts``: its parts)."""
    role, ts, parent, err, finish, model, provider = _facts(d, prev)
    if parts:
        chars = sum(len(p.get("text") or "") for p in parts if p.get("type") in ("text", "reasoning"))
        tools = [p for p in parts if p.get("type") == "tool"]
        failed = any(as_dict(t.get("state")).get("status") == "error" for t in tools)
    else:  # (a spend-only read: no part read)
        chars, tools, failed = 0, [], False
    row = {"entry_id": msg_id, "message_id": msg_id, "role": role, "parent_id": parent,
           "timestamps": ts, "est_tokens": -(-chars // CHARS_PER_TOKEN),
           "tool_call_count": len(tools), "tool_name": (tools[0].get("tool") if tools else None),
           "is_error": err is not None or failed, "error_message": _error_message(err),
           "stop_reason": finish, "model": model, "provider": provider}
    u = _usage(d, role, model, ts)
    if u is not None:
        row.update(input_tokens=u[0], output_tokens=u[1], reasoning_tokens=u[4], cache_read_tokens=u[2],
                   cache_write_tokens=u[3], cost_usd=u[5])
    return row


# (a spend-only read's row of an assistant message, no part read: message_rows' as a tuple)
_CALLS = CallRows(("line_no", "entry_id", "message_id", "parent_id", "timestamps", "is_error", "error_message",
                   "stop_reason", "model", "provider"), est_tokens=0, tool_call_count=0, is_error=False)


def _spend_rows(messages: Any) -> list[tuple]:
    """A session's spend rows from its messages' rows (``(session id, id, data)``): each assistant
    message's row as :func:`message_rows` gives it without its parts, at its place among the spend
    rows (a test holds the two equal)."""
    out: list[tuple] = []
    prev = None
    for _, mid, data in messages:
        d = _object(data)
        if d is None:
            continue
        if d.get("role") == "assistant":
            role, ts, parent, err, finish, model, provider = _facts(d, prev)
            out.append(_CALLS.row((len(out) + 1, mid, mid, parent, ts, err is not None, _error_message(err),
                                   finish, model, provider), _usage(d, role, model, ts)))
        prev = mid
    return out


def read_store_session(path: str, agent: str):
    """One session of an OpenCode-format store (``<db>#<session id>``) as an AgentFile of ``agent``."""
    db, sid = one_member(path)
    return read_store_sessions(db, [sid], agent)[0]


def read_store_sessions(db: str, sids: list[str], agent: str) -> list:
    """Sessions of an OpenCode-format store as AgentFiles of ``agent``, in the order of ``sids``
    (one connection and one query per table for them all)."""
    spend = spend_only()  # (a spend-only read: the calls alone, no content)
    with store_connection(db) as con:
        sessions, messages, projects = _queried(con, sids)
        parts = {} if spend else _parts(con, sids)
        return [_session_file(con, db, sid, agent, sessions.get(sid) or {}, messages.get(sid, ()), parts, spend,
                              projects) for sid in sids]


def spend_members(db: str, sids: list[str]) -> SpendRows:
    """A usage report's read of sessions of ``kilo.db``: their spend rows and facts as a spend-only
    :func:`read_members` gives them, without a file per session."""
    rows: list[tuple] = []
    counts: list[int] = []
    facts: dict[str, list] = {k: [] for k in _FACTS}
    with store_connection(db) as con:
        sessions, messages, projects = _queried(con, sids)
        for sid in sids:
            got = _spend_rows(messages.get(sid, ()))
            rows += got
            counts.append(len(got))
            for k, v in zip(_FACTS, _session_facts(con, db, sid, sessions.get(sid) or {}, projects)):
                facts[k].append(v)
    return SpendRows(rows, counts, facts)


def _queried(con: Any, sids: list[str]) -> tuple[dict, dict, dict]:
    """The ``session`` rows of ``sids`` by id, their messages' rows by session (in time order) and
    the projects of those without a folder of their own, by id (one query each)."""
    sessions = _sessions(con, sids)
    messages = _grouped(con, "SELECT session_id, id, data FROM message WHERE session_id IN ({ids}) "
                             "ORDER BY time_created, id", sids)
    projects = _grouped(con, "SELECT id, worktree FROM project WHERE id IN ({ids})",
                        list({s["project_id"] for s in sessions.values()
                              if not s.get("directory") and s.get("project_id")}))
    return sessions, messages, projects


def _session_file(con, db: str, sid: str, agent: str, s: dict, messages: Any, parts: dict, spend: bool,
                  projects: dict):
    rows, prev = [], None
    for _, mid, data in messages:
        d = _object(data)
        if d is not None:
            if not spend or d.get("role") == "assistant":
                rows.append(message_rows(mid, d, parts.get((sid, mid), ()), prev))
            prev = mid
    return agent_file(member_path(db, sid), agent, rows,
                      dict(zip(_FACTS, _session_facts(con, db, sid, s, projects))))


_FACTS = ("session_id", "cwd", "name", "agent_version", "parent_session_id", "root_session_id")


def _session_facts(con: Any, db: str, sid: str, s: dict, projects: dict) -> tuple:
    """A session's facts of ``_FACTS`` from its ``session`` row ``s``: its folder (else its
    project's), title, version, parent and the top of its parents."""
    cwd = s.get("directory") or None
    if cwd is None and s.get("project_id"):
        p = projects.get(s["project_id"])
        cwd = p[0][1] if p and p[0][1] not in (None, "", "/") else None
    parent = s.get("parent_id") or None
    root = _root(parent_lookup(con, db, "session"), parent) if parent else None
    return sid, cwd, s.get("title") or None, s.get("version") or None, parent, root


def _root(parent_of, sid: str) -> str:
    seen = {sid}
    while True:
        up = parent_of(sid)
        if not up or up in seen:
            return sid
        sid = up
        seen.add(sid)


def read(path: str, fh: IO[bytes]):
    """A session of ``kilo.db`` (``<db>#<session id>``)."""
    return read_store_session(path, "kilo")


def read_members(db: str, sids: list[str]) -> list:
    """Sessions of ``kilo.db``, together (:attr:`~sessionlab.agents.AgentSpec.members`)."""
    return read_store_sessions(db, sids, "kilo")


_STORE = SqliteStore(DB_NAME)


SPEC = AgentSpec(
    name="kilo", title="Kilo", recognise=lambda obj: False, recognise_file=_STORE.recognise_file,
    opens=_STORE.opens, roots=roots,
    env=("KILO_DATA_DIR",), files=files, reader="sessionlab.agents.kilo:read",
    members="sessionlab.agents.kilo:read_members", spend_members="sessionlab.agents.kilo:spend_members",
    calls_need_usage=True, priced=True,
    folder_doc="`kilo.db` (SQLite, opened read-only) in `$KILO_DATA_DIR` (comma-separated), else in "
               "`~/.local/share/kilo`; each session is `kilo.db#<session id>`",
)
