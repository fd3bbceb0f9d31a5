"""One OpenCode session to rows, from its SQLite database or from the old JSON storage.

Database (OpenCode 1.x, ``opencode.db``, opened read-only): the ``session`` row (``directory``,
``title``, ``version``, ``parent_id``: a subagent's session is the child of the session whose
``task`` tool started it), the session's ``message`` rows and their ``part`` rows, each record's
fields as JSON in ``data``. Old storage: ``storage/session/<project>/<session>.json``,
``storage/message/<session>/<message>.json`` and ``storage/part/<message>/<part>.json``, the same
records.

A message is a row (user or assistant; a session is a chain, in creation order); its parts are its
blocks: ``text``, ``reasoning`` (thinking), ``tool`` (a call, its ``state.output`` a ``toolResult``
row after the message). An assistant message whose ``tokens`` count anything is a call:
``input_tokens`` = ``input``, ``cache_read_tokens``/``cache_write_tokens`` = ``cache.read``/
``cache.write``, ``output_tokens`` = ``output`` + ``reasoning`` (OpenCode counts reasoning apart
from the output; it is billed as output), ``reasoning_tokens`` = ``reasoning``. Its ``cost`` is kept
when above zero (``cost_source = 'recorded'``); a zero cost (a provider OpenCode has no price for,
or a subscription such as GitHub Copilot's) is priced, as ccusage does.
"""

from __future__ import annotations

import glob
import os
import sqlite3
from typing import Any

from ._calls import CALL_NAMES, call_values
from ._chain import (
    Chain,
    as_dict,
    counts_of,
    iso_ms,
    json_chars,
    loads,
    parent_lookup,
    rows_by_key,
    sqlite_names,
    store_connection,
    text_chars,
    tuples_by_key,
)
from ._rows import SpendRows
from ._spec import member_path, spend_only, split_member, store_memo

__all__ = ["read_opencode", "read_members", "spend_members", "database_sessions"]



def database_sessions(db: str) -> list[str]:
    """The ids of the database's sessions that have messages."""
    with store_connection(db) as con:
        return [r[0] for r in con.execute("SELECT DISTINCT session_id FROM message")]



# the columns of ``session`` read (those a release has): its other columns are not fetched
_SESSION = ("id", "parent_id", "directory", "title", "version")


def _from_database(db: str, sids: list[str], *, parts: bool | None = None, raw: bool = False
                   ) -> list[tuple[dict, Any, str]]:
    """Each session's fields, its messages with their parts (``parts``: whether to read them; by
    default unless the read is spend-only; ``raw``: its ``message`` rows as read instead, id,
    time_created, data), and the top of its parents' chain, in the order of ``sids``: one query per
    table for them all, rows as tuples (a batch reads thousands)."""
    if parts is None:
        parts = not spend_only()  # (a spend-only read needs no content)
    has = store_memo(("session table columns", db), lambda: sqlite_names(db, "PRAGMA table_info(session)", 1))
    wanted = ", ".join(f'"{c}"' for c in _SESSION if c in has) or "*"
    with store_connection(db) as con:
        found = _grouped(con, f"SELECT {wanted} FROM session WHERE id IN ({{ids}})", sids, "id")
        part_rows = _grouped(con, "SELECT message_id, data, session_id FROM part WHERE session_id IN ({ids}) "
                                  "ORDER BY message_id, id", sids, 2) if parts else {}
        # (each session's messages by creation, as its index holds them: no sort of the batch's)
        messages = _grouped(con, "SELECT id, time_created, data, session_id FROM message "
                                 "WHERE session_id IN ({ids}) ORDER BY session_id, time_created, id", sids, 3)
        parent_of = None
        out = []
        for sid in sids:
            rows = found.get(sid)
            session = rows[0] if rows else {"id": sid}
            parent = session.get("parent_id")  # (a store with no parent column: none asked)
            if parent and parent_of is None:
                parent_of = parent_lookup(con, db, "session")
            got = messages.get(sid, ())
            out.append((session, got if raw else _messages(got, part_rows.get(sid, ())),
                        _root(str(session.get("id")), parent, parent_of)))
    return out


def _grouped(con: Any, sql: str, ids: list[str], key: str | int) -> dict[Any, list]:
    """:func:`rows_by_key` (a column's name: rows as dicts), or :func:`tuples_by_key` (a column's
    place: rows as tuples, of the columns ``sql`` names); none when the query fails (a table or
    column this release does not have)."""
    try:
        return rows_by_key(con, sql, ids, key) if isinstance(key, str) else tuples_by_key(con, sql, ids, key)
    except sqlite3.OperationalError:
        return {}


def _messages(rows: Any, part_rows: Any) -> list[tuple[dict, list[dict]]]:
    """A session's messages (``message`` rows: id, time_created, data) with their parts (``part``
    rows: message_id, data)."""
    parts: dict[str, list[dict]] = {}
    for mid, data, _ in part_rows:
        parts.setdefault(mid, []).append(_json(data))
    return [(_as_read(_json(data), mid, created), parts.get(mid, [])) for mid, created, data, _ in rows]


def _as_read(m: dict, mid: Any, created: Any) -> dict:
    """A message's data with its row's id and creation time where it has none of its own."""
    m.setdefault("id", mid)
    t = m.get("time")
    if not isinstance(t, dict):
        t = m["time"] = {}
    t.setdefault("created", created)
    return m


def _json(text: Any) -> dict:
    try:
        d = loads(text)
    except (TypeError, ValueError):
        return {}
    return d if isinstance(d, dict) else {}


def _read_json(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            return _json(fh.read())
    except OSError:
        return {}


def _storage_sessions(storage: str) -> dict[str, dict]:
    """Every session file of the old storage, by id."""
    out = {}
    for f in glob.glob(os.path.join(glob.escape(storage), "session", "*", "*.json")):
        d = _read_json(f)
        out[d.get("id") or os.path.splitext(os.path.basename(f))[0]] = d
    return out


def _from_storage(folder: str) -> tuple[dict, list[tuple[dict, list[dict]]], str]:
    folder = folder.rstrip("/" + os.sep)
    sid = os.path.basename(folder)
    storage = os.path.dirname(os.path.dirname(folder))
    known = _storage_sessions(storage)
    s = known.get(sid, {"id": sid})
    session = {"id": sid, "directory": s.get("directory"), "title": s.get("title"), "version": s.get("version"),
               "parent_id": s.get("parentID")}
    messages = []
    for f in sorted(glob.glob(os.path.join(glob.escape(folder), "*.json"))):
        m = _read_json(f)
        mid = m.get("id") or os.path.splitext(os.path.basename(f))[0]
        parts = [] if spend_only() else [  # (a spend-only read needs no content)
            _read_json(p) for p in sorted(glob.glob(os.path.join(glob.escape(storage), "part", glob.escape(mid),
                                                                 "*.json")))]
        messages.append((m, parts))
    messages.sort(key=lambda mp: (_created(mp[0]), mp[0].get("id") or ""))
    parents = {k: v.get("parentID") for k, v in known.items()}
    return session, messages, _root(sid, session["parent_id"], parents.get)


def _created(m: dict) -> float:
    t = m.get("time")
    c = t.get("created") if isinstance(t, dict) else None
    return c if isinstance(c, (int, float)) else 0



_COUNTS, _CACHE_COUNTS = ("input", "output", "reasoning"), ("read", "write")


def _usage_of(m: dict) -> tuple | None:
    """An assistant message's usage as the arguments of :meth:`Chain.usage` in its order (``model,
    provider, inp, out, cache_read, cache_write, reasoning, total, cost``); None when it counts
    nothing."""
    t = m.get("tokens")
    if not isinstance(t, dict):
        return None
    inp, out, reasoning = counts_of(t, _COUNTS)
    read, write = counts_of(t.get("cache"), _CACHE_COUNTS)
    if not (inp or out or reasoning or read or write):
        return None  # (an aborted or failed response)
    cost = m.get("cost")
    recorded = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0 else None
    return (m.get("modelID") or None, m.get("providerID") or None, inp, out + reasoning, read, write, reasoning, None,
            recorded)


def _stamp(m: dict) -> tuple[str | None, str]:
    """A message's time (ISO text) and id."""
    return iso_ms(_created(m) or None), str(m.get("id"))


def _message(chain: Chain, m: dict, parts: list[dict]) -> None:
    role = m.get("role")
    if chain.spend_only and role != "assistant":  # (a spend-only read: the calls alone)
        return
    ts, eid = _stamp(m)
    if role != "assistant":
        i = chain.add(0, eid, ts, role="user")
        for p in parts:
            if p.get("type") == "text" and not p.get("synthetic"):
                chain.block(i, "text", text_chars(p.get("text")))
        return
    i = chain.add(0, eid, ts, role="assistant", provider=m.get("providerID"), model=m.get("modelID"),
                  tool_call_count=0)
    results = []
    for p in parts:
        kind = p.get("type")
        if kind == "text":
            chain.block(i, "text", text_chars(p.get("text")))
        elif kind == "reasoning":
            chain.block(i, "thinking", text_chars(p.get("text")))
        elif kind == "tool":
            state = as_dict(p.get("state"))
            name, cid = p.get("tool"), p.get("callID")
            chain.block(i, "toolCall", text_chars(name) + json_chars(state.get("input")), name, cid)
            if state.get("status") in ("completed", "error"):
                results.append((name, cid, state))
    chain.usage_of(i, _usage_of(m))
    for name, cid, state in results:
        t = as_dict(state.get("time"))
        j = chain.add(0, f"{eid}/{cid}", iso_ms(t.get("end")) or ts, role="toolResult", tool_name=name)
        chain.block(j, "toolResult", json_chars(state.get("output") if "output" in state else state.get("error")),
                    name, cid)


def _root(sid: str, parent: Any, parent_of: Any) -> str:
    """The top of the session's parents' chain (``parent``: its own, ``parent_of``: anyone's)."""
    seen = {sid}
    p = parent
    while p and p not in seen:
        seen.add(p)
        sid, p = p, parent_of(p)
    return sid


def read_opencode(path: str, fh: Any = None) -> Any:
    """Read one OpenCode session: ``<database>#<session id>`` or a ``storage/message/<session id>`` folder."""
    db, sep, sid = path.rpartition("#")
    # (a store's session: no entry of its own, told from its folder's names, not stated each)
    in_db = bool(sep) and (split_member(path)[1] is not None or not os.path.isdir(path))
    return _session_file(path, *(_from_database(db, [sid])[0] if in_db else _from_storage(path)))


def read_members(db: str, sids: list[str]) -> list:
    """Sessions of an OpenCode database, together (:attr:`~sessionlab.agents.AgentSpec.members`)."""
    return [_session_file(member_path(db, sid), *got) for sid, got in zip(sids, _from_database(db, sids), strict=True)]


def spend_members(db: str, sids: list[str]) -> SpendRows:
    """A usage report's read of sessions of an OpenCode database: each one's calls (its assistant
    messages, as a spend-only :func:`read_members` keeps them) and facts, the rows built as tuples
    (:func:`~._calls.call_values`), without a chain or a file per session."""
    rows: list[tuple] = []
    counts: list[int] = []
    facts: dict[str, list] = {k: [] for k in ("session_id", "cwd", "name", "agent_version", "parent_session_id",
                                              "root_session_id")}
    for session, messages, root in _from_database(db, sids, parts=False, raw=True):
        prev = None
        n = len(rows)
        read = []  # (the session's messages as decoded, for its facts: no parts)
        for mid, created, data, _ in messages:
            m = _json(data)
            read.append((m, ()))
            if m.get("role") == "assistant":
                ts, eid = _stamp(_as_read(m, mid, created))
                rows.append(call_values(0, eid, prev, ts, m.get("providerID"), m.get("modelID"), _usage_of(m)))
                prev = eid
        counts.append(len(rows) - n)
        for k, v in zip(facts, _facts(session, read, root)):
            facts[k].append(v)
    return SpendRows(rows, counts, facts, row_names=CALL_NAMES)


def _facts(session: dict, messages: list[tuple[dict, list[dict]]], root: str) -> tuple:
    """A session's id, folder, name, version, parent and top of its parents' chain."""
    cwd = session.get("directory") or next((m["path"].get("cwd") for m, _ in messages
                                            if isinstance(m.get("path"), dict)), None)
    return (str(session.get("id")), cwd or None, session.get("title") or None, session.get("version") or None,
            session.get("parent_id"), root)


def _session_file(path: str, session: dict, messages: list[tuple[dict, list[dict]]], root: str) -> Any:
    chain = Chain(path, "opencode")
    for m, parts in messages:
        _message(chain, m, parts)
    sid, cwd, name, version, parent, root = _facts(session, messages, root)
    return chain.done({"session_id": sid, "cwd": cwd, "name": name, "agent_version": version,
                       "parent_session_id": parent, "root_session_id": root})
