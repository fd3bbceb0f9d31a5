"""Goose sessions (``sessions.db``, SQLite, under ``$GOOSE_PATH_ROOT/data/sessions`` or
``~/.local/share/goose/sessions``).

Goose keeps every session in one store: table ``sessions`` (``id``, ``name``, ``session_type``:
``user``, ``sub_agent``..., ``working_dir``, ``created_at``, ``provider_name``,
``model_config_json``: ``{"model_name": ...}``, ``parent_session_id``, the last request's
``input_tokens``, ``output_tokens``, ``total_tokens`` and the session's running totals
``accumulated_input_tokens``, ``accumulated_output_tokens``, ``accumulated_total_tokens``, with
``accumulated_cache_*_tokens`` and ``accumulated_cost`` in newer schemas), table ``messages``
(``role``, ``content_json``: typed parts, ``text``, ``thinking``, ``toolRequest``,
``toolResponse``; ``created_timestamp`` in seconds) and, in newer schemas, ``usage_ledger`` (one row
per request). The messages are a chain; the usage read is ccusage's: the running totals as one
usage row at ``created_at`` (``usage_kind = 'session_total'``), each count falling back to the last
request's when the running one is missing; tokens of the total beyond input and output are
reasoning, priced as output; the cache columns are not read (the input counts the cached prompt,
priced as input). A session without a model has no usage. Each session is one member path,
``sessions.db#<session id>``; the store is opened read-only.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import IO, Any

from ..pi.rules import CHARS_PER_TOKEN
from ._chain import (
    SqliteStore,
    iso_ms,
    loads,
    session_roots,
    sessions_with_messages,
    sqlite_names,
    store_connection,
    tuples_by_key,
)
from ._parts import ROW_ORDER, database_members, database_parts, part_rows, split_part
from ._rows import TOTALS, SpendRows, agent_file, totals_dict, totals_values
from ._spec import AgentSpec, home_path, member_path, one_member, spend_only, store_memo

__all__ = ["SPEC", "roots", "files", "stores", "store_sessions", "finish", "read", "read_members", "spend_members",
           "session_time"]

DB_NAME = "sessions.db"


def roots() -> list[Path]:
    """``$GOOSE_PATH_ROOT/data/sessions``, else Goose's data folders (XDG, macOS, the Block one)."""
    env = (os.environ.get("GOOSE_PATH_ROOT") or "").strip()
    if env:
        return [home_path(env) / "data" / "sessions"]
    home = Path.home()
    return [home / ".local" / "share" / "goose" / "sessions", home / "Library" / "Application Support" / "goose" /
            "sessions", home / ".local" / "share" / "Block" / "goose" / "sessions"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every session of ``sessions.db`` in each folder, in the store's order of rows (a store found
    twice: once): the order of :func:`stores`' parts, one after the other."""
    return database_members(folders, DB_NAME, f"SELECT id FROM sessions ORDER BY {ROW_ORDER}", errors)


def stores(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """``sessions.db`` in each folder in parts (:func:`~._parts.database_parts`): a load of the
    default folders hands them to its workers, each listing its parts' sessions
    (:func:`store_sessions`)."""
    return database_parts(folders, DB_NAME, "sessions", errors)


def store_sessions(part: str) -> list[str]:
    """The sessions of a part of :func:`stores`, in the store's order of rows; their rows as
    :func:`spend_members` reads them are kept for it while the store is unchanged, until
    :func:`finish`."""
    db = split_part(part)[0]
    version = _version(db)
    if _LISTED.get(db, (None,))[0] != version:
        _LISTED[db] = (version, _spend_columns(db), {})
    _, columns, kept = _LISTED[db]
    rows = part_rows(part, "sessions", columns)
    prefix = member_path(db, "")  # (``member_path`` joined once: a part lists a thousand)
    out = []
    for r in rows:
        kept[r[0]] = r
        out.append(f"{prefix}{r[0]}")
    return out


# the rows of the parts a process listed (:func:`store_sessions`), by store: the store's version, the
# columns asked and the rows by session id, until the load's end (:func:`finish`)
_LISTED: dict[str, tuple[tuple, str, dict[Any, tuple]]] = {}


def _version(db: str) -> tuple:
    """The store's files as stated (the database and its write-ahead log): a commit changes one."""
    out = []
    for f in (db, f"{db}-wal"):
        try:
            st = os.stat(f)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def finish(results: list) -> None:
    """The end of a load of Goose sessions: the rows its listing kept are let go."""
    _LISTED.clear()


def _has_goose_tables(db: str) -> bool:
    return {"id", "working_dir", "model_config_json"} <= sqlite_names(db, "PRAGMA table_info(sessions)", 1)


def session_time(v: Any) -> str | None:
    """``created_at`` as ISO text: seconds or milliseconds, RFC 3339, ``YYYY-MM-DD HH:MM:SS`` (UTC, with
    or without a ``Z``: read without :mod:`datetime`), a date."""
    s = str(v).strip() if v is not None else ""
    if s.lstrip("-").isdigit():
        n = int(s)
        return iso_ms(n if n > 1_000_000_000_000 else n * 1000) if n > 0 else None
    m = _PLAIN.fullmatch(s)
    if m is not None and "1971" <= m[1] < "2100" and m[2] < "24" and m[3] < "60" and m[4] < "60" and _is_day(s[:10]):
        return f"{s[:10]}T{s[11:19]}.000Z"  # (Goose's own form, every session's: what _parsed_time gives it)
    return _parsed_time(s)


_PLAIN = re.compile(r"([0-9]{4})-[0-9]{2}-[0-9]{2}[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})Z?")  # (UTC either way)


@functools.lru_cache(maxsize=4096)
def _is_day(day: str) -> bool:
    """Whether ``YYYY-MM-DD`` is a day of the calendar (a load's sessions fall on few days)."""
    from datetime import date

    try:
        date.fromisoformat(day)
    except ValueError:
        return False
    return True


def _parsed_time(s: str) -> str | None:
    """:func:`session_time` of text that is not a number, by :meth:`datetime.fromisoformat`."""
    from datetime import UTC, datetime

    if len(s) == 10:
        s += "T00:00:00"
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    t = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    try:
        return iso_ms(t.timestamp() * 1000)
    except (ValueError, OverflowError):  # (a time its offset moves out of the calendar: 0001-01-01 00:00+02:00)
        return None


def _first(v: Any, fallback: Any) -> int | None:
    """A running count when it is above zero, else the last request's when that one is."""
    if type(v) is int and v > 0:  # (SQLite's integers: never a bool)
        return v
    return fallback if type(fallback) is int and fallback > 0 else None


def _model(raw: Any) -> str | None:
    return _model_of(raw) if isinstance(raw, str) else None


@functools.lru_cache(maxsize=1024)
def _model_of(raw: str) -> str | None:
    """The model a ``model_config_json`` names (sessions of one model share the text)."""
    try:
        d = loads(raw)
    except ValueError:
        return None
    m = d.get("model_name") if isinstance(d, dict) else None
    return m.strip() or None if isinstance(m, str) else None


def _totals(sid: str, created: Any, provider: Any, config: Any, inp_total: Any, inp_last: Any, out_total: Any,
            out_last: Any, all_total: Any, all_last: Any) -> tuple | None:
    """A session's totals row (:func:`~._rows.totals_values`) from its row's values (:data:`_USAGE`);
    None when it names no model, has no time or counts nothing."""
    model = _model(config)
    ts = None if model is None else session_time(created)
    if ts is None:
        return None
    inp = _first(inp_total, inp_last) or 0
    out = _first(out_total, out_last) or 0
    total = _first(all_total, all_last) or inp + out
    if inp == 0 and out == 0 and total == 0:
        return None
    reason = max(total - inp - out, 0)
    return totals_values(f"goose:{sid}", ts, model, (provider or "").strip() or None, inp, out + reason, 0, 0,
                         reason, None)


def _message_row(m: dict, tools: dict[str, str]) -> dict:
    try:
        parts = loads(m.get("content_json") or "[]")
    except ValueError:
        parts = []
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    chars = sum(len(p.get("text") or "") + len(p.get("thinking") or "") for p in parts)
    calls = [p for p in parts if p.get("type") in ("toolRequest", "frontendToolRequest")]
    names = [((p.get("toolCall") or {}).get("value") or {}).get("name") for p in calls]
    for p, n in zip(calls, names, strict=True):
        if isinstance(p.get("id"), str) and isinstance(n, str):
            tools[p["id"]] = n
    results = [p for p in parts if p.get("type") == "toolResponse"]
    role = "toolResult" if results and len(results) == len(parts) else m.get("role")
    failed = [p for p in results if (p.get("toolResult") or {}).get("status") == "error"]
    name = names[0] if names else tools.get(results[0].get("id")) if results else None
    return {"entry_id": m.get("message_id") or f"m{m['id']}", "message_id": m.get("message_id"),
            "role": role if role in ("user", "assistant", "toolResult") else None,
            "timestamps": session_time(m.get("created_timestamp")), "tool_call_count": len(calls),
            "tool_name": name if isinstance(name, str) else None, "is_error": bool(failed),
            "error_message": (failed[0].get("toolResult") or {}).get("error") if failed else None,
            "est_tokens": -(-chars // CHARS_PER_TOKEN)}


def read(path: str, fh: IO[bytes] | None):
    """A session of ``sessions.db`` (``<db>#<session id>``): its messages and one row of its totals."""
    db, sid = one_member(path)
    return read_members(db, [sid])[0]


# the columns of ``sessions`` a session's usage is read from (in :func:`_totals`' order), and its name and
# working folder (the others, ``recipe_json``, ``extension_data``..., are not fetched)
_USAGE = ("created_at", "provider_name", "model_config_json", "accumulated_input_tokens", "input_tokens",
          "accumulated_output_tokens", "output_tokens", "accumulated_total_tokens", "total_tokens")
_COLUMNS = ("name", "working_dir", *_USAGE)


def read_members(db: str, sids: list[str]) -> list:
    """Sessions of ``sessions.db``, together (:attr:`~sessionlab.agents.AgentSpec.members`)."""
    # (the usage is the session's totals: a spend-only read needs no message)
    found = sessions_with_messages(db, sids, "created_timestamp, id", _COLUMNS, messages=not spend_only())
    return [_session_file(db, sid, *got) for sid, got in zip(sids, found, strict=True)]


def spend_members(db: str, sids: list[str]) -> SpendRows:
    """A usage report's read of sessions of ``sessions.db``: each one's totals row (when it has
    usage) and its facts, as :func:`read_members` gives them, from the rows as tuples (a column an
    older schema lacks read as null; those a part's listing read, :func:`store_sessions`, not asked
    again), without an object per session."""
    version, _, listed = _LISTED.get(db, (None, "", {}))
    if listed and version != _version(db):
        listed = {}  # (the store changed since its parts were listed: each row asked again)
    rows, counts, names, cwds, parents = [], [], [], [], []
    missing = (None,) * (4 + len(_USAGE))
    with store_connection(db) as con:
        asked = [sid for sid in sids if sid not in listed]
        found = tuples_by_key(con, f"SELECT {_spend_columns(db)} FROM sessions WHERE id IN ({{ids}})", asked, 0
                              ) if asked else {}
        for sid in sids:
            got = listed.get(sid) or (found.get(sid) or (missing,))[0]
            _, parent, name, cwd, *usage = got
            total = _totals(sid, *usage)
            if total is not None:
                rows.append(total)
            counts.append(0 if total is None else 1)
            names.append(name or None)
            cwds.append(cwd or None)
            parents.append(parent or None)
        roots = session_roots(con, db, sids, parents, lambda: {i: p for i, p in zip(sids, parents, strict=True)
                                                               if i in listed or i in found})
    facts = {"session_id": list(sids), "name": names, "cwd": cwds, "parent_session_id": parents,
             "root_session_id": roots}
    return SpendRows(rows, counts, facts, row_names=TOTALS)


def _spend_columns(db: str) -> str:
    """What :func:`spend_members` asks of a session row (SQL): its id, parent, name, folder and
    :data:`_USAGE` (a column an older schema lacks: null)."""
    has = store_memo(("session columns", db), lambda: sqlite_names(db, "PRAGMA table_info(sessions)", 1))
    return ", ".join(f'"{c}"' if c in has else "NULL" for c in ("id", "parent_session_id", "name", "working_dir",
                                                                  *_USAGE))


def _session_file(db: str, sid: str, s: dict, msgs: list[dict], parent: str | None, root: str | None):
    tools: dict[str, str] = {}
    rows = [_message_row(m, tools) for m in msgs]
    total = _totals(sid, *map(s.get, _USAGE))
    if total is not None:
        rows.insert(0, {**totals_dict(total), "parent_id": None})
    name, cwd = _name_cwd(s)
    return agent_file(member_path(db, sid), "goose", rows, {"session_id": sid, "name": name, "cwd": cwd,
                                                             "parent_session_id": parent, "root_session_id": root})


def _name_cwd(s: dict) -> tuple[str | None, str | None]:
    """A session row's name and working folder (None for an empty one)."""
    return s.get("name") or None, s.get("working_dir") or None


_STORE = SqliteStore(DB_NAME, _has_goose_tables)


SPEC = AgentSpec(
    name="goose", title="Goose", recognise=lambda obj: False, recognise_file=_STORE.recognise_file,
    opens=_STORE.opens,
    roots=roots, env=("GOOSE_PATH_ROOT",), files=files, reader="sessionlab.agents.goose:read",
    members="sessionlab.agents.goose:read_members", spend_members="sessionlab.agents.goose:spend_members",
    calls_need_usage=True, priced=True, stores=stores, store_sessions="sessionlab.agents.goose:store_sessions",
    finish="sessionlab.agents.goose:finish", bundled=True,
    folder_doc="`sessions.db` (SQLite, opened read-only) in `$GOOSE_PATH_ROOT/data/sessions`, else in "
               "`~/.local/share/goose/sessions` (and the macOS and `Block/goose` folders); each session is "
               "`sessions.db#<session id>` (a session's running totals, no calls)",
)
